"""``link-speed-match``: Both ends of every cable, and each NIC and its leaf port, at one speed.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fabric_stack.intent.model import CableIntent, FabricIntent
from fabric_stack.policy._common import cfg_or_default, level_of
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import EVERY_FABRIC, Rule

RULE_ID = "link-speed-match"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class LinkSpeedConfig(RuleConfig):
    """Settings of ``link-speed-match`` (level only)."""


def link_speed_records(
    kind: str, records: Iterable[Any], config: LinkSpeedConfig | None = None
) -> Iterator[Violation]:
    """Single cables: both ends at one speed."""
    cfg = cfg_or_default(config, LinkSpeedConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or kind != "Cable":
        return
    for c in records:
        if c.a_speed_gbps != c.b_speed_gbps:
            yield _speed_cable(c, lvl)


def _speed_cable(c: CableIntent, lvl: ViolationLevel) -> Violation:
    hi = max(c.a_speed_gbps, c.b_speed_gbps)
    slow = c.a_device if c.a_speed_gbps < c.b_speed_gbps else c.b_device
    slow_port = c.a_port if slow == c.a_device else c.b_port
    return Violation(
        rule=RULE_ID,
        level=lvl,
        kind="Cable",
        resource=c.name,
        measured=f"{c.a_speed_gbps}G / {c.b_speed_gbps}G",
        allowed="same speed at both ends",
        message=(
            f"{c.name}: {c.a_device} {c.a_port} runs {c.a_speed_gbps}G, {c.b_device} {c.b_port} "
            f"runs {c.b_speed_gbps}G; both ends must run one speed — set {slow} {slow_port} "
            f"to {hi}G (or fix the optic/cable)"
        ),
        fix="match the port speed (and split mode) at both ends; check the optic type",
    )


def link_speed_cross(
    intent: FabricIntent, config: LinkSpeedConfig | None = None
) -> Iterator[Violation]:
    """Each RDMA NIC at its leaf's port speed."""
    cfg = cfg_or_default(config, LinkSpeedConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None:
        return
    over = _nic_over_max(intent, lvl)
    if over is not None:
        yield over
    speed = {sw.name: sw.port_gbps for sw in intent.switches}
    for nic in intent.nics:
        leaf = speed.get(nic.leaf, 0)
        if not leaf or leaf == nic.speed_gbps:
            continue
        yield Violation(
            rule=RULE_ID,
            level=lvl,
            kind="RdmaNic",
            resource=nic.name,
            measured=f"NIC {nic.speed_gbps}G, leaf port {leaf}G",
            allowed="NIC speed = leaf port speed",
            message=(
                f"{nic.name}: NIC runs {nic.speed_gbps}G but {nic.leaf} ports run {leaf}G; both "
                f"ends must run one speed — set nic_gbps (per plane) to {leaf} or the leaf "
                f"ports to {nic.speed_gbps}G"
            ),
            fix="the leaf's port mode comes from nic_gbps / planes; keep them equal",
        )


def _nic_over_max(intent: FabricIntent, lvl: ViolationLevel) -> Violation | None:
    """The spec's NIC line rate above what its server profile's NIC runs (ConnectX-7: 400G).

    Read from the Fabric record's spec as stored, not re-validated: a stack config or a
    record edited behind the plan's back reaches the policy without ``validate_spec``.
    """
    spec = intent.summary.spec
    prof = spec.get("node_profile")
    if not isinstance(prof, dict):
        return None
    try:
        asked, top = int(spec.get("nic_gbps", 0)), int(prof.get("nic_max_gbps", 0))
    except (TypeError, ValueError):
        return None
    if not top or asked <= top:
        return None
    model, name = prof.get("nic_model", "NIC"), prof.get("name", "?")
    return Violation(
        rule=RULE_ID,
        level=lvl,
        kind="Fabric",
        resource=intent.summary.name,
        measured=f"nic_gbps {asked}G on {model}",
        allowed=f"at most {top}G ({model})",
        message=(
            f"{intent.summary.name}: nic_gbps asks {asked}G of the {model} of node profile "
            f"{name!r}, which runs at most {top}G — lower nic_gbps to {top} or pick a profile "
            "with a faster NIC (e.g. hgx-b300, ConnectX-8 800G)"
        ),
        fix="nic_gbps must not exceed the node profile's nic_max_gbps",
    )


RULE = Rule(
    id=RULE_ID,
    title="Link speed match",
    description=(
        "Both ends of every cable run one speed, every RDMA NIC runs its leaf's port speed, "
        "and no NIC is asked for more than its model runs (ConnectX-7: 400G)."
    ),
    default_level="mandatory",
    remediation="Set the same speed (and split mode) at both ends.",
    config_model=LinkSpeedConfig,
    applies=EVERY_FABRIC,
    record_kinds=("Cable",),
    check_record=link_speed_records,
    check_cross=link_speed_cross,
    reads=("Fabric", "Switch", "RdmaNic"),
    config_field="link_speed",
    config_description="Both cable ends, and NIC vs leaf port, at one speed.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""


def check_link_speed(
    intent: FabricIntent, config: LinkSpeedConfig | None = None
) -> Iterator[Violation]:
    """Both ends of every cable at one speed; every NIC at its leaf's port speed."""
    return RULE.run(intent, config)
