"""``roce-lossless-consistency``.

RoCEv2 lossless settings: one PFC priority, ECN, DSCP trust, one jumbo MTU on every hop.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from fabric_stack.intent.model import FabricIntent, SwitchIntent
from fabric_stack.policy._common import cfg_or_default, is_compute_switch, level_of
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import Rule, on_fabrics

RULE_ID = "roce-lossless-consistency"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class RoceLosslessConfig(RuleConfig):
    """Settings of ``roce-lossless-consistency``."""

    min_mtu: int = Field(
        default=9000,
        ge=1500,
        le=9216,
        description="Smallest switch MTU accepted as jumbo on the compute fabric.",
    )


APPLIES = on_fabrics("roce", otherwise="the compute fabric is {fabric}, not RoCEv2")
"""RoCEv2 only: the lossless settings mean nothing on InfiniBand or plain Ethernet."""


def _mode(values: Iterable[Any], prefer_high: bool = False) -> Any:
    counts = Counter(values)
    if not counts:
        return None
    best = max(counts.values())
    tied = sorted(v for v, n in counts.items() if n == best)
    return tied[-1] if prefer_high else tied[0]


@dataclass
class _Hops:
    """The compute hops of a RoCE fabric and the settings most of them agree on."""

    hops: list[SwitchIntent]
    lvl: ViolationLevel
    ref_prio: Any
    """The lossless priority most single-priority hops use."""
    ref_mtu: Any
    """The MTU most hops use (the higher one on a tie)."""
    overrides: dict[str, dict[str, Any]]
    """``roce.overrides`` of the spec: a fix removes an override rather than adds one."""

    def fix_for(self, sw: SwitchIntent, key: str, value: Any) -> str:
        """The spec change that gives ``sw`` ``key: value``."""
        if key in self.overrides.get(sw.role, {}):
            return f"remove roce.overrides.{sw.role}.{key} (use {value})"
        return f"set roce.{key}: {value}"

    def violation(
        self, sw: SwitchIntent, measured: str, allowed: str, why: str, fix: str
    ) -> Violation:
        """A violation on switch ``sw``."""
        return Violation(
            rule=RULE_ID,
            level=self.lvl,
            kind="Switch",
            resource=sw.name,
            measured=measured,
            allowed=allowed,
            message=f"{sw.name}: {measured}{why} — {fix}",
            fix=fix,
        )


def check_roce_lossless(
    intent: FabricIntent, config: RoceLosslessConfig | None = None
) -> Iterator[Violation]:
    """RoCEv2: one PFC priority (the same everywhere), ECN, DSCP trust, one jumbo MTU per hop.

    Per hop :func:`_hop_violations`, then the fabric-wide :func:`_mtu_violations`.
    """
    cfg = cfg_or_default(config, RoceLosslessConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or APPLIES(intent):
        return
    hops = [sw for sw in intent.switches if is_compute_switch(sw)]
    if not hops:
        return
    h = _Hops(
        hops=hops,
        lvl=lvl,
        ref_prio=_mode(sw.pfc_priorities[0] for sw in hops if len(sw.pfc_priorities) == 1),
        ref_mtu=_mode((sw.mtu for sw in hops), prefer_high=True),
        overrides=dict(intent.summary.spec.get("roce", {}).get("overrides", {}) or {}),
    )
    for sw in hops:
        yield from _hop_violations(h, sw)
    yield from _mtu_violations(h, intent, cfg)


def _hop_violations(h: _Hops, sw: SwitchIntent) -> Iterator[Violation]:
    """One compute hop: one lossless priority (the common one), ECN, DSCP trust, the MTU."""
    prios = sw.pfc_priorities
    want = h.ref_prio if h.ref_prio is not None else (prios[0] if prios else 3)
    if len(prios) != 1:
        shown = ", ".join(map(str, prios)) if prios else "none"
        yield h.violation(
            sw,
            f"PFC on priorities {shown}" if len(prios) > 1 else "PFC on no priority",
            f"exactly one priority ({want})",
            "; exactly one lossless priority required",
            h.fix_for(sw, "pfc_priorities", f"[{want}]"),
        )
    elif prios[0] != h.ref_prio:
        yield h.violation(
            sw,
            f"PFC on priority {prios[0]}",
            f"priority {h.ref_prio}",
            f", priority {h.ref_prio} on the other compute hops; the same lossless priority "
            "on every hop required",
            h.fix_for(sw, "pfc_priorities", f"[{h.ref_prio}]"),
        )
    if not sw.ecn:
        yield h.violation(
            sw,
            "ECN off",
            "ECN on",
            "; ECN marking on every hop required",
            h.fix_for(sw, "ecn", "true"),
        )
    if not sw.dscp_trust:
        yield h.violation(
            sw,
            "DSCP trust off",
            "DSCP trust on",
            "; DSCP trust on every hop required",
            h.fix_for(sw, "dscp_trust", "true"),
        )
    if sw.mtu != h.ref_mtu:
        others = sum(1 for x in h.hops if x.mtu == h.ref_mtu)
        yield h.violation(
            sw,
            f"MTU {sw.mtu}",
            f"MTU {h.ref_mtu}",
            f", {h.ref_mtu} on {others} of {len(h.hops)} compute hops; "
            "the same MTU on every hop required",
            h.fix_for(sw, "mtu", h.ref_mtu),
        )


def _mtu_violations(h: _Hops, intent: FabricIntent, cfg: RoceLosslessConfig) -> Iterator[Violation]:
    """Jumbo frames on the switches, and no host MTU above the switch MTU."""
    s = intent.summary
    if h.ref_mtu is not None and h.ref_mtu < cfg.min_mtu:
        yield Violation(
            rule=RULE_ID,
            level=h.lvl,
            kind="Fabric",
            resource=s.name,
            measured=f"switch MTU {h.ref_mtu}",
            allowed=f"≥ {cfg.min_mtu} (jumbo)",
            message=(
                f"{s.name}: compute switches run MTU {h.ref_mtu}; jumbo frames (≥ {cfg.min_mtu}) "
                "required for RoCE — set roce.mtu: 9216"
            ),
            fix="set roce.mtu: 9216 (hosts then use 9000)",
        )
    for vl in intent.vlans:
        if vl.network == "compute" and h.ref_mtu is not None and vl.mtu > h.ref_mtu:
            yield Violation(
                rule=RULE_ID,
                level=h.lvl,
                kind="Vlan",
                resource=vl.name,
                measured=f"host MTU {vl.mtu}",
                allowed=f"≤ switch MTU {h.ref_mtu}",
                message=(
                    f"{vl.name}: host MTU {vl.mtu} exceeds the switch MTU {h.ref_mtu}; frames "
                    f"would be dropped — set networks.compute.mtu ≤ {h.ref_mtu}"
                ),
                fix=f"set networks.compute.mtu to at most {h.ref_mtu} (9000 with 9216 switches)",
            )


RULE = Rule(
    id=RULE_ID,
    title="RoCE lossless consistency",
    description=(
        "RoCEv2 only: every compute switch has exactly one PFC priority (the same one "
        "everywhere), ECN and DSCP trust on, and the same jumbo MTU on every hop."
    ),
    default_level="mandatory",
    remediation="Apply one RoCE QoS profile everywhere (drop per-tier roce.overrides).",
    config_model=RoceLosslessConfig,
    applies=APPLIES,
    check_cross=check_roce_lossless,
    reads=("Fabric", "Switch", "Vlan"),
    config_field="roce_lossless",
    config_description="One PFC priority, ECN, DSCP trust and one MTU on every RoCE hop.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
