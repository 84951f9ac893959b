"""The physical plant of a topology: every cable's length, medium, part number and labels,
and every rack's units and power.

:func:`plant_of` derives it once per topology (cached on it) from the links' two ends, the
racks' places (:mod:`fabric_stack.plant.geometry`) and the cable catalog
(:mod:`fabric_stack.hardware.cables`). A cable's length is its tray route plus slack at
each end, rounded up to the first length its family sells; its medium is the cheapest
family whose reach covers that run (passive DAC, then active copper, then multimode and
single-mode fibre with transceivers). A run longer than every family's reach keeps the
longest-reach family and is reported by :func:`fabric_stack.plant.check.check_plant`.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from fabric_stack.errors import SpecError
from fabric_stack.hardware.cables import CableFamily, EndKind, families_for
from fabric_stack.hardware.switches import lookup_switch
from fabric_stack.plant.geometry import (
    Hall,
    RackPlace,
    place_rack,
    plan_hall,
    port_height_m,
    route_m,
)
from fabric_stack.plant.power import DevicePower, device_power
from fabric_stack.topology.build import HOST_ROLES, Device, FabricTopology, Link

_MEMO_KEY = "plant"


@dataclass(frozen=True, slots=True)
class CableRun:
    """The physical side of one cable (same order as :attr:`FabricTopology.links`)."""

    length_m: float
    route_m: float
    """Tray route plus slack, before rounding up to the vendor's length."""
    medium: str
    part_number: str
    family: str
    label_a: str
    label_b: str
    a_optic: str
    b_optic: str
    reach_m: float
    links_per_cable: int
    verified: bool
    """False when the SKU, its length steps or its reach are UNVERIFIED in the catalog."""

    @property
    def within_reach(self) -> bool:
        """Whether the run fits the medium's reach."""
        return self.route_m <= self.reach_m


@dataclass(frozen=True, slots=True)
class RackDevice:
    """A device in a rack elevation: its bottom RU, height and power."""

    name: str
    role: str
    model: str
    position: int
    height_u: int
    power: DevicePower


@dataclass(frozen=True, slots=True)
class RackLoad:
    """A rack: its place, its devices by RU, the units and power they take."""

    place: RackPlace
    devices: tuple[RackDevice, ...]
    units: int
    units_used: int
    power_kw: float
    power_budget_kw: float

    @property
    def over_power(self) -> bool:
        """True when the devices draw more than the rack's budget."""
        return self.power_kw > self.power_budget_kw + 1e-9

    @property
    def over_units(self) -> bool:
        """True when a device reaches above the rack's top unit."""
        return self.units_used > self.units


@dataclass(frozen=True)
class Plant:
    """Racks and cable runs of one topology."""

    racks: tuple[RackLoad, ...]
    runs: tuple[CableRun, ...]
    """One per link, in :attr:`FabricTopology.links` order."""

    def rack(self, name: str) -> RackLoad:
        """The rack named ``name``."""
        return next(r for r in self.racks if r.place.name == name)


def _height_u(topo: FabricTopology, d: Device, cache: dict[tuple[str, str], int]) -> int:
    """Rack units of a device: the server profile's, the switch catalog's, 2 for a manager."""
    if d.role == "server":
        return topo.plan.spec.node_profile.rack_units
    if d.role == "manager":
        return 2  # the builder racks fabric managers two units apart
    key = (d.model, d.network)
    if key not in cache:
        if d.network == "compute":
            cache[key] = topo.plan.switch_model.rack_units
        else:
            cache[key] = lookup_switch(d.model, "ethernet").rack_units
    return cache[key]


def _label(template: str, space: str, place: RackPlace, d: Device, port: str) -> str:
    """One cable end's label from the layout's template (checked by :func:`plan_plant`)."""
    return template.format(
        space=space, grid=place.grid, rack=place.name, u=d.position, device=d.name, port=port
    )


def _choose(families: tuple[CableFamily, ...], run: float) -> tuple[CableFamily, float]:
    """The cheapest family whose reach covers ``run`` and the length to order."""
    fam = next((f for f in families if run <= f.reach), None)
    if fam is None:
        fam = max(families, key=lambda f: f.reach)
    i = bisect.bisect_left(fam.lengths, run - 1e-9)
    return fam, fam.lengths[min(i, len(fam.lengths) - 1)]


def _runs(
    topo: FabricTopology,
    places: dict[str, RackPlace],
    heights: dict[str, float],
) -> tuple[CableRun, ...]:
    layout = topo.plan.spec.layout
    slack = 2 * layout.slack_per_end_m
    by_name = {d.name: d for d in topo.devices}
    out: list[CableRun] = []
    # Links of one kind share their families; a run's length depends on its ends alone.
    fam_cache: dict[tuple[int, str, str], tuple[CableFamily, ...]] = {}
    for k in topo.links:
        a, b = by_name[k.a_device], by_name[k.b_device]
        # A server on twin-port cages (a DGX H100) takes the switch-style twin-port cables.
        twin = "twin-port" in k.a_optic
        kind: EndKind = "host" if a.role in HOST_ROLES and not twin else "switch"
        fkey = (k.speed_gbps, kind, k.medium)
        fams = fam_cache.get(fkey)
        if fams is None:
            fams = fam_cache[fkey] = families_for(k.speed_gbps, kind, k.medium)
        pa, pb = places[a.name], places[b.name]
        # Whole centimetres, rounded up: the figure printed is the one the medium is chosen by.
        raw = route_m(layout, pa, pb, heights[a.name], heights[b.name]) + slack
        run = math.ceil(raw * 100 - 1e-6) / 100
        fam, length = _choose(fams, run)
        out.append(_run(layout.label, layout.space, k, a, b, pa, pb, fam, length, run))
    return tuple(out)


