"""What an nccl-tests log says could cost (or flatter) its figure, in the plan's words.

Each finder reads one kind of evidence and returns :class:`Suspect` records:

* the run crashed (``Test NCCL failure`` lines), matched against the known issues
  with a maintainer's diagnosis (:data:`KNOWN_ISSUES`);
* ``#wrong`` results;
* the HCAs NCCL opened (``NET/IB : Using``) against the plan's rail HCAs for the
  GPUs used, and the ``NCCL_IB_HCA`` it was given against the one the project
  renders (``render nccl``): fewer rails, other HCAs, the setting behind them;
* TCP sockets instead of RDMA; GPUDirect RDMA off; several GPUs on one NIC;
* an erratic curve (busbw collapsing at some sizes);
* a 2-server all-reduce whose figure comes from tree/NVLSTree, which sends half
  the bytes a ring does: it passes without proving the rails (NCCL staff's
  warning, docs/calibration.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabric_stack.acceptance.checks import (
    cable_text,
    drift_check,
    hca_names,
    nic_check,
    rail_cable,
    rail_label,
    rendered_ib_hca,
    server_nics,
)
from fabric_stack.acceptance.model import NcclRun
from fabric_stack.acceptance.nccl_tests import COLLECTIVE_OF
from fabric_stack.acceptance.placement import AcceptContext, Placement
from fabric_stack.acceptance.results import Suspect, pass_floor
from fabric_stack.analysis.estimate import estimate_collective, place_job
from fabric_stack.analysis.whatif import Failure
from fabric_stack.topology.build import Nic


@dataclass(frozen=True)
class KnownIssue:
    """A failure signature a maintainer diagnosed in a public thread."""

    message: str
    """Regex over the 'Test NCCL failure' message."""
    fixed_in: tuple[int, int]
    """NCCL (major, minor) that fixed it."""
    source: str
    diagnosis: str


KNOWN_ISSUES = (
    KnownIssue(
        message=r"unhandled cuda error",
        fixed_in=(2, 27),
        source="NVIDIA/nccl-tests#322 ('Reducing maxBytes to … due to memory limitation')",
        diagnosis="AddyLaddy (NVIDIA): 'a bug in the NCCL library memory allocator that has "
        "been fixed in NCCL 2.27.x'",
    ),
)


def _version(text: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m[1]), int(m[2])) if m else None


def _hosts_text(hosts: list[str], limit: int = 4) -> str:
    return ", ".join(hosts[:limit]) + (f" … ({len(hosts)} hosts)" if len(hosts) > limit else "")


def crash(run: NcclRun) -> list[Suspect]:
    """The run's failure lines, one suspect per distinct message."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    hosts: dict[tuple[str, str, str], list[str]] = {}
    for f in run.failures:
        key = (f.kind, f.where, f.message)
        groups.setdefault(key, []).append(f.line)
        hosts.setdefault(key, [])
        if f.host not in hosts[key]:
            hosts[key].append(f.host)
    out = []
    after = f"after the {run.rows[-1].bytes:,} B row" if run.rows else "before any result row"
    for (kind, where, message), lines in groups.items():
        why = (
            f"\"Test {kind} failure {where} '{message.strip()}'\" on "
            f"{len(hosts[kind, where, message])} host(s), lines {lines[0]}–{lines[-1]}, {after}"
        )
        check = "rerun with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=ALLOC,INIT) for the cause"
        for k in KNOWN_ISSUES:
            if re.search(k.message, message, re.I):
                ver = _version(run.nccl_version)
                if ver is not None and ver >= k.fixed_in:
                    continue
                why += f". The same failure is {k.source}, where {k.diagnosis}; this log " + (
                    f"prints NCCL {run.nccl_version}"
                    if ver
                    else "does not print the NCCL version: UNVERIFIED that it is older"
                )
                check = (
                    "print the version (NCCL_DEBUG=VERSION) and rerun with NCCL >= "
                    f"{k.fixed_in[0]}.{k.fixed_in[1]} per that thread; " + check
                )
        out.append(
            Suspect(
                what="the run crashed",
                where=_hosts_text(hosts[kind, where, message]),
                why=why,
                check=check,
            )
        )
    return out


