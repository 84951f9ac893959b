"""The nccl-tests and perftest readers on real output captured at other sites, and on the
damaged and decorated forms real logs take.

The samples live in ``../shared/realdata/{nccl-tests,perftest}`` (provenance in their
SOURCES.md) and are read from there, never copied. Every count and value below was
read off the files by eye; each names its line, and :func:`line` checks that the line
still says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabric_stack.acceptance import (
    UnrecognisedResultError,
    read_nccl_tests,
    read_perftest,
    read_results,
)
from fabric_stack.acceptance.perftest import peer_of
from fabric_stack.errors import InputFileError

REPO = Path(__file__).resolve().parents[2]
REAL = next(
    (
        p
        for p in (REPO.parent / "shared" / "realdata", REPO.parent.parent / "shared" / "realdata")
        if p.is_dir()
    ),
    REPO.parent / "shared" / "realdata",
)
NT, PT = REAL / "nccl-tests", REAL / "perftest"

pytestmark = pytest.mark.skipif(
    not REAL.is_dir() and not os.environ.get("CI"), reason="../shared/realdata not found"
)


def line(path: Path, n: int, text: str) -> None:
    """Line ``n`` of ``path`` says ``text`` (so a reading by eye stays checkable)."""
    assert text in path.read_text(encoding="utf-8").splitlines()[n - 1]


def nccl(name: str) -> tuple[Path, list]:
    p = NT / name
    return p, read_nccl_tests(p.read_text(encoding="utf-8"), str(p))


def test_every_real_file_is_read() -> None:
    files = sorted(p for d in (NT, PT) for p in d.iterdir() if p.name != "SOURCES.md")
    assert len(files) == 10
    for p in files:
        runs = sum(map(len, read_results(p.read_text(encoding="utf-8"), str(p))))
        assert runs >= 1, p.name


def test_moc_one_gpu_all_reduce_with_nccl_info() -> None:
    p, runs = nccl("moc-h100-roce400-2node-1gpu-allreduce-ncclinfo.log")
    (r,) = runs
    line(p, 1, "# nThread 1 nGpus 1 minBytes 1073741824")
    assert (r.line, r.test, r.test_from) == (1, "all_reduce_perf", "named by the file name")
    line(p, 4, "Rank  0 Group  0 Pid 574691 on MOC-R4PCC04U37 device  0")
    assert [x.host for x in r.ranks] == ["MOC-R4PCC04U37", "MOC-R4PCC04U35"]
    assert r.nranks == 2 and r.ranks_listed_complete
    assert len(r.rows) == 13  # lines 56-68, 1 GiB to 25 GiB in 2 GiB steps
    line(p, 68, " 26843545600    6710886400     float     sum      -1  1793105   14.97   14.97")
    assert (r.rows[-1].line, r.rows[-1].bytes, r.rows[-1].busbw_gbs) == (68, 26843545600, 14.97)
    line(p, 71, "# Avg bus bandwidth    : 15.0418")
    assert r.avg_busbw_gbs == 15.0418
    line(p, 9, "NCCL INFO NCCL version 2.26.2+cuda.")
    assert r.nccl_version == "2.26.2+cuda."
    line(p, 13, "NCCL INFO NCCL_IB_HCA set to mlx5_5")
    assert r.ib_hca == {"MOC-R4PCC04U37": "mlx5_5"} and r.ib_hca_line == 13
    line(p, 14, "NET/IB : Using [0]mlx5_5:1/RoCE [RO]; OOB eno7np0")
    (net,) = r.nets
    assert (net.host, net.line, [(d.name, d.port, d.link_layer) for d in net.devices]) == (
        "MOC-R4PCC04U37",
        14,
        [("mlx5_5", 1, "RoCE")],
    )
    line(p, 30, "NCCL_ALGO set by environment to RING")
    assert r.algo_env == "RING"
    line(p, 55, "Connected all rings, use ring PXN 0 GDR 0")
    assert (r.gdr, r.gdr_line) == (False, 55)
    assert r.network == "IB" and r.info_lines > 30 and not r.failures


def test_moc_four_gpus_sendrecv_one_nic() -> None:
    p, (r,) = nccl("moc-h100-roce400-2node-4gpu-sendrecv-one-nic.log")
    line(p, 1, "# nThread 1 nGpus 4")
    assert r.test == "sendrecv_perf" and r.n_gpus == 4
    assert len(r.ranks) == 8 and r.nranks == 8  # lines 4-11; INFO 'nranks 8'
    line(p, 111, "via NET/IB/1(2)/GDRDMA/Shared")
    assert (r.shared_nic, r.shared_line, r.gdr, r.gdr_line) == (True, 111, True, 111)
    line(p, 132, " 26843545600    6710886400     float     sum      -1  4586620    5.85    5.85")
    assert r.rows[-1].busbw_gbs == 5.85 and r.rows[-1].in_wrong is None  # in-place '#wrong' N/A
    assert r.avg_busbw_gbs == 5.80752  # line 138
    assert [d.name for n in r.nets for d in n.devices] == ["mlx5_5"]  # line 20


def test_issue309_two_hgx_nodes_behind_mpi_noise() -> None:
    p, (r,) = nccl("nccl-tests-issue309-hgx-h100-ib-ndr-2node-allreduce.txt")
    line(p, 2, "WARNING: Could not generate an xpmem segment id")
    line(p, 14, "[bm-h100-01:29250] 15 more processes have sent help message")
    assert r.line == 11 and r.test == "all_reduce_perf"
    assert len(r.ranks) == 16 and {x.host for x in r.ranks} == {"bm-h100-01", "bm-h100-02"}
    line(p, 32, "NCCL version 2.26.2+cuda12.8")
    assert r.nccl_version == "2.26.2+cuda12.8"
    assert len(r.rows) == 32  # lines 37-68: 8 B to 16 GiB, factor 2
    line(p, 68, " 17179869184    4294967296     float     sum      -1    68652  250.24  469.21")
    assert r.rows[-1].busbw_gbs == 469.21 and r.avg_busbw_gbs == 139.56  # line 70
    assert r.nranks_range == (16, 16) and r.info_lines == 0 and r.nets == []


def test_issue322_cut_rank_list_and_crash() -> None:
    p, (r,) = nccl("nccl-tests-issue322-h100-roce-128node-1024gpu-allreduce-crash.txt")
    line(p, 103, "#  Rank 99 Group  0 Pid 3823701 on     HCA-12 device  3")
    assert len(r.ranks) == 100 and r.ranks[-1].line == 103
    # the table's busbw/algbw (367.29/183.83 and four more rows) allows 1,011-1,035 ranks
    assert not r.ranks_listed_complete and r.nranks_range == (1011, 1035)
    line(p, 106, "# Reducing maxBytes to 27951912277 due to memory limitation")
    assert len(r.rows) == 5 and r.rows[-1].line == 115 and r.rows[-1].busbw_gbs == 367.29
    line(p, 116, "HCA-128: Test NCCL failure common.cu:1204 'unhandled cuda error")
    line(p, 192, "HCA-19: Test NCCL failure common.cu:1204")
    assert len(r.failures) == 39 and (r.failures[0].line, r.failures[-1].line) == (116, 192)
    assert len({f.host for f in r.failures}) == 37  # HCA-108 and HCA-13 fail twice
    assert r.failures[0].message.startswith("unhandled cuda error")
    assert r.avg_busbw_gbs is None and r.nccl_version is None
    assert any("mpirun aborted the job (line 194)" in n for n in r.notes)


def test_oci_runs_with_launcher_output_in_front() -> None:
    p, (r,) = nccl("oci-h200-roce-2node-allreduce-slurm.out")
    line(p, 28, "Running /opt/oci-hpc/nccl-test/build/all_reduce_perf test on 2 nodes")
    assert (r.line, r.test, r.test_from) == (29, "all_reduce_perf", "named on line 28")
    line(p, 32, "Rank  0 Group  0 Pid 320119 on   GPU-6550 device  0 [0x0f] NVIDIA H200")
    assert r.ranks[0].host == "GPU-6550" and r.ranks[0].gpu == "NVIDIA H200"
    assert r.rows[-1].busbw_gbs == 486.49 and r.rows[-1].line == 57
    assert r.nccl_version == "2.27.5+cuda12.8"  # line 48
    p, (a,) = nccl("oci-a100-roce-2node-allreduce-10G.txt")
    line(p, 24, " 10737418240    2684354560     float     sum      -1    90330  118.87  222.88")
    assert len(a.rows) == 1 and (a.rows[0].busbw_gbs, a.rows[0].in_busbw_gbs) == (222.88, 218.96)
    assert a.avg_busbw_gbs == 220.921 and a.nccl_version is None  # line 26; no version line


def test_skypilot_prefixed_all_gather() -> None:
    p, (r,) = nccl("skypilot-gke-a3ultra-h200-roce-2node-allgather.prefixed.txt")
    line(p, 3, "(head, rank=0, pid=3808) [1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1024")
    assert r.line == 3 and r.test == "all_gather_perf"  # named by the file name
    assert len(r.ranks) == 16 and len(r.rows) == 24  # lines 6-21, 26-49
    line(p, 49, "[1,0]<stdout>:  8589934592     134217728     float    none      -1    24724")
    assert (r.rows[-1].bytes, r.rows[-1].busbw_gbs) == (8589934592, 325.72)
    assert r.avg_busbw_gbs == 122.073 and r.nranks_range == (16, 16)


def test_spectrumx_new_format_alltoall() -> None:
    p, (r,) = nccl("spectrumx-cx8-2node-alltoall-ar-off-erratic.txt")
    line(p, 14, "# Collective test starting: alltoall_perf")
    assert r.test == "alltoall_perf" and "line 14" in r.test_from
    assert r.line == 15 and len(r.rows) == 24 and r.nccl_version == "2.30.3+cuda13.0"
    line(p, 52, "     8388608        131072     float    none      -1  5686.63    1.48    1.38")
    assert (r.rows[13].line, r.rows[13].busbw_gbs, r.rows[13].time_us) == (52, 1.38, 5686.63)
    assert r.rows[-1].busbw_gbs == 32.65 and r.avg_busbw_gbs == 8.9909  # lines 62, 64


def test_perftest_cx7_four_runs_in_one_file() -> None:
    p = PT / "cx7-ndr-back-to-back-ib_send_lat_read_write.txt"
    runs = read_perftest(p.read_text(encoding="utf-8"), str(p))
    assert [r.test for r in runs] == ["ib_send_bw", "ib_send_lat", "ib_read_bw", "ib_write_bw"]
    line(p, 1, "vyl@csegpu1:~$ ib_send_bw -d mlx5_0  csegpu2")
    assert {(r.host, r.peer, r.device) for r in runs} == {("csegpu1", "csegpu2", "mlx5_0")}
    line(p, 24, " 65536      1000             46567.34            46557.03")
    send = runs[0]
    assert send.unit == "MiB/sec" and send.rows[0].line == 24
    assert send.rows[0].avg_gbps == pytest.approx(46557.03 * 8 * 2**20 / 1e9, abs=1e-3)  # 390.549
    line(p, 46, "#bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]")
    assert runs[1].latency_typical_us == 1.27 and not runs[1].bandwidth  # line 49
    line(p, 74, " 65536      1000             328.64             328.61")
    line(p, 99, " 65536      5000             392.38             392.34")
    assert [r.rows[0].avg_gbps for r in runs[2:]] == [328.61, 392.34]
    assert all(r.link_type == "IB" and r.mtu == 4096 and r.qps == 1 for r in runs)


def test_perftest_bnxt_duration_mode() -> None:
    p = PT / "bnxt_re-roce400-ib_write_bw-3qp-duration.txt"
    (r,) = read_perftest(p.read_text(encoding="utf-8"), str(p))
    line(p, 1, "[mysecretuser@percy bin]$  ib_write_bw -d bnxt_re0")
    assert (r.host, r.host_from, r.peer) == ("percy", "shell prompt on line 1", "10.0.0.10")
    line(p, 4, "Device         : bnxt_re0")
    assert (r.device, r.qps, r.link_type, r.mtu) == ("bnxt_re0", 3, "Ethernet", 1024)
    line(p, 32, " 65536      4159603          0.00               363.47")
    assert (r.rows[0].peak_gbps, r.rows[0].avg_gbps) == (0.0, 363.47)
    assert any("duration mode" in n for n in r.notes)


# ------------------------------------------------------------------ decorated and damaged


COLUMNS = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong"
)
ROWS = "\n".join(
    [
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5",
        "#",
        "# Using devices",
        "#  Rank  0 Group  0 Pid   101 on node-a device  0 [0x0f] NVIDIA H100 80GB HBM3",
        "#  Rank  1 Group  0 Pid   102 on node-b device  0 [0x0f] NVIDIA H100 80GB HBM3",
        "#",
        COLUMNS,
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)",
        "     1048576        262144     float     sum      -1    71.93   14.58   14.58      0"
        "    71.47   14.67   14.67      0",
        "     2097152        524288     float     sum      -1    76.24   27.51   27.51      0"
        "    76.62   27.37   27.37      0",
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 21.03",
        "",
    ]
)


@pytest.mark.parametrize(
    "prefix",
    [
        "[1,0]<stdout>:",
        "[pod/acc-nccl-acceptance-launcher/launcher] ",
        "2025-01-01T12:00:00.123456789Z ",
        "0: ",
        "(worker1, rank=1, pid=2769, ip=10.100.10.12) [1,0]<stdout>:",
    ],
)
def test_launcher_prefixes_are_removed(prefix: str) -> None:
    text = "".join(prefix + s + "\n" for s in ROWS.splitlines())
    (r,) = read_nccl_tests(text, "all_reduce.log")
    assert [x.busbw_gbs for x in r.rows] == [14.58, 27.51] and r.avg_busbw_gbs == 21.03


def test_several_runs_in_one_file() -> None:
    text = "$ mpirun … all_reduce_perf -b 1M\n" + ROWS + "noise\n$ mpirun sendrecv_perf\n" + ROWS
    runs = read_nccl_tests(text, "runs.log")
    assert [(r.run, r.line, r.test) for r in runs] == [
        (1, 2, "all_reduce_perf"),
        (2, 16, "sendrecv_perf"),
    ]


def test_a_last_row_cut_by_a_crash_is_noted() -> None:
    text = ROWS.split("# Out of bounds")[0] + "     4194304       1048576     float     sum\n"
    (r,) = read_nccl_tests(text, "cut.log")
    assert len(r.rows) == 2 and any("cut short (line 11)" in n for n in r.notes)


def test_a_malformed_row_is_refused_by_line() -> None:
    bad = ROWS.replace("27.51      0    76.62", "27.51    76.62")
    with pytest.raises(InputFileError) as e:
        read_nccl_tests(bad, "bad.log")
    assert str(e.value).startswith("bad.log:10: nccl-tests row with 12 fields where the column")


def test_perftest_unknown_unit_is_refused_by_line() -> None:
    text = (
        "                    RDMA_Write BW Test\n"
        " #bytes     #iterations    BW peak[Tb/sec]    BW average[Tb/sec]   MsgRate[Mpps]\n"
    )
    with pytest.raises(InputFileError, match=r"^w.txt:2: perftest unit 'Tb/sec'"):
        read_perftest(text, "w.txt")


def test_perftest_malformed_row_is_refused_by_line() -> None:
    text = (
        "                    RDMA_Write BW Test\n"
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        " 65536      5000             392.38\n"
        "---------------------------------------------------------------------------------------\n"
    )
    with pytest.raises(InputFileError, match=r"^w.txt:3: perftest result row with 3 fields"):
        read_perftest(text, "w.txt")


def test_neither_tool_is_refused() -> None:
    with pytest.raises(UnrecognisedResultError, match=r"^notes.txt: neither nccl-tests output"):
        read_results("hello\n", "notes.txt")


def test_all_gather_and_alltoall_cannot_be_told_apart_by_the_table() -> None:
    p = NT / "skypilot-gke-a3ultra-h200-roce-2node-allgather.prefixed.txt"
    (r,) = read_nccl_tests(p.read_text(encoding="utf-8"), "result.txt")
    assert r.test is None and "all_gather_perf and alltoall_perf" in r.test_from


def test_file_name_and_prompt_place_a_perftest_run() -> None:
    p = PT / "cx7-ndr-back-to-back-ib_send_lat_read_write.txt"
    runs = read_perftest(p.read_text(encoding="utf-8"), "su1-node03_mlx5_0.txt")
    assert {(r.host, r.host_from) for r in runs} == {("su1-node03", "file name")}
    # a file name whose device part is not the run's device is not a placement
    runs = read_perftest(p.read_text(encoding="utf-8"), "su1-node03_mlx5_4.txt")
    assert runs[0].host == "csegpu1"
    assert peer_of("ib_write_bw -d mlx5_0 -q 4") is None  # a server: '4' is -q's value
    assert peer_of("ib_write_bw -d mlx5_0 --report_gbits 10.0.0.7") == "10.0.0.7"
