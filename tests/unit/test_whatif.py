"""`whatif`: failures on the port-level fabric, cross-checked with a networkx max-flow."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from functools import cache

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.analysis.whatif import (
    FabricIndex,
    Failure,
    analyze_failures,
    measure_bisection_tbps,
    n_minus_1,
)
from fabric_stack.analysis.whatif_results import Ecmp
from fabric_stack.cli import main
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology
from fabric_stack.topology.verify import bisection_mincut_tbps

# Small fabrics of every shape: two tiers, oversubscribed, a partial SU, three tiers
# (16-port generic switches: 2 SUs of 8 four-GPU servers per pod, 3 pods; a partial pod;
# 3:1 leaves), two planes.
SPECS: dict[str, dict[str, object]] = {
    "seed": {},
    "two-su": {"gpus": 512},
    "2to1": {"gpus": 512, "oversubscription": "2:1"},
    "partial-su": {"gpus": 320},
    "three-tier": {"gpus": 192, "gpus_per_node": 4, "switch": "generic-16x400"},
    "three-tier-partial-pod": {"gpus": 160, "gpus_per_node": 4, "switch": "generic-16x400"},
    "three-tier-3to1": {
        "gpus": 288,
        "gpus_per_node": 4,
        "switch": "generic-16x400",
        "oversubscription": "3:1",
    },
    "three-tier-8-port": {"gpus": 64, "gpus_per_node": 2, "switch": "generic-8x400"},
    "two-planes": {"gpus": 256, "planes": 2, "nic_gbps": 800, "switch": "q3400"},
}


@cache
def topo_of(name: str) -> FabricTopology:
    return build_topology(size_fabric(validate_spec(dict(SPECS[name]))))


def networkx_updown_tbps(topo: FabricTopology, dead: frozenset[str]) -> float:
    """Independent check: the full port-level up-down graph (no merging), networkx max-flow.

    Every server NIC cable is its own edge from the source (first half of the
    NIC ports in (SU, rail, server) order) or to the sink; every switch has an
    up and a down copy; cables climb between up copies and descend between down
    copies. Dead cables (by id) are left out.
    """
    total = 0.0
    for plane in range(1, topo.plan.planes + 1):
        g = nx.DiGraph()
        ends = []
        for link in topo.links_of("node_leaf"):
            if link.plane == plane:
                srv = topo.device(link.a_device)
                ends.append((srv.su, link.rail, srv.index, link))
        ends.sort(key=lambda e: e[:3])
        half = len(ends) // 2
        switches = {d.name for d in topo.switches("leaf", "spine", "core")}
        for s in switches:
            g.add_edge((s, "up"), (s, "down"))  # no capacity attribute: unbounded
        for k, (*_, link) in enumerate(ends):
            if link.id in dead:
                continue
            if k < half:
                g.add_edge("src", (link.id, "nic"), capacity=link.speed_gbps)
                g.add_edge((link.id, "nic"), (link.b_device, "up"))
            else:
                g.add_edge((link.b_device, "down"), (link.id, "nic"), capacity=link.speed_gbps)
                g.add_edge((link.id, "nic"), "snk")
        for link in topo.links_of("leaf_spine", "spine_core"):
            if link.plane != plane or link.id in dead:
                continue
            for a, b in (
                ((link.a_device, "up"), (link.b_device, "up")),
                ((link.b_device, "down"), (link.a_device, "down")),
            ):
                cap = g.get_edge_data(a, b, {}).get("capacity", 0)
                g.add_edge(a, b, capacity=cap + link.speed_gbps)
        if "src" in g and "snk" in g:
            total += nx.maximum_flow_value(g, "src", "snk")
    return 2 * total / 1000


def _dead_ids(index: FabricIndex, failures: list[Failure]) -> frozenset[str]:
    return frozenset(index.links[i].id for i in index.resolve(failures))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_healthy_bisection_equals_sizing_and_verify(name: str) -> None:
    topo = topo_of(name)
    got = measure_bisection_tbps(FabricIndex(topo), frozenset())
    assert got == pytest.approx(topo.plan.bandwidth.bisection_tbps)
    assert got == pytest.approx(bisection_mincut_tbps(topo)[0])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_each_switch_failure_matches_networkx(name: str) -> None:
    topo = topo_of(name)
    index = FabricIndex(topo)
    picks = []
    for role in ("leaf", "spine", "core"):  # a few of each tier, the first and some others
        of_role = list(topo.switches(role))
        picks += of_role[:1] + random.Random(1).sample(of_role, min(2, len(of_role)))
    for sw in picks:
        f = [Failure(device=sw.name)]
        got = measure_bisection_tbps(index, index.resolve(f))
        assert got == pytest.approx(networkx_updown_tbps(topo, _dead_ids(index, f))), sw.name


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(SPECS)), seed=st.integers(0, 10_000), k=st.integers(1, 12))
def test_random_cable_failures_match_networkx(name: str, seed: int, k: int) -> None:
    topo = topo_of(name)
    index = FabricIndex(topo)
    links = random.Random(seed).sample(index.links, min(k, len(index.links)))
    failures = [Failure(device=link.a_device, port=link.a_port) for link in links]
    dead = index.resolve(failures)
    assert len(dead) == len(links)
    got = measure_bisection_tbps(index, dead)
    assert got == pytest.approx(networkx_updown_tbps(topo, _dead_ids(index, failures)))
    assert got <= measure_bisection_tbps(index, frozenset()) + 1e-9


@pytest.mark.parametrize("gpus", [512, 1024, 2048])
def test_one_of_s_spines_lowers_the_cross_su_cut_by_one_over_s(gpus: int) -> None:
    # whole SUs: switch-hosted SMs (UFM hosts would take a server position from SU 1)
    spec = {"gpus": gpus, "infiniband": {"sm_location": "switch"}}
    topo = build_topology(size_fabric(validate_spec(spec)))
    spines = list(topo.switches("spine"))
    r = analyze_failures(topo, [Failure(device=spines[0].name)])
    before, after = r.bisection_tbps.before, r.bisection_tbps.after
    assert after == pytest.approx(before * (1 - 1 / len(spines)))
    leaf_to_spine = topo.plan.leaf_spine_links
    assert r.ecmp.min == r.ecmp.healthy - leaf_to_spine
    assert r.capacity_lost_pct.leaf_spine == pytest.approx(100 / len(spines), abs=1e-3)


def test_leaf_failure_isolates_its_rail_and_widths_drop_to_zero() -> None:
    topo = topo_of("two-su")
    r = analyze_failures(topo, [Failure(device="su2-r3-leaf")])
    nodes_in_su2 = topo.plan.nodes_in_su(2)
    assert r.isolated.gpus == nodes_in_su2  # one GPU per server rides rail 3
    assert r.isolated.by_rail == {"3": nodes_in_su2}
    assert r.isolated.servers == 0
    assert r.isolated.rails_without_leaf == ["SU 2 rail 3"]
    assert r.ecmp.min == 0
    assert r.ecmp.degraded_pairs == 1  # only the rail-3 leaf pair between SU1 and SU2


def test_server_failure_isolates_the_whole_server() -> None:
    r = analyze_failures(topo_of("seed"), [Failure(device="su1-node05")])
    assert (r.isolated.gpus, r.isolated.servers) == (8, 1)
    assert r.failed[0].cables == 8


def test_leaf_cut_off_when_all_uplinks_fail() -> None:
    topo = topo_of("two-su")
    index = FabricIndex(topo)
    ups = [
        link for link in index.links if link.role == "leaf_spine" and link.a_device == "su1-r1-leaf"
    ]
    r = analyze_failures(topo, [Failure(device=u.a_device, port=u.a_port) for u in ups])
    assert r.isolated.leaves_cut_off == ["su1-r1-leaf"]
    assert r.isolated.gpus == 0


def test_two_planes_gpu_is_isolated_only_when_both_planes_fail() -> None:
    topo = topo_of("two-planes")
    one = analyze_failures(topo, [Failure(device="su1-node01", port="mlx5_0")])
    assert one.isolated.gpus == 0 and one.isolated.by_plane == {"1": 1}
    both = analyze_failures(
        topo,
        [Failure(device="su1-node01", port="mlx5_0"), Failure(device="su1-node01", port="mlx5_8")],
    )
    assert both.isolated.gpus == 1


@pytest.mark.parametrize("name", ["two-su", "three-tier", "three-tier-3to1", "partial-su"])
def test_grouped_link_n_minus_1_equals_exhaustive(name: str) -> None:
    """The 'link' scope tries one cable per class; every cable of a class gives the same."""
    topo = topo_of(name)
    index = FabricIndex(topo)
    exhaustive: dict[tuple[str, float, int | None], int] = defaultdict(int)
    for link in index.links:
        if link.role == "node_leaf":
            continue
        r = analyze_failures(topo, [Failure(device=link.a_device, port=link.a_port)], index=index)
        exhaustive[(link.role, round(r.bisection_tbps.after, 6), r.ecmp.min)] += 1
    merged: dict[tuple[str, float, int | None], int] = defaultdict(int)
    for r in n_minus_1(index, "link"):
        merged[(r.role, r.bisection_tbps, r.ecmp_min)] += r.equivalent
    assert dict(merged) == dict(exhaustive)


def test_n_minus_1_ranks_worst_first() -> None:
    rows = n_minus_1(FabricIndex(topo_of("three-tier")), "all")
    assert [r.rank for r in rows] == list(range(1, len(rows) + 1))
    assert [r.bisection_tbps for r in rows] == sorted(r.bisection_tbps for r in rows)


def test_cli_json_keys_and_bad_input() -> None:
    runner = CliRunner()
    res = runner.invoke(
        main,
        [
            "whatif",
            "--gpus",
            "512",
            "--fail",
            "spine-01",
            "--n-minus-1",
            "switch",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) >= {
        "failed",
        "bisection_tbps",
        "isolated",
        "ecmp",
        "capacity_lost_pct",
        "n_minus_1",
    }
    assert set(data["bisection_tbps"]) == {"before", "after"}
    assert set(data["isolated"]) >= {"gpus", "servers", "by_rail"}
    assert set(data["ecmp"]) >= {"min", "median"}
    assert set(data["capacity_lost_pct"]) >= {"leaf_spine", "spine_core"}
    assert data["failed"][0]["target"] == "spine-01"
    assert len(data["n_minus_1"]) == topo_of("two-su").plan.switches.total
    bad = runner.invoke(main, ["whatif", "--fail", "spine-99"])
    assert bad.exit_code == 2
    assert bad.output.strip().startswith("error: --fail: 'spine-99' is not a device")
    assert "Traceback" not in bad.output
    port = runner.invoke(main, ["whatif", "--fail", "spine-01:9/9/9"])
    assert port.exit_code == 2 and "has no cabled compute port" in port.output


def test_random_failures_are_reproducible() -> None:
    runner = CliRunner()
    args = ["whatif", "--gpus", "512", "--fail-random", "5", "--seed", "3", "--format", "json"]
    a, b = runner.invoke(main, args), runner.invoke(main, args)
    assert a.exit_code == 0 and a.output == b.output
    assert len(json.loads(a.output)["failed"]) == 5


def test_worst_of_each_kind_names_every_role_once() -> None:
    from fabric_stack.views.whatif import worst_of_each_kind

    r = analyze_failures(topo_of("three-tier"), [], n_minus_1_scope="all")
    lines = worst_of_each_kind(r)
    roles = [line.split(":", 1)[0] for line in lines]
    assert sorted(roles) == sorted({"leaf", "spine", "core", "leaf_spine", "spine_core"})
    assert lines[0].startswith(f"{r.n_minus_1[0].role}: {r.n_minus_1[0].target} ")


def test_ecmp_pairs_count_two_leaves_of_one_rail_inside_one_su() -> None:
    """One SU of 64 servers has two leaves per rail (#43): ECMP counts those 8 pairs (one
    per rail), and the field and the table say pairs are not only across SUs."""
    r = CliRunner().invoke(
        main, ["whatif", "--gpus", "512", "--su-nodes", "64", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["ecmp"]["pairs"] == 8
    described = Ecmp.model_fields["pairs"].description or ""
    assert "same SU" in described
