"""A perftest run judged against the plan's per-rail figure, and placed in the rail matrix.

The figure is what the design report and the rendered acceptance tests state for
``ib_write_bw``: the rail cable's line rate × the estimate model's network
efficiency (:class:`~fabric_stack.analysis.estimate.ModelParams`, calibrated in
docs/calibration.md). ``ib_read_bw`` and ``ib_send_bw`` are held to the same figure
(UNVERIFIED for them: the model was calibrated on NCCL, not on RDMA read/send); a
bidirectional run (``-b``) to twice it (UNVERIFIED: perftest reports the sum of both
directions). Latency tests are read and listed, not judged: the plan has no
latency figure. The measured figure is ``BW average`` of the largest message size.
"""

from __future__ import annotations

from fabric_stack.acceptance.checks import rail_cable
from fabric_stack.acceptance.model import PerftestRun
from fabric_stack.acceptance.placement import AcceptContext
from fabric_stack.acceptance.results import MatrixCell, TestResult, pass_floor


def rail_figure(ctx: AcceptContext, speed_gbps: int, bidirectional: bool) -> float:
    """Expected Gb/s of one rail: line rate × network efficiency (× 2 both ways)."""
    return round(speed_gbps * ctx.params.net_efficiency * (2 if bidirectional else 1), 1)


def judge_perftest(
    run: PerftestRun, ctx: AcceptContext, index: int
) -> tuple[TestResult, MatrixCell | None]:
    """The run judged, and its matrix cell when it is a bandwidth test on a plan rail
    (``index`` is the test's position in the report)."""
    server = ctx.server(run.host) if run.host else None
    peer = ctx.server(run.peer) if run.peer else None
    notes = [f"host from the {run.host_from}" if run.host else f"host {run.host_from}", *run.notes]
    link = rail_cable(ctx, server.name, run.device) if server and run.device else None
    nic = next(
        (n for n in ctx.topo.nics if server and n.node == server.name and n.name == run.device),
        None,
    )
    if run.host and server is None:
        notes.append(f"{run.host} is not a server of the plan (give --names FILE)")
    elif server is not None and link is None:
        notes.append(f"{run.device} is not a rail NIC of {server.name} in the plan")
    if run.peer and peer is None:
        notes.append(f"the peer {run.peer} is not a server of the plan")
    speed = link.speed_gbps if link else ctx.topo.plan.link_gbps
    row = max(run.rows, key=lambda r: r.bytes) if run.rows else None
    expected = rail_figure(ctx, speed, run.bidirectional) if run.bandwidth else None
    basis = (
        [
            f"{speed}G rail × network efficiency {ctx.params.net_efficiency:g} (docs/"
            "calibration.md)" + (" × 2 (bidirectional, UNVERIFIED)" if run.bidirectional else ""),
            *(
                []
                if run.test == "ib_write_bw"
                else [f"the ib_write_bw figure, applied to {run.test} (UNVERIFIED)"]
            ),
        ]
        if expected
        else ["latency test: the plan has no latency figure (not judged)"]
    )
    notes += _mtu_note(run, ctx)
    if run.bandwidth and row is None:
        notes.append("no result row: the run did not finish")
    measured = row.avg_gbps if row else None
    passed = None if expected is None else measured is not None and measured >= pass_floor(expected)
    shortfall = (
        round(max(0.0, 100 * (1 - measured / expected)), 1) if measured and expected else None
    )
    reason = None if passed is not False else "below the floor"
    if run.bandwidth and not run.rows:
        passed, reason = False, "no result"
    result = TestResult(
        file=run.source,
        run=run.run,
        line=run.line,
        tool="perftest",
        kind=run.test,
        hosts=[h for h in (run.host, run.peer) if h],
        servers=[s.name for s in (server, peer) if s],
        placement=(
            f"{server.name} rail {nic.rail} ({run.device})"
            if server and nic
            else "not placed on a plan rail"
        ),
        bytes=row.bytes if row else None,
        measured=measured,
        unit="Gb/s",
        expected=expected,
        pass_at=pass_floor(expected) if expected else None,
        shortfall_pct=shortfall,
        passed=passed,
        fail_reason=reason,
        algorithm=None,
        basis=basis,
        suspects=[],
        notes=notes,
    )
    cell = None
    if server and nic and run.bandwidth and measured is not None and passed is not None:
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
            flow=_flow(run),
        )
    return result, cell


def _flow(run: PerftestRun) -> str | None:
    """Which way the data ran: a client writes or sends to its server, reads from it."""
    if run.bidirectional or run.peer is None:
        return None
    if run.test in ("ib_write_bw", "ib_send_bw"):
        return "to peer"
    return "from peer" if run.test == "ib_read_bw" else None


def _mtu_note(run: PerftestRun, ctx: AcceptContext) -> list[str]:
    """RoCE at a small RDMA MTU where the plan's rails carry jumbo frames."""
    plan_mtu = ctx.topo.plan.spec.networks.compute.mtu or 9000
    if run.link_type == "Ethernet" and run.mtu and run.mtu < 4096 and plan_mtu >= 4200:
        return [
            f"RDMA MTU {run.mtu} B on Ethernet (header of line {run.line}) where the plan's "
            f"rail MTU is {plan_mtu}: RoCE could use 4096 (check the interface MTU)"
        ]
    return []


__all__ = ["judge_perftest", "rail_figure"]
