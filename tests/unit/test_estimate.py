"""`estimate`: properties of the collective model (hypothesis) and the CLI."""

from __future__ import annotations

import json
import random
from functools import cache

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.analysis.estimate import COLLECTIVES, estimate_collective, parse_sizes
from fabric_stack.analysis.whatif import FabricIndex, Failure
from fabric_stack.cli import main
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology

SIZES = parse_sizes("64K,16M,1G,16G")


@cache
def topo_of(
    gpus: int, ratio: str = "1:1", nic: int = 400, sharp: bool = False, su_nodes: int = 0
) -> FabricTopology:
    spec = validate_spec(
        {
            "gpus": gpus,
            "oversubscription": ratio,
            "nic_gbps": nic,
            # Switch-hosted SMs take no server port: the collective model's properties are
            # checked on whole SUs (UFM hosts would give one server position away).
            "infiniband": {"sharp": sharp, "sm_location": "switch"},
            "su_nodes": su_nodes,
        }
    )
    return build_topology(size_fabric(spec))


jobs = st.sampled_from([16, 24, 64, 256, 512, 1024])
colls = st.sampled_from(COLLECTIVES)


@settings(max_examples=40, deadline=None)
@given(job=jobs, coll=colls, sharp=st.booleans())
def test_busbw_within_physical_limits(job: int, coll: str, sharp: bool) -> None:
    """No byte moves faster than the path allows: NVLink in a server, the server's rails
    across servers (busbw itself for rings on 3+ servers), the cut across SUs."""
    topo = topo_of(1024, sharp=sharp)
    est = estimate_collective(topo, coll, SIZES, job_gpus=job)
    nodes, n, g = est.job.nodes, est.job.gpus, 8
    node_gbs = topo.plan.bandwidth.per_node_gbps / 8
    nvlink_dir = 450.0
    su_uplinks = topo.plan.rails * topo.plan.leaf_up * topo.plan.link_gbps / 8
    # The fewest bytes per message byte that must cross a server's NICs (one way):
    # all-reduce at least 1 (in-network SHARP), all-gather/reduce-scatter (N−1)/N,
    # broadcast 1, all-to-all g(n−g)/n.
    must_cross = {
        "all_reduce": 1.0,
        "all_gather": (nodes - 1) / nodes,
        "reduce_scatter": (nodes - 1) / nodes,
        "broadcast": 1.0,
        "alltoall": g * (n - g) / n,
    }[coll]
    for p in est.points:
        if nodes >= 2:
            assert p.algbw_gbs * must_cross <= node_gbs + 1e-6
            if p.algorithm == "ring" and nodes >= 3:
                assert p.busbw_gbs <= node_gbs + 1e-6
        else:
            assert p.algbw_gbs <= nvlink_dir + 1e-6
        if coll == "alltoall" and est.job.sus > 1:
            per_su = topo.plan.su_nodes * g
            assert p.algbw_gbs * per_su * (n - per_su) / n <= su_uplinks + 1e-6


def _busbw(est_points: list) -> list[float]:  # type: ignore[type-arg]
    return [p.busbw_gbs for p in est_points]


@settings(max_examples=30, deadline=None)
@given(job=jobs, coll=colls, seed=st.integers(0, 1000), k=st.integers(1, 6))
def test_failures_never_improve_the_estimate(job: int, coll: str, seed: int, k: int) -> None:
    topo = topo_of(1024)
    index = FabricIndex(topo)
    links = random.Random(seed).sample(index.links, k)
    fails = [Failure(device=x.a_device, port=x.a_port) for x in links]
    healthy = estimate_collective(topo, coll, SIZES, job_gpus=job, index=index)
    failed = estimate_collective(topo, coll, SIZES, job_gpus=job, failures=fails, index=index)
    for h, f in zip(healthy.points, failed.points, strict=True):
        assert f.busbw_gbs <= h.busbw_gbs + 1e-9


@settings(max_examples=20, deadline=None)
@given(job=st.sampled_from([256, 512, 1024]), coll=colls)
def test_more_oversubscription_never_improves(job: int, coll: str) -> None:
    prev = None
    for ratio in ("1:1", "2:1", "3:1"):
        pts = _busbw(estimate_collective(topo_of(1024, ratio), coll, SIZES, job_gpus=job).points)
        if prev is not None:
            assert all(b <= a + 1e-9 for a, b in zip(prev, pts, strict=True))
        prev = pts


