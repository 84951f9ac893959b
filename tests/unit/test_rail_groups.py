"""Several leaves per rail, rail-grouped spines and build-outs (issue #43, second half).

Published figures: NVIDIA's DGX B300 SuperPOD RA, Table 3 (``B300_SUPERPOD_RA``): SUs of
64 DGX B300 on 64-port switches, 16 leaves and 8 spines per SU up to 16 SUs (256 leaves,
128 spines) in two tiers. The RA's switch configuration per plane is UNVERIFIED here; the
figures are those of one plane of 64 × 800G switches (``generic-64x800``) serving eight
800G rails, which is how the test reads them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric_stack.cli import main
from fabric_stack.errors import SpecError
from fabric_stack.sizing.build_out import moved_cables
from fabric_stack.sizing.rail_groups import B300_SUPERPOD_RA
from fabric_stack.sizing.size import SizingPlan, size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology

B300 = {"su_nodes": 64, "switch": "generic-64x800", "nic_gbps": 800, "fabric": "roce"}
"""One plane of the DGX B300 SuperPOD RA's compute fabric as this model reads it."""

# (SUs, leaves, spines, node-leaf cables, leaf-spine cables): B300 RA Table 3.
B300_TABLE_3 = [
    (1, 16, 8, 512, 512),
    (2, 32, 16, 1024, 1024),
    (4, 64, 32, 2048, 2048),
    (8, 128, 64, 4096, 4096),
    (16, 256, 128, 8192, 8192),
]


def _plan(**kw: Any) -> SizingPlan:
    return size_fabric(validate_spec(**kw))


def _topo(**kw: Any) -> FabricTopology:
    return build_topology(_plan(**kw))


@pytest.mark.parametrize(("sus", "leaves", "spines", "node_leaf", "leaf_spine"), B300_TABLE_3)
def test_b300_superpod_table_3_rail_grouped(
    sus: int, leaves: int, spines: int, node_leaf: int, leaf_spine: int
) -> None:
    plan = _plan(gpus=512 * sus, spine_grouping="rail", **B300)
    assert "Table 3" in B300_SUPERPOD_RA
    assert plan.leaves_per_rail == 2
    assert plan.tiers == 2
    assert (plan.switches.leaf, plan.switches.spine, plan.switches.core) == (leaves, spines, 0)
    assert (plan.cables.node_leaf, plan.cables.leaf_spine) == (node_leaf, leaf_spine)


@pytest.mark.parametrize(("sus", "leaves", "spines", "node_leaf", "leaf_spine"), B300_TABLE_3)
def test_b300_table_3_needs_rail_grouping_past_four_sus(
    sus: int, leaves: int, spines: int, node_leaf: int, leaf_spine: int
) -> None:
    # A full grouping carries the RA's rows in two tiers only while every leaf can reach
    # every spine (64 leaves on 64-port spines: 4 SUs); past that it needs a core.
    plan = _plan(gpus=512 * sus, **B300)
    if sus <= 4:
        assert (plan.tiers, plan.switches.leaf, plan.switches.spine) == (2, leaves, spines)
    else:
        assert plan.tiers == 3 and plan.switches.core > 0


def test_su_larger_than_a_leaf_was_refused_and_now_gets_two_leaves_per_rail() -> None:
    plan = _plan(gpus=512, su_nodes=64, switch="qm9700")
    assert (plan.leaves_per_rail, plan.per_leaf, plan.switches.leaf) == (2, 32, 16)
    topo = build_topology(plan)
    leaf_rail = {d.name: d.rail for d in topo.devices if d.role == "leaf"}
    for nic_link in (lk for lk in topo.links if lk.role == "node_leaf"):
        assert leaf_rail[nic_link.b_device] == nic_link.rail
    # Servers 1-32 on leaf 1, 33-64 on leaf 2, each at its own port.
    ends = {(lk.a_device, lk.rail): (lk.b_device, lk.b_port_number) for lk in topo.links}
    assert ends[("su1-node33", 3)] == ("su1-r3-leaf2", 1)
    assert ends[("su1-node32", 3)] == ("su1-r3-leaf1", 32)


def test_growing_without_build_out_moves_512_cables_and_with_it_none() -> None:
    def far_ends(t: FabricTopology) -> list[tuple[str, str]]:
        return [(lk.id, f"{lk.b_device}:{lk.b_port}") for lk in t.links]

    assert moved_cables(far_ends(_topo(gpus=1024)), far_ends(_topo(gpus=2048))) == 512
    phase1 = far_ends(_topo(gpus=1024, build_out_gpus=2048))
    phase2 = far_ends(_topo(gpus=2048, build_out_gpus=2048))
    assert moved_cables(phase1, phase2) == 0
    assert set(phase1) <= set(phase2)
    # The last phase is the fabric a plan of the final size alone would build.
    assert phase2 == far_ends(_topo(gpus=2048))


