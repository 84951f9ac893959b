"""Where a measured job ran on the plan: the log's hosts mapped to plan servers.

Host names are compared case-insensitively and without their domain (DNS names
are case-insensitive, RFC 4343; plan names are lowercase labels), so ``GPU-6550``
in a log matches a names-file row ``su1-node01,gpu-6550``. Three outcomes:

* every host is a plan server: the job is placed on exactly those servers;
* no host is (a site that did not give ``--names``, or the rendered acceptance
  job, whose ranks run in pods named ``…-worker-N``): the job is placed on as
  many servers in SU order, and the result says the placement is assumed;
* some are and some are not: refused, naming the first unknown host and its line
  (a half-mapped job would be judged on the wrong servers).

A job that uses fewer GPUs per server than the plan has (``-g 1`` on 8-GPU
servers) is judged on a plan of the same servers with that many GPUs, each with
its rail NIC(s): the estimate assumes whole servers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from fabric_stack.acceptance.model import NcclRun
from fabric_stack.analysis.estimate import ModelParams
from fabric_stack.analysis.whatif import FabricIndex
from fabric_stack.errors import InputFileError
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import Device, FabricTopology, build_topology
from fabric_stack.underlay.plan import plan_underlay


@dataclass
class AcceptContext:
    """The plan and the model a set of results is judged against."""

    topo: FabricTopology
    params: ModelParams = field(default_factory=ModelParams)
    drift: str = "fabric-stack drift"
    """The drift command with the spec options as the user gave them (for 'check')."""
    _variants: dict[int, FabricTopology] = field(default_factory=dict, repr=False)

    @cached_property
    def index(self) -> FabricIndex:
        """The whole plan's index (cables by device and port)."""
        return FabricIndex(self.topo)

    @cached_property
    def servers(self) -> dict[str, Device]:
        """Plan servers by lower-case name."""
        return {d.name.lower(): d for d in self.topo.devices if d.role == "server"}

    @cached_property
    def rail_addresses(self) -> dict[str, tuple[str, str]]:
        """The plan's host rail addresses, address → (server, rail device): RoCE and Ethernet
        plans have them (the routed underlay), InfiniBand none."""
        if self.topo.plan.spec.fabric == "infiniband":
            return {}
        return {h.address: (h.server, h.nic) for h in plan_underlay(self.topo).hosts}

    def server(self, host: str) -> Device | None:
        """The plan server a log's host name is (module docstring), or None."""
        h = host.strip().lower()
        return self.servers.get(h) or self.servers.get(h.split(".", 1)[0])

    def job_topology(self, gpus_per_server: int) -> FabricTopology:
        """The plan, or the same servers with ``gpus_per_server`` GPUs each (module
        docstring); built once per GPU count."""
        spec = self.topo.plan.spec
        if gpus_per_server >= spec.gpus_per_node:
            return self.topo
        if gpus_per_server not in self._variants:
            plan = self.topo.plan
            data = spec.model_dump(mode="json")
            for key in ("node_profile", "rails", "names", "naming"):
                data.pop(key, None)  # the variant keeps the plan's own names
            rails = max(1, plan.rails * gpus_per_server // spec.gpus_per_node)
            data.update(
                gpus=plan.nodes * gpus_per_server,
                gpus_per_node=gpus_per_server,
                rails=rails,
                su_nodes=plan.su_nodes,
            )
            self._variants[gpus_per_server] = build_topology(size_fabric(validate_spec(data)))
        return self._variants[gpus_per_server]


@dataclass(frozen=True)
class Placement:
    """Where a job ran, and the job as the estimate takes it."""

    hosts: list[str]
    servers: list[Device]
    topo: FabricTopology
    job_hosts: list[str] | None
    job_gpus: int | None
    ranks_per_host: int
    devices: frozenset[int]
    how: str
    basis: list[str]


def _hosts(run: NcclRun) -> list[str]:
    hosts = list(dict.fromkeys(r.host for r in run.ranks))
    if not run.ranks_listed_complete:
        hosts += [h for h in dict.fromkeys(f.host for f in run.failures) if h not in hosts]
    return hosts


def place_nccl(run: NcclRun, ctx: AcceptContext) -> Placement:
    """The job of ``run`` on the plan (module docstring); InputFileError when it cannot be."""
    hosts = _hosts(run)
    per_host = Counter(r.host for r in run.ranks)
    gpn = ctx.topo.plan.spec.gpus_per_node
    rph = max(per_host.values(), default=run.nranks)
    devices = frozenset(r.device for r in run.ranks)
    if not run.ranks:
        raise InputFileError(run.source, "no '#  Rank' lines: cannot tell where it ran", run.line)
    if rph > gpn:
        host = per_host.most_common(1)[0][0]
        first = next(r.line for r in run.ranks if r.host == host)
        raise InputFileError(
            run.source,
            f"{rph} ranks on {host} but the plan's servers have {gpn} GPUs: is it the right plan?",
            first,
        )
    topo = ctx.job_topology(rph)
    basis = []
    if topo is not ctx.topo:
        basis.append(
            f"the job uses {rph} of the plan's {gpn} GPUs per server: expected for the same "
            f"servers with {rph} GPU(s) and {topo.plan.rails} rail NIC(s) each"
        )
    mapped = {h: ctx.server(h) for h in hosts}
    known = [h for h in hosts if mapped[h] is not None]
    if not run.ranks_listed_complete:
        return _whole_cluster(run, ctx, topo, hosts, rph, devices, basis)
    if known and len(known) < len(hosts):
        unknown = next(h for h in hosts if mapped[h] is None)
        first = next(r.line for r in run.ranks if r.host == unknown)
        raise InputFileError(
            run.source,
            f"host {unknown!r} is not a server of the plan while {known[0]!r} is: add it to "
            "the names file (--names, planned,actual)",
            first,
        )
    if known:
        servers = [s for s in (mapped[h] for h in hosts) if s is not None]
        names = [s.name if topo is ctx.topo else s.planned_name for s in servers]
        return Placement(
            hosts, servers, topo, names, None, rph, devices, "hosts mapped to the plan", basis
        )
    return _assumed(run, ctx, topo, hosts, rph, devices, basis)


def _assumed(
    run: NcclRun,
    ctx: AcceptContext,
    topo: FabricTopology,
    hosts: list[str],
    rph: int,
    devices: frozenset[int],
    basis: list[str],
) -> Placement:
    n = len(hosts)
    servers = sorted((d for d in ctx.topo.devices if d.role == "server"), key=_order)
    if n > len(servers):
        raise InputFileError(
            run.source,
            f"the job ran on {n} hosts but the plan has {len(servers)} servers: is it the "
            "right plan?",
            run.line,
        )
    how = (
        f"UNVERIFIED placement: no host of the log is a plan server ({', '.join(hosts[:3])}"
        f"{', …' if n > 3 else ''}); placed on the first {n} servers in SU order (give "
        "--names FILE to map them)"
    )
    return Placement(hosts, [], topo, None, n * rph, rph, devices, how, basis)


def _whole_cluster(
    run: NcclRun,
    ctx: AcceptContext,
    topo: FabricTopology,
    hosts: list[str],
    rph: int,
    devices: frozenset[int],
    basis: list[str],
) -> Placement:
    lo, hi = run.nranks_range or (0, 0)
    whole = ctx.topo.plan.nodes * rph
    if not lo <= whole <= hi:
        raise InputFileError(
            run.source,
            f"the rank list was cut ({len(run.ranks)} ranks listed; the table implies "
            f"{lo:,}–{hi:,}) and the plan's {whole:,} GPUs are not in that range: cannot place "
            "the job",
            run.line,
        )
    how = (
        f"the rank list was cut ({len(run.ranks)} of {lo:,}–{hi:,} ranks listed, by the table's "
        f"busbw/algbw): judged as the whole plan ({ctx.topo.plan.nodes} servers, {whole:,} GPUs)"
    )
    servers = [d for d in (ctx.server(h) for h in hosts) if d is not None]
    return Placement(hosts, servers, topo, None, None, rph, devices, how, basis)


def _order(d: Device) -> tuple[int, int]:
    return d.su, d.index


__all__ = ["AcceptContext", "Placement", "place_nccl"]
