"""Views of the physical plant: the run list per rack, rack elevations (SVG), the check.

All read :func:`fabric_stack.plant.plant_of` and the link list; nothing is recomputed.

Run list
--------
One row per cable end, grouped by rack in floor order (front row first, along the row):
a cable *leaves* the rack of its a-end and *arrives* at the rack of its b-end, so it is
listed in both racks' lists with the same labels. Within a rack the install order is
bottom RU first, then the device's ports in port order — the crew dresses cables from
the bottom of the rack up, so a later cable never has to be threaded under an earlier one.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any
from xml.sax.saxutils import escape

from fabric_stack.hardware.cables import cables_per_link
from fabric_stack.plant import PlantCheck, RackLoad, plant_of
from fabric_stack.plant.plan import RunSpec
from fabric_stack.topology.build import FabricTopology

RUN_COLUMNS: tuple[str, ...] = (
    "rack",
    "grid",
    "order",
    "direction",
    "device",
    "u",
    "port",
    "label",
    "far_device",
    "far_rack",
    "far_port",
    "far_label",
    "medium",
    "part_number",
    "length_m",
    "cable_id",
)
"""Columns of the run list (CSV and Markdown)."""

MAX_RACKS_DRAWN = 12
"""Racks drawn in the elevation SVG before the rest collapse into '… N more racks'."""


def _pull_part(spec: RunSpec, seen: dict[int, str]) -> str:
    """The part cell of a run: ``2x MFP7E10-N015`` when the link's family needs two
    straight fibres (an unsplit 800G twin-port OSFP port), so the pull list and the BOM
    count the same fibres. ``seen`` caches it per shared spec (few per plant)."""
    cell = seen.get(id(spec))
    if cell is None:
        n = cables_per_link(spec.family)
        cell = seen[id(spec)] = spec.part_number if n == 1 else f"{n}x {spec.part_number}"
    return cell


def run_rows(topo: FabricTopology) -> Iterator[tuple[Any, ...]]:
    """Run-list rows (:data:`RUN_COLUMNS` order): per rack in floor order, install order."""
    plant = plant_of(topo)
    by_name = {d.name: d for d in topo.devices}
    ends: dict[str, list[tuple[int, int, str, tuple[Any, ...]]]] = {}
    parts: dict[int, str] = {}
    for k, run in zip(topo.links, plant.runs, strict=True):
        a, b = by_name[k.a_device], by_name[k.b_device]
        common = (
            run.medium,
            _pull_part(run.spec, parts),
            f"{run.length_m:g}",
            k.id,
        )
        for here, port, num, label, far, fport, flabel, way in (
            (a, k.a_port, k.a_port_number, run.label_a, b, k.b_port, run.label_b, "leaves"),
            (b, k.b_port, k.b_port_number, run.label_b, a, k.a_port, run.label_a, "arrives"),
        ):
            row = (way, here.name, here.position, port, label, far.name, far.rack, fport, flabel)
            ends.setdefault(here.rack, []).append((here.position, num, here.name, row + common))
    for rack in plant.racks:
        items = ends.get(rack.place.name, [])
        items.sort(key=lambda t: (t[0], t[2], t[1]))
        for i, (_, _, _, row) in enumerate(items, start=1):
            yield (rack.place.name, rack.place.grid, i, *row)


def run_list_csv(topo: FabricTopology) -> str:
    """The run list as CSV (:data:`RUN_COLUMNS`)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(RUN_COLUMNS)
    w.writerows(run_rows(topo))
    return buf.getvalue()


def run_list_markdown(topo: FabricTopology) -> str:
    """The run list as Markdown: one table per rack, in install order."""
    out = [f"# Run list — {topo.plan.spec.name}", ""]
    current = ""
    for row in run_rows(topo):
        rack, grid = row[0], row[1]
        if rack != current:
            current = rack
            out += [
                "",
                f"## {rack} ({grid})",
                "",
                "| # | Way | Device | U | Port | Label | Far end | Far label | Part | m |",
                "|--:|---|---|--:|---|---|---|---|---|--:|",
            ]
        _, _, n, way, dev, u, port, label, far, far_rack, fport, flabel, _, part, m, _ = row
        out.append(
            f"| {n} | {way} | {dev} | {u} | {port} | {label} | {far} ({far_rack}) {fport} | "
            f"{flabel} | {part} | {m} |"
        )
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- elevations

_U_PX, _RACK_W, _GAP, _TOP = 12, 150, 28, 56
_FILL = {"server": "#4E79A7", "leaf": "#59A14F", "spine": "#F28E2B", "core": "#E15759"}


