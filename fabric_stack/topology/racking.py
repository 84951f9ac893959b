"""Network racks that hold what is put in them: spread switches over as many racks as the
layout's rack power and rack-unit budgets need.

The builder racks sixteen spines (or cores) to a rack and an SU's leaves with its access
switches in the SU's network rack. A big switch (a 4U, ~5 kW Quantum-X800 Q3400) breaks
either budget long before that: 2,304 GPUs of HGX B300 on Q3400s put 18 spines, 110 kW and
64 U into one rack. :func:`fit_network_racks` moves switches on into further racks instead:

* spines and cores: ``spine-rack01, 02 …`` filled to ``per_rack`` each, the smallest of 16,
  the units that fit and the power that fits;
* an SU's leaves: those the SU's network rack (``suN-net``, which keeps the access
  switches) cannot hold go to ``suN-net2``, ``suN-net3`` …, from U1 up.

A switch's power here is its catalog figure plus a module in every cage at the highest
module power of record (17 W), so the plant's figure (the modules actually lit) never
exceeds the budget this packs to. Where everything fits, nothing moves.
"""

from __future__ import annotations

import re
from dataclasses import replace

from fabric_stack.errors import CatalogError
from fabric_stack.hardware.switches import SwitchModel, lookup_switch
from fabric_stack.sizing.size import SizingPlan
from fabric_stack.topology.model import Device

TIER_RACK = 16
"""Spines (or cores) to a rack when the budgets allow: the builder's long-standing figure."""

MODULE_W_MAX = 17.0
"""The highest module power of record (twin-port OSFP DR8, MMS4X00-NS: 17 W)."""

_TIER_RACK = re.compile(r"^(p\d+-)?(spine|core)-rack\d+$")


def _model(plan: SizingPlan, d: Device) -> SwitchModel | None:
    if d.network == "compute":
        return plan.switch_model
    try:
        return lookup_switch(d.model, "ethernet")
    except CatalogError:
        return None


def _watts(plan: SizingPlan, d: Device) -> float:
    """A switch's power at its worst: catalog figure and a module in every cage."""
    m = _model(plan, d)
    if m is None or m.power_w is None:
        return 0.0
    return m.power_w + m.cages * MODULE_W_MAX


def _units(plan: SizingPlan, d: Device) -> int:
    m = _model(plan, d)
    return m.rack_units if m is not None else 1


def per_rack(plan: SizingPlan) -> int:
    """Spines (or cores) to a rack: 16, or fewer when units or power run out first."""
    layout = plan.spec.layout
    sw = plan.switch_model
    by_units = layout.rack_units // sw.rack_units
    worst = (sw.power_w or 0) + sw.cages * MODULE_W_MAX
    by_power = int(layout.rack_power_kw * 1000 // worst) if sw.power_w else TIER_RACK
    return max(1, min(TIER_RACK, by_units, by_power))


def _fit_tiers(plan: SizingPlan, devices: list[Device]) -> None:
    """Re-rack spines and cores ``per_rack`` to a rack when fewer than 16 fit."""
    n = per_rack(plan)
    if n >= TIER_RACK:
        return
    ru = plan.switch_model.rack_units
    seen: dict[tuple[int, str], int] = {}
    for i, d in enumerate(devices):
        if d.role not in ("spine", "core") or not _TIER_RACK.match(d.rack):
            continue
        idx = seen.get((d.plane, d.role), 0)
        seen[(d.plane, d.role)] = idx + 1
        prefix = d.rack.split(f"{d.role}-rack")[0]
        devices[i] = replace(
            d, rack=f"{prefix}{d.role}-rack{idx // n + 1:02d}", position=1 + (idx % n) * ru
        )


def _fit_su(plan: SizingPlan, devices: list[Device], access: list[Device], idx: list[int]) -> None:
    """Move the leaves of an SU its network rack cannot hold into further racks (``access``:
    the rack's other switches, ``idx``: its leaves' indices in ``devices``)."""
    layout = plan.spec.layout
    budget_w = layout.rack_power_kw * 1000
    su = devices[idx[0]].su
    leaves = idx
    floor = min((d.position for d in access), default=layout.rack_units + 1)
    used_w = sum(_watts(plan, d) for d in access)
    ru = plan.switch_model.rack_units
    leaf_w = _watts(plan, devices[leaves[0]])
    last_top = max(devices[i].position + ru - 1 for i in leaves)
    if used_w + leaf_w * len(leaves) <= budget_w and last_top < floor:
        return
    n, w = 0, used_w
    for i in leaves:  # the leaves the SU's own network rack keeps, below its access switches
        if w + leaf_w > budget_w or (n + 1) * ru >= floor:
            break
        w += leaf_w
        devices[i] = replace(devices[i], position=1 + n * ru)
        n += 1
    each = max(1, layout.rack_units // ru)
    if leaf_w:
        each = max(1, min(each, int(budget_w // leaf_w)))
    for j, i in enumerate(leaves[n:]):
        devices[i] = replace(
            devices[i], rack=f"su{su}-net{j // each + 2}", position=1 + (j % each) * ru
        )


def fit_network_racks(plan: SizingPlan, devices: list[Device]) -> None:
    """Spread spines, cores and SU leaves over as many racks as the budgets need (in place)."""
    _fit_tiers(plan, devices)
    per_su: dict[int, list[int]] = {}
    # The non-leaf switches of each rack, gathered once: a scan of every device per SU was
    # quadratic (#43). Moving an SU's leaves never changes another rack's non-leaf devices.
    others: dict[str, list[Device]] = {}
    for i, d in enumerate(devices):
        if d.role == "leaf" and d.rack == f"su{d.su}-net":
            per_su.setdefault(d.su, []).append(i)
        elif d.role != "leaf":
            others.setdefault(d.rack, []).append(d)
    for su, idx in per_su.items():
        _fit_su(plan, devices, others.get(f"su{su}-net", []), idx)


__all__ = ["MODULE_W_MAX", "TIER_RACK", "fit_network_racks", "per_rack"]
