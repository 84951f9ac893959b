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

import math
import re
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

from fabric_stack.errors import SpecError
from fabric_stack.hardware.optics import CageKind
from fabric_stack.hardware.switches import lookup_switch
from fabric_stack.plant.ends import end_label_port, host_end, switch_cage
from fabric_stack.plant.geometry import (
    RU_M,
    Hall,
    RackPlace,
    place_rack,
    plan_hall,
    port_height_m,
    route_m,
)
from fabric_stack.plant.power import DevicePower, device_power
from fabric_stack.plant.specs import RunSpec, _SpecMemo, _SpecTable
from fabric_stack.topology.build import HOST_ROLES, Device, FabricTopology
from fabric_stack.topology.model import Link

_MEMO_KEY = "plant"


class CableRun(NamedTuple):
    """The physical side of one cable (same order as :attr:`FabricTopology.links`): its
    route's shared :class:`RunSpec` and the labels of its two ends. A named tuple, not a
    frozen dataclass: a 32k-GPU plan builds ~115k of them and a tuple is built fastest."""

    spec: RunSpec
    label_a: str
    label_b: str

    @property
    def length_m(self) -> float:
        """Length to order, metres (a length the family sells)."""
        return self.spec.length_m

    @property
    def route_m(self) -> float:
        """Tray route plus slack, metres."""
        return self.spec.route_m

    @property
    def medium(self) -> str:
        """dac, acc, mmf, smf or copper."""
        return self.spec.medium

    @property
    def part_number(self) -> str:
        """The cable's SKU."""
        return self.spec.part_number

    @property
    def family(self) -> str:
        """Catalog family key."""
        return self.spec.family

    @property
    def a_optic(self) -> str:
        """Transceiver SKU at the a-end ('' for copper)."""
        return self.spec.a_optic

    @property
    def b_optic(self) -> str:
        """Transceiver SKU at the b-end ('' for copper)."""
        return self.spec.b_optic

    @property
    def reach_m(self) -> float:
        """The medium's reach, metres."""
        return self.spec.reach_m

    @property
    def links_per_cable(self) -> int:
        """Links one cable of this family carries."""
        return self.spec.links_per_cable

    @property
    def verified(self) -> bool:
        """False when the catalog marks the part UNVERIFIED."""
        return self.spec.verified

    @property
    def within_reach(self) -> bool:
        """Whether the run fits the medium's reach."""
        return self.spec.route_m <= self.spec.reach_m


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
    units_occupied: int
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

    @property
    def units_free(self) -> int:
        """Rack units no device takes (gaps between devices count as free)."""
        return self.units - self.units_occupied


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


def _label_prefixes(
    template: str, space: str, devices: tuple[Device, ...], places: dict[str, RackPlace]
) -> dict[str, str] | None:
    """Per device, its label without the port, when the template ends in ``{port}`` (the
    default): a label is then one concatenation per cable end, not a format call."""
    if not template.endswith("{port}") or "{port}" in template[: -len("{port}")]:
        return None
    head = template[: -len("{port}")]
    return {d.name: _label(head, space, places[d.name], d, "") for d in devices}


class _End(NamedTuple):
    """What a link needs of one of its devices (see :func:`_runs`)."""

    rack: str
    other: bool
    x: float
    y: float
    up: float
    height: float
    host: bool
    prefix: str
    device: Device
    place: RackPlace
    kind: int
    """The device's class for :func:`_link_class` (one per role and model)."""
    cages: dict[str, list[Any]]
    """The device's cages met so far, each a :data:`_CAGE` record."""


class _LinkClass(NamedTuple):
    """What links of the same ports, speed, network, medium and device kinds share: each
    end's cage, the a-end's cage kind and label port, and the class of their spec."""

    b_cage: str
    a_cage: str
    a_kind: CageKind
    a_switch: bool
    """Whether the a-end is a switch (whose modules count towards its rack's power)."""
    label_port: str
    spec_class: int
    """Index into the list of (speed, a-end kind, medium, a model, b model) of the plan."""


_CAGE = "[longest leg (cm), legs, first peer device, first peer cage, paired, W, device, state]"
"""A cage record: the first five are the b-end statistics the family follows (see
:func:`_runs`; legs 0 while only met as an a-end; paired: at most two legs, all from one
peer cage), then the module's power once a lit end is met in link order (None before), the
device it sits in, and its state as one int (2 × longest + paired) for the spec look-up."""