def wrong_results(run: NcclRun) -> list[Suspect]:
    """Rows with #wrong > 0: corrupted data, whatever the bandwidth."""
    bad = [r for r in run.rows if (r.wrong or 0) > 0 or (r.in_wrong or 0) > 0]
    if not bad:
        return []
    r = bad[0]
    return [
        Suspect(
            what="wrong results",
            where="the job's GPUs and NICs ("
            + _hosts_text(list(dict.fromkeys(run_hosts(run))))
            + ")",
            why=f"#wrong {r.wrong or r.in_wrong} at {r.bytes:,} B (line {r.line}) and "
            f"{len(bad) - 1} more row(s): the collective returned corrupted data",
            check="rerun with -c 1 on subsets of the hosts to find the one that corrupts; "
            "check `dmesg` for GPU Xid and NIC errors",
        )
    ]


def run_hosts(run: NcclRun) -> list[str]:
    """Hosts of the rank lines, in order."""
    return [r.host for r in run.ranks]


def planned_nics(ctx: AcceptContext, devices: frozenset[int]) -> list[Nic]:
    """The plan's rail NICs of the GPUs a job used (all rails when not known)."""
    nics = server_nics(ctx)
    used = [n for n in nics if set(n.gpus) & devices]
    return used or nics


def one_rail(run: NcclRun, place: Placement, ctx: AcceptContext) -> tuple[str, int] | None:
    """(HCA, rail) of a per-rail job: ``NCCL_IB_HCA`` names exactly one of the plan's rail
    HCAs and NCCL opened only it (how one rail is tested across SUs); None otherwise."""
    if place.topo is not ctx.topo or not run.ib_hca:
        return None
    rails = {n.name: n.rail for n in server_nics(ctx)}
    named = {h for v in run.ib_hca.values() for h in hca_names(v)}
    opened = {d.name for hn in run.nets for d in hn.devices}
    if len(named) != 1 or not named <= rails.keys() or not opened <= named:
        return None
    (hca,) = named
    return hca, rails[hca]


def hca_findings(run: NcclRun, place: Placement, ctx: AcceptContext, failed: bool) -> list[Suspect]:
    """The HCAs NCCL opened vs the plan's rails, and NCCL_IB_HCA vs the rendered value."""
    out: list[Suspect] = []
    if one_rail(run, place, ctx):
        return out  # a per-rail job: its one HCA is the point, and its figure says so
    planned = planned_nics(ctx, place.devices)
    seen: set[tuple[tuple[str, ...], str | None]] = set()
    for hn in run.nets:
        used = [d.name for d in hn.devices]
        setting = run.ib_hca.get(hn.host)
        if (tuple(used), setting) in seen:
            continue
        seen.add((tuple(used), setting))
        if not used:
            out.append(_sockets(hn.host, hn.line))
            continue
        missing = [n for n in planned if n.name not in used]
        other = [u for u in used if u not in {n.name for n in planned}]
        if setting is not None and setting.lstrip("=") == "mlx5":
            # SR-IOV pods see VFs under other mlx5_N names: only the count compares
            missing, other = planned[len(used) :], []
        if not missing and not other:
            continue
        evidence = (
            f"NCCL opened {len(used)} HCA(s) on {hn.host}: {', '.join(used)} (line {hn.line})"
            + (
                f"; NCCL echoed 'NCCL_IB_HCA set to {setting}' (line {run.ib_hca_line})"
                if setting
                else "; NCCL_IB_HCA was not set (NCCL uses every HCA it finds)"
            )
            + f"; the plan's rail HCAs for GPUs {sorted(place.devices)} are "
            f"{', '.join(n.name for n in planned)} ({rail_label(planned)})"
        )
        chosen = setting is not None and not any(n.name in hca_names(setting) for n in missing)
        rails_only = _estimate_without(run, place, ctx, missing) if failed and not other else None
        tail = (
            f"; with only the HCAs it opened, the plan's estimate is {rails_only:.1f} GB/s "
            f"(measured {run.rows[-1].busbw_gbs:.1f})"
            if rails_only is not None
            else ""
        )
        if chosen and setting is not None:
            s = _setting(ctx, hn.host, setting, planned, missing, other, evidence)
            out.append(s.model_copy(update={"why": s.why + tail}))
            continue
        if missing:
            s = _unopened(ctx, hn.host, missing, evidence)
            out.append(s.model_copy(update={"why": s.why + tail}))
        if other:
            out.append(_outside(ctx, hn.host, planned, other, evidence))
    return out


