"""Comparison of matched pairs: which attributes of a planned link (or device) drifted.

A planned and an observed link that match by identity are compared on the few fields
that matter (speed, IB width, record status, and the record attributes declared in
:data:`~fabric_stack.drift.model.CABLE_ATTRS`). :func:`differs` is the cheap check run on
every matched pair; only pairs that differ go through :func:`link_differences` and
deepdiff (:func:`explain`) to say how.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from fabric_stack.drift.model import ABSENT_STATUSES, LINK_FIELDS, SPEED_ATTRS, DeviceSeen
from fabric_stack.drift.plan import PlanIndex
from fabric_stack.drift.resolve import Observed
from fabric_stack.topology.build import Link

IB_WIDTH = {800: "4x", 400: "4x", 200: "2x", 100: "1x"}
"""Planned InfiniBand link width by link speed (XDR/NDR lanes: 4x800, 4x400, 2x NDR200)."""

_FIELD_SET = frozenset(LINK_FIELDS)
_FLIP = {"a_optic": "b_optic", "b_optic": "a_optic"}
_SPEED_KEYS = frozenset(SPEED_ATTRS)


def ib_name(speed: int) -> str:
    """InfiniBand generation name of a link speed (``NDR`` for 400G)."""
    return {800: "XDR", 400: "NDR", 200: "NDR", 100: "NDR"}.get(speed, "")


def differs(link: Link, o: Observed) -> bool:
    """Cheap check: does any compared field of the matched pair differ?"""
    speed = link.speed_gbps
    if o.speed is not None and o.speed != speed:
        return True
    ol = o.link
    if ol.width is not None and ol.width != IB_WIDTH.get(speed, ol.width):
        return True
    attrs = ol.attrs
    if not attrs:
        return False
    st = attrs.get("status")
    if st and str(st).lower() in ABSENT_STATUSES:
        return True
    flip = o.a[0] != link.a_device or o.a[1] != link.a_port
    for k, v in attrs.items():
        if v is None or v == "":
            continue
        if k in _FIELD_SET:
            name = _FLIP.get(k, k) if flip else k
            if v != getattr(link, name):
                return True
        elif k in _SPEED_KEYS and v != speed:
            return True
    return False


class LinkDiff(NamedTuple):
    """Planned vs observed values of a matched pair, speed-like and other attributes apart."""

    exp_speed: dict[str, Any]
    act_speed: dict[str, Any]
    exp: dict[str, Any]
    act: dict[str, Any]


def link_differences(link: Link, o: Observed) -> LinkDiff:
    """Every compared field of a matched pair that differs, planned and observed value."""
    diff = LinkDiff({}, {}, {}, {})
    if o.speed is not None and o.speed != link.speed_gbps:
        diff.exp_speed["speed_gbps"], diff.act_speed["speed_gbps"] = link.speed_gbps, o.speed
    width = o.link.width
    if width is not None and width != IB_WIDTH.get(link.speed_gbps, width):
        diff.exp_speed["width"], diff.act_speed["width"] = IB_WIDTH[link.speed_gbps], width
    attrs = o.link.attrs
    if not attrs:
        return diff
    flip = o.a != (link.a_device, link.a_port)
    for k, v in attrs.items():
        if v is None or v == "":
            continue
        name = k
        if flip and k[:2] in ("a_", "b_"):
            name = ("b_" if k[0] == "a" else "a_") + k[2:]
        if name in _SPEED_KEYS:
            if v != link.speed_gbps:
                diff.exp_speed[name], diff.act_speed[name] = link.speed_gbps, v
        elif name == "status":
            if str(v).lower() in ABSENT_STATUSES:
                diff.exp[name], diff.act[name] = "in service", v
        elif name in _FIELD_SET:
            planned = getattr(link, name)
            if v != planned:
                if name == "medium" and attrs.get("type"):
                    # DCIM records say the cable type; explain in its terms.
                    diff.exp["type"], diff.act["type"] = f"{planned} cable", attrs["type"]
                else:
                    diff.exp[name], diff.act[name] = planned, v
    return diff


def device_differences(
    plan: PlanIndex, name: str, seen: DeviceSeen
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(expected, actual) of a device record's drifted attributes (GUID, model, status…)."""
    exp: dict[str, Any] = {}
    act: dict[str, Any] = {}
    for k, v in seen.expected.items():
        if k in seen.attrs and seen.attrs[k] != v:
            exp[k], act[k] = v, seen.attrs[k]
    planned = plan.switch_attrs.get(name, {})
    for k, v in seen.attrs.items():
        if k == "status":
            if str(v).lower() in ABSENT_STATUSES and name in plan.devices:
                exp[k], act[k] = "in service", v
        elif k in planned and v not in (None, "") and planned[k] != v:
            exp[k], act[k] = planned[k], v
    return exp, act


def explain(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """``["speed_gbps: 400 → 200", …]`` for two small dicts that differ (via deepdiff)."""
    from deepdiff import DeepDiff  # imported only when something differs

    diff = DeepDiff(dict(expected), dict(actual), verbose_level=2)
    out: list[str] = []
    for section in ("values_changed", "type_changes"):
        for path, change in diff.get(section, {}).items():
            name = str(path).removeprefix("root['").removesuffix("']")
            out.append(f"{name}: {change['old_value']!r} → {change['new_value']!r}")
    for section, verb in (
        ("dictionary_item_added", "added"),
        ("dictionary_item_removed", "removed"),
    ):
        for path, value in diff.get(section, {}).items():
            name = str(path).removeprefix("root['").removesuffix("']")
            out.append(f"{name}: {verb} {value!r}")
    return sorted(out)
