"""Every real nccl-tests and perftest sample judged against a plan of its site, with the
diagnosis a maintainer gave where the thread has one.

Each plan is what ``../shared/realdata/*/SOURCES.md`` says of the site; what it does
not say is assumed and marked UNVERIFIED here. The sites' host names map onto the
plan through a names file (``--names``), as a site would do. Figures in the
assertions come from reading the files (lines named; see test_accept_readers.py)
and from the plan's estimate, which test_calibration.py holds to published numbers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.acceptance import AcceptContext, AcceptReport, judge_results
from fabric_stack.analysis.estimate import ModelParams
from fabric_stack.files.names_file import load_names
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology

REPO = Path(__file__).resolve().parents[2]
REAL = next(
    (
        p
        for p in (REPO.parent / "shared" / "realdata", REPO.parent.parent / "shared" / "realdata")
        if p.is_dir()
    ),
    REPO.parent / "shared" / "realdata",
)
pytestmark = pytest.mark.skipif(
    not REAL.is_dir() and not os.environ.get("CI"), reason="../shared/realdata not found"
)
ROCE = {"fabric": "roce", "switch": "sn5600"}


def plan(tmp: Path, spec: dict[str, Any], hosts: list[str] = ()) -> FabricTopology:  # type: ignore[assignment]
    """The plan of ``spec`` with its first servers named ``hosts`` (a names file, as a site
    gives it with --names)."""
    if not hosts:
        return build_topology(size_fabric(validate_spec(spec)))
    default = build_topology(size_fabric(validate_spec(spec)))
    planned = [d.name for d in default.devices if d.role == "server"]
    csv = tmp / "names.csv"
    rows = [f"{p},{h.lower()}" for p, h in zip(planned, hosts, strict=False)]
    csv.write_text("planned,actual\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return build_topology(size_fabric(validate_spec(spec, names=load_names(csv))))


def judge(topo: FabricTopology, *files: str, nvlink_gbs: float | None = None) -> AcceptReport:
    ctx = AcceptContext(topo, params=ModelParams(nvlink_gbs=nvlink_gbs), drift="fabric-stack drift")
    return judge_results([(f, (REAL / f).read_text(encoding="utf-8")) for f in files], ctx)


def whats(report: AcceptReport, i: int = 0) -> list[str]:
    return [s.what for s in report.tests[i].suspects]


def test_issue309_two_hgx_nodes_pass_but_only_through_the_tree(tmp_path: Path) -> None:
    # SOURCES: Dell XE9680, 2 × 8 H100, 8 × ConnectX-7 400G InfiniBand per node.
    topo = plan(tmp_path, {"gpus": 16}, ["bm-h100-01", "bm-h100-02"])
    rep = judge(topo, "nccl-tests/nccl-tests-issue309-hgx-h100-ib-ndr-2node-allreduce.txt")
    (t,) = rep.tests
    assert t.servers == ["bm-h100-01", "bm-h100-02"] and t.bytes == 16 << 30
    # The maintainer: "the numbers look good". 469.21 GB/s (line 68) against the plan's
    # 506.2 (NVLSTree on 2 servers) passes at 455.5.
    assert (t.measured, t.expected, t.pass_at, t.passed) == (469.21, 506.157, 455.5, True)
    assert t.algorithm == "nvls_tree"
    # ... and "2-node results are an aberration ... ideal for Tree; NCCL_ALGO=Ring gives a
    # more realistic view": the passing test carries that warning with the ring figure,
    # which stays under the maintainer's 400 GB/s multi-node peak for 8 × 400G.
    (s,) = t.suspects
    assert s.what == "a 2-server result flattered by tree/NVLSTree"
    assert "ring figure here is 375.8 GB/s (measured 469.2, above it)" in s.why
    assert "NVIDIA/nccl-tests#309" in s.why and "NCCL_ALGO=Ring" in s.check
    assert rep.exit_code == 0


def test_issue322_crash_carries_the_maintainers_diagnosis(tmp_path: Path) -> None:
    # SOURCES: 128 nodes × 8 H100, NCCL_IB_GID_INDEX=3 (RoCE v2). NIC count and speed
    # are not stated: 8 × 400G per node is assumed (UNVERIFIED).
    topo = plan(tmp_path, {"gpus": 1024, **ROCE})
    rep = judge(
        topo, "nccl-tests/nccl-tests-issue322-h100-roce-128node-1024gpu-allreduce-crash.txt"
    )
    (t,) = rep.tests
    # Ranks 0-99 only (line 103): the table's busbw/algbw puts the job at 1,011-1,035 ranks,
    # so it is judged as the whole 1,024-GPU plan.
    assert "judged as the whole plan (128 servers, 1,024 GPUs)" in t.placement
    # The bandwidth before the crash (367.29 at 16 GiB, line 115) is above the floor...
    assert t.measured == 367.29 and t.pass_at is not None and t.measured > t.pass_at
    # ... but the run crashed on 37 hosts: it fails, with AddyLaddy's diagnosis from the
    # thread (an NCCL allocator bug fixed in 2.27.x) and the version left UNVERIFIED.
    assert (t.passed, t.fail_reason) == (False, "crashed")
    crash = t.suspects[0]
    assert crash.what == "the run crashed" and "37 host(s), lines 116–192" in crash.why
    assert "fixed in NCCL 2.27.x" in crash.why and "UNVERIFIED that it is older" in crash.why
    assert "NCCL >= 2.27" in crash.check
    assert rep.exit_code == 1


def test_moc_one_gpu_run_without_gpudirect(tmp_path: Path) -> None:
    # SOURCES: 2 nodes, one RoCE NIC (mlx5_5) at 400G, 4 H100 per node (the 4-GPU log).
    # The project plans one rail NIC per GPU: 4 rails of 400G.
    topo = plan(
        tmp_path, {"gpus": 8, "gpus_per_node": 4, **ROCE}, ["MOC-R4PCC04U37", "MOC-R4PCC04U35"]
    )
    rep = judge(topo, "nccl-tests/moc-h100-roce400-2node-1gpu-allreduce-ncclinfo.log")
    (t,) = rep.tests
    # 1 GPU per server (-g 1, ranks on device 0): judged on the same servers with 1 GPU and
    # its rail NIC; NCCL_ALGO=RING from the log (line 30).
    assert "uses 1 of the plan's 4 GPUs per server" in t.basis[0]
    assert (t.measured, t.expected, t.algorithm, t.passed) == (14.97, 46.999, "ring", False)
    assert t.shortfall_pct == 68.1
    assert whats(rep) == ["the NCCL_IB_HCA setting", "GPUDirect RDMA not in use"]
    hca, gdr = t.suspects
    assert "NCCL_IB_HCA=mlx5_5" in hca.where and "selects mlx5_5" in hca.why
    assert "NCCL_IB_HCA==mlx5_0:1" in hca.check  # as `render nccl` writes it
    # SOURCES: "GPUDirect RDMA was not used in this run (my reading; the repo gives no
    # diagnosis)": the suspect names the line and leaves the cause UNVERIFIED.
    assert "line 55" in gdr.why and "UNVERIFIED" in gdr.why


def test_moc_four_gpus_share_one_nic(tmp_path: Path) -> None:
    topo = plan(
        tmp_path, {"gpus": 8, "gpus_per_node": 4, **ROCE}, ["MOC-R4PCC04U37", "MOC-R4PCC04U35"]
    )
    rep = judge(topo, "nccl-tests/moc-h100-roce400-2node-4gpu-sendrecv-one-nic.log")
    (t,) = rep.tests
    # sendrecv: one rail NIC per transfer across servers, 400G × 0.94 = 47 GB/s (UNVERIFIED);
    # measured 5.85 (line 132). The repo's README: more GPUs per node reduce the network
    # performance (15.49 → 5.84); no cause given. The reading: 4 ranks on 1 HCA where the
    # plan gives them 4.
    assert (t.measured, t.expected, t.passed) == (5.85, 47.0, False)
    assert "UNVERIFIED" in t.basis[0]
    assert whats(rep) == ["the NCCL_IB_HCA setting", "4 GPUs per server share 1 NIC(s)"]
    assert "mlx5_0, mlx5_1, mlx5_2, mlx5_3 (rails 1-4) carry no NCCL traffic" in t.suspects[0].why
    assert "line 111" in t.suspects[1].why


def test_oci_a100_two_servers(tmp_path: Path) -> None:
    # SOURCES: 2 × BM.GPU4.8 (8 A100-SXM4-40GB), RoCE v2, 16 RDMA devices. Their speed is
    # not stated: 1.6 Tb/s per node as 8 rails × 200G is assumed (UNVERIFIED; the spec
    # wants rails to divide the GPUs). A100 NVLink 600 GB/s (as docs/calibration.md).
    topo = plan(
        tmp_path,
        {"gpus": 16, "nic_gbps": 200, **ROCE},
        ["inst-xxxxx-gpu4-ol89", "inst-yyyyy-gpu4-ol89"],
    )
    rep = judge(topo, "nccl-tests/oci-a100-roce-2node-allreduce-10G.txt", nvlink_gbs=600)
    (t,) = rep.tests
    # 222.88 GB/s at 10 GiB (line 24; the page says "219 GB/s") against the tree's 224.9
    assert (t.measured, t.expected, t.algorithm, t.passed) == (222.88, 224.949, "tree", True)
    assert whats(rep) == ["a 2-server result flattered by tree/NVLSTree"]
    assert "ring figure here is 187.9 GB/s" in t.suspects[0].why


def test_oci_h200_two_servers(tmp_path: Path) -> None:
    # SOURCES: 2 × BM.GPU.H200.8, 8 ConnectX-7 RoCE ports per node; 400G assumed (UNVERIFIED).
    topo = plan(
        tmp_path, {"gpus": 16, "node_profile": "dgx-h200", **ROCE}, ["GPU-6550", "GPU-3841"]
    )
    rep = judge(topo, "nccl-tests/oci-h200-roce-2node-allreduce-slurm.out")
    (t,) = rep.tests
    assert (t.measured, t.passed, t.algorithm) == (486.49, True, "nvls_tree")  # line 57
    assert t.servers == ["gpu-6550", "gpu-3841"]  # 'GPU-6550' in the log: host names are
    assert whats(rep) == ["a 2-server result flattered by tree/NVLSTree"]  # case-blind


def test_skypilot_all_gather_against_an_assumed_plan(tmp_path: Path) -> None:
    # SOURCES: 2 × a3-ultragpu-8g (8 H200); the NIC type and count are not in the output:
    # 8 × 400G RoCE is assumed (UNVERIFIED). The README says the curve matches Google's
    # published numbers, so this is a healthy run.
    topo = plan(
        tmp_path,
        {"gpus": 16, "node_profile": "dgx-h200", **ROCE},
        ["nc-d87e1263-head", "nc-d87e1263-worker1"],
    )
    rep = judge(topo, "nccl-tests/skypilot-gke-a3ultra-h200-roce-2node-allgather.prefixed.txt")
    (t,) = rep.tests
    # 325.72 GB/s at 8 GiB (line 49) is 13.3 % under the model's all-gather ring figure
    # (375.6): a fail against this plan. The model has no all-gather calibration, which the
    # basis says; the log has no NCCL_DEBUG=INFO, so nothing localises it.
    assert (t.measured, t.expected, t.passed, t.shortfall_pct) == (325.72, 375.646, False, 13.3)
    assert any("no published all_gather figure" in b and "UNVERIFIED" in b for b in t.basis)
    assert whats(rep) == ["not localised by this log"]
    assert "no NCCL_DEBUG=INFO lines" in t.suspects[0].why
    assert "ib_write_bw -d mlx5_0 --report_gbits" in t.suspects[0].check


def test_spectrumx_alltoall_erratic(tmp_path: Path) -> None:
    # SOURCES: 2 nodes × 8 GPUs, Spectrum-X with ConnectX-8; rail speed not stated: 400G
    # assumed (UNVERIFIED). The report gives no cause for the erratic rows.
    topo = plan(tmp_path, {"gpus": 16, **ROCE}, ["R6KD-CX8aaS-GPU-14", "R6KD-CX8aaS-GPU-15"])
    rep = judge(topo, "nccl-tests/spectrumx-cx8-2node-alltoall-ar-off-erratic.txt")
    (t,) = rep.tests
    assert (t.measured, t.passed) == (32.65, False)  # line 62
    (s,) = t.suspects
    # busbw collapses at 8, 16 MiB (lines 52-53: 1.38, 1.51 GB/s after 24.39 at 4 MiB),
    # 64, 128 MiB (lines 55-56) and 256, 512 MiB (2.54, 5.27: still under a quarter of
    # the 38.86 reached at 32 MiB, line 54)
    assert s.what == "erratic bandwidth"
    assert "collapses at 8M, 16M, 64M, 128M, 256M, 512M (" in s.why and "lines 52–58" in s.why
    assert "cause UNVERIFIED" in s.why


def test_cx7_back_to_back_perftest(tmp_path: Path) -> None:
    # SOURCES: two servers, one ConnectX-7 NDR 400G each, a DAC back to back (no switch):
    # the plan's rail-1 leaf stands in for the cable.
    topo = plan(tmp_path, {"gpus": 16}, ["csegpu1", "csegpu2"])
    rep = judge(topo, "perftest/cx7-ndr-back-to-back-ib_send_lat_read_write.txt")
    send, lat, read, write = rep.tests
    assert [t.kind for t in rep.tests] == ["ib_send_bw", "ib_send_lat", "ib_read_bw", "ib_write_bw"]
    # 400G × 0.94 = 376 Gb/s, pass at 338.4
    assert (send.measured, send.expected, send.passed) == (390.549, 376.0, True)  # line 24, MiB/s
    assert lat.passed is None and lat.measured is None  # no planned latency figure
    assert (write.measured, write.passed) == (392.34, True)  # line 99
    # ib_read_bw 328.61 (line 74) is under the ib_write_bw floor, but the same path passes
    # the other tests: the suspect is the read test, not the cable
    assert (read.measured, read.passed) == (328.61, False)
    assert [s.what for s in read.suspects] == ["the ib_read_bw test, not the path"]
    assert len(rep.matrix) == 3 and {c.rail for c in rep.matrix} == {1}


def test_bnxt_roce_duration_run(tmp_path: Path) -> None:
    # SOURCES: Broadcom bnxt_re 400G RoCE, 3 QPs, -D 10. The post's diagnosis (copper
    # cables linked up only with a NIC link-training setting off) is about getting the
    # link up before this run; the output passes and shows nothing of it.
    topo = plan(tmp_path, {"gpus": 16, **ROCE})
    rep = judge(topo, "perftest/bnxt_re-roce400-ib_write_bw-3qp-duration.txt")
    (t,) = rep.tests
    assert (t.measured, t.passed) == (363.47, True)  # line 32
    assert t.placement == "not placed on a plan rail" and rep.matrix == []
    assert any("percy is not a server of the plan" in n for n in t.notes)
    assert any("RDMA MTU 1024 B on Ethernet" in n for n in t.notes)  # line 11, 'Mtu 1024[B]'


def test_the_whole_folders_judge_together(tmp_path: Path) -> None:
    # All eight nccl-tests logs against one plan they do not fit: the first that cannot
    # be placed is refused with its line, not judged on the wrong servers.
    from fabric_stack.errors import InputFileError

    topo = plan(tmp_path, {"gpus": 16})
    with pytest.raises(InputFileError, match=r"crash.txt:1: the rank list was cut"):
        judge(topo, "nccl-tests/nccl-tests-issue322-h100-roce-128node-1024gpu-allreduce-crash.txt")
