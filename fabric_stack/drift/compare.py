"""Comparison of matched pairs: which attributes of a planned link (or device) drifted.

A planned and an observed link that match by identity are compared on the few fields
that matter (speed, InfiniBand rate, record status, and the record attributes declared in
:data:`~fabric_stack.drift.model.CABLE_ATTRS`). :func:`differs` is the cheap check run on
every matched pair; only pairs that differ go through :func:`link_differences` and
deepdiff (:func:`explain`) to say how.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from fabric_stack.drift.model import ABSENT_STATUSES, LINK_FIELDS, SPEED_ATTRS, DeviceSeen
from fabric_stack.drift.plan import PlanIndex
from fabric_stack.drift.resolve import Observed
from fabric_stack.errors import CatalogError
from fabric_stack.hardware.ib_links import planned_rates as ib_rates
from fabric_stack.hardware.switches import lookup_switch, port_mode
from fabric_stack.topology.build import Link

IB_WIDTH = {800: "4x", 400: "4x", 200: "2x", 100: "1x"}
"""Link width the twin plays at each speed on its NDR/XDR lanes (2x NDR200, 1x NDR100).
Drift does not use it: a planned link's rate comes from its switch model and speed
(:func:`planned_rates`), so a healthy 4xEDR link is no NDR link with too few lanes."""

_FIELD_SET = frozenset(LINK_FIELDS)
_FLIP = {"a_optic": "b_optic", "b_optic": "a_optic"}
_SPEED_KEYS = frozenset(SPEED_ATTRS)


@lru_cache(maxsize=256)
def _model_rates(model: str, speed: float) -> tuple[str, ...]:
    """:func:`~fabric_stack.hardware.ib_links.planned_rates` of a catalog model's port mode."""
    mode_name = ""
    # A generic key does not say its protocol (the spec's fabric does): judge it by speed,
    # which only an InfiniBand source (one that reports a width) is compared on.
    if model and not model.startswith("generic-"):
        try:
            switch = lookup_switch(model)
            if switch.protocol != "infiniband":
                return ()
            mode_name = port_mode(switch, int(speed)).lane_name
        except CatalogError:
            mode_name = ""  # a model (or speed) the catalog does not know: judge by speed
    return ib_rates(speed, mode_name)


def planned_rates(plan: PlanIndex, link: Link) -> tuple[str, ...]:
    """The InfiniBand rates ``link`` may run (``("4xEDR", "2xHDR")``), the planned one first.

    The generation comes from the planned switch's model and the link speed (QM9700 at
    200G: ``2xNDR``); a generic switch, or a bare link list, gives the speed's full-width
    generation and its split forms (see :mod:`fabric_stack.hardware.ib_links`). Empty for
    a speed no InfiniBand link runs (Ethernet).
    """
    scheme = plan.schemes.get(link.b_device) or plan.schemes.get(link.a_device)
    return _model_rates(scheme.model if scheme is not None else "", link.speed_gbps)


def rate_text(rates: tuple[str, ...], speed: float) -> str:
    """``4xEDR (100 Gb/s)`` for the planned rate of a link (``100 Gb/s`` when not IB)."""
    return f"{rates[0]} ({speed:g} Gb/s)" if rates else f"{speed:g} Gb/s"


def wrong_rate(rate: str | None, width: str | None, rates: tuple[str, ...]) -> bool:
    """Does an observed IB rate (``4xDDR``) differ from every rate the plan allows?"""
    return bool(width is not None and rate and rates and rate not in rates)


def _plant_medium(name: str, value: Any, link: Link, plan: PlanIndex | None) -> bool:
    """True when ``value`` is the medium the physical plant chose for ``link``'s run (a
    short run the plant gives a DAC or ACC is not a wrong cable type)."""
    return name == "medium" and plan is not None and value in plan.media_of(link)