def _ends(
    topo: FabricTopology, places: dict[str, RackPlace], heights: dict[str, float]
) -> dict[str, _End]:
    """One :class:`_End` per device (one dict look-up per link end, not six): the direct
    tray route's terms (rack, x along, y across, up to the tray, port height), whether it
    is a host, its label prefix, its kind and its cages."""
    layout = topo.plan.spec.layout
    prefix = _label_prefixes(layout.label, layout.space, topo.devices, places)
    top = layout.rack_units * RU_M + layout.tray_height_mm / 1000
    pitch, row_pitch = layout.rack_pitch_mm / 1000, layout.row_pitch_mm / 1000
    kinds: dict[tuple[str, str], int] = {}
    info: dict[str, _End] = {}
    for d in topo.devices:
        p, h = places[d.name], heights[d.name]
        info[d.name] = _End(
            p.name,
            p.kind == "other",
            p.column * pitch,
            p.row * row_pitch,
            top - h,
            h,
            d.role in HOST_ROLES,
            prefix[d.name] if prefix is not None else "",
            d,
            p,
            kinds.setdefault((d.role, d.model), len(kinds)),
            {},
        )
    return info


def _link_class(
    topo: FabricTopology,
    k: Link,
    ea: _End,
    eb: _End,
    spec_classes: dict[tuple[int, CageKind, str, str, str], int],
) -> _LinkClass:
    """The class of link ``k`` (see :class:`_LinkClass`); ``spec_classes`` numbers the
    spec classes met so far."""
    prof = topo.plan.spec.node_profile
    if ea.host:
        a_kind, a_cage = host_end(prof, ea.device, k)
        a_model = ""
    else:
        a_kind, a_cage, a_model = "switch", switch_cage(k.a_port), ea.device.model
    label_port = k.a_port
    if ea.host and ea.device.role == "server":
        label_port = end_label_port(prof, ea.device, k.a_port)
    skey = (k.speed_gbps, a_kind, k.medium, a_model, eb.device.model)
    spec_class = spec_classes.setdefault(skey, len(spec_classes))
    return _LinkClass(switch_cage(k.b_port), a_cage, a_kind, not ea.host, label_port, spec_class)


def _runs(
    topo: FabricTopology,
    places: dict[str, RackPlace],
    heights: dict[str, float],
) -> tuple[tuple[CableRun, ...], dict[str, float]]:
    """Every link's run (its route, the family and length chosen for it, its labels), in
    link order, and the module power per switch, W.

    ~1M links at 131k GPUs repeat few shapes (a server's NIC ports to its leaves' ports,
    the uplinks), so what depends only on the ports, speed, network, medium and the two
    devices' kinds is worked out once per :class:`_LinkClass`; per link remain the route
    (a few additions), its cage's statistics and the labels (two concatenations).
    """
    layout = topo.plan.spec.layout
    slack = 2 * layout.slack_per_end_m
    direct = layout.cross_rows == "direct"
    info = _ends(topo, places, heights)
    classes: dict[tuple[str, str, int, str, str, int, int], _LinkClass] = {}
    spec_classes: dict[tuple[int, CageKind, str, str, str], int] = {}
    # A switch cage is one module or one two-link cable: its legs get the family its
    # longest leg needs (never half an ACC and half a transceiver), and a twin-port cable
    # that is no splitter only where both legs join the same cage at the other end too
    # ("paired": at most two legs, one peer cage). Per link, in columns: its run, its
    # b-end cage record, its a-end's cage record (a switch's; None for a host), its spec
    # class and its two labels.
    cols = _Columns()
    # Bound once: the loop below runs ~1M times at 131k GPUs.
    class_of, ceil = classes.get, math.ceil
    run_, st_, a_st_, cls_ = cols.runs.append, cols.b.append, cols.a.append, cols.cls.append
    label_a, label_b = cols.labels_a.append, cols.labels_b.append
    for k in topo.links:
        a_dev, b_dev, b_port = k.a_device, k.b_device, k.b_port
        ea, eb = info[a_dev], info[b_dev]
        ckey = (k.a_port, b_port, k.speed_gbps, k.network, k.medium, ea[10], eb[10])
        c = class_of(ckey)
        if c is None:
            c = classes[ckey] = _link_class(topo, k, ea, eb, spec_classes)
        # The route (see route_m): a few additions from the per-device terms.
        if ea[0] == eb[0] and not ea[1]:
            raw = abs(ea[5] - eb[5])
        elif direct:
            raw = ea[4] + eb[4] + abs(ea[2] - eb[2]) + abs(ea[3] - eb[3])
        else:
            raw = route_m(layout, ea[9], eb[9], ea[5], eb[5])
        # Whole centimetres, an int: the spec look-up hashes ints, not floats.
        run = ceil((raw + slack) * 100 - 1e-6)
        a_name = c[1]
        cages = eb[11]
        st = cages.get(c[0])
        if st is None:
            st = cages[c[0]] = [run, 1, a_dev, a_name, True, None, b_dev, 2 * run + 1]
        elif st[1]:
            st[1] += 1
            if run > st[0]:
                st[0] = run
            if st[4] and (st[1] > 2 or st[2] != a_dev or st[3] != a_name):
                st[4] = False
            st[7] = 2 * st[0] + st[4]
        else:
            st[:5], st[7] = [run, 1, a_dev, a_name, True], 2 * run + 1
        if c[3]:
            a_st = ea[11].get(a_name)
            if a_st is None:
                a_st = ea[11][a_name] = [0, 0, "", "", True, None, a_dev, 0]
            a_st_(a_st)
        else:
            a_st_(None)
        run_(run)
        st_(st)
        cls_(c[5])
        label_a(ea[7] + c[4])
        label_b(eb[7] + b_port)
    if not layout.label.endswith("{port}") or "{port}" in layout.label[: -len("{port}")]:
        cols.labels_a, cols.labels_b = _formatted_labels(topo, info, classes, spec_classes)
    specs = _specs(cols, _SpecTable(list(spec_classes)))
    power = _module_power(specs, cols)
    # A CableRun per link built in C (tuple.__new__), not by the named tuple's Python-level
    # __new__: ~1M of them at 131k GPUs.
    runs = tuple(
        map(tuple.__new__, repeat(CableRun), zip(specs, cols.labels_a, cols.labels_b, strict=True))
    )
    return runs, power


