"""Rule underlay-consistency: passes on planned underlays, catches broken ones."""

from __future__ import annotations

from dataclasses import replace

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.intent.derive import derive_intent
from fabric_stack.policy import RULES, evaluate
from fabric_stack.policy.rules.underlay_consistency import check_underlay
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
