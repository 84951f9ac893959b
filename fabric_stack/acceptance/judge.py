"""All results of an acceptance run judged together: the steps of `fabric-stack accept`.

In order, because each needs the one before:

1. read every file (:func:`read_results`: nccl-tests, perftest and iperf3 runs; a file
   with none is refused);
2. judge each run (:func:`~.judge_nccl.judge_nccl`, :func:`~.judge_perftest.judge_perftest`
   on its own; :func:`~.judge_iperf3.judge_iperf3` against the iperf3 runs together, whose
   median is a reference), which also places the perftest and iperf3 runs in the rail
   matrix;
3. localise over the whole matrix (:func:`~.localise.localise`): only the sweep
   as a whole tells a cable from a leaf from a host;
4. hand the matrix's findings to the failed nccl-tests runs on the same servers
   (a ring runs at its slowest rail);
5. set the jobs against each other (:func:`~.uplink_suspects.localise_uplinks`): a job
   across SUs that falls short while the job inside each of its SUs passes points at
   the uplinks between them.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabric_stack.acceptance.iperf3 import looks_like_iperf3, read_iperf3
from fabric_stack.acceptance.judge_iperf3 import judge_iperf3
from fabric_stack.acceptance.judge_nccl import judge_nccl
from fabric_stack.acceptance.judge_perftest import judge_perftest
from fabric_stack.acceptance.lines import numbered
from fabric_stack.acceptance.localise import localise
from fabric_stack.acceptance.model import (
    Iperf3Run,
    NcclRun,
    PerftestRun,
    UnrecognisedResultError,
)
from fabric_stack.acceptance.nccl_suspects import UNEXPLAINED
from fabric_stack.acceptance.nccl_tests import read_nccl_tests
from fabric_stack.acceptance.perftest import read_perftest
from fabric_stack.acceptance.placement import AcceptContext
from fabric_stack.acceptance.results import AcceptReport, MatrixCell, Suspect, TestResult
from fabric_stack.acceptance.uplink_suspects import JobScope, job_scope, localise_uplinks


def looks_like_result(text: str) -> bool:
    """Whether ``text`` has an nccl-tests header, a perftest title or iperf3's JSON (cheap:
    for skipping the other files of a results directory)."""
    from fabric_stack.acceptance.nccl_tests import AVG, HEADER, table_line
    from fabric_stack.acceptance.perftest import TITLE

    if looks_like_iperf3(text):
        return True
    # A pasted nccl-tests log may start below its header: its table or its average says it.
    return any(
        HEADER.match(s) or TITLE.match(s) or AVG.match(s) or table_line(s)
        for _no, s in numbered(text)
    )


def read_results(
    text: str, source: str
) -> tuple[list[NcclRun], list[PerftestRun], list[Iperf3Run]]:
    """The nccl-tests, perftest and iperf3 runs in one file's text (a JSON text is iperf3's)."""
    if text.lstrip().startswith("{"):
        return [], [], read_iperf3(text, source)
    nccl = read_nccl_tests(text, source)
    perf = read_perftest(text, source)
    if not nccl and not perf:
        raise UnrecognisedResultError(
            source,
            "neither nccl-tests output (no '# nThread … nGpus …' header) nor perftest output "
            "(no '… BW Test' or '… Latency Test' title) nor iperf3 -J output (no JSON object)",
        )
    return nccl, perf, []


def plan_line(ctx: AcceptContext) -> str:
    """The plan in one line: '16 servers × 8 GPUs, 8 rails × 400G infiniband, 1 SU'."""
    p = ctx.topo.plan
    s = p.spec
    return (
        f"{s.name}: {p.nodes} servers × {s.gpus_per_node} GPUs ({s.node_profile.name}), "
        f"{p.rails * p.planes} rails × {p.link_gbps}G {s.fabric}, {p.sus} SU(s), {p.tiers} tiers"
    )


def judge_results(
    files: Iterable[tuple[str, str]], ctx: AcceptContext, skipped: Iterable[str] = ()
) -> AcceptReport:
    """``files`` as (source, text) judged against ``ctx`` (module docstring)."""
    tests: list[TestResult] = []
    cells: list[MatrixCell] = []
    iperf: list[Iperf3Run] = []
    scopes: list[JobScope] = []
    for source, text in files:
        nccl, perf, ip3 = read_results(text, source)
        for job in nccl:
            tests.append(judge_nccl(job, ctx))
            scopes.append(job_scope(len(tests) - 1, job, tests[-1], ctx))
        iperf += ip3
        for run in perf:
            result, cell = judge_perftest(run, ctx, len(tests))
            tests.append(result)
            if cell is not None:
                cells.append(cell)
    for result, cell in judge_iperf3(iperf, ctx, len(tests)):  # after: the median needs all
        tests.append(result)
        if cell is not None:
            cells.append(cell)
    found = localise(cells, tests, ctx)
    tests = [_with(t, found.get(i, [])) for i, t in enumerate(tests)]
    tests = _share_with_nccl(tests, cells, found)
    tests = localise_uplinks(tests, scopes, ctx)
    return AcceptReport(plan=plan_line(ctx), tests=tests, matrix=cells, skipped=list(skipped))


def _with(t: TestResult, extra: list[Suspect]) -> TestResult:
    if not extra:
        return t
    merged = list(t.suspects) + [s for s in extra if s not in t.suspects]
    return t.model_copy(update={"suspects": merged})


def _share_with_nccl(
    tests: list[TestResult], cells: list[MatrixCell], found: dict[int, list[Suspect]]
) -> list[TestResult]:
    """Failed nccl-tests runs get the sweep's findings on their servers."""
    by_server: dict[str, list[Suspect]] = {}
    for c in cells:
        for s in found.get(c.test, []):
            if s not in by_server.setdefault(c.server, []):
                by_server[c.server].append(s)
    note = " (from the per-rail sweep: a collective runs at its slowest rail)"
    out = []
    for t in tests:
        if t.tool == "nccl-tests" and t.passed is False and t.servers:
            extra: dict[tuple[str, str], Suspect] = {}
            for srv in t.servers:
                for s in by_server.get(srv, []):
                    extra.setdefault((s.what, s.where), s.model_copy(update={"why": s.why + note}))
            if extra:  # the sweep localises what the log alone could not
                kept = [s for s in t.suspects if s.what != UNEXPLAINED]
                t = _with(t.model_copy(update={"suspects": kept}), list(extra.values()))
        out.append(t)
    return out


__all__ = ["judge_results", "looks_like_result", "plan_line", "read_results"]