def _setting(
    ctx: AcceptContext,
    host: str,
    setting: str,
    planned: list[Nic],
    missing: list[Nic],
    other: list[str],
    evidence: str,
) -> Suspect:
    why = evidence
    if missing:
        names = ", ".join(n.name for n in missing)
        why += f": {names} ({rail_label(missing)}) carry no NCCL traffic"
    if other:
        why += (
            f"; it selects {', '.join(other)}, not a rail HCA of the plan (a storage or "
            "management NIC, or the site names its rail NICs differently from the server profile)"
        )
    return Suspect(
        what="the NCCL_IB_HCA setting",
        where=f"NCCL_IB_HCA={setting} in the job's environment ({host})",
        why=why,
        check=f"set NCCL_IB_HCA={rendered_ib_hca(planned)} as `fabric-stack render nccl` writes "
        f"it (nccl/{ctx.topo.plan.spec.fabric}.env) and rerun"
        + (
            f"; if `ibdev2netdev` on {host} shows {other[0]} is a rail NIC, the node profile's "
            "RDMA names are wrong for this site"
            if other
            else ""
        ),
    )


def _unopened(ctx: AcceptContext, host: str, missing: list[Nic], evidence: str) -> Suspect:
    server = ctx.server(host)
    cables = [
        cable_text(c)
        for n in missing
        if server is not None and (c := rail_cable(ctx, server.name, n.name)) is not None
    ]
    names = ", ".join(n.name for n in missing)
    return Suspect(
        what=f"rail HCAs NCCL did not open ({rail_label(missing)})",
        where=f"{names} on {host}",
        why=evidence + f": {names} carry no NCCL traffic although nothing excludes them",
        check=nic_check(missing[0].name, host)
        + f"; {drift_check(ctx, ', '.join(cables) or names)}",
        cables=cables,
    )


def _outside(
    ctx: AcceptContext, host: str, planned: list[Nic], other: list[str], evidence: str
) -> Suspect:
    return Suspect(
        what="HCAs outside the plan's rails",
        where=f"{', '.join(other)} on {host}",
        why=evidence + ": a storage or management NIC carries collectives, or the site names "
        "its rail NICs differently from the server profile",
        check=f"on {host}: `ibdev2netdev` / `rdma link show`; if these are the rail NICs, the "
        f"node profile's RDMA names are wrong for this site, else set "
        f"NCCL_IB_HCA={rendered_ib_hca(planned)} (nccl/{ctx.topo.plan.spec.fabric}.env from "
        "`fabric-stack render nccl`)",
    )


def _estimate_without(
    run: NcclRun, place: Placement, ctx: AcceptContext, missing: list[Nic]
) -> float | None:
    """The estimate of the job with the missing HCAs' cables out (whole plan only)."""
    coll = COLLECTIVE_OF.get(run.test or "")
    if coll is None or place.topo is not ctx.topo or not run.rows:
        return None
    servers = place.servers or place_job(ctx.topo, place.job_gpus)
    failures = [Failure(device=s.name, port=n.name) for s in servers for n in missing]
    est = estimate_collective(
        ctx.topo,
        coll,
        [run.rows[-1].bytes],
        job_hosts=[s.name for s in servers],
        failures=failures,
        params=ctx.params,
        index=ctx.index,
    )
    return est.points[0].busbw_gbs


