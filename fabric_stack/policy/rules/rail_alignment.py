"""``rail-alignment``: A rail-r RDMA NIC is cabled to its SU's rail-r leaf.

This file holds the whole rule: its config model, its check (with the violation
messages and fix texts) and its :class:`~fabric_stack.policy.rule.Rule` entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter
from typing import Any

from fabric_stack.intent.model import FabricIntent, RdmaNicIntent
from fabric_stack.naming.devices import leaf_name
from fabric_stack.policy._common import cfg_or_default, level_of, parse_leaf_name
from fabric_stack.policy.models import RuleConfig, Violation, ViolationLevel
from fabric_stack.policy.rule import EVERY_FABRIC, Rule

RULE_ID = "rail-alignment"
"""This rule's id: its module name with dashes, its key in the registry and the policy config."""


class RailAlignmentConfig(RuleConfig):
    """Settings of ``rail-alignment`` (level only)."""


def _rail_nic(nic: RdmaNicIntent, lvl: ViolationLevel, rail: int, plane: int) -> Violation:
    planes = 2 if (nic.plane > 1 or plane > 1 or nic.leaf.startswith("p")) else 1
    want = leaf_name(nic.su, nic.rail, nic.plane, planes)
    what = f"rail-{rail}" if plane == nic.plane else f"plane-{plane} rail-{rail}"
    me = f"rail-{nic.rail}" if plane == nic.plane else f"plane-{nic.plane} rail-{nic.rail}"
    return Violation(
        rule=RULE_ID,
        level=lvl,
        kind="RdmaNic",
        resource=nic.name,
        measured=f"on {nic.leaf} ({what})",
        allowed=f"{want} ({me})",
        message=(
            f"{nic.name}: {me} NIC cabled to {nic.leaf}, a {what} leaf; a rail-{nic.rail} NIC "
            f"lands on its SU's rail-{nic.rail} leaf — move the cable to {want} {nic.leaf_port}"
        ),
        fix=f"re-cable {nic.node} {nic.nic} to {want} (same-rail traffic then stays one hop)",
    )


def rail_alignment_records(
    kind: str, records: Iterable[Any], config: RailAlignmentConfig | None = None
) -> Iterator[Violation]:
    """Single resources: a NIC against its leaf's *name*; a leaf's rail field against its name.

    Leaf names come from :func:`fabric_stack.naming.devices.leaf_name`, so one RdmaNic
    record (or one RdmaNicGroup) is enough: this is what the pack's resource
    policy runs.
    """
    cfg = cfg_or_default(config, RailAlignmentConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None:
        return
    if kind == "RdmaNic":
        yield from _nics_off_their_rail(records, lvl)
        return
    if kind != "Switch":
        return
    for sw in records:
        if sw.role != "leaf":
            continue
        parsed = parse_leaf_name(sw.name)
        if parsed is None or (parsed[2] == sw.rail and (not sw.plane or parsed[0] == sw.plane)):
            continue
        yield Violation(
            rule=RULE_ID,
            level=lvl,
            kind="Switch",
            resource=sw.name,
            measured=f"rail {sw.rail}, plane {sw.plane}",
            allowed=f"rail {parsed[2]}, plane {parsed[0]} (as named)",
            message=(
                f"{sw.name}: recorded as a rail-{sw.rail} leaf but named for rail "
                f"{parsed[2]}; a leaf serves exactly the rail it is named for — fix its "
                "rail or its name"
            ),
            fix="regenerate the switch from the plan (names and rails come from one rule)",
        )


_LEAF = attrgetter("leaf")
_LEAF_RAIL_PLANE = attrgetter("leaf", "rail", "plane")


def _nics_off_their_rail(records: Iterable[Any], lvl: ViolationLevel) -> Iterator[Violation]:
    """NICs on a leaf named for another rail or plane, in record order."""
    nics = records if isinstance(records, Sequence) else list(records)
    # Judged per distinct (leaf, rail, plane), the NICs walked only when one is wrong
    # (~524k NICs on 4,096 leaves at 131k GPUs with four planes, #43).
    wrong: dict[tuple[str, int, int], tuple[int, int, int]] = {}
    for leaf, rail, plane in set(map(_LEAF_RAIL_PLANE, nics)):
        parsed = parse_leaf_name(leaf)
        if parsed is not None and (parsed[2] != rail or parsed[0] != plane):
            wrong[leaf, rail, plane] = parsed
    if not wrong:
        return
    for nic in nics:
        parsed = wrong.get((nic.leaf, nic.rail, nic.plane))
        if parsed is not None:
            yield _rail_nic(nic, lvl, parsed[2], parsed[0])


def rail_alignment_cross(
    intent: FabricIntent, config: RailAlignmentConfig | None = None
) -> Iterator[Violation]:
    """NICs whose leaf has no standard name: judged against the leaf's recorded rail."""
    cfg = cfg_or_default(config, RailAlignmentConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None:
        return
    # Only NICs on a leaf without a standard name are judged here: found per distinct leaf
    # name, the NICs walked only when there is one (#43).
    odd = {n for n in set(map(_LEAF, intent.nics)) if parse_leaf_name(n) is None}
    if not odd:
        return
    switches = {sw.name: sw for sw in intent.switches}
    for nic in intent.nics:
        if nic.leaf not in odd:
            continue  # judged by the record part
        sw = switches.get(nic.leaf)
        if sw is None or sw.role != "leaf":
            continue  # network-separation reports NICs that land on no compute leaf
        if sw.rail != nic.rail or (sw.plane and sw.plane != nic.plane):
            yield _rail_nic(nic, lvl, sw.rail, sw.plane or nic.plane)


RULE = Rule(
    id=RULE_ID,
    title="Rail alignment",
    description="A rail-r RDMA NIC is cabled to its SU's rail-r leaf (of its plane).",
    default_level="mandatory",
    remediation="Re-cable the NIC to the leaf of its rail.",
    config_model=RailAlignmentConfig,
    applies=EVERY_FABRIC,
    record_kinds=("RdmaNic", "Switch"),
    check_record=rail_alignment_records,
    check_cross=rail_alignment_cross,
    reads=("Fabric", "Switch", "RdmaNic"),
    config_field="rail_alignment",
    config_description="Rail-r NICs on rail-r leaves.",
)
"""This rule (registered in :mod:`fabric_stack.policy.registry`)."""


def check_rail_alignment(
    intent: FabricIntent, config: RailAlignmentConfig | None = None
) -> Iterator[Violation]:
    """A rail-r NIC lands on its SU's rail-r leaf (of its plane)."""
    return RULE.run(intent, config)
