"""``ib-subnet-manager-redundancy``: per plane, a master and a standby on different leaves.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from fabric_stack.intent.model import FabricIntent, FabricSummary
from fabric_stack.policy._common import cfg_or_default, level_of, plural
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import Rule, on_fabrics
from fabric_stack.topology.build import MANAGER_ROLE

RULE_ID = "ib-subnet-manager-redundancy"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class SubnetManagerConfig(RuleConfig):
    """Settings of ``ib-subnet-manager-redundancy``."""

    min_subnet_managers: int = Field(
        default=2, ge=1, le=16, description="Subnet managers required (one master + standbys)."
    )


APPLIES = on_fabrics("infiniband", otherwise="the compute fabric is {fabric}, not InfiniBand")
"""InfiniBand only: subnet managers exist nowhere else."""


def check_ib_subnet_managers(
    intent: FabricIntent, config: SubnetManagerConfig | None = None
) -> Iterator[Violation]:
    """InfiniBand, per plane (each plane is its own subnet): at least ``min_subnet_managers``
    subnet managers, and the master's and the standby's cables on different leaves."""
    cfg = cfg_or_default(config, SubnetManagerConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or APPLIES(intent):
        return
    s = intent.summary
    for plane in range(1, max(1, s.planes) + 1):
        leaves = _sm_leaves(intent, plane)
        have = len(leaves)
        yield from _too_few(s, plane, have, cfg.min_subnet_managers, lvl)
        if s.sm_location != "switch" and have >= 2:
            yield from _same_leaf(s, plane, leaves, lvl)


def _sm_leaves(intent: FabricIntent, plane: int) -> dict[str, set[str]]:
    """Subnet managers of one plane (master first) and the leaves each is cabled to.

    Switch-hosted SMs are the switches flagged ``subnet_manager`` (no cable needed);
    UFM / OpenSM hosts count only when the plan cables them into the plane.
    """
    s = intent.summary
    if s.sm_location == "switch":
        return {
            sw.name: {sw.name}
            for sw in intent.switches
            if sw.subnet_manager and (sw.plane or 1) == plane
        }
    out: dict[str, set[str]] = {}
    for c in intent.cables:
        if c.role == MANAGER_ROLE and (c.plane or 1) == plane:
            out.setdefault(c.a_device, set()).add(c.b_device)
    return {m: out[m] for m in s.managers if m in out}


def _where(s: FabricSummary, plane: int) -> str:
    kind = {"ufm": "on UFM", "switch": "on switches", "opensm-host": "on hosts"}.get(
        s.sm_location, ""
    )
    on_plane = f"plane {plane}, " if s.planes > 1 else ""
    return f" ({on_plane}{kind})" if kind or on_plane else ""


def _too_few(
    s: FabricSummary, plane: int, have: int, need: int, lvl: ViolationLevel
) -> Iterator[Violation]:
    if have >= need:
        return
    cabled = "" if s.sm_location == "switch" else " cabled"
    yield Violation(
        rule=RULE_ID,
        level=lvl,
        kind="Fabric",
        resource=s.name,
        measured=f"{plural(have, 'subnet manager')}{cabled}{_where(s, plane)}",
        allowed=f"≥ {need} per plane",
        message=(
            f"{s.name}: {plural(have, 'subnet manager')}{cabled}{_where(s, plane)}; ≥ {need} "
            f"required so a standby takes over when the master fails — set "
            f"infiniband.subnet_managers: {need}"
        ),
        fix=f"set infiniband.subnet_managers: {need} (one master, standbys on other hosts/UFMs)",
    )


def _same_leaf(
    s: FabricSummary, plane: int, leaves: dict[str, set[str]], lvl: ViolationLevel
) -> Iterator[Violation]:
    (master, m_leaves), (standby, s_leaves) = list(leaves.items())[:2]
    shared = sorted(m_leaves & s_leaves)
    if not shared:
        return
    yield Violation(
        rule=RULE_ID,
        level=lvl,
        kind="Fabric",
        resource=s.name,
        measured=f"master {master} and standby {standby} both on {', '.join(shared)}",
        allowed="master and standby cabled to different leaves",
        message=(
            f"{s.name}{_where(s, plane)}: master {master} and standby {standby} are both "
            f"cabled to {', '.join(shared)} — one leaf failure takes both subnet managers"
        ),
        fix="re-plan with ≥ 2 rails, or move the standby's cable to another leaf",
    )


RULE = Rule(
    id=RULE_ID,
    title="InfiniBand subnet-manager redundancy",
    description=(
        "InfiniBand only, per plane: at least two subnet managers (master + standby), "
        "cabled to different leaves."
    ),
    default_level="mandatory",
    remediation="Run a standby subnet manager (infiniband.subnet_managers ≥ 2).",
    config_model=SubnetManagerConfig,
    applies=APPLIES,
    check_cross=check_ib_subnet_managers,
    reads=("Fabric", "Switch", "Cable"),
    config_field="subnet_managers",
    config_description="Redundant InfiniBand subnet managers.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
