"""`layout --check`: racks over power or units, cables beyond reach, duplicate labels, and
the longest runs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fabric_stack.plant.order import order_of
from fabric_stack.plant.plan import CableRun, Plant, RackLoad
from fabric_stack.topology.build import FabricTopology, Link


@dataclass(frozen=True)
class LongRun:
    """One of the longest cables."""

    cable_id: str
    a_device: str
    b_device: str
    length_m: float
    medium: str
    part_number: str
    reach_m: float


@dataclass(frozen=True)
class PlantCheck:
    """The findings of :func:`check_plant`; ``passed`` when there is no problem."""

    name: str
    racks: int
    cables: int
    """Cables as ordered (:func:`~fabric_stack.plant.order.order_of`: a splitter once, an
    800G twin-port link's two fibres twice), the BOM's total."""
    problems: tuple[str, ...]
    longest: tuple[LongRun, ...]
    media: dict[str, int] = field(default_factory=dict)
    """Those cables by medium."""
    unverified_parts: int = 0

    @property
    def passed(self) -> bool:
        """True when no rack is over budget, no cable beyond reach, every label unique."""
        return not self.problems


def _long(k: Link, r: CableRun) -> LongRun:
    return LongRun(k.id, k.a_device, k.b_device, r.length_m, r.medium, r.part_number, r.reach_m)


def check_plant(topo: FabricTopology, plant: Plant, top: int = 5) -> PlantCheck:
    """Every problem of the plant, one line each, and the ``top`` longest runs."""
    problems: list[str] = []
    for r in plant.racks:
        if r.over_power:
            problems.append(
                f"rack {r.place.name} ({r.place.grid}): {r.power_kw:g} kW over its "
                f"{r.power_budget_kw:g} kW budget"
            )
        if r.over_units:
            problems.append(
                f"rack {r.place.name} ({r.place.grid}): a device reaches U{r.units_used}, "
                f"above the rack's {r.units} U"
            )
        problems.extend(
            f"rack {r.place.name} ({r.place.grid}): {a} and {b} both take U{u}"
            for a, b, u in overlapping_units(r)
        )
    for k, run in zip(topo.links, plant.runs, strict=True):
        if not run.within_reach:
            problems.append(
                f"cable {k.id} → {k.b_device}:{k.b_port}: {run.route_m:g} m route beyond the "
                f"{run.reach_m:g} m reach of {run.medium} ({run.part_number})"
            )
    labels = Counter(lab for run in plant.runs for lab in (run.label_a, run.label_b))
    dupes = [lab for lab, n in labels.items() if n > 1]
    problems += [f"label {lab!r} is on {labels[lab]} cable ends" for lab in dupes[:20]]
    order = sorted(range(len(plant.runs)), key=lambda i: (-plant.runs[i].route_m, topo.links[i].id))
    media: Counter[str] = Counter()
    unverified = 0
    for c in order_of(topo).cables:  # as the BOM counts them, not one per link
        media[c.medium] += c.cables
        unverified += 0 if c.verified else c.cables
    return PlantCheck(
        name=topo.plan.spec.name,
        racks=len(plant.racks),
        cables=sum(media.values()),
        problems=tuple(problems),
        longest=tuple(_long(topo.links[i], plant.runs[i]) for i in order[:top]),
        media=dict(sorted(media.items())),
        unverified_parts=unverified,
    )


__all__ = ["LongRun", "PlantCheck", "check_plant"]


def overlapping_units(rack: RackLoad) -> list[tuple[str, str, int]]:
    """Pairs of devices of ``rack`` that take the same unit, with the lowest shared unit."""
    out = []
    devs = sorted(rack.devices, key=lambda d: (d.position, d.name))
    for i, a in enumerate(devs):
        top = a.position + a.height_u - 1
        for b in devs[i + 1 :]:
            if b.position > top:
                break
            out.append((a.name, b.name, b.position))
    return out
