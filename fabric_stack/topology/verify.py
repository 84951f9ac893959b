"""Checks on the port-level graph: does the link list realise the plan it was built from?

:func:`verify_topology` runs pure graph checks on a
:class:`~fabric_stack.topology.build.FabricTopology` and returns a
:class:`VerifyReport`. Nothing here recomputes sizing: each check compares what
the *link list* says with what the *plan* promised.

The checks, in the order they run (cheap structural checks first, so a broken
link list is reported before the flow computation tries to make sense of it):

1. ``port-budget`` — every switch within its radix; each (device, port) used by
   at most one cable; every cable end names a device that exists.
2. ``rail-alignment`` — every server-to-leaf cable lands on the leaf of the
   NIC's rail, in the server's own SU and plane.
3. ``leaf-split`` — up/down capacity per compute switch equals the plan's
   split: a leaf has exactly ``leaf_up`` cabled uplinks and at most
   ``leaf_down`` downlinks, and down:up budgets reduce to the spec's
   oversubscription; spines (and cores) likewise for their tier.
4. ``gpu-reachability`` — within each plane, every GPU reaches every GPU over
   the compute links plus the servers' PCIe attachments (connected components
   on that graph; union-find keeps it linear at 131k GPUs).
5. ``bisection-mincut`` — for fabrics up to ``mincut_max_nodes`` servers, the
   max-flow between the two halves of the NIC ports (networkx) times two (full
   duplex) equals ``plan.bandwidth.bisection_tbps``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Literal

import networkx as nx
from networkx.utils import UnionFind
from pydantic import BaseModel, ConfigDict, Field, computed_field

from fabric_stack.topology.build import COMPUTE_ROLES, HOST_ROLES, FabricTopology

CheckStatus = Literal["pass", "fail", "skip"]
"""Outcome of one check: ``skip`` means it did not apply (never a failure)."""

MAX_DETAILS = 10
"""Problems listed per failed check; the count says how many there were in all."""


class CheckResult(BaseModel):
    """One graph check and its outcome."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Stable check id, e.g. 'port-budget'.")
    title: str = Field(description="What the check asserts, in one line.")
    status: CheckStatus = Field(description="pass, fail, or skip (did not apply).")
    summary: str = Field(description="One line: the figures compared, or why it was skipped.")
    problems: int = Field(default=0, description="Number of violations found (0 when passing).")
    details: tuple[str, ...] = Field(
        default=(), description=f"The first {MAX_DETAILS} violations, one line each."
    )

    @property
    def passed(self) -> bool:
        """True unless the check failed (a skipped check does not fail)."""
        return self.status != "fail"


class VerifyReport(BaseModel):
    """Every check run on one topology."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Cluster name from the spec.")
    gpus: int = Field(description="GPUs in the cluster.")
    nodes: int = Field(description="Servers in the cluster.")
    links: int = Field(description="Cables in the link list (all networks).")
    checks: tuple[CheckResult, ...] = Field(description="Check results in the order they ran.")

    @computed_field(description="True when no check failed.")  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """True when no check failed."""
        return all(c.passed for c in self.checks)

    def check(self, name: str) -> CheckResult:
        """The result of check ``name``."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)


def _result(
    name: str, title: str, problems: list[str], ok_summary: str, fail_summary: str | None = None
) -> CheckResult:
    if not problems:
        return CheckResult(name=name, title=title, status="pass", summary=ok_summary)
    return CheckResult(
        name=name,
        title=title,
        status="fail",
        summary=fail_summary or f"{len(problems):,} violation(s)",
        problems=len(problems),
        details=tuple(problems[:MAX_DETAILS]),
    )


# --------------------------------------------------------------------------- checks