@dataclass(slots=True)
class _Columns:
    """Per link, in link order (see :func:`_runs`); lengths in whole cm."""

    runs: list[int] = field(default_factory=list)
    """The route plus slack, whole cm."""
    b: list[list[Any]] = field(default_factory=list)
    """The b-end cage record (:data:`_CAGE`)."""
    a: list[list[Any] | None] = field(default_factory=list)
    """The a-end cage record when the a-end is a switch, else None."""
    cls: list[int] = field(default_factory=list)
    """The spec class (:attr:`_LinkClass.spec_class`)."""
    labels_a: list[str] = field(default_factory=list)
    labels_b: list[str] = field(default_factory=list)


def _formatted_labels(
    topo: FabricTopology,
    info: dict[str, _End],
    classes: dict[tuple[str, str, int, str, str, int, int], _LinkClass],
    spec_classes: dict[tuple[int, CageKind, str, str, str], int],
) -> tuple[list[str], list[str]]:
    """Each link's two labels from a template that does not end in ``{port}``."""
    layout = topo.plan.spec.layout
    template, space = layout.label, layout.space
    labels_a: list[str] = []
    labels_b: list[str] = []
    for k in topo.links:
        ea, eb = info[k.a_device], info[k.b_device]
        ckey = (k.a_port, k.b_port, k.speed_gbps, k.network, k.medium, ea.kind, eb.kind)
        c = classes.get(ckey) or _link_class(topo, k, ea, eb, spec_classes)
        labels_a.append(_label(template, space, ea.place, ea.device, c.label_port))
        labels_b.append(_label(template, space, eb.place, eb.device, k.b_port))
    return labels_a, labels_b


def _specs(cols: _Columns, table: _SpecTable) -> list[RunSpec]:
    """Each link's shared spec: one look-up by (its cage's state: 2 × longest leg + paired,
    its run, its spec class), done in C over the columns; only a new key calls the table."""
    keys = zip(map(itemgetter(7), cols.b), cols.runs, cols.cls, strict=True)
    return list(map(_SpecMemo(table).__getitem__, keys))


def _module_power(specs: list[RunSpec], cols: _Columns) -> dict[str, float]:
    """The module power per switch, W: one module per lit cage, its power from the first
    link (in link order) whose spec has one at that end, summed per device in that order
    (the order :func:`~fabric_stack.plant.modules.tally_modules` sums in, so the same
    floats). A host's own figure covers its cages: a host end has no record."""
    lit: list[tuple[str, float]] = []
    for spec, st, a_st in zip(specs, cols.b, cols.a, strict=True):
        if a_st is not None and a_st[5] is None and spec.a_optic:
            a_st[5] = spec.a_power_w
            lit.append((a_st[6], spec.a_power_w))
        if st[5] is None and spec.b_optic:
            st[5] = spec.b_power_w
            lit.append((st[6], spec.b_power_w))
    power: dict[str, float] = {}
    for dev, w in lit:
        power[dev] = power.get(dev, 0.0) + w
    return power


