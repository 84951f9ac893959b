"""Rule underlay-consistency: passes on planned underlays, catches broken ones."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import IPv4Address

import pytest

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.intent.derive import derive_intent
from fabric_stack.policy import RULES, evaluate
from fabric_stack.policy.models import Violation
from fabric_stack.policy.rules.underlay_consistency import (
    check_underlay,
    judge_topology,
    proved_consistent,
)
from fabric_stack.topology.build import FabricTopology, Link
from fabric_stack.underlay.extents import underlay_extents
from fabric_stack.underlay.plan import UnderlayPlan, plan_underlay


def _plan(**kw: object) -> UnderlayPlan:
    spec = validate_spec({"fabric": "roce", "switch": "sn5600", "gpus": 256, "su_nodes": 16, **kw})
    return plan_underlay(build_topology(size_fabric(spec)))


def test_rule_is_registered_mandatory_and_passes_in_check() -> None:
    rule = RULES["underlay-consistency"]
    assert rule.default_level == "mandatory"
    spec = validate_spec({"fabric": "roce", "switch": "sn5600", "gpus": 256, "su_nodes": 16})
    report = evaluate(derive_intent(build_topology(size_fabric(spec))))
    res = next(r for r in report.rules if r.id == "underlay-consistency")
    assert res.status == "pass"
    ib = evaluate(derive_intent(build_topology(size_fabric(validate_spec({})))))
    assert next(r for r in ib.rules if r.id == "underlay-consistency").status == "skipped"


def test_planned_underlays_are_consistent() -> None:
    assert list(check_underlay(_plan())) == []
    assert list(check_underlay(_plan(underlay={"fabric_links": "p2p31"}))) == []


def test_duplicate_router_id() -> None:
    u = _plan()
    names = list(u.switches)
    twin = replace(u.switches[names[1]], router_id=u.switches[names[0]].router_id)
    bad = replace(u, switches={**u.switches, names[1]: twin})
    found = list(check_underlay(bad))
    assert {v.resource for v in found if "router-id" in v.measured} == {names[0], names[1]}


def test_unnumbered_on_one_side_only() -> None:
    u = _plan(underlay={"fabric_links": "p2p31"})
    broken = replace(u.links[3], b_address=None)
    bad = replace(u, links=(*u.links[:3], broken, *u.links[4:]))
    found = list(check_underlay(bad))
    assert [v.resource for v in found] == [broken.link_id]
    assert "one end unnumbered" in found[0].message


def test_block_originated_twice_and_host_outside_its_block() -> None:
    u = _plan()
    dup = replace(u.blocks[1], subnet=u.blocks[0].subnet)
    bad = replace(u, blocks=(u.blocks[0], dup, *u.blocks[2:]))
    msgs = [v.measured for v in check_underlay(bad)]
    assert any("originated 2 times" in m for m in msgs)
    assert any("outside" in m for m in msgs)  # the second leaf's hosts lost their block


def test_shared_leaf_asn() -> None:
    u = _plan()
    leaves = [s for s in u.switches.values() if s.role == "leaf"]
    same = replace(leaves[1], asn=leaves[0].asn)
    bad = replace(u, switches={**u.switches, same.name: same})
    assert {v.resource for v in check_underlay(bad)} == {leaves[0].name, leaves[1].name}


# The rule's clean case is decided by address extents (#43); these plant the faults the
# extents must not miss, in the topology the plan is made from, and hold the rule to the
# full plan's findings.

_SPECS = (
    {},
    {"underlay": {"fabric_links": "p2p31", "host_addressing": "p2p31"}},
    {"gpus": 1024, "su_nodes": 64, "planes": 2, "underlay": {"fabric_links": "p2p31"}},
)


def _topo(**kw: object) -> FabricTopology:
    base = {"fabric": "roce", "switch": "sn5600", "gpus": 256, "su_nodes": 16}
    return build_topology(size_fabric(validate_spec({**base, **kw})))


def _with_links(topo: FabricTopology, links: list[Link]) -> FabricTopology:
    return replace(topo, links=tuple(links), _by_name={}, memo={})


def _full(topo: FabricTopology) -> list[Violation]:
    return list(check_underlay(plan_underlay(topo)))


@pytest.mark.parametrize("kw", _SPECS)
def test_extents_bound_every_address_of_the_plan(kw: dict[str, object]) -> None:
    topo = _topo(**kw)
    ext, plan = underlay_extents(topo), plan_underlay(topo)
    assert ext.blocks == plan.blocks and ext.switches == plan.switches
    spans = {s.owner: s for s in ext.spans}
    for h in plan.hosts:
        s = spans[h.leaf]
        assert s.first <= int(IPv4Address(h.address)) <= s.last
    ends = [a for lk in plan.links for a in (lk.a_address, lk.b_address) if a]
    for a in ends:
        assert spans["fabric links"].first <= int(IPv4Address(a)) <= spans["fabric links"].last
    assert ("fabric links" in spans) == bool(ends)
    for sw in plan.switches.values():
        assert spans["loopbacks"].first <= int(IPv4Address(sw.loopback)) <= spans["loopbacks"].last
    # A clean plan is proved clean (else the rule re-plans every address: seconds at 131k GPUs).
    assert proved_consistent(ext) and _full(topo) == []


def test_two_cables_on_one_leaf_port_are_not_proved_clean() -> None:
    topo = _topo()
    links = list(topo.links)
    i, j = [k for k, lk in enumerate(links) if lk.role == "node_leaf" and lk.b_port_number == 1][:2]
    links[j] = replace(links[j], b_device=links[i].b_device)  # same leaf, same port
    bad = _with_links(topo, links)
    assert not proved_consistent(underlay_extents(bad))
    found = list(judge_topology(bad, "mandatory"))
    assert found == _full(bad)
    assert any("used by" in v.measured for v in found)


def test_host_below_its_block_is_not_proved_clean() -> None:
    topo = _topo(underlay={"host_addressing": "p2p31"})
    links = list(topo.links)
    i = next(k for k, lk in enumerate(links) if lk.role == "node_leaf")
    links[i] = replace(links[i], b_port_number=0)  # p2p31: the block's address before it
    bad = _with_links(topo, links)
    assert not proved_consistent(underlay_extents(bad))
    found = list(judge_topology(bad, "mandatory"))
    assert found == _full(bad)
    assert any("outside" in v.measured for v in found)


def test_leaf_block_taken_twice_is_not_proved_clean() -> None:
    topo = _topo(gpus=512)  # four SUs
    leaves = [d for d in topo.devices if d.role == "leaf"]
    a = leaves[0]
    b = next(d for d in leaves if d.rail == a.rail and d.su == a.su + 2)
    # b recorded as a second rail leaf of a's SU: it takes the block (and slots) of the
    # next SU's leaf, whose servers' addresses it then hands out again.
    devices = tuple(replace(d, su=a.su) if d is b else d for d in topo.devices)
    bad = replace(topo, devices=devices, _by_name={}, memo={})
    assert not proved_consistent(underlay_extents(bad))
    found = list(judge_topology(bad, "mandatory"))
    assert found == _full(bad)
    measured = [v.measured for v in found]
    assert any("originated 2 times" in m for m in measured)
    assert any(m.startswith("address 10.64.") for m in measured)
