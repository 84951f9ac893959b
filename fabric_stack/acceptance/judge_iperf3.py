"""iperf3 runs judged against what the links carried, and placed in the rail matrix.

iperf3 measures TCP between two hosts' rail addresses. That is bound by the hosts (CPU,
one stream's window), not by the line rate, and in the twin by veths that have no line
rate at all; so a run is not held to the plan's 400G but to what the links carry:

1. the rate it was paced at (``-b``: ``test_start.target_bitrate``), stated: what the test
   offered the link;
2. the median of the iperf3 runs in the same results (at least :data:`MIN_RUNS`),
   measured: the rails compared with each other;

the lower of the two when there are both. Unpaced with fewer than :data:`MIN_RUNS` runs:
read, not judged. The floor is the usual share of that figure; the measurement is
``end.sum_received`` (what the receiving end counted).

Where: the client's address (``local_host``) is a plan rail address (RoCE and Ethernet
plans have them), else the file name says; the server's address (``remote_host``) is the
peer. The data flows client → server, server → client with ``-R``; the matrix cell
records which, so the localiser can tell a port's two directions apart.
"""

from __future__ import annotations

from statistics import median

from fabric_stack.acceptance.model import Iperf3Run
from fabric_stack.acceptance.placement import AcceptContext
from fabric_stack.acceptance.results import MatrixCell, TestResult, pass_floor
from fabric_stack.topology.build import Device

MIN_RUNS = 3
"""Unpaced runs needed before their median is a reference (two cannot outvote each other)."""


def _judged(run: Iperf3Run) -> bool:
    return run.error is None and run.protocol == "TCP" and run.received_gbps is not None


def reference(runs: list[Iperf3Run]) -> tuple[float | None, int]:
    """(median received Gb/s of the finished TCP runs, how many) — None below MIN_RUNS."""
    got = [r.received_gbps for r in runs if _judged(r) and r.received_gbps is not None]
    return (round(median(got), 3) if len(got) >= MIN_RUNS else None), len(got)


def _expected(run: Iperf3Run, ctx: AcceptContext, ref: float | None, n: int) -> tuple[
    float | None, list[str]
]:  # fmt: skip
    """The figure a run is held to, and what it rests on (module docstring)."""
    line = (
        f"iperf3 (TCP) is bound by the hosts, not by the plan's {ctx.topo.plan.link_gbps}G line "
        "rate: held to what the links carried (in the twin, veths with no line rate)"
    )
    paced = f"the rate it was paced at (iperf3 -b {run.target_gbps:g}G)" if run.target_gbps else ""
    measured = f"the median of the {n} iperf3 runs ({ref:g} Gb/s)" if ref is not None else ""
    if run.protocol != "TCP":
        return None, [f"{run.protocol}: read, not judged (the figure is TCP's)"]
    if paced and measured:
        assert run.target_gbps is not None and ref is not None
        return min(run.target_gbps, ref), [f"the lower of {paced} and {measured}", line]
    if paced:
        return run.target_gbps, [paced, line]
    if measured:
        return ref, [measured + ": the rails compared with each other", line]
    return None, [f"unpaced, and {n} iperf3 run(s): fewer than {MIN_RUNS} to compare (not judged)"]


def _place(
    run: Iperf3Run, ctx: AcceptContext
) -> tuple[Device | None, str | None, Device | None, list[str]]:
    """(client server, its rail device, peer server, notes) from the addresses or file name."""
    addr = ctx.rail_addresses
    notes: list[str] = []
    device: str | None
    if run.local_host in addr:
        name, device = addr[run.local_host]
        server = ctx.server(name)
        notes.append(f"{run.local_host} is {name}'s {device} in the plan")
    else:
        server = ctx.server(run.host) if run.host else None
        device = run.device
        notes.append("host from the file name" if server else "host not placed")
        if run.local_host and addr:
            notes.append(f"{run.local_host} is not a rail address of the plan")
    peer = None
    if run.remote_host in addr:
        peer_name, peer_device = addr[run.remote_host]
        peer = ctx.server(peer_name)
        if device and peer_device != device:
            notes.append(f"the peer's address is its {peer_device}, not {device}: across rails")
    elif run.peer:
        peer = ctx.server(run.peer)
    return server, device, peer, notes


def judge_iperf3(
    runs: list[Iperf3Run], ctx: AcceptContext, first: int
) -> list[tuple[TestResult, MatrixCell | None]]:
    """Each run judged (module docstring); ``first`` is the first one's index in the report."""
    ref, n = reference(runs)
    return [_judge(run, ctx, first + i, ref, n) for i, run in enumerate(runs)]


def _judge(
    run: Iperf3Run, ctx: AcceptContext, index: int, ref: float | None, n: int
) -> tuple[TestResult, MatrixCell | None]:
    server, device, peer, notes = _place(run, ctx)
    nic = next(
        (x for x in ctx.topo.nics if server and x.node == server.name and x.name == device), None
    )
    expected, basis = _expected(run, ctx, ref, n)
    measured = run.received_gbps if run.error is None else None
    floor = pass_floor(expected, digits=3) if expected else None
    passed = None if floor is None else measured is not None and measured >= floor
    reason = None if passed is not False else "below the floor"
    if run.error is not None:
        passed, reason = False, "no result"
        notes.append(f"iperf3: {run.error}")
    if run.retransmits:
        notes.append(f"{run.retransmits} TCP retransmits")
    flow = None if run.bidirectional else ("from peer" if run.reverse else "to peer")
    arrow = {"to peer": "→", "from peer": "←"}.get(flow or "", "↔")
    where = f"{server.name} rail {nic.rail} ({device})" if server and nic else ""
    result = TestResult(
        file=run.source,
        run=run.run,
        line=run.line,
        tool="iperf3",
        kind="iperf3",
        hosts=[h for h in (run.local_host or run.host, run.remote_host or run.peer) if h],
        servers=[s.name for s in (server, peer) if s],
        placement=f"{where} {arrow} {peer.name if peer else 'its peer'}"
        if where
        else "not placed on a plan rail",
        bytes=None,
        measured=measured,
        unit="Gb/s",
        expected=expected,
        pass_at=floor,
        shortfall_pct=round(max(0.0, 100 * (1 - measured / expected)), 1)
        if measured is not None and expected
        else None,
        passed=passed,
        fail_reason=reason,
        algorithm=None,
        basis=basis,
        suspects=[],
        notes=notes + list(run.notes),
    )
    cell = None
    if server and nic and measured is not None and passed is not None:
        cell = MatrixCell(
            server=server.name,
            su=server.su,
            rail=nic.rail,
            plane=nic.plane,
            device=nic.name,
            peer=peer.name if peer else None,
            gbps=measured,
            passed=passed,
            test=index,
            flow=flow,
        )
    return result, cell


__all__ = ["MIN_RUNS", "judge_iperf3", "reference"]