def test_build_out_cost_is_on_the_card_and_the_plan() -> None:
    plan = _plan(gpus=1024, build_out_gpus=2048)
    bo = plan.build_out
    assert bo is not None
    assert (bo.spines, bo.standalone_spines, bo.extra_switches) == (32, 16, 16)
    assert bo.free_spine_ports == 32 * 64 - 32 * 32
    out = CliRunner().invoke(main, ["size", "--gpus", "1024", "--build-out-gpus", "2048"])
    assert out.exit_code == 0, out.output
    assert "2,048-GPU build-out" in out.output and "16 switch(es)" in out.output


@pytest.mark.parametrize(
    ("args", "key"),
    [
        (["--gpus", "1024", "--build-out-gpus", "512"], "build_out_gpus"),
        (["--gpus", "1024", "--build-out-gpus", "1028"], "build_out_gpus"),
        (["--gpus", "32768", "--spine-grouping", "rail"], "spine_grouping"),
    ],
)
def test_bad_shape_input_is_one_line_exit_2(args: list[str], key: str) -> None:
    out = CliRunner().invoke(main, ["size", *args])
    assert out.exit_code == 2
    lines = [ln for ln in out.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {key}:"), out.output


def test_rail_grouping_keeps_two_tiers_where_full_needs_a_core() -> None:
    full = _plan(gpus=4096)
    rail = _plan(gpus=4096, spine_grouping="rail")
    assert (full.tiers, rail.tiers) == (3, 2)
    assert rail.switches.total < full.switches.total
    with pytest.raises(SpecError, match="spine_grouping"):
        _plan(gpus=32768, spine_grouping="rail")


def _check_ports_and_counts(topo: FabricTopology) -> None:
    plan = topo.plan
    ports = Counter()
    for lk in topo.links:
        ports[(lk.a_device, lk.a_port)] += 1
        ports[(lk.b_device, lk.b_port)] += 1
    assert max(ports.values()) == 1, "a port is cabled twice"
    roles = Counter(lk.role for lk in topo.links)
    devices = Counter(d.role for d in topo.devices)
    assert roles["node_leaf"] == plan.cables.node_leaf
    assert roles["leaf_spine"] == plan.cables.leaf_spine
    assert roles.get("spine_core", 0) == plan.cables.spine_core
    assert devices["leaf"] == plan.switches.leaf
    assert devices["spine"] == plan.switches.spine
    assert devices.get("core", 0) == plan.switches.core
    # No cable lands on a port a switch does not have.
    radix = {d.name: d.radix for d in topo.devices if d.radix}
    for lk in topo.links:
        if lk.b_device in radix:
            assert lk.b_port_number <= radix[lk.b_device]


SHAPES = st.fixed_dictionaries(
    {
        "switch": st.sampled_from(["generic-8x400", "generic-16x400", "qm9700"]),
        "fabric": st.sampled_from(["roce", "infiniband"]),
        "gpus_per_node": st.sampled_from([4, 8]),
        "leaves": st.integers(1, 3),
        "servers": st.integers(1, 200),
        "planes": st.sampled_from([1, 2]),
        "grouping": st.sampled_from(["full", "rail"]),
    }
)


def _spec_of(d: dict[str, Any], servers: int) -> dict[str, Any]:
    down = {"generic-8x400": 4, "generic-16x400": 8, "qm9700": 32}[d["switch"]]
    gpn = d["gpus_per_node"]
    return {
        "switch": d["switch"],
        "fabric": "infiniband" if d["switch"] == "qm9700" else d["fabric"],
        "gpus_per_node": gpn,
        "gpus": servers * gpn,
        "su_nodes": down * d["leaves"],
        "planes": d["planes"],
        "nic_gbps": 400 * d["planes"],
        "spine_grouping": d["grouping"],
    }


def _plan_or_skip(spec: dict[str, Any]) -> FabricTopology | None:
    try:
        return _topo(**spec)
    except SpecError:
        return None  # beyond what these tiers carry: the sizing says so in one line


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=SHAPES)
def test_every_port_once_and_counts_from_the_link_list(shape: dict[str, Any]) -> None:
    topo = _plan_or_skip(_spec_of(shape, shape["servers"]))
    if topo is None:
        return
    _check_ports_and_counts(topo)
    if topo.plan.spine_grouping == "rail":
        spine_rail = {d.name: d.rail for d in topo.devices if d.role == "spine"}
        for lk in topo.links:
            if lk.role == "leaf_spine":
                assert spine_rail[lk.b_device] == lk.rail, f"{lk.id} crosses rail groups"


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=SHAPES, cuts=st.lists(st.integers(1, 200), min_size=2, max_size=3, unique=True))
def test_build_out_phase_k_plus_1_keeps_every_cable_of_phase_k(
    shape: dict[str, Any], cuts: list[int]
) -> None:
    phases = sorted(cuts)
    final = _spec_of(shape, phases[-1])["gpus"]
    previous: set[tuple[str, ...]] | None = None
    for servers in phases:
        spec = _spec_of(shape, servers) | {"build_out_gpus": final}
        topo = _plan_or_skip(spec)
        if topo is None:
            return
        _check_ports_and_counts(topo)
        cables = {
            (lk.a_device, lk.a_port, lk.b_device, lk.b_port)
            for lk in topo.links
            if lk.network == "compute"
        }
        if previous is not None:
            assert previous <= cables, sorted(previous - cables)[:3]
        previous = cables


