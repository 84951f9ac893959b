"""`accept` on nccl-tests logs as operators paste them (issue 47): a header cut off,
several runs concatenated, ``srun --label`` prefixes, every rank alone (``nranks 1``),
NCCL_DEBUG=INFO lines between the rows, and nccl-tests' older layouts (2017's first
release, 2019's resync; NVIDIA/nccl-tests b188a15 and cbe7f65) concatenated with today's.

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


# NCCL_DEBUG=INFO lines as NCCL prints them (``HOST:PID:TID [DEV] NCCL INFO …``, the real
# MOC log's lines 6-45), some with figures that look like a table's: none is a row.
NOISE = [
    "MOC-R4PCC04U37:574691:574719 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/1",
    "MOC-R4PCC04U37:574691:574714 [0] NCCL INFO 2 coll channels, 2 collnet channels, "
    "0 nvls channels, 2 p2p channels, 2 p2p channels per peer",
    "MOC-R4PCC04U37:574691:574714 [0] NCCL INFO CC Off, workFifoBytes 1048576",
    "MOC-R4PCC04U37:574691:574714 [0] NCCL INFO 1073741824 268435456 float sum -1 busbw 15.12",
    "MOC-R4PCC04U37:574691:574723 [0] NCCL INFO comm 0x387d330 rank 0 nranks 2 cudaDev 0 "
    "busId 6000 - Destroy COMPLETE",
]


@pytest.mark.skipif(not (REAL / MOC).is_file(), reason="../shared/realdata not found")
@pytest.mark.parametrize("label", [False, True])
def test_info_noise_between_the_rows_changes_nothing(label: bool) -> None:
    """The real MOC log with NCCL INFO lines after every row (srun --label on every line,
    or none): the same 13 rows, average and verdict as the log itself."""
    real = (REAL / MOC).read_text(encoding="utf-8")
    lines: list[str] = []
    for i, s in enumerate(real.splitlines()):
        lines.append(s)
        if s.startswith("  ") and s.split()[0].isdigit():
            lines.append(NOISE[i % len(NOISE)])
    if label:
        lines = [f"{i % 2}: {s}" for i, s in enumerate(lines)]
    noisy = "\n".join(lines) + "\n"
    (clean,) = read_nccl_tests(real, "allreduce.log")
    (run,) = read_nccl_tests(noisy, "allreduce.log")
    assert [(r.bytes, r.busbw_gbs, r.time_us) for r in run.rows] == [
        (r.bytes, r.busbw_gbs, r.time_us) for r in clean.rows
    ]
    assert len(run.rows) == 13 and run.avg_busbw_gbs == pytest.approx(15.0418)
    assert run.nranks == 2
    got, want = _judge(noisy).tests, _judge(real).tests
    assert [(t.passed, t.measured) for t in got] == [(t.passed, t.measured) for t in want]


def _log_2017(host: str) -> list[str]:
    """all_reduce_perf as nccl-tests' first release printed it (b188a15, 2017-08-08,
    ``src/common.cu`` lines 573, 660, 865, 1026-1027; ``src/all_reduce.cu`` print_header):
    no '#' on the header and footer, no Pid, ``bytes N type op … res``, time in ms."""
    return [
        "nThread 1 nGpus 8 minBytes 33554432 maxBytes 134217728 step: 2(factor) "
        "warmup iters: 5 iters: 20 validation: 1 ",
        "# Using devices",
        *(
            f"#   Rank {r:2d} on {host:>10s} device {r:2d} [0x{r + 6:02x}] Tesla V100-SXM2-16GB"
            for r in range(8)
        ),
        "",
        "#                                 out-of-place                    in-place",
        "#      bytes             N    type      op     time  algbw  busbw      res"
        "     time  algbw  busbw      res",
        "    33554432       8388608   float     sum    0.512  65.54  114.69  1e-06"
        "    0.509  65.92  115.36  1e-06",
        "    67108864      16777216   float     sum    0.988  67.92  118.86  1e-06"
        "    0.986  68.06  119.11  1e-06",
        "   134217728      33554432   float     sum    1.941  69.15  121.01  1e-06"
        "    1.937  69.29  121.26  1e-06",
        " Out of bounds values : 0 OK",
        " Avg bus bandwidth    : 118.382 ",
        "",
    ]


def _log_2019(host: str) -> list[str]:
    """The same after cbe7f65 (2019-03-06, "Resync all tests with test code from NCCL
    2.4"): '#' header, ``Pid``, ``size count type redop … error`` in microseconds."""
    return [
        "# nThread 1 nGpus 8 minBytes 33554432 maxBytes 134217728 step: 2(factor) "
        "warmup iters: 5 iters: 20 validation: 1 ",
        "#",
        "# Using devices",
        *(
            f"#   Rank {r:2d} Pid  21734 on {host:>10s} device {r:2d} [0x{r + 6:02x}] "
            "Tesla V100-SXM2-16GB"
            for r in range(8)
        ),
        "#",
        "#                                                     out-of-place"
        "                       in-place          ",
        "#       size         count    type   redop     time   algbw   busbw  error"
        "     time   algbw   busbw  error",
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)       "
        "     (us)  (GB/s)  (GB/s)       ",
        "    33554432       8388608   float     sum    512.1   65.52  114.66  1e-06"
        "    509.3   65.88  115.29  1e-06",
        "    67108864      16777216   float     sum    988.4   67.90  118.82  1e-06"
        "    986.2   68.05  119.09  1e-06",
        "   134217728      33554432   float     sum   1941.2   69.14  121.00  1e-06"
        "   1937.0   69.29  121.26  1e-06",
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 118.37 ",
        "#",
    ]


