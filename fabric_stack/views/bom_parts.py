"""The order list of the BOM: cables and optics by part number and length, with totals.

Read from :func:`fabric_stack.plant.order.order_of`, the one count of cables and modules
that the BOM summary, the report and ``layout`` read too, so the order list cannot
disagree with them:

* **Cables** by (part number, length): a one-link cable per link, a two-link cable (a 1:2
  splitter, or a twin-port cable whose links join the same two cages) per switch cage, and
  as many cables per link as the link's catalog family needs (two straight fibres for an
  unsplit 800G port of a 100G-PAM4 twin-port cage: :attr:`~fabric_stack.hardware.cables.
  CableFamily.cables_per_link`, counted by :func:`fabric_stack.plant.order.order_of`).
* **Optics** by part number: one module per cage with a lit port, at both ends, of the
  part that end's hardware takes (finned twin-port OSFP in a switch, flat-top twin-port
  in a DGX H100's compute cage, QSFP112 on a dual-port storage card). DAC, ACC and RJ45
  ends take no module.
* Parts the catalog marks UNVERIFIED (SKU, length step, reach or power not confirmed
  against NVIDIA's documentation) carry ``verified: false`` and a ``*`` in the tables.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict, Field
from rich.console import RenderableType
from rich.table import Table

from fabric_stack.plant.order import Order
from fabric_stack.views.costs import Cost, money


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


def _cables(order: Order) -> tuple[PartCable, ...]:
    links: Counter[str] = Counter()
    count: Counter[str] = Counter()
    info: dict[str, tuple[str, float, bool]] = {}
    for c in order.cables:
        links[c.part_number] += c.links
        count[c.part_number] += c.cables
        info[c.part_number] = (c.medium, c.length_m, c.verified)
    out = [
        PartCable(
            part_number=p,
            medium=info[p][0],
            length_m=info[p][1],
            links=links[p],
            count=count[p],
            verified=info[p][2],
        )
        for p in links
    ]
    media = ("dac", "acc", "mmf", "smf", "copper")
    out.sort(key=lambda c: (media.index(c.medium), c.part_number.rsplit("-", 1)[0], c.length_m))
    return tuple(out)


def _optics(order: Order) -> tuple[PartOptic, ...]:
    count: Counter[str] = Counter()
    verified: dict[str, bool] = {}
    for m in order.modules:
        count[m.part_number] += m.count
        verified[m.part_number] = m.verified
    return tuple(
        PartOptic(part_number=p, count=n, verified=verified[p]) for p, n in sorted(count.items())
    )


def parts_list(order: Order) -> PartsList:
    """What to order for the cabling of a topology (see the module docstring)."""
    cables = _cables(order)
    optics = _optics(order)
    return PartsList(
        cables=cables,
        optics=optics,
        cables_total=sum(c.count for c in cables),
        cable_metres_total=round(sum(c.count * c.length_m for c in cables), 1),
        optics_total=sum(o.count for o in optics),
    )


def parts_table(
    parts: PartsList, switches: list[tuple[str, int]], cost: Cost | None
) -> RenderableType:
    """The order list (cables by part and length, optics by part; with ``cost``, switches by
    catalog key first and each line's unit price and amount) as one rich table."""
    priced = {c.part_number: c for c in cost.lines} if cost else {}
    t = Table(title="To order (by part number and length)", title_justify="left")
    cols = [("Part", "left"), ("Medium", "left"), ("Length", "right"), ("Qty", "right")]
    if cost:
        cols += [("Unit price", "right"), ("Amount", "right")]
    for col, just in cols:
        t.add_column(col, justify=just)  # type: ignore[arg-type]

    def money_cells(part: str) -> list[str]:
        if not cost:
            return []
        c = priced.get(part)
        if c is None:
            return ["unpriced", ""]
        return [money(c.unit_price, cost.currency), money(c.amount, cost.currency)]

    if cost:
        for key, n in switches:
            t.add_row(key, "switch", "", f"{n:,}", *money_cells(key))
    for c in parts.cables:
        t.add_row(
            c.part_number + _mark(c.verified),
            c.medium,
            f"{c.length_m:g} m",
            f"{c.count:,}",
            *money_cells(c.part_number),
        )
    for o in parts.optics:
        cells = money_cells(o.part_number)
        t.add_row(o.part_number + _mark(o.verified), "optic", "", f"{o.count:,}", *cells)
    return t


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
            "\\* UNVERIFIED: SKU, length step, reach or power not confirmed against NVIDIA's "
            "documentation (fabric_stack/hardware/cables.py and optics.py give each source).",
        ]
    return lines


__all__ = ["PartCable", "PartOptic", "PartsList", "parts_list", "parts_markdown", "parts_table"]
