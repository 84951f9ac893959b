"""`accept` sets the acceptance jobs against each other: a slow job across SUs whose per-SU
jobs pass points at the leaf–spine uplinks of the rails and SUs involved (issue #46).

The nccl-tests logs are :func:`tests.accept_fixtures.nccl_log` (the real NCCL 2.26 log
layout); each job's expected figure is the plan's estimate for its own servers, so the
planted runs are placed relative to what `accept` expects for each job.
"""

from __future__ import annotations

from functools import cache

from fabric_stack.acceptance import AcceptContext, AcceptReport, judge_results
from fabric_stack.acceptance.checks import cable_text, uplinks
from fabric_stack.acceptance.nccl_suspects import UNEXPLAINED
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology
from tests.accept_fixtures import nccl_log

HCAS = [f"mlx5_{i}" for i in range(8)]


@cache
def roce_2su() -> FabricTopology:
    return build_topology(
        size_fabric(
            validate_spec({"fabric": "roce", "switch": "sn5600", "gpus": 256, "su_nodes": 16})
        )
    )


def servers(topo: FabricTopology, su: int | None = None) -> list[str]:
    return [d.name for d in topo.devices if d.role == "server" and su in (None, d.su)]


def judge(topo: FabricTopology, files: list[tuple[str, str]]) -> AcceptReport:
    return judge_results(files, AcceptContext(topo))


@cache
def expected(job: tuple[str, ...]) -> float:
    """What accept expects of an all-reduce on ``job`` (read from a first judgement)."""
    topo = roce_2su()
    (t,) = judge(topo, [("probe_allreduce.log", nccl_log(topo, HCAS, 100.0, list(job)))]).tests
    assert t.expected is not None
    return t.expected


def runs(cross_share: float, su_share: float = 1.0) -> list[tuple[str, str]]:
    """Per-SU jobs at ``su_share`` and the job across both SUs at ``cross_share`` of
    what each is expected to reach."""
    topo = roce_2su()
    files = []
    for su in (1, 2):
        job = tuple(servers(topo, su))
        files.append(
            (f"su{su}_allreduce.log", nccl_log(topo, HCAS, expected(job) * su_share, list(job)))
        )
    every = tuple(servers(topo))
    files.append(
        ("all-sus_allreduce.log", nccl_log(topo, HCAS, expected(every) * cross_share, list(every)))
    )
    return files


def test_each_job_is_held_to_its_own_placement() -> None:
    topo = roce_2su()
    assert topo.plan.sus == 2
    per_su = expected(tuple(servers(topo, 1)))
    every = expected(tuple(servers(topo)))
    assert per_su > 0 and every > 0 and per_su != every


def test_a_slow_uplink_is_named_when_the_per_su_jobs_pass() -> None:
    topo = roce_2su()
    rep = judge(topo, runs(cross_share=0.6))
    by_file = {t.file: t for t in rep.tests}
    assert by_file["su1_allreduce.log"].passed and by_file["su2_allreduce.log"].passed
    t = by_file["all-sus_allreduce.log"]
    assert t.passed is False
    (s,) = t.suspects
    assert s.what == "the leaf–spine uplinks of rails 1-8 between SUs 1, 2"
    ctx = AcceptContext(topo)
    leaves = sorted({d.name for d in topo.devices if d.role == "leaf"})
    assert s.cables == [cable_text(lk) for leaf in leaves for lk in uplinks(ctx, leaf)]
    assert s.cables and all(c.split(":")[0] in leaves for c in s.cables)
    # what would pin the single uplink: the per-flow path is not in the log
    assert "no per-flow path" in s.why
    assert "ib_write_bw -d mlx5_0 -q 1" in s.check and "su2-node01" in s.check


def test_a_slow_su_is_not_blamed_on_the_uplinks() -> None:
    rep = judge(roce_2su(), runs(cross_share=0.6, su_share=0.6))
    t = next(t for t in rep.tests if t.file == "all-sus_allreduce.log")
    assert t.passed is False and [s.what for s in t.suspects] == [UNEXPLAINED]


def test_healthy_jobs_have_no_uplink_suspect() -> None:
    rep = judge(roce_2su(), runs(cross_share=1.0))
    assert all(t.passed for t in rep.tests) and not any(t.suspects for t in rep.tests)


@cache
def rail_expected(hca: str) -> float:
    """What accept expects of a per-rail all-reduce (NCCL_IB_HCA = one HCA) over every server."""
    topo = roce_2su()
    log = nccl_log(topo, [hca], 50.0, servers(topo))
    (t,) = judge(topo, [("probe_allreduce.log", log)]).tests
    assert t.expected is not None and t.suspects == []
    return t.expected


def test_a_per_rail_job_is_held_to_one_rails_figure() -> None:
    whole = expected(tuple(servers(roce_2su())))
    one = rail_expected("mlx5_2")
    # one rail of eight carries at most an eighth of the inter-server bandwidth
    assert 0 < one < whole / 4


def test_a_slow_rail_across_sus_names_that_rails_uplinks() -> None:
    topo = roce_2su()
    files = runs(cross_share=1.0)[:2]  # the per-SU jobs, at their figures
    for hca in HCAS:
        share = 0.6 if hca == "mlx5_2" else 1.0
        log = nccl_log(topo, [hca], rail_expected(hca) * share, servers(topo))
        files.append((f"all-sus-{hca}_allreduce.log", log))
    rep = judge(topo, files)
    (t,) = [t for t in rep.tests if t.passed is False]
    assert t.file == "all-sus-mlx5_2_allreduce.log"
    (s,) = t.suspects
    assert s.what == "the leaf–spine uplinks of rail 3 between SUs 1, 2"
    ctx = AcceptContext(topo)
    want = [cable_text(lk) for leaf in ("su1-r3-leaf", "su2-r3-leaf") for lk in uplinks(ctx, leaf)]
    assert s.cables == want
    assert "ib_write_bw -d mlx5_2 -q 1" in s.check
