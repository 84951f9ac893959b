"""The order list of the BOM: cables and optics by part number and length, with totals.

Read from the physical plant (:func:`fabric_stack.plant.plant_of`), never recomputed:

* **Cables** by (part number, length). A family that carries two links per cable (a
  twin-port DAC, a 1:2 splitter) is counted once per switch cage at the b-end: the two
  legs of a split cage (``1/8/1`` and ``1/8/2``) share the cable, and the plant gives every
  leg of a cage the family its longest leg needs (:func:`fabric_stack.plant.plan.cage_of`),
  so a cage never holds half a splitter.
* **Optics** by part number: a module per ``links`` legs of one device cage (a twin-port
  OSFP serves the two legs of its switch cage, a single-port OSFP one server port). DAC and
  ACC ends take no module.
* Parts the catalog marks UNVERIFIED (SKU, length step or reach not confirmed against
  NVIDIA's documentation) carry ``verified: false`` and a ``*`` in the tables.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.hardware.cables import CABLE_FAMILIES, Transceiver
from fabric_stack.plant import plant_of
from fabric_stack.plant.plan import cage_of
from fabric_stack.topology.build import FabricTopology

_LINKS_PER_MODULE: dict[str, int] = {}
for _f in CABLE_FAMILIES:
    for _t in (_f.a_optic, _f.b_optic):
        if isinstance(_t, Transceiver):
            _LINKS_PER_MODULE[_t.part] = _t.links
_VERIFIED_OPTIC = {
    t.part: t.verified
    for f in CABLE_FAMILIES
    for t in (f.a_optic, f.b_optic)
    if isinstance(t, Transceiver)
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PartCable(_Model):
    """Cables of one part number (one length)."""

    part_number: str = Field(description="Orderable SKU (with its length code).")
    medium: str = Field(description="dac, acc, mmf, smf or copper.")
    length_m: float = Field(description="Length of one cable, m.")
    links: int = Field(description="Links these cables carry.")
    count: int = Field(description="Cables to order.")
    verified: bool = Field(description="False when the catalog marks the part UNVERIFIED.")


class PartOptic(_Model):
    """Transceivers of one part number."""

    part_number: str = Field(description="Orderable SKU.")
    count: int = Field(description="Modules to order.")
    verified: bool = Field(description="False when the catalog marks the part UNVERIFIED.")


class PartsList(_Model):
    """Cables and optics to order, with totals."""

    cables: tuple[PartCable, ...] = Field(description="Cables by part number and length.")
    optics: tuple[PartOptic, ...] = Field(description="Optics by part number.")
    cables_total: int = Field(description="All cables to order.")
    cable_metres_total: float = Field(description="Metres of all cables.")
    optics_total: int = Field(description="All modules to order.")


def _cables(topo: FabricTopology) -> tuple[PartCable, ...]:
    plant = plant_of(topo)
    # (part, b-end switch, cage) → links: the legs of a two-link cable (a twin-port DAC, a
    # 1:2 splitter) share one switch cage, which the plant gives one family (plan.cage_of).
    per_cage: Counter[tuple[str, str, str]] = Counter()
    info: dict[str, tuple[str, float, int, bool]] = {}
    for k, run in zip(topo.links, plant.runs, strict=True):
        per_cage[(run.part_number, k.b_device, cage_of(k.b_port))] += 1
        info[run.part_number] = (run.medium, run.length_m, run.links_per_cable, run.verified)
    links: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for (part, _, _), n in per_cage.items():
        links[part] += n
        count[part] += -(-n // info[part][2])
    out = [
        PartCable(
            part_number=p,
            medium=info[p][0],
            length_m=info[p][1],
            links=links[p],
            count=count[p],
            verified=info[p][3],
        )
        for p in links
    ]
    order = ("dac", "acc", "mmf", "smf", "copper")
    out.sort(key=lambda c: (order.index(c.medium), c.part_number.rsplit("-", 1)[0], c.length_m))
    return tuple(out)


def _optics(topo: FabricTopology) -> tuple[PartOptic, ...]:
    plant = plant_of(topo)
    per_cage: dict[tuple[str, str, str], int] = defaultdict(int)
    for k, run in zip(topo.links, plant.runs, strict=True):
        if run.a_optic:
            per_cage[(run.a_optic, k.a_device, cage_of(k.a_port))] += 1
        if run.b_optic:
            per_cage[(run.b_optic, k.b_device, cage_of(k.b_port))] += 1
    count: Counter[str] = Counter()
    for (part, _, _), n in per_cage.items():
        count[part] += -(-n // _LINKS_PER_MODULE.get(part, 1))
    return tuple(
        PartOptic(part_number=p, count=n, verified=_VERIFIED_OPTIC.get(p, False))
        for p, n in sorted(count.items())
    )


def parts_list(topo: FabricTopology) -> PartsList:
    """What to order for the cabling of ``topo`` (see the module docstring)."""
    cables = _cables(topo)
    optics = _optics(topo)
    return PartsList(
        cables=cables,
        optics=optics,
        cables_total=sum(c.count for c in cables),
        cable_metres_total=round(sum(c.count * c.length_m for c in cables), 1),
        optics_total=sum(o.count for o in optics),
    )


def _mark(verified: bool) -> str:
    return "" if verified else " *"


def parts_markdown(parts: PartsList) -> list[str]:
    """The order list as Markdown lines (two tables and the totals)."""
    lines = [
        "## Cables to order (by part number and length)",
        "",
        "| Part number | Medium | Length | Links | Cables |",
        "|---|---|---:|---:|---:|",
    ]
    lines += [
        f"| {c.part_number}{_mark(c.verified)} | {c.medium} | {c.length_m:g} m | "
        f"{c.links:,} | {c.count:,} |"
        for c in parts.cables
    ]
    lines += [
        "",
        "## Optics to order (by part number)",
        "",
        "| Part number | Modules |",
        "|---|---:|",
    ]
    lines += [f"| {o.part_number}{_mark(o.verified)} | {o.count:,} |" for o in parts.optics]
    lines += [
        "",
        f"Totals: {parts.cables_total:,} cables ({parts.cable_metres_total:,g} m), "
        f"{parts.optics_total:,} optics.",
    ]
    if any(not c.verified for c in parts.cables) or any(not o.verified for o in parts.optics):
        lines += [
            "",
            "\\* UNVERIFIED: SKU, length step or reach not confirmed against NVIDIA's "
            "documentation (fabric_stack/hardware/cables.py gives each source).",
        ]
    return lines


__all__ = ["PartCable", "PartOptic", "PartsList", "parts_list", "parts_markdown"]