def differs(link: Link, o: Observed, plan: PlanIndex | None = None) -> bool:
    """Cheap check: does any compared field of the matched pair differ?"""
    speed = link.speed_gbps
    if o.speed is not None and o.speed != speed:
        return True
    ol = o.link
    if ol.width is not None and ol.rate:
        rates = planned_rates(plan, link) if plan is not None else ib_rates(speed)
        if rates and ol.rate not in rates:
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
            if v != getattr(link, name) and not _plant_medium(name, v, link, plan):
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


def link_differences(link: Link, o: Observed, plan: PlanIndex | None = None) -> LinkDiff:
    """Every compared field of a matched pair that differs, planned and observed value."""
    diff = LinkDiff({}, {}, {}, {})
    if o.speed is not None and o.speed != link.speed_gbps:
        diff.exp_speed["speed_gbps"], diff.act_speed["speed_gbps"] = link.speed_gbps, o.speed
    rates = planned_rates(plan, link) if plan is not None else ib_rates(link.speed_gbps)
    # A wrong speed already says it; the rate is compared when the speed agrees (4xEDR
    # where the plan means 1xNDR: both 100 Gb/s, different hardware).
    if not diff.exp_speed and wrong_rate(o.link.rate, o.link.width, rates):
        diff.exp_speed["rate"], diff.act_speed["rate"] = rates[0], o.link.rate
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
            if v != planned and not _plant_medium(name, v, link, plan):
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


class ClassRates:
    """What a cable of each class runs at each planned switch, for judging unplanned links.

    A cable's class is its planned switch end and whether the far end is a host or a
    switch: an unplanned cable from a leaf to a server should run what the leaf's planned
    server cables run. Built on first use (only when some observed link is unplanned).
    """

    def __init__(self, plan: PlanIndex) -> None:
        self.plan = plan
        self._by: dict[tuple[str, bool], dict[float, tuple[str, ...]]] | None = None

    def _index(self) -> dict[tuple[str, bool], dict[float, tuple[str, ...]]]:
        if self._by is None:
            plan = self.plan
            by: dict[tuple[str, bool], dict[float, tuple[str, ...]]] = {}
            devices = plan.devices
            for link in plan.links:
                for sw, far in ((link.a_device, link.b_device), (link.b_device, link.a_device)):
                    info = devices.get(sw)
                    if info is None or info.is_server:
                        continue
                    far_info = devices.get(far)
                    host = far_info is not None and far_info.is_server
                    speeds = by.setdefault((sw, host), {})
                    if link.speed_gbps not in speeds:
                        speeds[link.speed_gbps] = planned_rates(plan, link)
            self._by = by
        return self._by

    def expected(self, switch: str, far_is_host: bool) -> dict[float, tuple[str, ...]] | None:
        """Planned speed → allowed IB rates of ``switch``'s cables to a host (or a switch)."""
        by = self._index()
        return by.get((switch, far_is_host)) or by.get((switch, not far_is_host))

    def judge(
        self, o: Observed, far_is_host: bool, switch: str
    ) -> tuple[float, tuple[str, ...]] | None:
        """(planned speed, rates) of ``o``'s class when ``o`` runs none of them, else None.

        The class is that of the planned cables of ``o``'s own ports when there are any (a
        moved cable should run what its port was planned for), else ``switch``'s cables to
        the far end's kind (host or switch), else any of ``switch``'s planned cables.
        """
        plan = self.plan
        want: dict[float, tuple[str, ...]] | None = {}
        for ep in (o.a, o.b):
            link = plan.at.get(ep)
            if link is not None and want is not None:
                want.setdefault(link.speed_gbps, planned_rates(plan, link))
        if not want:
            want = self.expected(switch, far_is_host)
        if not want:
            return None
        rate, width = o.link.rate, o.link.width
        for speed, rates in want.items():
            if o.speed is not None and o.speed != speed:
                continue
            if not wrong_rate(rate, width, rates):
                return None
        if o.speed is None and not (width is not None and rate):
            return None  # nothing to judge: the source gave neither speed nor rate
        speed, rates = max(want.items(), key=lambda kv: kv[0])
        return speed, rates