def _sockets(host: str, line: int) -> Suspect:
    return Suspect(
        what="NCCL on TCP sockets, not RDMA",
        where=f"{host}",
        why=f"'NET/IB : No device found' (line {line}): NCCL found no usable HCA and uses sockets",
        check=f"on {host}: `ibv_devinfo` (are the rail HCAs visible? in a pod: the RDMA device "
        "plugin resources), and NCCL_IB_HCA",
    )


def transport(run: NcclRun, place: Placement, ctx: AcceptContext) -> list[Suspect]:
    """GPUDirect RDMA off; several GPUs of a server on one NIC connection."""
    out = []
    hosts = _hosts_text(place.hosts)
    if run.gdr is False:
        out.append(
            Suspect(
                what="GPUDirect RDMA not in use",
                where=f"the NIC path on {hosts}",
                why=f"line {run.gdr_line}: NCCL connected without GPUDirect RDMA ('GDR 0', or "
                "channels via NET without /GDRDMA): data is staged through host memory. That it "
                "costs this shortfall is a reading of the log (UNVERIFIED)",
                check="on each host: `lsmod | grep nvidia_peermem` (GPUDirect RDMA's kernel "
                "module), NCCL_NET_GDR_LEVEL, and `nvidia-smi topo -m` (the plan puts each GPU "
                "and its rail NIC on one PCIe switch)",
            )
        )
    used = max((len(h.devices) for h in run.nets), default=0)
    planned = len(planned_nics(ctx, place.devices))
    if run.shared_nic and used and place.ranks_per_host > used and planned > used:
        out.append(
            Suspect(
                what=f"{place.ranks_per_host} GPUs per server share {used} NIC(s)",
                where=f"{hosts}",
                why=f"line {run.shared_line}: channels via NET/…/Shared; {place.ranks_per_host} "
                f"ranks per server, {used} HCA(s) opened where the plan gives these GPUs "
                f"{planned}: the server's network bandwidth is split between its GPUs",
                check="give each GPU its rail NIC (NCCL_IB_HCA as `fabric-stack render nccl` "
                "writes it); if the servers have fewer NICs, the plan's rails are wrong for them",
            )
        )
    return out


ERRATIC_SHARE = 0.25
"""A row at or below this share of the best busbw of the smaller sizes before it (from
1 MiB up) is a collapse: no bandwidth limit makes a larger message slower per byte."""


def erratic(run: NcclRun) -> list[Suspect]:
    """Sizes where busbw collapses below :data:`ERRATIC_SHARE` of the best smaller size."""
    best, dips = 0.0, []
    for r in run.rows:
        if r.bytes >= 1 << 20 and best > 1.0 and r.busbw_gbs <= ERRATIC_SHARE * best:
            dips.append((r, best))
        best = max(best, r.busbw_gbs)
    if not dips:
        return []
    sizes = ", ".join(_size(r.bytes) for r, _ in dips)
    lo, hi = min(r.busbw_gbs for r, _ in dips), max(r.busbw_gbs for r, _ in dips)
    t_lo, t_hi = min(r.time_us for r, _ in dips), max(r.time_us for r, _ in dips)
    return [
        Suspect(
            what="erratic bandwidth",
            where=f"the fabric path of this job ({_hosts_text(place_hosts(run))})",
            why=f"busbw collapses at {sizes} ({lo:g}–{hi:g} GB/s, {t_lo:,.0f}–{t_hi:,.0f} µs per "
            f"operation; lines {dips[0][0].line}–{dips[-1][0].line}) after {dips[0][1]:g} GB/s at "
            "a smaller size: a stall, not a bandwidth limit (cause UNVERIFIED)",
            check="rerun: collapses at the same sizes point at the fabric (congestion, adaptive "
            "routing, PFC/ECN on RoCE), at other sizes at the hosts; switch port counters "
            "(discards, pause frames) during the run",
        )
    ]


