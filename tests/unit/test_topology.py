"""Properties of the port-level topology and the graph checks of fabric_stack.topology.verify."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import Link, build_topology
from fabric_stack.topology.verify import bisection_mincut_tbps, verify_topology
from tests.topology_fixtures import Spec, any_spec, small_spec, topo, topo_for

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(any_spec)
def test_every_device_port_is_used_at_most_once(key: Spec) -> None:
    t = topo_for(key)
    ends: Counter[tuple[str, str]] = Counter()
    for k in t.links:
        ends[(k.a_device, k.a_port)] += 1
        ends[(k.b_device, k.b_port)] += 1
    shared = [e for e, n in ends.items() if n > 1]
    assert not shared, shared[:5]
    # and the logical port numbers of every switch stay inside its radix
    radix = {d.name: d.radix for d in t.devices if d.role not in ("server", "manager")}
    for k in t.links:
        if k.b_device in radix:
            assert 1 <= k.b_port_number <= radix[k.b_device], k
        if k.a_device in radix:
            assert 1 <= k.a_port_number <= radix[k.a_device], k


@SETTINGS
@given(any_spec)
def test_every_nic_lands_on_its_rail_leaf(key: Spec) -> None:
    t = topo_for(key)
    rails = t.plan.rails
    leaves = {d.name: d for d in t.devices if d.role == "leaf"}
    servers = {d.name: d for d in t.devices if d.role == "server"}
    n = 0
    for k in t.links_of("node_leaf"):
        n += 1
        index = int(k.a_port.removeprefix("mlx5_"))
        rail, plane = index % rails + 1, index // rails + 1
        leaf = leaves[k.b_device]
        assert (leaf.rail, leaf.plane, leaf.su) == (rail, plane, servers[k.a_device].su), k
        assert k.rail == rail and k.plane == plane
    assert n == t.plan.nodes * rails * t.plan.planes


@settings(max_examples=15, deadline=None)
@given(any_spec)
def test_building_twice_gives_identical_links(key: Spec) -> None:
    spec = validate_spec(**dict(key))
    a = build_topology(size_fabric(spec))
    b = build_topology(size_fabric(spec))
    assert a.links == b.links
    assert a.devices == b.devices


@SETTINGS
@given(any_spec)
def test_graph_checks_pass_except_bisection(key: Spec) -> None:
    report = verify_topology(topo_for(key), mincut_max_nodes=0)
    failed = [(c.name, c.details) for c in report.checks if c.status == "fail"]
    assert not failed
    assert report.check("bisection-mincut").status == "skip"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_spec.filter(lambda k: dict(k).get("oversubscription", "1:1") == "1:1"))
def test_mincut_equals_sizing_bisection_when_non_blocking(key: Spec) -> None:
    t = topo_for(key)
    report = verify_topology(t)
    check = report.check("bisection-mincut")
    assert check.status in ("pass", "skip"), check.summary
    if check.status == "pass":
        cut, _ = bisection_mincut_tbps(t)
        assert cut == pytest.approx(t.plan.bandwidth.bisection_tbps)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"gpus": 1024},
        {"gpus": 1024, "oversubscription": "2:1"},
        {"gpus": 2688, "oversubscription": "2:1"},  # 8 full SUs of 42 servers
        {"gpus": 512, "planes": 2},
        {"gpus": 2048, "fabric": "roce", "switch": "sn5600"},
        {"gpus": 4096, "fabric": "roce", "switch": "sn5600", "nic_gbps": 400},
        {"gpus": 3072},  # three tiers, 384 servers
    ],
)
def test_mincut_check_for_chosen_specs(kw: dict[str, object]) -> None:
    t = topo(**kw)
    report = verify_topology(t)
    assert report.passed, [(c.name, c.summary) for c in report.checks]
    assert report.check("bisection-mincut").status == "pass"
    cut, _ = bisection_mincut_tbps(t)
    assert cut == pytest.approx(t.plan.bandwidth.bisection_tbps)


@pytest.mark.parametrize(
    "kw",
    [
        {"gpus": 1000, "oversubscription": "2:1"},  # 125 servers: halves split a leaf
        {"gpus": 512, "oversubscription": "2:1"},  # unequal SUs (42 + 22 servers)
        {"gpus": 2040, "oversubscription": "3:1"},
        {"gpus": 672, "oversubscription": "2:1"},  # two full SUs: GPUs x rate / 2
        {"gpus": 520},  # odd server count at 1:1
    ],
)
def test_mincut_matches_sizing_for_oversubscribed_and_partial_sus(kw: dict[str, object]) -> None:
    t = topo(**kw)
    assert verify_topology(t).check("bisection-mincut").status == "pass"
    cut, _ = bisection_mincut_tbps(t)
    assert cut == pytest.approx(t.plan.bandwidth.bisection_tbps)


def test_seed_mincut_is_51_2_tb() -> None:
    cut, ports = bisection_mincut_tbps(topo())
    assert cut == pytest.approx(51.2)
    assert ports == 128


def test_mincut_is_skipped_above_the_limit() -> None:
    report = verify_topology(topo(gpus=4104), mincut_max_nodes=512)
    assert report.check("bisection-mincut").status == "skip"
    assert report.passed


def test_verify_catches_a_shared_port_and_a_misrailed_cable() -> None:
    from dataclasses import replace

    t = topo()
    links = list(t.links)
    first = links[0]  # su1-node01:mlx5_0 → su1-r1-leaf 1/1/1
    # re-plug node02's rail-1 cable into node01's leaf port, and node03's rail-1 NIC into rail 2
    links[1] = replace(links[1], b_port=first.b_port, b_port_number=first.b_port_number)
    links[2] = replace(links[2], b_device="su1-r2-leaf")
    broken = replace(t, links=tuple(links))
    report = verify_topology(broken)
    assert not report.passed
    budget = report.check("port-budget")
    assert budget.status == "fail"
    assert "su1-r1-leaf port 1/1/1 is used by su1-node01:mlx5_0 and su1-node02:mlx5_0" in (
        budget.details
    )
    rails = report.check("rail-alignment")
    assert rails.status == "fail"
    assert rails.details[0].startswith(
        "su1-node03:mlx5_0 (rail 1, plane 1, SU 1) lands on su1-r2-leaf (rail 2"
    )


def test_verify_catches_a_missing_uplink_and_an_island() -> None:
    from dataclasses import replace

    t = topo()
    # Drop every uplink of su1-r8-leaf: the split check must fail, while reachability holds
    # (servers bridge rails through PCIe, and rail 8's GPUs reach the others that way).
    links = tuple(
        k for k in t.links if not (k.role == "leaf_spine" and k.a_device == "su1-r8-leaf")
    )
    report = verify_topology(replace(t, links=links))
    split = report.check("leaf-split")
    assert split.status == "fail"
    assert "su1-r8-leaf: 0 uplinks cabled, plan budgets 32" in split.details
    assert report.check("gpu-reachability").status == "pass"
    # now remove node16's compute cables: its GPUs become an island
    links = tuple(k for k in t.links if not (k.role == "node_leaf" and k.a_device == "su1-node16"))
    reach = verify_topology(replace(t, links=links)).check("gpu-reachability")
    assert reach.status == "fail"
    assert "su1-node16/gpu0 cannot reach" in reach.details[0]


# --------------------------------------------------------------------------- growth


def _by_id(kw: dict[str, object]) -> dict[str, Link]:
    return {k.id: k for k in topo(**kw).links}


@pytest.mark.parametrize(
    ("small", "big"),
    [
        (128, 256),  # filling the first SU
        (768, 1024),  # a fourth SU, 16 spines before and after
        (1280, 2048),  # SUs 6-8, 32 spines throughout
        (2056, 4096),  # three tiers: more SUs in the same pods, cores unchanged
    ],
)
def test_growth_with_the_same_spines_changes_no_existing_link(small: int, big: int) -> None:
    a, b = topo(gpus=small), topo(gpus=big)
    assert a.plan.spines_per_pod == b.plan.spines_per_pod
    old, new = _by_id({"gpus": small}), _by_id({"gpus": big})
    assert set(old) <= set(new)
    changed = [i for i, link in old.items() if new[i] != link]
    assert not changed, changed[:5]


def test_growth_that_doubles_the_spines_only_moves_leaf_uplinks() -> None:
    a, b = topo(gpus=128), topo(gpus=512)
    assert (a.plan.spines_per_pod, b.plan.spines_per_pod) == (4, 8)
    old, new = _by_id({"gpus": 128}), _by_id({"gpus": 512})
    assert set(old) <= set(new)
    changed = {i: (old[i], new[i]) for i in old if new[i] != old[i]}
    assert changed  # some uplinks must move to the new spines
    new_spines = {f"spine-0{i}" for i in range(5, 9)}
    taken_by = {(k.b_device, k.b_port): k for k in new.values()}
    for before, after in changed.values():
        assert before.role == after.role == "leaf_spine"
        assert (before.a_device, before.a_port) == (after.a_device, after.a_port)
        # it moves from an old spine to one of the four new spines ...
        assert before.b_device not in new_spines and after.b_device in new_spines
        # ... and the port it vacates is taken by a leaf of the new SU
        assert taken_by[(before.b_device, before.b_port)].su == 2
    # exactly the uplinks in odd slots (slot = uplink index // old spine count) move
    assert len(changed) == 8 * 32 // 2
