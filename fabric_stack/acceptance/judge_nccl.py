"""An nccl-tests run judged against the plan's figure for that placement and size.

The figure is :func:`fabric_stack.analysis.estimate.estimate_collective` for the
job's servers (:mod:`.placement`) at the table's largest size, with the
algorithms NCCL was told to use (``NCCL_ALGO`` as NCCL echoed it), nothing
recomputed here. ``sendrecv_perf`` has no estimate: each rank sends to the next
(``src/sendrecv.cu``: peer ``rank ± 1``, busbw = algbw), so across servers one
GPU's transfer crosses one rail NIC: the figure is the rail's line rate × the
model's network efficiency (UNVERIFIED: no published sendrecv figure calibrates it).
The measured figure is the out-of-place busbw of that row.

A **per-rail job** (``NCCL_IB_HCA`` naming exactly one of the plan's rail HCAs, and NCCL
opening only that one) is how one rail is tested across SUs: its figure is the estimate
with the job's other rail NICs out (the same failure model ``hca_findings`` uses), so it
is held to what one rail carries, not flagged as a wrong setting.
"""

from __future__ import annotations

from fabric_stack.acceptance.checks import server_nics
from fabric_stack.acceptance.model import NcclRun
from fabric_stack.acceptance.nccl_suspects import nccl_suspects, one_rail
from fabric_stack.acceptance.nccl_tests import COLLECTIVE_OF
from fabric_stack.acceptance.placement import AcceptContext, Placement, place_nccl
from fabric_stack.acceptance.results import TestResult, pass_floor
from fabric_stack.analysis.estimate import ALGORITHMS, estimate_collective, place_job
from fabric_stack.analysis.whatif import Failure
from fabric_stack.errors import InputFileError, SpecError

CALIBRATED = frozenset({"all_reduce", "alltoall"})
"""Collectives docs/calibration.md checks the model against (C1-C9)."""

NCCL_ALGO_NAMES = {
    "ring": "ring",
    "tree": "tree",
    "nvls": "nvls",
    "nvlstree": "nvls_tree",
    "collnetdirect": "collnet",
    "collnetchain": "collnet",
    "collnet": "collnet",
}
"""NCCL_ALGO values (NCCL's env docs: Ring, Tree, CollnetDirect, CollnetChain, NVLS,
NVLSTree, PAT) → the estimate's algorithm names; PAT has no counterpart."""


def forced_algorithms(algo_env: str | None) -> list[str] | None:
    """The estimate's algorithms NCCL_ALGO allows (``^`` excludes), None when not set."""
    if not algo_env:
        return None
    text = algo_env.strip().lower()
    exclude = text.startswith("^")
    names = {NCCL_ALGO_NAMES[t] for t in text.lstrip("^").split(",") if t in NCCL_ALGO_NAMES}
    if exclude:
        return [a for a in ALGORITHMS if a not in names] or None
    return sorted(names) or None


def expected_busbw(
    run: NcclRun, place: Placement, ctx: AcceptContext, size: int
) -> tuple[float | None, str | None, list[str]]:
    """(expected busbw GB/s, algorithm, basis) for the run's job at ``size``."""
    test = run.test or ""
    if test == "sendrecv_perf":
        return _sendrecv(place, ctx)
    coll = COLLECTIVE_OF.get(test)
    if coll is None:
        return None, None, [f"no planned figure for {test} (not judged)"]
    algs = forced_algorithms(run.algo_env) if coll == "all_reduce" else None
    rail = one_rail(run, place, ctx)
    try:
        est = estimate_collective(
            place.topo,
            coll,
            [size],
            job_gpus=place.job_gpus,
            job_hosts=place.job_hosts,
            failures=_other_rails_out(place, ctx, rail) if rail else (),
            algorithms=algs,
            params=ctx.params,
        )
    except SpecError as exc:
        listed = len({k.rank for k in run.ranks})
        if listed >= run.nranks:
            raise InputFileError(
                run.source, f"cannot estimate this job: {exc.message}", run.line
            ) from None
        # The rank list was cut (NCCL INFO says more ranks than the '#  Rank' lines name):
        # the placement is what is missing, not a reason to refuse the rows.
        return (
            None,
            None,
            [
                f"no planned figure: the log lists {listed} of {run.nranks} rank(s) "
                f"({exc.message}); paste the whole '#  Rank' list for a full verdict"
            ],
        )
    p = est.points[0]
    uncalibrated = (
        []
        if coll in CALIBRATED
        else [
            f"no published {coll} figure calibrates the model (docs/calibration.md has "
            "all_reduce and alltoall): UNVERIFIED"
        ]
    )
    basis = [
        f"fabric-stack estimate: {coll} on {est.job.nodes} server(s), {est.job.gpus} GPUs, "
        f"{est.job.sus} SU(s) at {size:,} B"
        + (f", NCCL_ALGO={run.algo_env} (from the log)" if algs else "")
        + (f", rail {rail[1]} only (NCCL_IB_HCA={rail[0]}: the other rails out)" if rail else ""),
        *est.assumptions[:2],
        *uncalibrated,
    ]
    return p.busbw_gbs, p.algorithm, basis


