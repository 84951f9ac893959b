"""The routed underlay plan: uniqueness properties over random specs, ASN plan, pool errors."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.errors import SpecError
from fabric_stack.underlay.plan import UnderlayPlan, plan_underlay


def _plan(**kw: Any) -> UnderlayPlan:
    spec = {"fabric": "roce", "switch": "sn5600", **kw}
    return plan_underlay(build_topology(size_fabric(validate_spec(spec))))


specs = st.fixed_dictionaries(
    {
        "gpus": st.sampled_from([64, 128, 256, 512, 1024]),
        "su_nodes": st.sampled_from([0, 4, 16]),
        "planes": st.sampled_from([1, 2]),
        "underlay": st.fixed_dictionaries(
            {
                "fabric_links": st.sampled_from(["unnumbered", "p2p31"]),
                "host_addressing": st.sampled_from(["leaf-subnet", "p2p31"]),
            }
        ),
    }
)


@settings(
    max_examples=15,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(specs)
def test_addresses_asns_router_ids_unique(kw: dict[str, Any]) -> None:
    try:
        u = _plan(**kw)
    except SpecError as exc:  # a pool too small for this fabric is an input error, not a crash
        assert str(exc).startswith("underlay."), str(exc)  # names the pool field
        return
    rids = [s.router_id for s in u.switches.values()]
    assert len(set(rids)) == len(rids)
    leaves = [s.asn for s in u.switches.values() if s.role == "leaf"]
    assert len(set(leaves)) == len(leaves)
    others = {s.asn for s in u.switches.values() if s.role != "leaf"}
    assert not others & set(leaves)
    addrs = [h.address for h in u.hosts] + [b.gateway for b in u.blocks]
    addrs += [a for lk in u.links for a in (lk.a_address, lk.b_address) if a]
    assert len(set(addrs)) == len(addrs)
    for lk in u.links:  # both ends addressed or both unnumbered
        assert (lk.a_address is None) == (lk.b_address is None)
    blocks = {b.leaf: IPv4Network(b.subnet) for b in u.blocks}
    nets = sorted(blocks.values())
    assert all(not a.overlaps(b) for a, b in pairwise(nets))
    for h in u.hosts:  # every host lies in its own leaf's block, not the gateway
        assert IPv4Address(h.address) in blocks[h.leaf]
        assert IPv4Address(h.gateway) in blocks[h.leaf]


def test_rfc7938_asn_plan_three_tier() -> None:
    u = _plan(gpus=32768)
    by_role: dict[str, set[int]] = {}
    for s in u.switches.values():
        by_role.setdefault(s.role, set()).add(s.asn)
    assert len(by_role["core"]) == 1  # one ASN for the whole core tier (one plane)
    pods = {(s.plane, s.name.split("-")[0]) for s in u.switches.values() if s.role == "spine"}
    assert 1 < len(by_role["spine"]) <= len(pods)  # shared within a pod, not across pods
    n_leaves = sum(1 for s in u.switches.values() if s.role == "leaf")
    assert len(by_role["leaf"]) == n_leaves
    assert min(a for s in by_role.values() for a in s) >= 4_200_000_000


def test_two_tier_spines_share_one_asn() -> None:
    u = _plan(gpus=256, su_nodes=16)
    assert len({s.asn for s in u.switches.values() if s.role == "spine"}) == 1


def test_loopback_pool_exhaustion_names_the_field() -> None:
    with pytest.raises(SpecError, match=r"underlay\.loopbacks: 10\.255\.0\.0/29"):
        _plan(underlay={"loopbacks": "10.255.0.0/29"})


def test_p2p_pool_exhaustion_names_the_field() -> None:
    with pytest.raises(SpecError, match=r"underlay\.p2p: 10\.254\.0\.0/24 holds 128"):
        _plan(underlay={"fabric_links": "p2p31", "p2p": "10.254.0.0/24"})


def test_pool_overlap_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match=r"underlay\.loopbacks: 10\.64\.0\.0/16 overlaps"):
        validate_spec({"fabric": "roce", "underlay": {"loopbacks": "10.64.0.0/16"}})


def test_asn_base_near_range_end_is_an_error() -> None:
    with pytest.raises(SpecError, match=r"underlay\.asn_base"):
        _plan(underlay={"asn_base": 4_294_967_290})


def test_small_compute_subnet_is_an_error() -> None:
    with pytest.raises(SpecError, match=r"networks\.compute\.subnet"):
        _plan(gpus=4096, networks={"compute": {"subnet": "10.64.0.0/22"}})


def test_infiniband_has_no_underlay() -> None:
    with pytest.raises(SpecError, match="fabric"):
        plan_underlay(build_topology(size_fabric(validate_spec({}))))
