"""Every rule, both ways: `fabric-stack check` and the CrossGuard pack agree, applicability too.

Each registered rule runs on an InfiniBand, a RoCEv2 and an Ethernet plan that break
several rules at once, through ``evaluate`` (what ``check`` runs) and through the pack's
policy functions called directly (as tests/unit/test_policy_pack.py does, no engine).
Both must report the same violations, and skip the same rules with the same reason.
A RoCE-only rule with a per-record part (the shape that once ran as a resource policy
and reported 12 violations on an InfiniBand stack that ``check`` skipped) is checked too.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from pulumi_policy import (
    Policy,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.policy import _NotApplicableError

from fabric_stack.intent.model import FabricIntent, SwitchIntent
from fabric_stack.policy import RULES, Rule, Violation, evaluate
from fabric_stack.policy.applicability import Applicability
from fabric_stack.policy.rule import on_fabrics
from fabric_stack.policy.rules.port_budget import RULE as PORT_BUDGET
from tests.policy_fixtures import OPTS, ROCE, Collector, by_name, intent_for, replace
from tests.policy_fixtures import stack_resources as resources_of
from tests.unit.test_policy_pack import fp


def _broken(intent: FabricIntent) -> FabricIntent:
    """``intent`` with a slow cable end, a NIC on the wrong rail and an over-full spine."""
    cable = next(c for c in intent.cables if c.role == "node_leaf" and c.a_device == "su1-node02")
    out = replace(intent, "cables", by_name(cable.name), a_speed_gbps=cable.a_speed_gbps // 2)
    out = replace(out, "nics", by_name("su1-node04:mlx5_7"), leaf="su1-r1-leaf")
    spine = next(s for s in intent.switches if s.name == "spine-03")
    return replace(out, "switches", by_name("spine-03"), ports_down=spine.radix + 6)


PLANS: dict[str, FabricIntent] = {
    "infiniband": _broken(intent_for(oversubscription="2:1", infiniband={"subnet_managers": 1})),
    "roce": _broken(
        intent_for(
            **ROCE, oversubscription="2:1", roce={"pfc_priorities": [3, 4], "lossless_pools": 2}
        )
    ),
    "ethernet": _broken(intent_for(fabric="ethernet", switch="sn5600", oversubscription="2:1")),
}
"""One plan per fabric, each breaking several rules."""


def _policies_of(rule: Rule, policies: Iterable[Policy]) -> list[Policy]:
    return [p for p in policies if p.name in (rule.id, rule.id + fp.FABRIC_SUFFIX)]


def _run(pol: Policy, resources: list[PolicyResource]) -> tuple[list[str], str | None]:
    """(messages, not-applicable reason) of one policy over the stack's resources."""
    if isinstance(pol, StackValidationPolicy):
        got = Collector()
        try:
            pol.validate(StackValidationArgs(resources, None), got)
        except _NotApplicableError as exc:
            return got.messages, exc.reason or ""
        return got.messages, None
    assert isinstance(pol, ResourceValidationPolicy)
    messages: list[str] = []
    for r in resources:
        got = Collector()
        args = ResourceValidationArgs(r.resource_type, r.props, r.urn, r.name, OPTS, None, None)
        pol.validate(args, got)
        messages += got.messages
    return messages, None


def pack_verdict(rule: Rule, intent: FabricIntent, policies: Iterable[Policy]) -> Any:
    """What the pack says about ``rule`` on ``intent``: the skip reasons or the messages."""
    resources = resources_of(intent)
    messages: list[str] = []
    reasons: set[str] = set()
    for pol in _policies_of(rule, policies):
        found, reason = _run(pol, resources)
        messages += found
        if reason is not None:
            reasons.add(reason)
    return ("skipped", reasons, Counter(messages)) if reasons else ("ran", Counter(messages))