def _rack_svg(r: RackLoad, x: int) -> list[str]:
    """One rack: its frame, its devices by RU (U1 at the bottom), its power and units."""
    h = r.units * _U_PX
    over = r.over_power or r.over_units
    out = [
        f'<text x="{x + _RACK_W / 2}" y="{_TOP - 30}" text-anchor="middle" '
        f'font-weight="bold">{escape(r.place.name)}</text>',
        f'<text x="{x + _RACK_W / 2}" y="{_TOP - 14}" text-anchor="middle" '
        f'fill="{"#C00" if over else "#333"}">{escape(r.place.grid)} · {r.power_kw:g}/'
        f"{r.power_budget_kw:g} kW · {r.units_occupied}/{r.units} U</text>",
        f'<rect x="{x}" y="{_TOP}" width="{_RACK_W}" height="{h}" fill="#F4F4F4" stroke="#333"/>',
    ]
    for d in r.devices:
        y = _TOP + h - (d.position - 1 + d.height_u) * _U_PX
        fill = _FILL.get(d.role, "#9C755F")
        out.append(
            f'<rect x="{x + 4}" y="{y + 1}" width="{_RACK_W - 8}" '
            f'height="{d.height_u * _U_PX - 2}" fill="{fill}" stroke="#222">'
            f"<title>{escape(d.name)} · U{d.position} · {d.power.watts:,} W</title></rect>"
        )
        out.append(
            f'<text x="{x + 8}" y="{y + min(d.height_u * _U_PX, 14) - 3}" fill="#FFF" '
            f'font-size="10">U{d.position} {escape(d.name)}</text>'
        )
    return out


def elevations_svg(topo: FabricTopology) -> str:
    """Rack elevations as one SVG: devices by RU and power per rack, racks in floor order.

    Past :data:`MAX_RACKS_DRAWN` racks the first ones are drawn and the rest counted.
    """
    racks = plant_of(topo).racks
    drawn = racks[:MAX_RACKS_DRAWN]
    units = max((r.units for r in drawn), default=42)
    w = len(drawn) * (_RACK_W + _GAP) + _GAP
    h = _TOP + units * _U_PX + 40
    body = []
    for i, r in enumerate(drawn):
        body += _rack_svg(r, _GAP + i * (_RACK_W + _GAP))
    if len(racks) > len(drawn):
        body.append(
            f'<text x="{_GAP}" y="{h - 12}">… {len(racks) - len(drawn):,} more racks '
            "(fabric-stack layout --check lists every rack over budget)</text>"
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">\n'
        f"<title>Rack elevations — {escape(topo.plan.spec.name)}</title>\n"
        + "\n".join(body)
        + "\n</svg>\n"
    )


# --------------------------------------------------------------------------- check


def check_json(check: PlantCheck) -> str:
    """The layout check as JSON."""
    data = {
        "name": check.name,
        "passed": check.passed,
        "racks": check.racks,
        "cables": check.cables,
        "media": check.media,
        "unverified_parts": check.unverified_parts,
        "problems": list(check.problems),
        "longest": [vars(r) for r in check.longest],
    }
    return json.dumps(data, indent=2) + "\n"


def check_markdown(check: PlantCheck) -> str:
    """The layout check as Markdown."""
    verdict = "all racks within budget, every cable within reach" if check.passed else "PROBLEMS"
    media = ", ".join(f"{n:,} {m}" for m, n in check.media.items())
    out = [
        f"### Layout check — {check.name}",
        "",
        f"{check.racks:,} racks, {check.cables:,} cables ({media}): **{verdict}**; "
        f"{check.unverified_parts:,} cables use a part marked UNVERIFIED in the catalog.",
        "",
    ]
    if check.problems:
        out += [*(f"- {p}" for p in check.problems), ""]
    out += [
        "| Longest runs | From | To | Length | Medium | Part | Reach |",
        "|---|---|---|--:|---|---|--:|",
    ]
    out += [
        f"| {r.cable_id} | {r.a_device} | {r.b_device} | {r.length_m:g} m | {r.medium} | "
        f"{r.part_number} | {r.reach_m:g} m |"
        for r in check.longest
    ]
    return "\n".join(out) + "\n"


__all__ = [
    "MAX_RACKS_DRAWN",
    "RUN_COLUMNS",
    "check_json",
    "check_markdown",
    "elevations_svg",
    "run_list_csv",
    "run_list_markdown",
    "run_rows",
]