def place_hosts(run: NcclRun) -> list[str]:
    """Distinct hosts of the rank lines."""
    return list(dict.fromkeys(run_hosts(run)))


def _size(n: int) -> str:
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n:,} B"


def two_servers(
    run: NcclRun, place: Placement, ctx: AcceptContext, measured: float | None, alg: str | None
) -> list[Suspect]:
    """A 2-server all-reduce judged on tree/NVLSTree figures: it does not prove the rails."""
    if run.test != "all_reduce_perf" or len(place.hosts) != 2 or alg not in ("tree", "nvls_tree"):
        return []
    ring = estimate_collective(
        place.topo,
        "all_reduce",
        [run.rows[-1].bytes],
        job_gpus=place.job_gpus,
        job_hosts=place.job_hosts,
        algorithms=["ring"],
        params=ctx.params,
    ).points[0]
    high = measured is not None and measured > ring.busbw_gbs
    above = f" (measured {measured:.1f}, above it)" if high else ""
    return [
        Suspect(
            what="a 2-server result flattered by tree/NVLSTree",
            where=f"the test itself ({', '.join(place.hosts)})",
            why=f"on 2 servers NCCL's {alg} sends half the bytes a ring does, so busbw exceeds "
            f"what the rails carry at scale: the plan's ring figure here is {ring.busbw_gbs:.1f} "
            f"GB/s{above}. NCCL staff: 2-node results are 'an aberration', the case is ideal for "
            "Tree, NCCL_ALGO=Ring gives a more realistic view (kiskra-nvidia, "
            "NVIDIA/nccl-tests#309); 'On two nodes, NCCL uses the tree (or nvlstree) algorithm "
            "which can indeed go beyond the network bottleneck' (sjeaugey, NVIDIA/nccl-tests#196)",
            check=f"rerun with NCCL_ALGO=Ring (pass at >= {pass_floor(ring.busbw_gbs):g} GB/s) or "
            "on 3 or more servers",
        )
    ]


UNEXPLAINED = "not localised by this log"
"""The ``what`` of the suspect that says how to get the evidence (dropped once the per-rail
sweep localises the shortfall)."""


def unexplained(run: NcclRun, place: Placement, ctx: AcceptContext) -> Suspect:
    """A shortfall this log alone cannot place: how to get the evidence that can."""
    nics = planned_nics(ctx, place.devices)
    info = (
        "the log has NCCL_DEBUG=INFO lines and they show nothing wrong"
        if run.info_lines
        else "the log has no NCCL_DEBUG=INFO lines (which NICs NCCL used is not known)"
    )
    return Suspect(
        what=UNEXPLAINED,
        where=_hosts_text(place.hosts),
        why=info,
        check=f"run the per-rail sweep (`ib_write_bw -d {nics[0].name} --report_gbits PEER` for "
        f"each rail HCA {nics[0].name}…{nics[-1].name}, one file <host>_<device>.txt each) and "
        "give the files to accept with this log; rerun with NCCL_DEBUG=INFO; "
        + drift_check(ctx, "the job's cables"),
    )


def nccl_suspects(
    run: NcclRun,
    place: Placement,
    ctx: AcceptContext,
    measured: float | None,
    expected: float | None,
    alg: str | None,
    passed: bool | None,
) -> list[Suspect]:
    """Every finder of the module, in the order they explain a shortfall."""
    failed = passed is False
    out = crash(run) + wrong_results(run) + hca_findings(run, place, ctx, failed)
    if failed:
        out += transport(run, place, ctx) + erratic(run)
    if run.rows:
        out += two_servers(run, place, ctx, measured, alg)
    if failed and not out and measured is not None and expected:
        out.append(unexplained(run, place, ctx))
    return out


__all__ = [
    "ERRATIC_SHARE",
    "KNOWN_ISSUES",
    "UNEXPLAINED",
    "KnownIssue",
    "crash",
    "erratic",
    "hca_findings",
    "nccl_suspects",
    "one_rail",
    "planned_nics",
    "transport",
    "two_servers",
    "unexplained",
]