def check_verdict(rule: Rule, intent: FabricIntent, found: Iterable[Violation]) -> Any:
    """What ``check`` says about ``rule`` on ``intent`` (its skip reason or the messages)."""
    result = next(r for r in evaluate(intent).rules if r.id == rule.id)
    messages = Counter(fp.message(v) for v in found if v.rule == rule.id)
    if result.status == "skipped":
        return ("skipped", {result.reason}, messages)
    return ("ran", messages)


@pytest.mark.parametrize("fabric", list(PLANS))
@pytest.mark.parametrize("rule", list(RULES.values()), ids=list(RULES))
def test_check_and_the_pack_agree_on_every_rule(fabric: str, rule: Rule) -> None:
    intent = PLANS[fabric]
    assert intent.summary.fabric == fabric
    expected = check_verdict(rule, intent, evaluate(intent).violations)
    got = pack_verdict(rule, intent, fp.POLICIES)
    assert got == expected
    # The skip is the rule's own applicability, the same call both make.
    assert (expected[0] == "skipped") == (rule.applies(intent) is not None)


def test_the_plans_break_rules_on_every_fabric() -> None:
    for fabric, intent in PLANS.items():
        failed = {r.id for r in evaluate(intent).rules if r.status == "fail"}
        assert {"oversubscription-1-to-1", "port-budget", "rail-alignment"} <= failed, fabric
        assert "link-speed-match" in failed, fabric
    assert "roce-lossless-consistency" in {
        r.id for r in evaluate(PLANS["roce"]).rules if r.status == "fail"
    }


def _ecn_off(kind: str, records: Iterable[Any], cfg: Any) -> Iterator[Violation]:
    """A per-switch RoCE check: ECN marking on every compute switch."""
    for sw in records:
        if isinstance(sw, SwitchIntent) and sw.network == "compute" and not sw.ecn:
            yield Violation(
                rule="ecn-everywhere",
                level="mandatory",
                kind="Switch",
                resource=sw.name,
                measured="ECN off",
                allowed="ECN on",
                message=f"{sw.name}: ECN off",
                fix="turn ECN on",
            )


ROCE_ONLY: Applicability[FabricIntent] = on_fabrics(
    "roce", otherwise="the compute fabric is {fabric}, not RoCEv2"
)


def test_a_roce_only_record_rule_is_not_applicable_on_infiniband() -> None:
    rule = dataclasses.replace(
        PORT_BUDGET, id="ecn-everywhere", check_record=_ecn_off, applies=ROCE_ONLY
    )
    (policy,) = fp.build_policies([rule])
    # One resource does not say which fabric it is in: the rule runs as a stack policy.
    assert isinstance(policy, StackValidationPolicy)
    ib = intent_for()
    messages, reason = _run(policy, resources_of(ib))
    assert (messages, reason) == ([], "the compute fabric is infiniband, not RoCEv2")
    assert reason == rule.applies(ib)
    # Without the applicability it judges all 12 IB switches, as the old resource policy did.
    everywhere = dataclasses.replace(rule, applies=PORT_BUDGET.applies)
    (resource_policy,) = fp.build_policies([everywhere])
    assert isinstance(resource_policy, ResourceValidationPolicy)
    assert len(_run(resource_policy, resources_of(ib))[0]) == 12
    # On RoCE the lossless plan has ECN on everywhere; a switch without it is reported.
    roce = replace(intent_for(**ROCE), "switches", by_name("spine-01"), ecn=False)
    messages, reason = _run(policy, resources_of(roce))
    assert reason is None and [m.split("\n")[0] for m in messages] == ["spine-01: ECN off"]
    assert [v.message for v in rule.run(roce)] == ["spine-01: ECN off"]


def test_every_rule_states_its_applicability() -> None:
    field = next(f for f in dataclasses.fields(Rule) if f.name == "applies")
    assert field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    for rule in RULES.values():
        assert isinstance(rule.applies, Applicability), rule.id
        assert rule.applies.describe()