def _intent(**kw: Any) -> Any:
    from fabric_stack import derive_intent

    return derive_intent(_topo(**kw))


def test_rail_grouped_fabric_without_nvlink_servers_violates_the_policy() -> None:
    from fabric_stack.policy import check_rail_grouped_nvlink, evaluate

    nvlink = _intent(gpus=256, spine_grouping="rail")  # hgx-8gpu: NVLink 4
    assert list(check_rail_grouped_nvlink(nvlink)) == []
    without = _intent(gpus=256, gpus_per_node=4, spine_grouping="rail")  # generic 4-GPU
    found = list(check_rail_grouped_nvlink(without))
    assert [v.rule for v in found] == ["rail-grouped-nvlink"]
    assert "spine_grouping: full" in found[0].message
    assert evaluate(without).status == "fail"
    # The same servers under a full grouping have a network path between rails.
    assert list(check_rail_grouped_nvlink(_intent(gpus=256, gpus_per_node=4))) == []


def test_whatif_and_estimate_say_what_rail_grouping_means() -> None:
    from fabric_stack.analysis.estimate import estimate_collective
    from fabric_stack.analysis.whatif import analyze_failures
    from fabric_stack.analysis.whatif_results import Failure

    rail = _topo(gpus=1024, spine_grouping="rail")
    result = analyze_failures(rail, [Failure(device="r1-spine-01")])
    assert "NVLink" in result.traffic and "traffic" in result.model_dump()
    # Only rail 1's leaves lose an uplink: the other rails' spine groups are untouched.
    hit = {lk.rail for lk in rail.links if lk.b_device == "r1-spine-01"}
    assert hit == {1}
    full = analyze_failures(_topo(gpus=1024), [Failure(device="spine-01")])
    assert full.traffic == "" and "traffic" not in full.model_dump()
    est = estimate_collective(rail, "all_reduce", [1 << 30])
    assert any("no network path joins two rails" in a for a in est.assumptions)


def test_two_leaves_per_rail_get_their_own_address_blocks() -> None:
    from fabric_stack.artifacts import RenderContext

    topo = _topo(gpus=1024, su_nodes=64, fabric="roce", switch="sn5600", nic_gbps=800)
    assert topo.plan.leaves_per_rail == 2
    under = RenderContext.from_topology(topo).underlay
    subnets = [b.subnet for b in under.blocks]
    assert len(subnets) == len(set(subnets)) == topo.plan.switches.leaf
    addresses = [h.address for h in under.hosts]
    assert len(addresses) == len(set(addresses)) == topo.plan.cables.node_leaf
    gateway = {b.leaf: b.gateway for b in under.blocks}
    assert all(h.gateway == gateway[h.leaf] for h in under.hosts)


@pytest.mark.parametrize(
    "shape",
    [
        {"su_nodes": 256},
        {"su_nodes": 256, "spine_grouping": "rail"},
        {"su_nodes": 256, "spine_grouping": "rail", "build_out_gpus": 16384},
        {"spine_grouping": "rail", "planes": 2, "nic_gbps": 400},
    ],
)
def test_every_policy_passes_on_the_new_shapes(shape: dict[str, Any]) -> None:
    # The underlay gives every leaf of a rail and every rail group's spines their own
    # loopback, ASN slot and link /31s (two leaves per rail once shared them).
    from fabric_stack.policy import evaluate

    spec = {"gpus": 4096, "fabric": "roce", "switch": "sn5600", "nic_gbps": 200} | shape
    report = evaluate(_intent(**spec))
    assert report.status == "pass", [v.message for v in report.violations[:3]]