def _other_rails_out(place: Placement, ctx: AcceptContext, rail: tuple[str, int]) -> list[Failure]:
    servers = place.servers or place_job(ctx.topo, place.job_gpus)
    others = [n for n in server_nics(ctx) if n.name != rail[0]]
    return [Failure(device=s.name, port=n.name) for s in servers for n in others]


def _sendrecv(place: Placement, ctx: AcceptContext) -> tuple[float, str, list[str]]:
    link = place.topo.plan.link_gbps
    if len(place.hosts) <= 1:
        bw = round(_nvlink(ctx) * ctx.params.nvlink_efficiency, 3)
        return bw, "p2p", ["sendrecv inside one server: NVLink per direction × efficiency"]
    bw = round(link / 8 * ctx.params.net_efficiency, 3)
    return (
        bw,
        "p2p",
        [
            f"sendrecv across servers: one rail NIC per transfer, {link}G × "
            f"{ctx.params.net_efficiency:g} (UNVERIFIED: no published sendrecv figure)"
        ],
    )


def _nvlink(ctx: AcceptContext) -> float:
    from fabric_stack.hardware.nvlink import nvlink_for

    fig = nvlink_for(ctx.topo.plan.spec.node_profile)
    return (ctx.params.nvlink_gbs or fig.bidirectional_gbs) / 2


def judge_nccl(run: NcclRun, ctx: AcceptContext) -> TestResult:
    """The run judged: expected figure, pass/fail, shortfall, suspects."""
    if run.test is None and run.solo is None:
        raise InputFileError(
            run.source,
            f"cannot tell which nccl-tests test this is ({run.test_from}): keep the command "
            "line in the log or put the test in the file name (…_allgather…, …_alltoall…)",
            run.line,
        )
    if run.solo is not None or not run.ranks:
        return _unplaced(run)
    place = place_nccl(run, ctx)
    row = run.rows[-1] if run.rows else None
    expected, alg, basis = (
        expected_busbw(run, place, ctx, row.bytes) if row else (None, None, ["no result row"])
    )
    measured = row.busbw_gbs if row else None
    passed: bool | None = None
    reason = None
    if row is None:
        passed, reason = False, "crashed" if run.failures else "no result"
    elif run.failures:
        passed, reason = False, "crashed"
    elif any(r.wrong or r.in_wrong for r in run.rows):
        passed, reason = False, "wrong results"
    elif expected is not None and measured is not None:
        passed = measured >= pass_floor(expected)
        reason = None if passed else "below the floor"
    shortfall = (
        round(max(0.0, 100 * (1 - measured / expected)), 1)
        if measured is not None and expected
        else None
    )
    suspects = nccl_suspects(run, place, ctx, measured, expected, alg, passed)
    return TestResult(
        file=run.source,
        run=run.run,
        line=run.line,
        tool="nccl-tests",
        kind=run.test,
        hosts=place.hosts,
        servers=[s.name for s in place.servers],
        placement=place.how,
        bytes=row.bytes if row else None,
        measured=measured,
        unit="GB/s busbw",
        expected=expected,
        pass_at=pass_floor(expected) if expected else None,
        shortfall_pct=shortfall,
        passed=passed,
        fail_reason=reason,
        algorithm=alg,
        basis=place.basis + basis,
        suspects=suspects,
        notes=[f"test {run.test_from}", *run.notes],
    )


def _unplaced(run: NcclRun) -> TestResult:
    """A run that cannot be set against the plan, with what its rows do say.

    Ranks that never met (:attr:`NcclRun.solo`) fail whatever the figure: nothing
    crossed the fabric. A run with no ``#  Rank`` lines (cut with the header) is not
    judged: the rows give a figure, the missing lines say where it ran."""
    row = run.rows[-1] if run.rows else None
    hosts = list(dict.fromkeys([*(r.host for r in run.ranks), *(n.host for n in run.nets)]))
    if run.solo is not None:
        passed: bool | None = False
        reason: str | None = "ranks never met"
        missing = [run.solo]
    else:
        passed, reason = None, None
        missing = [
            "not judged: no '#  Rank … on HOST device D' lines (cut with the header), so "
            "the job's servers and GPUs are unknown; paste the log from its '# nThread' "
            "line for a verdict against the plan"
        ]
    return TestResult(
        file=run.source,
        run=run.run,
        line=run.line,
        tool="nccl-tests",
        kind=run.test or "",
        hosts=hosts,
        servers=[],
        placement="not placed",
        bytes=row.bytes if row else None,
        measured=row.busbw_gbs if row else None,
        unit="GB/s busbw",
        expected=None,
        pass_at=None,
        shortfall_pct=None,
        passed=passed,
        fail_reason=reason,
        algorithm=None,
        basis=missing,
        suspects=[],
        notes=[f"test {run.test_from}", *run.notes],
    )


__all__ = ["expected_busbw", "forced_algorithms", "judge_nccl"]
