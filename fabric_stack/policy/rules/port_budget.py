"""``port-budget``: Every switch within its radix and the plan's down/up split.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import Field

from fabric_stack.intent.model import FabricIntent, SwitchIntent
from fabric_stack.policy._common import cfg_or_default, level_of, plural
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import EVERY_FABRIC, Rule

RULE_ID = "port-budget"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class PortBudgetConfig(RuleConfig):
    """Settings of ``port-budget``."""

    enforce_budgets: bool = Field(
        default=True,
        description=(
            "Also hold each switch to the plan's down/up split (ports_down_budget, "
            "ports_up_budget), not only to its radix."
        ),
    )


def port_budget_records(
    kind: str, records: Iterable[Any], config: PortBudgetConfig | None = None
) -> Iterator[Violation]:
    """Single switches: cabled ports within the radix and within the plan's down/up budget."""
    cfg = cfg_or_default(config, PortBudgetConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or kind != "Switch":
        return
    for sw in records:
        yield from _port_budget(sw, cfg, lvl)


def _port_budget(
    sw: SwitchIntent, cfg: PortBudgetConfig, lvl: ViolationLevel
) -> Iterator[Violation]:
    rid = RULE_ID
    # A faster uplink may take the lanes of several ports at port_gbps (an unsplit 800G
    # cage of an SN5600 split 2 × 400G takes two): the radix counts ports at port_gbps.
    used = sw.ports_down + sw.ports_up * (sw.up_port_lanes or 1)
    if sw.radix and used > sw.radix:
        over = used - sw.radix
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Switch",
            resource=sw.name,
            measured=f"{used} ports ({sw.ports_down} down + {sw.ports_up} up)",
            allowed=f"≤ {sw.radix} ports at {sw.port_gbps}G",
            message=(
                f"{sw.name}: {used} ports cabled ({sw.ports_down} down + {sw.ports_up} up), "
                f"radix {sw.radix} at {sw.port_gbps}G — remove {plural(over, 'cable')} or use a "
                f"switch with ≥ {used} ports"
            ),
            fix="re-size the fabric (fabric-stack size) instead of adding cables by hand",
        )
    if not cfg.enforce_budgets or not (sw.ports_down_budget or sw.ports_up_budget):
        return
    for side, have, budget in (
        ("down", sw.ports_down, sw.ports_down_budget),
        ("up", sw.ports_up, sw.ports_up_budget),
    ):
        if have <= budget:
            continue
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Switch",
            resource=sw.name,
            measured=f"{have} {side}links",
            allowed=f"≤ {budget} {side}links (plan budget)",
            message=(
                f"{sw.name}: {have} {side}links cabled, the plan budgets {budget} — move "
                f"{plural(have - budget, f'{side}link')} to another switch"
            ),
            fix=(
                "keep the plan's down/up split (it is what keeps the ratio and the spreading "
                "even); re-size rather than over-fill"
            ),
        )


RULE = Rule(
    id=RULE_ID,
    title="Port budget",
    description=(
        "On every switch ports_down + ports_up ≤ radix, and each side stays within the "
        "plan's budget."
    ),
    default_level="mandatory",
    remediation="Re-size the fabric instead of over-filling a switch.",
    config_model=PortBudgetConfig,
    applies=EVERY_FABRIC,
    record_kinds=("Switch",),
    check_record=port_budget_records,
    config_field="port_budget",
    config_description="Cabled ports within radix and the plan's split.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""


def check_port_budget(
    intent: FabricIntent, config: PortBudgetConfig | None = None
) -> Iterator[Violation]:
    """Per switch: ports_down + ports_up ≤ radix, each side within the plan's budget."""
    return RULE.run(intent, config)