def test_nccl_tests_versions_concatenated_are_each_read() -> None:
    """A 2017, a 2019 and a 2022+ run in one paste: three runs, each table in its own
    columns, times all in microseconds, each with its ranks and average."""
    current = _solo_log().replace("nranks 1", "nranks 8").splitlines()[-19:]
    text = "\n".join([*_log_2017("dgx01"), *_log_2019("dgx02"), *current]) + "\n"
    runs = read_nccl_tests(text, "allreduce.log")
    assert len(runs) == 3
    old, mid, new = runs
    assert [r.bytes for r in old.rows] == [33554432, 67108864, 134217728]
    assert old.rows[0].time_us == pytest.approx(512.0) and old.rows[0].busbw_gbs == 114.69
    # 'res'/'error' is the largest error: 1e-06 is within nccl-tests' float bound
    # (DeltaMaxValue 1e-5 × (8 − 1)), 2e-04 is not
    assert old.rows[0].wrong == 0 and mid.rows[0].wrong == 0
    (bad,) = read_nccl_tests("\n".join(_log_2019("dgx02")).replace("1e-06", "2e-04"), "a.log")
    assert bad.rows[0].wrong == 1
    assert mid.rows[2].time_us == pytest.approx(1941.2) and mid.rows[2].in_busbw_gbs == 121.26
    assert len(old.ranks) == len(mid.ranks) == 8 and {k.host for k in old.ranks} == {"dgx01"}
    assert old.avg_busbw_gbs == pytest.approx(118.382) and mid.avg_busbw_gbs == 118.37
    assert any("2017 table layout" in n for n in old.notes)
    assert new.rows[0].bytes == 1073741824 and new.rows[0].root == -1
    # a verdict for each, none refused: the third lists 1 of its 8 ranks (INFO nranks 8)
    v2017, v2019, cut = _judge(text).tests
    assert v2017.measured == 121.01 and v2019.measured == 121.0
    assert v2017.fail_reason != "wrong results" and v2017.passed is not None
    assert cut.passed is None and any("1 of 8 rank" in b for b in cut.basis)


def test_a_cut_2019_table_is_read_in_its_own_default_layout() -> None:
    rows = [s for s in _log_2019("dgx02") if s.startswith("  ")]
    (run,) = read_nccl_tests("\n".join(rows) + "\n", "allreduce.log")
    assert [r.time_us for r in run.rows] == [512.1, 988.4, 1941.2]
    assert any("default layout" in n for n in run.notes)
