"""Planted faults on the seed plan are localised: a slow rail to its NIC/cable, a slow leaf,
a slow host, a spine path, and a wrong NCCL_IB_HCA to the setting.

The perftest and nccl-tests files are written by :mod:`tests.accept_fixtures` in the
tools' own layouts, one perftest file per server and rail; healthy runs reach 392.34 Gb/s
(the real NDR result), a planted fault 60 % of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric_stack.acceptance import AcceptContext, AcceptReport, judge_results
from fabric_stack.acceptance.checks import cable_text, rail_cable
from fabric_stack.artifacts import nccl
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology
from tests.accept_fixtures import HEALTHY, SLOW, nccl_log, perftest, seed, sweep


def judge(topo: FabricTopology, files: list[tuple[str, str]]) -> AcceptReport:
    return judge_results(files, AcceptContext(topo, drift="fabric-stack drift --gpus 128"))


def failed(rep: AcceptReport) -> dict[str, list[str]]:
    return {t.file: [s.what for s in t.suspects] for t in rep.tests if t.passed is False}


@pytest.mark.parametrize("peers", [True, False], ids=["ring-pairs", "no-peer-named"])
def test_a_slow_rail_of_one_host_is_its_nic_or_cable(peers: bool) -> None:
    topo = seed()
    rep = judge(topo, sweep(topo, {("su1-node05", "mlx5_2")}, peers=peers))
    assert len(rep.tests) == 128 and len(rep.matrix) == 128
    # the runs through su1-node05's rail 3 fail: node04 → node05 and node05 → node06
    # (with peers), only node05's own file without
    slow = {"su1-node05_mlx5_2.txt"} | ({"su1-node04_mlx5_2.txt"} if peers else set())
    assert set(failed(rep)) == slow
    cable = rail_cable(AcceptContext(topo), "su1-node05", "mlx5_2")
    assert cable is not None and cable.b_device == "su1-r3-leaf"
    for t in rep.tests:
        if t.passed is False:
            (s,) = t.suspects
            assert s.what == "su1-node05's rail-3 NIC mlx5_2 or its cable"
            assert (
                s.where == cable_text(cable) == f"su1-node05:mlx5_2 <-> su1-r3-leaf:{cable.b_port}"
            )
            assert s.cables == [s.where]
            assert "fabric-stack drift --gpus 128 --ibnetdiscover fabric.ibnet" in s.check
            assert "235.4 Gb/s < 338.4" in s.why and "rail 3 passes on 15 other server(s)" in s.why
    assert rep.exit_code == 1


def test_every_port_of_one_leaf_slow_is_the_leaf() -> None:
    topo = seed()
    slow = {(d.name, "mlx5_5") for d in topo.devices if d.role == "server"}
    rep = judge(topo, sweep(topo, slow))
    assert len(failed(rep)) == 16
    assert {w for ws in failed(rep).values() for w in ws} == {"leaf su1-r6-leaf (rail 6, SU 1)"}
    s = next(t for t in rep.tests if t.passed is False).suspects[0]
    assert "every measured port of su1-r6-leaf is slow (16 servers" in s.why
    assert len(s.cables) == 16 and all("su1-r6-leaf:" in c for c in s.cables)


def test_every_rail_of_one_host_slow_is_the_host() -> None:
    topo = seed()
    slow = {("su1-node09", f"mlx5_{r}") for r in range(8)}
    rep = judge(topo, sweep(topo, slow))
    # node08 → node09 and node09 → node10 fail on all 8 rails; node08 and node10 pass
    # with their other peers, so the fault is node09 itself, not 8 cables
    assert len(failed(rep)) == 16
    assert {w for ws in failed(rep).values() for w in ws} == {"server su1-node09 (every rail slow)"}
    s = next(t for t in rep.tests if t.file == "su1-node09_mlx5_0.txt").suspects[0]
    assert "not the fabric" in s.why and "numactl" in s.check


def test_a_slow_spine_path_between_two_sus() -> None:
    topo = build_topology(size_fabric(validate_spec({"gpus": 512})))
    assert topo.plan.sus == 2
    files = [
        ("su1-node01_mlx5_0.txt", perftest("su1-node01", "mlx5_0", "su1-node02", HEALTHY)),
        ("su2-node01_mlx5_0.txt", perftest("su2-node01", "mlx5_0", "su2-node02", HEALTHY)),
        ("su1-node02_mlx5_0.txt", perftest("su1-node02", "mlx5_0", "su2-node01", SLOW)),
    ]
    rep = judge(topo, files)
    (t,) = [t for t in rep.tests if t.passed is False]
    (s,) = t.suspects
    assert s.what == "the spine path between su1-r1-leaf and su2-r1-leaf"
    assert s.cables and all(c.startswith(("su1-r1-leaf:", "su2-r1-leaf:")) for c in s.cables)


def test_a_healthy_sweep_passes() -> None:
    topo = seed()
    rep = judge(topo, sweep(topo, set()))
    assert not failed(rep) and rep.exit_code == 0


# ------------------------------------------------------------------ a wrong NCCL_IB_HCA


def test_a_wrong_nccl_ib_hca_is_the_setting() -> None:
    topo = seed()
    # NCCL told to use mlx5_0..3 on an 8-rail plan: half the rails idle, about half the
    # busbw (the plan's estimate with those 4 rails out: 187.5 GB/s at 8 GiB)
    rep = judge(topo, [("allreduce.log", nccl_log(topo, [f"mlx5_{i}" for i in range(4)], 187.1))])
    (t,) = rep.tests
    assert (t.kind, t.expected, t.passed) == ("all_reduce_perf", 373.966, False)
    assert len(t.servers) == 16
    (s,) = t.suspects
    assert s.what == "the NCCL_IB_HCA setting"
    assert (
        s.where == "NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3 in the job's environment (su1-node01)"
    )
    assert "mlx5_4, mlx5_5, mlx5_6, mlx5_7 (rails 5-8) carry no NCCL traffic" in s.why
    assert (
        "with only the HCAs it opened, the plan's estimate is 187.5 GB/s (measured 187.1)" in s.why
    )
    # the fix is the value `render nccl` writes for this plan
    (env,) = nccl.render(RenderContext.from_topology(topo))
    rendered = next(x for x in env.content.splitlines() if x.startswith("NCCL_IB_HCA="))
    assert f"set {rendered} as `fabric-stack render nccl` writes it" in s.check


def test_the_planned_hcas_are_not_a_suspect() -> None:
    topo = seed()
    rep = judge(topo, [("allreduce.log", nccl_log(topo, [f"mlx5_{i}" for i in range(8)], 371.0))])
    (t,) = rep.tests
    assert t.passed is True and t.suspects == []


def test_hcas_not_opened_without_a_setting_point_at_their_cables() -> None:
    topo = seed()
    log = nccl_log(topo, [f"mlx5_{i}" for i in range(7)], 320.0)
    log = "\n".join(x for x in log.splitlines() if "NCCL_IB_HCA set to" not in x)
    (t,) = judge(topo, [("allreduce.log", log)]).tests
    (s,) = t.suspects
    assert s.what == "rail HCAs NCCL did not open (rail 8)"
    cable = rail_cable(AcceptContext(topo), "su1-node01", "mlx5_7")
    assert cable is not None and s.cables == [cable_text(cable)]


def test_a_failed_collective_gets_the_sweeps_findings_on_its_servers() -> None:
    topo = seed()
    files = sweep(topo, {("su1-node05", "mlx5_2")})
    files.append(("allreduce.log", nccl_log(topo, [f"mlx5_{i}" for i in range(8)], 280.0)))
    rep = judge(topo, files)
    t = next(t for t in rep.tests if t.tool == "nccl-tests")
    assert t.passed is False
    assert [s.what for s in t.suspects] == ["su1-node05's rail-3 NIC mlx5_2 or its cable"]
    assert "from the per-rail sweep" in t.suspects[0].why


def test_job_pods_not_in_the_plan_are_placed_by_count(tmp_path: Path) -> None:
    topo = seed()
    log = nccl_log(topo, [f"mlx5_{i}" for i in range(8)], 371.0)
    for i in range(16):  # the rendered MPIJob's worker pods, not node names
        log = log.replace(
            f" on su1-node{i + 1:02d} ", f" on gpu-cluster-nccl-acceptance-worker-{i} "
        )
    (t,) = judge(topo, [("allreduce.log", log)]).tests
    assert t.passed is True and t.servers == []
    assert t.placement.startswith("UNVERIFIED placement: no host of the log is a plan server")