def _run(
    template: str,
    space: str,
    k: Link,
    a: Device,
    b: Device,
    pa: RackPlace,
    pb: RackPlace,
    fam: CableFamily,
    length: float,
    run: float,
) -> CableRun:
    return CableRun(
        length_m=length,
        route_m=run,
        medium=fam.medium,
        part_number=fam.part(length),
        family=fam.key,
        label_a=_label(template, space, pa, a, k.a_port),
        label_b=_label(template, space, pb, b, k.b_port),
        a_optic=fam.a_optic.part if fam.a_optic else "",
        b_optic=fam.b_optic.part if fam.b_optic else "",
        reach_m=fam.reach,
        links_per_cable=fam.links_per_cable,
        verified=fam.verified
        and (fam.a_optic is None or fam.a_optic.verified)
        and (fam.b_optic is None or fam.b_optic.verified),
    )


def _racks(
    topo: FabricTopology, places: dict[str, RackPlace], units: dict[str, int]
) -> tuple[RackLoad, ...]:
    layout = topo.plan.spec.layout
    members: dict[str, list[RackDevice]] = {}
    for d in topo.devices:
        rd = RackDevice(d.name, d.role, d.model, d.position, units[d.name], device_power(topo, d))
        members.setdefault(places[d.name].name, []).append(rd)
    first: dict[str, RackPlace] = {}
    for d in topo.devices:
        first.setdefault(places[d.name].name, places[d.name])
    out = []
    for name, devs in members.items():
        devs.sort(key=lambda r: (r.position, r.name))
        out.append(
            RackLoad(
                place=first[name],
                devices=tuple(devs),
                units=layout.rack_units,
                units_used=max(r.position + r.height_u - 1 for r in devs),
                power_kw=round(sum(r.power.watts for r in devs) / 1000, 2),
                power_budget_kw=layout.rack_power_kw,
            )
        )
    out.sort(key=lambda r: (r.place.row, r.place.column, r.place.name))
    return tuple(out)


def _check_labels(template: str) -> None:
    """The label template names only known fields (a bad one is a spec error)."""
    try:
        template.format(space="", grid="", rack="", u=1, device="", port="")
    except (KeyError, IndexError, ValueError) as exc:
        raise SpecError(
            "layout.label",
            f"{template!r} does not format ({exc})",
            "fields: {space} {grid} {rack} {u} {device} {port}",
        ) from None


def plan_plant(topo: FabricTopology) -> Plant:
    """Racks and cable runs of ``topo`` (no budget check: see :func:`require_budgets`)."""
    layout = topo.plan.spec.layout
    _check_labels(layout.label)
    hall: Hall = plan_hall(layout, topo.plan.su_nodes or topo.plan.nodes)
    places: dict[str, RackPlace] = {}
    heights: dict[str, float] = {}
    units: dict[str, int] = {}
    cache: dict[tuple[str, str], int] = {}
    for d in topo.devices:
        places[d.name] = place_rack(hall, d)
        units[d.name] = _height_u(topo, d, cache)
        heights[d.name] = port_height_m(d.position, units[d.name])
    return Plant(racks=_racks(topo, places, units), runs=_runs(topo, places, heights))


def require_budgets(plant: Plant) -> None:
    """Raise a :class:`SpecError` naming the first rack over its power or rack-unit budget."""
    for r in plant.racks:
        if r.over_power:
            raise SpecError(
                "layout.rack_power_kw",
                f"rack {r.place.name} ({r.place.grid}) draws {r.power_kw:g} kW, over its "
                f"{r.power_budget_kw:g} kW budget",
                "lower layout.servers_per_rack or raise layout.rack_power_kw; "
                "fabric-stack layout --check lists every rack",
            )
        if r.over_units:
            raise SpecError(
                "layout.rack_units",
                f"rack {r.place.name} ({r.place.grid}) needs {r.units_used} U of {r.units} U",
                "lower layout.servers_per_rack or raise layout.rack_units",
            )


def plant_of(topo: FabricTopology, *, strict: bool = True) -> Plant:
    """The plant of ``topo``, derived once and cached on it; ``strict`` checks the budgets."""
    plant = topo.memo.get(_MEMO_KEY)
    if not isinstance(plant, Plant):
        plant = plan_plant(topo)
        topo.memo[_MEMO_KEY] = plant
    if strict:
        require_budgets(plant)
    return plant


__all__ = [
    "CableRun",
    "Plant",
    "RackDevice",
    "RackLoad",
    "plan_plant",
    "plant_of",
    "require_budgets",
]