@settings(max_examples=20, deadline=None)
@given(job=jobs, coll=colls)
def test_slower_nics_never_improve(job: int, coll: str) -> None:
    # Same SU size for both (at 200G a QM9700 leaf has twice the ports: bigger SUs would
    # shorten paths and change the comparison).
    fast = topo_of(1024, nic=400, su_nodes=32)
    slow = topo_of(1024, nic=200, su_nodes=32)
    fast_bw = _busbw(estimate_collective(fast, coll, SIZES, job_gpus=job).points)
    slow_bw = _busbw(estimate_collective(slow, coll, SIZES, job_gpus=job).points)
    assert all(s <= f + 1e-9 for f, s in zip(fast_bw, slow_bw, strict=True))


@pytest.mark.parametrize("coll", COLLECTIVES)
def test_a_job_inside_one_su_ignores_spine_oversubscription(coll: str) -> None:
    """A 32-server job fits one SU at 1:1 (32 servers) and at 2:1 (42): same estimate."""
    one = estimate_collective(topo_of(1024, "1:1"), coll, SIZES, job_gpus=256)
    two = estimate_collective(topo_of(1024, "2:1"), coll, SIZES, job_gpus=256)
    assert one.job.sus == two.job.sus == 1
    assert _busbw(one.points) == _busbw(two.points)


def test_alltoall_pays_oversubscription_across_sus() -> None:
    one = estimate_collective(topo_of(1024, "1:1"), "alltoall", SIZES)
    two = estimate_collective(topo_of(1024, "2:1"), "alltoall", SIZES)
    assert two.points[-1].busbw_gbs < 0.8 * one.points[-1].busbw_gbs


def test_a_failed_leaf_costs_a_rail() -> None:
    topo = topo_of(1024)
    healthy = estimate_collective(topo, "all_reduce", SIZES, algorithms=["ring"])
    failed = estimate_collective(
        topo, "all_reduce", SIZES, algorithms=["ring"], failures=[Failure(device="su2-r5-leaf")]
    )
    assert failed.points[-1].busbw_gbs == pytest.approx(
        healthy.points[-1].busbw_gbs * 7 / 8,  # latency: <0.5%
        rel=5e-3,
    )


