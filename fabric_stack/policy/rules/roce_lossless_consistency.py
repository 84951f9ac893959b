"""``roce-lossless-consistency``.

RoCEv2 lossless settings: one PFC priority, ECN, DSCP trust, one jumbo MTU on every hop.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import Field

from ...intent import FabricIntent, SwitchIntent
from .._common import (
    cfg_or_default,
    is_compute_switch,
    level_of,
)
from ..models import RuleConfig, Violation
from ..rule import Rule


class RoceLosslessConfig(RuleConfig):
    """Settings of ``roce-lossless-consistency``."""

    min_mtu: int = Field(
        default=9000,
        ge=1500,
        le=9216,
        description="Smallest switch MTU accepted as jumbo on the compute fabric.",
    )


def _roce_applies(intent: FabricIntent) -> str | None:
    f = intent.summary.fabric
    return None if f == "roce" else f"the compute fabric is {f}, not RoCEv2"


def _mode(values: Iterable[Any], prefer_high: bool = False) -> Any:
    counts = Counter(values)
    if not counts:
        return None
    best = max(counts.values())
    tied = sorted(v for v, n in counts.items() if n == best)
    return tied[-1] if prefer_high else tied[0]


def check_roce_lossless(
    intent: FabricIntent, config: RoceLosslessConfig | None = None
) -> Iterator[Violation]:
    """RoCEv2: one PFC priority (the same everywhere), ECN, DSCP trust, one jumbo MTU per hop."""
    cfg = cfg_or_default(config, RoceLosslessConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None or _roce_applies(intent):
        return
    rid = "roce-lossless-consistency"
    hops = [sw for sw in intent.switches if is_compute_switch(sw)]
    if not hops:
        return
    ref_prio = _mode(sw.pfc_priorities[0] for sw in hops if len(sw.pfc_priorities) == 1)
    ref_mtu = _mode((sw.mtu for sw in hops), prefer_high=True)
    overrides: dict[str, dict[str, Any]] = dict(
        intent.summary.spec.get("roce", {}).get("overrides", {}) or {}
    )

    def fix_for(sw: SwitchIntent, key: str, value: Any) -> str:
        if key in overrides.get(sw.role, {}):
            return f"remove roce.overrides.{sw.role}.{key} (use {value})"
        return f"set roce.{key}: {value}"

    def v(sw: SwitchIntent, measured: str, allowed: str, why: str, fix: str) -> Violation:
        return Violation(
            rule=rid,
            level=lvl,
            kind="Switch",
            resource=sw.name,
            measured=measured,
            allowed=allowed,
            message=f"{sw.name}: {measured}{why} — {fix}",
            fix=fix,
        )

    n = len(hops)
    for sw in hops:
        prios = sw.pfc_priorities
        want = ref_prio if ref_prio is not None else (prios[0] if prios else 3)
        if len(prios) != 1:
            shown = ", ".join(map(str, prios)) if prios else "none"
            yield v(
                sw,
                f"PFC on priorities {shown}" if len(prios) > 1 else "PFC on no priority",
                f"exactly one priority ({want})",
                "; exactly one lossless priority required",
                fix_for(sw, "pfc_priorities", f"[{want}]"),
            )
        elif prios[0] != ref_prio:
            yield v(
                sw,
                f"PFC on priority {prios[0]}",
                f"priority {ref_prio}",
                f", priority {ref_prio} on the other compute hops; the same lossless priority "
                "on every hop required",
                fix_for(sw, "pfc_priorities", f"[{ref_prio}]"),
            )
        if not sw.ecn:
            yield v(
                sw,
                "ECN off",
                "ECN on",
                "; ECN marking on every hop required",
                fix_for(sw, "ecn", "true"),
            )
        if not sw.dscp_trust:
            yield v(
                sw,
                "DSCP trust off",
                "DSCP trust on",
                "; DSCP trust on every hop required",
                fix_for(sw, "dscp_trust", "true"),
            )
        if sw.mtu != ref_mtu:
            others = sum(1 for h in hops if h.mtu == ref_mtu)
            yield v(
                sw,
                f"MTU {sw.mtu}",
                f"MTU {ref_mtu}",
                f", {ref_mtu} on {others} of {n} compute hops; the same MTU on every hop required",
                fix_for(sw, "mtu", ref_mtu),
            )

    s = intent.summary
    if ref_mtu is not None and ref_mtu < cfg.min_mtu:
        yield Violation(
            rule=rid,
            level=lvl,
            kind="Fabric",
            resource=s.name,
            measured=f"switch MTU {ref_mtu}",
            allowed=f"≥ {cfg.min_mtu} (jumbo)",
            message=(
                f"{s.name}: compute switches run MTU {ref_mtu}; jumbo frames (≥ {cfg.min_mtu}) "
                "required for RoCE — set roce.mtu: 9216"
            ),
            fix="set roce.mtu: 9216 (hosts then use 9000)",
        )
    for vl in intent.vlans:
        if vl.network == "compute" and ref_mtu is not None and vl.mtu > ref_mtu:
            yield Violation(
                rule=rid,
                level=lvl,
                kind="Vlan",
                resource=vl.name,
                measured=f"host MTU {vl.mtu}",
                allowed=f"≤ switch MTU {ref_mtu}",
                message=(
                    f"{vl.name}: host MTU {vl.mtu} exceeds the switch MTU {ref_mtu}; frames "
                    f"would be dropped — set networks.compute.mtu ≤ {ref_mtu}"
                ),
                fix=f"set networks.compute.mtu to at most {ref_mtu} (9000 with 9216 switches)",
            )


RULE = Rule(
    id="roce-lossless-consistency",
    title="RoCE lossless consistency",
    description=(
        "RoCEv2 only: every compute switch has exactly one PFC priority (the same one "
        "everywhere), ECN and DSCP trust on, and the same jumbo MTU on every hop."
    ),
    default_level="mandatory",
    remediation="Apply one RoCE QoS profile everywhere (drop per-tier roce.overrides).",
    config_model=RoceLosslessConfig,
    check_cross=check_roce_lossless,
    reads=("Fabric", "Switch", "Vlan"),
    applies=_roce_applies,
    config_field="roce_lossless",
    config_description="One PFC priority, ECN, DSCP trust and one MTU on every RoCE hop.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""