cage_of = switch_cage
"""The cage a switch port sits in (kept under its old name for the views that import it)."""


def _racks(
    topo: FabricTopology,
    places: dict[str, RackPlace],
    units: dict[str, int],
    optics_w: dict[str, float],
) -> tuple[RackLoad, ...]:
    """Every rack with its devices by RU, units used and power, in floor order.

    A switch's power is its catalog figure plus the modules in its cages (``optics_w``);
    a server's is its system figure, which covers what its own cages hold.
    """
    layout = topo.plan.spec.layout
    members: dict[str, list[RackDevice]] = {}
    # A device's power follows its role, network and model: worked out once per kind.
    kinds: dict[tuple[str, str, str], DevicePower] = {}
    for d in topo.devices:
        kind = (d.role, d.network, d.model)
        power = kinds.get(kind) or kinds.setdefault(kind, device_power(topo, d))
        extra = optics_w.get(d.name, 0.0) if d.role not in HOST_ROLES else 0.0
        if extra:
            power = DevicePower(
                power.watts + round(extra), f"{power.basis}; + {extra:g} W of modules"
            )
        rd = RackDevice(d.name, d.role, d.model, d.position, units[d.name], power)
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
                # The top unit reached decides overflow; the units the devices take are
                # what an elevation shows as used (access switches stand high, leaves low).
                units_used=max(r.position + r.height_u - 1 for r in devs),
                units_occupied=sum(r.height_u for r in devs),
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


_NET_RACK = re.compile(r"^su\d+-net(\d+)$")


def _net_racks(topo: FabricTopology) -> int:
    """Network racks per SU: 1, or the highest ``suN-netK`` the builder filled."""
    found = (_NET_RACK.match(d.rack) for d in topo.devices if d.role == "leaf")
    return max((int(m.group(1)) for m in found if m), default=1)


def _places(hall: Hall, devices: tuple[Device, ...]) -> dict[str, RackPlace]:
    """Each device's rack place (:func:`place_rack`), worked out once per rack: a GPU
    server's place follows its rack, SU and rack index, any other device's its rack."""
    per_rack = hall.layout.servers_per_rack
    memo: dict[object, RackPlace] = {}
    places: dict[str, RackPlace] = {}
    for d in devices:
        key = (d.rack, d.su, (d.index - 1) // per_rack) if d.role == "server" and d.su else d.rack
        place = memo.get(key)
        if place is None:
            place = memo[key] = place_rack(hall, d)
        places[d.name] = place
    return places


def plan_plant(topo: FabricTopology) -> Plant:
    """Racks and cable runs of ``topo`` (no budget check: see :func:`require_budgets`)."""
    layout = topo.plan.spec.layout
    _check_labels(layout.label)
    hall: Hall = plan_hall(layout, topo.plan.su_nodes or topo.plan.nodes, _net_racks(topo))
    places = _places(hall, topo.devices)
    heights: dict[str, float] = {}
    units: dict[str, int] = {}
    cache: dict[tuple[str, str], int] = {}
    for d in topo.devices:
        units[d.name] = _height_u(topo, d, cache)
        heights[d.name] = port_height_m(d.position, units[d.name])
    runs, optics_w = _runs(topo, places, heights)
    return Plant(racks=_racks(topo, places, units, optics_w), runs=runs)


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
    # Keyed by the very link and device tuples: ``dataclasses.replace`` shares the memo dict
    # with the copy, whose links may differ.
    cached = topo.memo.get(_MEMO_KEY)
    if (
        isinstance(cached, tuple)
        and cached[0] is topo.links
        and cached[1] is topo.devices
        and cached[2] is topo.plan
    ):
        plant: Plant = cached[3]
    else:
        plant = plan_plant(topo)
        topo.memo[_MEMO_KEY] = (topo.links, topo.devices, topo.plan, plant)
    if strict:
        require_budgets(plant)
    return plant


__all__ = [
    "CableRun",
    "Plant",
    "RackDevice",
    "RackLoad",
    "RunSpec",
    "plan_plant",
    "plant_of",
    "require_budgets",
]