def audit_port_budget(topo: FabricTopology) -> CheckResult:
    """Every switch within its radix; each (device, port) used by at most one cable."""
    title = "every switch within its port budget; each (device, port) used at most once"
    by_name = {d.name: d for d in topo.devices}
    problems: list[str] = []
    seen: dict[tuple[str, str], str] = {}
    used: dict[str, set[int]] = defaultdict(set)
    for link in topo.links:
        for dev, port, number in (
            (link.a_device, link.a_port, link.a_port_number),
            (link.b_device, link.b_port, link.b_port_number),
        ):
            d = by_name.get(dev)
            if d is None:
                problems.append(f"{link.id}: end {dev!r} is not a device of the topology")
                continue
            key = (dev, port)
            other = seen.get(key)
            if other is not None:
                problems.append(f"{dev} port {port} is used by {other} and {link.id}")
            else:
                seen[key] = link.id
            if d.role not in HOST_ROLES:
                if not 1 <= number <= d.radix:
                    problems.append(
                        f"{dev} port {port} is logical port {number}, outside 1..{d.radix}"
                    )
                used[dev].add(number)
    for dev, numbers in used.items():
        radix = by_name[dev].radix
        if len(numbers) > radix:
            problems.append(f"{dev} uses {len(numbers)} ports but has {radix}")
    switches = sum(1 for d in topo.devices if d.role not in HOST_ROLES)
    fullest = max(
        (len(v) / by_name[k].radix for k, v in used.items() if by_name[k].radix), default=0.0
    )
    return _result(
        "port-budget",
        title,
        problems,
        f"{len(seen):,} port ends on {switches:,} switches and "
        f"{topo.plan.nodes:,} servers, none shared; fullest switch {fullest:.0%} used",
    )


def audit_rail_alignment(topo: FabricTopology) -> CheckResult:
    """Every NIC-to-leaf cable lands on the leaf of the NIC's rail, SU and plane."""
    title = "NIC i of every server lands on the rail-i leaf of its SU"
    by_name = {d.name: d for d in topo.devices}
    rail_of_nic = {(n.node, n.name): (n.rail, n.plane) for n in topo.nics}
    problems: list[str] = []
    count = 0
    for link in topo.links_of("node_leaf"):
        count += 1
        nic = rail_of_nic.get((link.a_device, link.a_port))
        leaf = by_name.get(link.b_device)
        server = by_name.get(link.a_device)
        if nic is None or leaf is None or server is None:
            problems.append(f"{link.id}: NIC or leaf unknown to the topology")
            continue
        rail, plane = nic
        if (leaf.role, leaf.rail, leaf.plane, leaf.su) != ("leaf", rail, plane, server.su):
            problems.append(
                f"{link.id} (rail {rail}, plane {plane}, SU {server.su}) lands on "
                f"{leaf.name} (rail {leaf.rail}, plane {leaf.plane}, SU {leaf.su})"
            )
    return _result(
        "rail-alignment", title, problems, f"{count:,} NIC cables, each on its own rail's leaf"
    )


