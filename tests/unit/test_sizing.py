"""Sizing rules: the seed card, even spreading, partial SUs, tiers, invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.errors import SpecError
from fabric_stack.sizing.size import divisors, size_fabric, spine_count, split_ports
from fabric_stack.spec.model import validate_spec


def plan(**kw: object):  # type: ignore[no-untyped-def]
    return size_fabric(validate_spec(**kw))


def test_seed_card_figures() -> None:
    p = plan()
    assert p.bandwidth.per_gpu_gbps == 400
    assert p.bandwidth.per_node_gbps == 3200
    assert p.rails == 8
    assert p.bandwidth.bisection_tbps == pytest.approx(51.2)
    assert p.switches.leaf == 8
    assert p.radix == 64
    assert p.switches.spine == 4
    assert p.switches.core == 0
    assert p.spec.fabric == "infiniband"
    assert p.oversubscription == "1:1"
    assert p.tiers == 2
    assert p.cables.node_leaf == 128
    assert p.cables.leaf_spine == 256


def test_split_ports() -> None:
    assert split_ports(64, 1, 1) == (32, 32)
    assert split_ports(64, 2, 1) == (42, 21)
    assert split_ports(64, 3, 1) == (48, 16)
    assert split_ports(128, 3, 2) == (75, 50)


def test_spine_count_is_smallest_divisor_with_enough_ports() -> None:
    # 24 leaves x 32 uplinks = 768 ports -> 12 spines would fit the ports,
    # but 12 does not divide 32: even spreading needs 16.
    assert spine_count(24, 32, 64) == 16
    assert spine_count(8, 32, 64) == 4
    # 2:1 leaves have 21 uplinks: divisors 1, 3, 7, 21.
    assert spine_count(16, 21, 64) == 7
    # Tier full: 65 leaves cannot each reach 32 spines of 64 ports once.
    assert spine_count(65, 32, 64) is None
    assert divisors(32) == (1, 2, 4, 8, 16, 32)


def test_three_sus_round_spines_up_to_a_divisor() -> None:
    p = plan(gpus=768)  # 96 nodes: 3 SUs x 8 rails = 24 leaves
    assert p.sus == 3
    assert p.switches.spine == 16
    assert p.leaf_spine_links == 2
    # every leaf has the same number of links to every spine
    assert p.leaf_up % p.spines_per_pod == 0


def test_partial_su_is_built_in_full() -> None:
    p = plan(gpus=136)  # 17 nodes: one partial SU
    assert (p.sus, p.last_su_nodes) == (1, 17)
    assert p.switches.leaf == 8
    assert p.cables.leaf_spine == 8 * 32  # all uplinks cabled
    assert p.cables.node_leaf == 17 * 8
    # filling the SU later changes no switch count
    assert plan(gpus=256).switches == p.switches


def test_two_to_three_tier_boundary_at_radix_squared_over_two() -> None:
    last_two = plan(gpus=64 * 64 // 2)  # 2048 endpoints per plane
    first_three = plan(gpus=64 * 64 // 2 + 8)
    assert last_two.tiers == 2
    assert last_two.two_tier_max_gpus == 2048
    assert (last_two.switches.leaf, last_two.switches.spine) == (64, 32)
    assert first_three.tiers == 3
    assert first_three.switches.core > 0


def test_three_tier_full_size_is_k_cubed_over_four() -> None:
    p = plan(gpus=65536)
    assert p.tiers == 3
    assert p.three_tier_max_gpus == 65536
    assert (p.switches.leaf, p.switches.spine, p.switches.core) == (2048, 2048, 1024)
    with pytest.raises(SpecError) as e:
        plan(gpus=65536 + 8)
    assert e.value.field == "gpus"
    assert "three tiers" in e.value.problem


def test_oversubscribed_leaf_has_fewer_uplinks() -> None:
    p = plan(gpus=512, oversubscription="2:1")
    assert (p.leaf_down, p.leaf_up) == (42, 21)
    assert p.su_nodes == 42
    assert p.bandwidth.bisection_tbps < p.bandwidth.injection_tbps


def test_dual_plane_splits_the_nic_and_doubles_radix() -> None:
    p = plan(planes=2)
    assert p.link_gbps == 200
    assert p.radix == 128  # QM9700 at NDR200
    assert p.bandwidth.per_gpu_gbps == 400
    assert p.cables.node_leaf == 2 * 128
    assert p.switches.leaf == 16


def test_sn5600_split_gives_128_ports_at_400g() -> None:
    p = plan(fabric="roce", switch="SN5600")
    assert p.radix == 128
    assert p.two_tier_max_gpus == 128 * 64


def test_generic_switch() -> None:
    p = plan(fabric="roce", switch="generic-32x400")
    assert p.radix == 32
    assert p.leaf_down == 16


# ---------------------------------------------------------------- properties

specs = st.builds(
    dict,
    nodes=st.integers(1, 700),
    gpn=st.sampled_from([4, 8]),
    ratio=st.sampled_from(["1:1", "2:1", "3:1"]),
    switch=st.sampled_from(
        [
            ("infiniband", "qm9700", 400),
            ("roce", "sn5600", 400),
            ("infiniband", "q3400", 800),
            ("roce", "generic-48x100", 100),
        ]
    ),
    planes=st.sampled_from([1, 2]),
)


def _spec(d: dict) -> dict:  # type: ignore[type-arg]
    fabric, switch, speed = d["switch"]
    return dict(
        gpus=d["nodes"] * d["gpn"],
        gpus_per_node=d["gpn"],
        oversubscription=d["ratio"],
        fabric=fabric,
        switch=switch,
        nic_gbps=speed * d["planes"] if switch != "q3400" else 800,
        planes=d["planes"] if switch != "q3400" else 1,
    )


def _sizes(d: dict):  # type: ignore[no-untyped-def, type-arg]
    try:
        return size_fabric(validate_spec(**_spec(d)))
    except SpecError:
        return None


@settings(max_examples=80, deadline=None)
@given(specs)
def test_no_switch_over_its_radix_and_ratio_holds(d: dict) -> None:  # type: ignore[type-arg]
    p = _sizes(d)
    if p is None:
        return
    for tier in p.tier_plans:
        assert tier.ports_used_max <= tier.radix
        assert tier.ports_down + tier.ports_up <= tier.radix
    a, b = p.spec.ratio
    assert p.leaf_down * b == p.leaf_up * a
    if p.non_blocking:
        assert p.leaf_up >= p.leaf_down
        if p.tiers == 3:
            assert p.spine_up >= p.spine_down
        assert p.bandwidth.bisection_tbps == pytest.approx(p.bandwidth.injection_tbps)
    # even spreading at every tier
    assert p.leaf_up % p.spines_per_pod == 0
    if p.tiers == 3:
        assert p.spine_up % p.cores_per_group == 0


@settings(max_examples=60, deadline=None)
@given(specs, st.integers(1, 400))
def test_counts_never_shrink_as_gpus_grow(d: dict, extra_nodes: int) -> None:  # type: ignore[type-arg]
    small = _sizes(d)
    big = _sizes({**d, "nodes": d["nodes"] + extra_nodes})
    if small is None or big is None:
        return
    for field in ("leaf", "spine", "core", "total"):
        assert getattr(big.switches, field) >= getattr(small.switches, field)
    assert big.cables.total >= small.cables.total
    assert big.transceivers.total >= small.transceivers.total
    if small.non_blocking:
        # Non-blocking: bisection = GPUs x line rate, so it grows with the cluster. An
        # oversubscribed figure is the whole-leaves cut, which can shift down slightly
        # when one more server moves the halfway point (e.g. 2,416 -> 2,420 GPUs at 2:1
        # with 4 rails: 495.2 -> 493.6 Tb/s), so it is not asserted monotone.
        assert big.bandwidth.bisection_tbps >= small.bandwidth.bisection_tbps


@settings(max_examples=40, deadline=None)
@given(specs)
def test_every_node_fits_an_su_and_every_su_has_one_leaf_per_rail(d: dict) -> None:  # type: ignore[type-arg]
    p = _sizes(d)
    if p is None:
        return
    assert p.sus == math.ceil(p.nodes / p.su_nodes)
    assert 1 <= p.last_su_nodes <= p.su_nodes
    assert p.switches.leaf == p.sus * p.rails * p.planes
