"""``ib-subnet-manager-redundancy``: InfiniBand subnet managers: a master and at least one standby.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from ...intent import FabricIntent
from .._common import (
    cfg_or_default,
    level_of,
    plural,
)
from ..models import RuleConfig, Violation
from ..rule import Rule


class SubnetManagerConfig(RuleConfig):
    """Settings of ``ib-subnet-manager-redundancy``."""

    min_subnet_managers: int = Field(
        default=2, ge=1, le=16, description="Subnet managers required (one master + standbys)."
    )


def _ib_applies(intent: FabricIntent) -> str | None:
    f = intent.summary.fabric
    return None if f == "infiniband" else f"the compute fabric is {f}, not InfiniBand"


def check_ib_subnet_managers(
    intent: FabricIntent, config: SubnetManagerConfig | None = None
) -> Iterator[Violation]:
    """InfiniBand: at least ``min_subnet_managers`` subnet managers (master + standby)."""
    cfg = cfg_or_default(config, SubnetManagerConfig)
    lvl = level_of(cfg, "advisory")
    if lvl is None or _ib_applies(intent):
        return
    s = intent.summary
    have = s.subnet_managers
    if s.sm_location == "switch":
        # On managed switches the plan marks the switches that run one: count those.
        have = sum(1 for sw in intent.switches if sw.subnet_manager)
    need = cfg.min_subnet_managers
    if have >= need:
        return
    where = {"ufm": " (on UFM)", "switch": " (on switches)", "host": " (on hosts)"}.get(
        s.sm_location, ""
    )
    yield Violation(
        rule="ib-subnet-manager-redundancy",
        level=lvl,
        kind="Fabric",
        resource=s.name,
        measured=f"{plural(have, 'subnet manager')}{where}",
        allowed=f"≥ {need}",
        message=(
            f"{s.name}: {plural(have, 'subnet manager')}{where}; ≥ {need} required so a standby "
            f"takes over when the master fails — set infiniband.subnet_managers: {need}"
        ),
        fix=f"set infiniband.subnet_managers: {need} (one master, standbys on other hosts/UFMs)",
    )


RULE = Rule(
    id="ib-subnet-manager-redundancy",
    title="InfiniBand subnet-manager redundancy",
    description="InfiniBand only: at least two subnet managers (master + standby).",
    default_level="advisory",
    remediation="Run a standby subnet manager (infiniband.subnet_managers ≥ 2).",
    config_model=SubnetManagerConfig,
    check_cross=check_ib_subnet_managers,
    reads=("Fabric", "Switch"),
    applies=_ib_applies,
    config_field="subnet_managers",
    config_description="Redundant InfiniBand subnet managers.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
