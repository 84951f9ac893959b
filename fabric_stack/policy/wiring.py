"""Wiring rules: ``rail-alignment`` and ``link-speed-match``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..intent import CableIntent, FabricIntent, RdmaNicIntent, SwitchIntent
from ..naming import leaf_name
from ._common import cfg_or_default, level_of, parse_leaf_name
from .models import LinkSpeedConfig, RailAlignmentConfig, Violation, ViolationLevel


def _rail_nic(nic: RdmaNicIntent, lvl: ViolationLevel, rail: int, plane: int) -> Violation:
    planes = 2 if (nic.plane > 1 or plane > 1 or nic.leaf.startswith("p")) else 1
    want = leaf_name(nic.su, nic.rail, nic.plane, planes)
    what = f"rail-{rail}" if plane == nic.plane else f"plane-{plane} rail-{rail}"
    me = f"rail-{nic.rail}" if plane == nic.plane else f"plane-{nic.plane} rail-{nic.rail}"
    return Violation(
        rule="rail-alignment",
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

    Leaf names come from :func:`fabric_stack.naming.leaf_name`, so one RdmaNic
    record (or one RdmaNicGroup) is enough: this is what the pack's resource
    policy runs.
    """
    cfg = cfg_or_default(config, RailAlignmentConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None:
        return
    if kind == "RdmaNic":
        for nic in records:
            parsed = parse_leaf_name(nic.leaf)
            if parsed is not None and (parsed[2] != nic.rail or parsed[0] != nic.plane):
                yield _rail_nic(nic, lvl, parsed[2], parsed[0])
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
            rule="rail-alignment",
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


def rail_alignment_cross(
    intent: FabricIntent, config: RailAlignmentConfig | None = None
) -> Iterator[Violation]:
    """NICs whose leaf has no standard name: judged against the leaf's recorded rail."""
    cfg = cfg_or_default(config, RailAlignmentConfig)
    lvl = level_of(cfg, "mandatory")
    if lvl is None:
        return
    switches: dict[str, SwitchIntent] | None = None
    for nic in intent.nics:
        if parse_leaf_name(nic.leaf) is not None:
            continue  # judged by the record part
        if switches is None:
            switches = {sw.name: sw for sw in intent.switches}
        sw = switches.get(nic.leaf)
        if sw is None or sw.role != "leaf":
            continue  # network-separation reports NICs that land on no compute leaf
        if sw.rail != nic.rail or (sw.plane and sw.plane != nic.plane):
            yield _rail_nic(nic, lvl, sw.rail, sw.plane or nic.plane)


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
        rule="link-speed-match",
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
    speed = {sw.name: sw.port_gbps for sw in intent.switches}
    for nic in intent.nics:
        leaf = speed.get(nic.leaf, 0)
        if not leaf or leaf == nic.speed_gbps:
            continue
        yield Violation(
            rule="link-speed-match",
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
