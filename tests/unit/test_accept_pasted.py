"""`accept` on nccl-tests logs as operators paste them (issue 47): a header cut off,
several runs concatenated, ``srun --label`` prefixes, every rank alone (``nranks 1``).

The cut logs are the real samples in ``../shared/realdata/nccl-tests`` with their first
lines removed (the cut is the test's, the rest is the real log). The no-MPI log is
written here in the layout of the real ``moc-h100-roce400-2node-1gpu-allreduce-ncclinfo.log``
(INFO prefix ``HOST:PID:TID [D] NCCL INFO``, line 18's ``ncclCommInitRank … nranks N``,
rows of line 56, ``# Avg bus bandwidth`` of line 71) as nccl-tests prints it when built
without MPI and started twice by ``srun --label``: two one-rank jobs, busbw 0 (all_reduce's
busbw = algbw × 2(n−1)/n, nccl-tests doc/PERFORMANCE.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_stack.acceptance import AcceptContext, AcceptReport, judge_results
from fabric_stack.acceptance.nccl_tests import read_nccl_tests
from fabric_stack.analysis.estimate import ModelParams
from tests.unit.test_accept_realdata import REAL, ROCE, plan

MOC = "nccl-tests/moc-h100-roce400-2node-1gpu-allreduce-ncclinfo.log"


def _cut(name: str, marker: str) -> str:
    """The real log from the first line containing ``marker`` on (its header cut off)."""
    lines = (REAL / name).read_text(encoding="utf-8").splitlines()
    first = next(i for i, s in enumerate(lines) if marker in s)
    return "\n".join(lines[first:]) + "\n"


def _solo_log() -> str:
    """Two srun tasks of all_reduce_perf built without MPI, the first one's header cut."""
    out: list[str] = []
    for task, (host, pid) in enumerate((("gpu-a01", 41122), ("gpu-a02", 39817))):
        body = [
            "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 4294967296 step: 2(factor) "
            "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
            "#",
            "# Using devices",
            f"#  Rank  0 Group  0 Pid {pid} on {host} device  0 [0000:06:00] NVIDIA H100 80GB HBM3",
            f"{host}:{pid}:{pid} [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
            f"{host}:{pid}:{pid + 20} [0] NCCL INFO ncclCommInitRank comm 0x55d1c0 rank 0 "
            "nranks 1 cudaDev 0 nvmlDev 0 busId 6000 commId 0x9c1e2b3a4d5e6f70 - Init START",
            f"{host}:{pid}:{pid + 20} [0] NCCL INFO ncclCommInitRank comm 0x55d1c0 rank 0 "
            "nranks 1 cudaDev 0 nvmlDev 0 busId 6000 commId 0x9c1e2b3a4d5e6f70 - Init COMPLETE",
            "#",
            "#                                                              out-of-place"
            "                       in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw "
            "#wrong     time   algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
            "            (us)  (GB/s)  (GB/s)       ",
            "  1073741824     268435456     float     sum      -1    412.3  2604.2    0.00"
            "      0    20.11  53393.   0.00      0",
            "  2147483648     536870912     float     sum      -1    811.9  2645.0    0.00"
            "      0    20.45  105012.  0.00      0",
            "  4294967296    1073741824     float     sum      -1   1618.7  2653.3    0.00"
            "      0    20.38  210744.  0.00      0",
            "# Out of bounds values : 0 OK",
            "# Avg bus bandwidth    : 0 ",
            "#",
        ]
        if task == 0:
            body = body[4:]  # the poster's paste starts at the INFO lines
        out += [f"{task}: {s}" for s in body]
    return "\n".join(out) + "\n"


def _judge(text: str, name: str = "allreduce.log") -> AcceptReport:
    topo = plan(Path("."), {**ROCE, "gpus": 16})  # no names file: hosts stay the log's
    ctx = AcceptContext(topo, params=ModelParams(), drift="fabric-stack drift")
    return judge_results([(name, text)], ctx)


@pytest.mark.skipif(not (REAL / MOC).is_file(), reason="../shared/realdata not found")
def test_a_real_log_whose_header_was_cut_is_read_from_its_rows() -> None:
    text = _cut(MOC, "NCCL INFO NCCL_SOCKET_IFNAME")  # from line 6: header and rank lines gone
    runs = read_nccl_tests(text, "allreduce.log")
    assert len(runs) == 1
    run = runs[0]
    assert len(run.rows) == 13 and run.avg_busbw_gbs == pytest.approx(15.0418)
    assert run.rows[-1].busbw_gbs == pytest.approx(14.97)  # line 68 of the real log
    assert run.nranks == 2  # INFO 'nranks 2' (line 18)
    assert any("header" in n and "cut" in n for n in run.notes)
    report = _judge(text)
    (t,) = report.tests
    assert t.passed is None and t.measured == pytest.approx(14.97)
    assert "no '#  Rank" in t.basis[0] and "paste the log from its '# nThread'" in t.basis[0]


@pytest.mark.skipif(not (REAL / MOC).is_file(), reason="../shared/realdata not found")
def test_a_log_cut_inside_the_table_keeps_its_rows_in_the_default_layout() -> None:
    text = _cut(MOC, "  5368709120")  # the column header cut too: rows from line 58
    (run,) = read_nccl_tests(text, "x_allreduce.log")
    assert [r.bytes for r in run.rows][:2] == [5368709120, 7516192768]
    assert any("default layout" in n for n in run.notes)


def test_ranks_that_never_met_are_a_verdict_not_a_refusal() -> None:
    text = _solo_log()
    runs = read_nccl_tests(text, "allreduce.log")
    assert len(runs) == 2  # the cut first task and the whole second one
    assert all(r.solo for r in runs)
    report = _judge(text)
    tests = report.tests
    assert [t.passed for t in tests] == [False, False]
    assert {t.fail_reason for t in tests} == {"ranks never met"}
    why = tests[0].basis[0]
    assert "2 process(es) on 2 host(s)" in why and "bus bandwidth 0" in why
    assert "MPI=1" in why


def test_a_real_multi_rank_log_is_not_called_solo() -> None:
    if not (REAL / MOC).is_file():
        pytest.skip("../shared/realdata not found")
    (run,) = read_nccl_tests((REAL / MOC).read_text(encoding="utf-8"), "x.log")
    assert run.solo is None
    one = _solo_log().replace("nranks 1", "nranks 2")
    assert all(r.solo is None for r in read_nccl_tests(one, "allreduce.log"))