def audit_leaf_split(topo: FabricTopology) -> CheckResult:
    """Up/down capacity of every compute switch equals the plan's split for its tier."""
    plan = topo.plan
    title = "up/down capacity per compute switch equals the plan's split"
    down: dict[str, int] = defaultdict(int)
    up: dict[str, int] = defaultdict(int)
    down_gb: dict[str, int] = defaultdict(int)
    up_gb: dict[str, int] = defaultdict(int)
    for link in topo.links_of(*COMPUTE_ROLES):
        down[link.b_device] += 1
        down_gb[link.b_device] += link.speed_gbps
        if link.role != "node_leaf":
            up[link.a_device] += 1
            up_gb[link.a_device] += link.speed_gbps
    budgets = {
        "leaf": (plan.leaf_down, plan.leaf_up),
        "spine": (plan.spine_down, plan.spine_up),
        "core": (plan.core_radix, 0),
    }
    problems: list[str] = []
    a, b = plan.spec.ratio
    # Capacities, not port counts: an 800G uplink over 400G downlinks counts double.
    cap_down, cap_up = plan.leaf_down * plan.link_gbps, plan.leaf_up * plan.uplink_gbps
    g = math.gcd(cap_down, cap_up)
    if (cap_down // g, cap_up // g) != (a, b):
        problems.append(
            f"leaf budget {plan.leaf_down} down : {plan.leaf_up} up is not the spec's "
            f"{plan.spec.oversubscription}"
        )
    link_gb, up_gb_each = plan.link_gbps, plan.uplink_gbps
    counted = 0
    for d in topo.switches("leaf", "spine", "core"):
        counted += 1
        bd, bu = budgets[d.role]
        n_down, n_up = down[d.name], up[d.name]
        if n_up != bu:
            problems.append(f"{d.name}: {n_up} uplinks cabled, plan budgets {bu}")
        if n_down > bd:
            problems.append(f"{d.name}: {n_down} downlinks cabled, over the budget of {bd}")
        if up_gb[d.name] != bu * up_gb_each:
            problems.append(
                f"{d.name}: uplink capacity {up_gb[d.name]} Gb/s, plan {bu * up_gb_each} Gb/s"
            )
        if d.role == "leaf" and n_down == 0:
            problems.append(f"{d.name}: no server is cabled to this leaf")
    ratio = "1:1" if plan.non_blocking else plan.oversubscription
    return _result(
        "leaf-split",
        title,
        problems,
        f"{counted:,} compute switches; leaves {plan.leaf_down} down : {plan.leaf_up} up "
        f"({ratio}) at {link_gb}G"
        + (f", uplinks at {up_gb_each}G" if up_gb_each != link_gb else "")
        + (f", spines {plan.spine_down} : {plan.spine_up}" if plan.tiers == 3 else ""),
    )


def audit_gpu_reachability(topo: FabricTopology) -> CheckResult:
    """Within each plane, every GPU reaches every GPU over compute links plus PCIe."""
    plan = topo.plan
    title = "every GPU reaches every GPU over the compute fabric (per plane)"
    problems: list[str] = []
    nics_by_plane: dict[int, list[tuple[str, str, str, tuple[int, ...], tuple[str, ...]]]] = (
        defaultdict(list)
    )
    for n in topo.nics:
        nics_by_plane[n.plane].append((n.node, n.name, n.pcie_switch, n.gpus, n.gpu_pcie_switches))
    links_by_plane: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for link in topo.links_of(*COMPUTE_ROLES):
        a = f"{link.a_device}/{link.a_port}" if link.role == "node_leaf" else link.a_device
        links_by_plane[link.plane].append((a, link.b_device))
    gpus_total = 0
    for plane in range(1, plan.planes + 1):
        # Same structure as FabricTopology.graph: server—PCIe switch—NIC, GPU—PCIe switch.
        uf = UnionFind()
        gpus: set[str] = set()
        for node, nic, nsw, ngpus, gsws in nics_by_plane.get(plane, []):
            sw = f"{node}/{nsw}"
            uf.union(node, sw)
            uf.union(sw, f"{node}/{nic}")
            for gpu, gsw in zip(ngpus, gsws, strict=True):
                gname = f"{node}/gpu{gpu}"
                gpus.add(gname)
                uf.union(gname, f"{node}/{gsw}")
                uf.union(node, f"{node}/{gsw}")
        for a, b in links_by_plane.get(plane, []):
            uf.union(a, b)
        roots: dict[str, list[str]] = defaultdict(list)
        for g in gpus:
            roots[uf[g]].append(g)
        gpus_total = max(gpus_total, len(gpus))
        if len(gpus) != plan.gpus:
            problems.append(f"plane {plane}: {len(gpus):,} GPUs attached, plan has {plan.gpus:,}")
        if len(roots) > 1:
            parts = sorted(roots.values(), key=len, reverse=True)
            problems.append(
                f"plane {plane}: GPUs fall into {len(parts)} islands; e.g. "
                f"{min(parts[1])} cannot reach {min(parts[0])}"
            )
    return _result(
        "gpu-reachability",
        title,
        problems,
        f"{gpus_total:,} GPUs in one component per plane ({plan.planes} plane"
        f"{'s' if plan.planes > 1 else ''})",
    )


def bisection_mincut_tbps(topo: FabricTopology) -> tuple[float, int]:
    """Full-duplex min-cut bisection in Tb/s and the NIC-port count of the smallest plane.

    Per plane, the NIC ports are put in canonical order (SU, rail, server) so
    whole leaves fall on either side; a super-source feeds the first half, a
    super-sink drains the second, and networkx's max-flow over the compute
    links (capacity = link speed, parallel cables aggregated) gives the cut.
    Planes are independent fabrics, so their cuts add up. Twice the one-way
    flow is the full-duplex figure the sizing card prints.
    """
    by_name = {d.name: d for d in topo.devices}
    nic_links: dict[int, list[tuple[int, int, int, str, int]]] = defaultdict(list)
    cap: dict[int, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    for link in topo.links_of(*COMPUTE_ROLES):
        if link.role == "node_leaf":
            srv = by_name[link.a_device]
            nic_links[link.plane].append(
                (srv.su, link.rail, srv.index, link.b_device, link.speed_gbps)
            )
        else:
            cap[link.plane][(link.a_device, link.b_device)] += link.speed_gbps
    total = 0
    smallest = min((len(v) for v in nic_links.values()), default=0)
    for plane, ends in nic_links.items():
        ends.sort()
        half = len(ends) // 2
        g = nx.DiGraph()
        for (a, b), c in cap[plane].items():
            g.add_edge(a, b, capacity=c)
            g.add_edge(b, a, capacity=c)
        src: dict[str, int] = defaultdict(int)
        snk: dict[str, int] = defaultdict(int)
        for i, (_, _, _, leaf, speed) in enumerate(ends):
            (src if i < half else snk)[leaf] += speed
        for leaf, c in src.items():
            g.add_edge("__source__", leaf, capacity=c)
        for leaf, c in snk.items():
            g.add_edge(leaf, "__sink__", capacity=c)
        if src and snk:
            total += nx.maximum_flow_value(g, "__source__", "__sink__")
    return 2 * total / 1000, smallest


def audit_bisection(topo: FabricTopology, max_nodes: int) -> CheckResult:
    """Networkx min-cut bisection (×2, full duplex) equals the sizing figure."""
    plan = topo.plan
    title = "min-cut bisection (networkx max-flow, ×2 full duplex) equals the sizing figure"
    if plan.nodes > max_nodes:
        return CheckResult(
            name="bisection-mincut",
            title=title,
            status="skip",
            summary=f"{plan.nodes:,} servers is over the {max_nodes:,}-server limit for "
            "the flow computation",
        )
    cut, ports = bisection_mincut_tbps(topo)
    expected = plan.bandwidth.bisection_tbps
    if ports % 2:
        return CheckResult(
            name="bisection-mincut",
            title=title,
            status="skip",
            summary=f"{ports} NIC ports per plane cannot be halved; min-cut {cut:g} Tb/s, "
            f"sizing {expected:g} Tb/s",
        )
    problems = []
    if not math.isclose(cut, expected, rel_tol=1e-9, abs_tol=1e-9):
        problems.append(f"min-cut {cut:g} Tb/s but the sizing card says {expected:g} Tb/s")
    return _result(
        "bisection-mincut",
        title,
        problems,
        f"min-cut {cut:g} Tb/s = sizing {expected:g} Tb/s",
        f"min-cut {cut:g} Tb/s ≠ sizing {expected:g} Tb/s",
    )


# --------------------------------------------------------------------------- the stage


def verify_topology(topo: FabricTopology, *, mincut_max_nodes: int = 512) -> VerifyReport:
    """Run every graph check on ``topo`` (see the module docstring). Pure."""
    checks = (
        audit_port_budget(topo),
        audit_rail_alignment(topo),
        audit_leaf_split(topo),
        audit_gpu_reachability(topo),
        audit_bisection(topo, mincut_max_nodes),
    )
    return VerifyReport(
        name=topo.plan.spec.name,
        gpus=topo.plan.gpus,
        nodes=topo.plan.nodes,
        links=len(topo.links),
        checks=checks,
    )


__all__ = [
    "CheckResult",
    "VerifyReport",
    "bisection_mincut_tbps",
    "verify_topology",
]
