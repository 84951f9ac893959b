"""The design report's physical-plant section: rack elevations (SVG) and rack budgets.

Self-contained: reads :func:`fabric_stack.plant.plant_of` and
:func:`fabric_stack.views.plant.elevations_svg`; the report only places the section.
"""

from __future__ import annotations

import re
from html import escape

from fabric_stack.plant import check_plant, plant_of
from fabric_stack.topology.build import FabricTopology
from fabric_stack.views.plant import MAX_RACKS_DRAWN, elevations_svg


def render_plant_section(topo: FabricTopology) -> str:
    """Rack elevations scaled to the page, then each drawn rack's units and power."""
    plant = plant_of(topo, strict=False)
    check = check_plant(topo, plant)
    svg = elevations_svg(topo).strip()
    head, rest = svg.split(">", 1)
    head = re.sub(r' width="\d+" height="\d+"', ' width="100%"', head, count=1)
    rows = "".join(
        f"<tr><td>{escape(r.place.name)}</td><td>{escape(r.place.grid)}</td>"
        f'<td class="num">{r.units_occupied}/{r.units}</td>'
        f'<td class="num">{r.power_kw:g}/{r.power_budget_kw:g}</td></tr>'
        for r in plant.racks[:MAX_RACKS_DRAWN]
    )
    verdict = (
        "every rack within its power and rack-unit budget, every cable within its reach"
        if check.passed
        else f"{len(check.problems):,} problem(s): " + escape("; ".join(check.problems[:3]))
    )
    return (
        f"<p>{len(plant.racks):,} racks, {len(plant.runs):,} cables: {verdict}. "
        "Lengths, media, part numbers and labels per cable: "
        "<code>fabric-stack cabling</code>; run list per rack: "
        "<code>fabric-stack layout --run-list</code>.</p>"
        f'<div class="diagram">{head}>{rest}</div>'
        "<table><thead><tr><th>Rack</th><th>Grid</th><th>U used</th><th>kW / budget</th>"
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )


__all__ = ["render_plant_section"]