def test_cli_json_shape_and_compare_svg(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    res = runner.invoke(main, ["estimate", "--gpus", "256", "--sizes", "1M,1G", "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) >= {"collective", "job", "points", "assumptions"}
    assert set(data["job"]) >= {"gpus", "nodes", "sus"}
    assert set(data["points"][0]) >= {"bytes", "algbw_gbs", "busbw_gbs", "time_s", "algorithm"}
    assert [p["bytes"] for p in data["points"]] == [1 << 20, 1 << 30]
    out = tmp_path / "cmp.svg"
    res = runner.invoke(
        main,
        [
            "estimate",
            "--gpus",
            "1024",
            "--collective",
            "alltoall",
            "--compare",
            "oversubscription=1:1,2:1",
            "--format",
            "svg",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    svg = out.read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2
    assert "oversubscription=2:1" in svg


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sizes", "1Q"], "error: --sizes: '1Q' is not a size"),
        (["--job-gpus", "12"], "error: --job-gpus: 12 is not a positive multiple of 8"),
        (["--compare", "colour=red,blue"], "error: --compare: 'colour' is not a spec flag"),
        (["--fail", "spine-42"], "error: --fail: 'spine-42' is not a device"),
    ],
)
def test_cli_bad_input(args: list[str], message: str) -> None:
    res = CliRunner().invoke(main, ["estimate", *args])
    assert res.exit_code == 2
    assert res.output.startswith(message), res.output


def test_job_hosts_file_errors_name_the_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("# job\nsu1-node01\nsu1-node02\nnot-a-node\n")
    res = CliRunner().invoke(main, ["estimate", "--job-hosts", str(hosts)])
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {hosts}:4: 'not-a-node' is not a server")
    hosts.write_text("su1-node01\nsu1-node02\n")
    ok = CliRunner().invoke(main, ["estimate", "--job-hosts", str(hosts), "--format", "json"])
    assert ok.exit_code == 0 and json.loads(ok.output)["job"]["gpus"] == 16


def test_compare_labels_and_which_scenarios_fail() -> None:
    runner = CliRunner()
    res = runner.invoke(
        main,
        [
            "estimate",
            "--gpus",
            "1024",
            "--sizes",
            "1G",
            "--compare",
            "oversubscription=1:1,2:1",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    scen = json.loads(res.output)["scenarios"]
    assert [s["label"] for s in scen] == ["oversubscription=1:1", "oversubscription=2:1"]
    assert all("healthy fabric" in s["assumptions"] for s in scen)  # no failure sneaks in
    res = runner.invoke(
        main,
        [
            "estimate",
            "--gpus",
            "1024",
            "--sizes",
            "1G",
            "--compare",
            "healthy,failed",
            "--fail",
            "spine-03",
            "--format",
            "json",
        ],
    )
    scen = json.loads(res.output)["scenarios"]
    assert [s["label"] for s in scen] == ["healthy", "failed (spine-03)"]
    res = runner.invoke(
        main,
        [
            "estimate",
            "--gpus",
            "1024",
            "--sizes",
            "1G",
            "--compare",
            "healthy,failed",
            "--format",
            "json",
        ],
    )
    worst = json.loads(res.output)["scenarios"][1]
    assert worst["label"] == "failed (su1-r1-leaf)"  # the worst single failure
    assert (
        worst["points"][0]["busbw_gbs"]
        < json.loads(res.output)["scenarios"][0]["points"][0]["busbw_gbs"]
    )


def test_no_live_path_is_null_time_not_infinity() -> None:
    spines = [a for i in range(1, 17) for a in ("--fail", f"spine-{i:02d}")]
    res = CliRunner().invoke(
        main, ["estimate", "--gpus", "1024", "--sizes", "1G", *spines, "--format", "json"]
    )
    assert res.exit_code == 0, res.output

    def reject(name: str) -> None:
        raise AssertionError(f"not JSON: {name}")

    data = json.loads(res.output, parse_constant=reject)
    assert data["points"][0]["time_s"] is None and data["points"][0]["busbw_gbs"] == 0
    assert any("cannot run" in a for a in data["assumptions"])


@cache
def three_tier(ratio: str = "1:1") -> FabricTopology:
    """3 pods of 2 SUs of 8 four-GPU servers (16-port switches)."""
    gpus = 192 if ratio == "1:1" else 288
    spec = {
        "gpus": gpus,
        "gpus_per_node": 4,
        "switch": "generic-16x400",
        "oversubscription": ratio,
        "infiniband": {"sm_location": "switch"},  # whole SUs (see topo_of)
    }
    return build_topology(size_fabric(validate_spec(spec)))


@settings(max_examples=30, deadline=None)
@given(
    job=st.sampled_from([8, 32, 64, 96, 192]),
    coll=colls,
    seed=st.integers(0, 1000),
    k=st.integers(1, 4),
    whole=st.booleans(),
)
def test_three_tiers_failures_never_improve(
    job: int, coll: str, seed: int, k: int, whole: bool
) -> None:
    topo = three_tier()
    index = FabricIndex(topo)
    if whole:  # whole switches of any tier
        pool = [d.name for d in topo.switches("leaf", "spine", "core")]
        fails = [Failure(device=n) for n in random.Random(seed).sample(pool, k)]
    else:
        links = random.Random(seed).sample(index.links, k)
        fails = [Failure(device=x.a_device, port=x.a_port) for x in links]
    healthy = estimate_collective(topo, coll, SIZES, job_gpus=job, index=index)
    failed = estimate_collective(topo, coll, SIZES, job_gpus=job, failures=fails, index=index)
    for h, f in zip(healthy.points, failed.points, strict=True):
        assert f.busbw_gbs <= h.busbw_gbs + 1e-9


def test_three_tiers_alltoall_pays_the_pod_cut() -> None:
    """Across pods the spine→core uplinks bound all-to-all; a failed core lowers it."""
    topo = three_tier()
    est = estimate_collective(topo, "alltoall", SIZES)
    assert est.job.pods == 3 and "pod_uplinks_min" in est.limits_gbs
    core = next(topo.switches("core")).name
    failed = estimate_collective(topo, "alltoall", SIZES, failures=[Failure(device=core)])
    assert failed.limits_gbs["pod_uplinks_min"] < est.limits_gbs["pod_uplinks_min"]
    assert failed.points[-1].busbw_gbs <= est.points[-1].busbw_gbs


@pytest.mark.parametrize("target", ["", "/dev/zero", "/nonexistent/hosts.txt"])
def test_job_hosts_bad_files_are_one_line(target: str) -> None:
    res = CliRunner().invoke(main, ["estimate", "--job-hosts", target])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), res.output
