"""The legend under the fabric diagram (:mod:`fabric_stack.views.diagram`): rail colours,
line kinds with their counted cables, and notes on what is not drawn."""

from __future__ import annotations

from collections import Counter

from fabric_stack.topology.build import FabricTopology
from fabric_stack.views.svg import Canvas, plural, rail_colour

MANAGER_COLOUR = "#b26a00"
"""The legend's sample of a manager cable (drawn cables take their rail's colour)."""

__all__ = ["legend"]


def legend(
    cv: Canvas,
    x: float,
    y: float,
    w: float,
    rails: int,
    bundle: Counter[tuple[str, str]],
    access: Counter[str],
    topo: FabricTopology,
    per_su: bool = False,
) -> float:
    """Legend box under the drawing; returns its height."""
    p = topo.plan
    ls = max((n for (a, _), n in bundle.items() if a.endswith("-leaf")), default=0)
    sc = max((n for (a, _), n in bundle.items() if not a.endswith("-leaf")), default=0)
    rows: list[tuple[str, str]] = [
        ("nic", f"NIC → rail leaf: 1 cable, {p.link_gbps}G, in the rail's colour"),
        (
            "up",
            f"leaf → spine: one line per SU–spine pair, a bundle of {rails} leaves × {ls} "
            f"cable{'s' if ls != 1 else ''} × {p.link_gbps}G ({p.cables.leaf_spine:,} cables "
            "in all)"
            if per_su
            else f"leaf → spine: one line per leaf–spine pair, a bundle of {ls} cable"
            f"{'s' if ls != 1 else ''} × {p.link_gbps}G ({p.cables.leaf_spine:,} cables in all)",
        ),
    ]
    if p.tiers == 3:
        rows.append(
            (
                "upc",
                f"spine → core group: spine j of every pod → core group j; one line "
                f"per spine = {p.spine_up} cables × {p.link_gbps}G, {sc} to each core "
                f"({p.cables.spine_core:,} cables in all)",
            )
        )
    managers = sum(1 for d in topo.devices if d.role == "manager")
    if managers:
        cables = sum(1 for k in topo.links_of("manager_leaf") if k.plane == 1)
        rows.append(
            (
                "mgr",
                f"fabric manager → rail leaf: {plural(cables, 'cable')} per plane from "
                f"{plural(managers, 'manager')}, dashed, on SU {p.manager_su}'s rail leaves "
                f"({plural(p.manager_positions, 'server position')})",
            )
        )
    rows.append(("more", "dashed box: identical members not drawn"))
    chip_w = 62
    per_row = max(1, int((w - 100) // (chip_w + 8)))
    chip_rows = -(-rails // per_row)
    notes = []
    if p.planes == 2:
        notes.append(
            "Dual-plane: plane 2 (p2-* leaves, spines"
            + (", cores" if p.tiers == 3 else "")
            + ") mirrors plane 1 and is not drawn; each server has one NIC port per rail "
            "in each plane."
        )
    if access:
        titles = {"storage": "storage", "inband": "in-band", "oob": "OOB"}
        per = ", ".join(f"{n:,} {titles.get(role, role)}" for role, n in access.items())
        notes.append(
            f"Separate networks (not drawn): {per} access switches "
            f"({p.sus} SU{'s' if p.sus != 1 else ''})."
        )
    h = 30 + chip_rows * 26 + len(rows) * 20 + len(notes) * 18
    cv.rect(x, y, w, h, "legend", layer="frames")
    cv.label(x + 14, y + 20, "Legend", "legend-h", anchor="start")
    cx, cy = x + 100, y + 10
    for r in range(1, rails + 1):
        if (r - 1) and (r - 1) % per_row == 0:
            cx, cy = x + 100, cy + 26
        cv.rect(cx, cy, chip_w, 20, "leaf", fill=rail_colour(r, rails))
        cv.label(cx + chip_w / 2, cy + 14, f"rail {r}", "leaf-t")
        cx += chip_w + 8
    ly = y + 30 + chip_rows * 26
    for cls, text in rows:
        if cls == "more":
            cv.rect(x + 14, ly - 9, 40, 12, "more")
        elif cls == "nic":
            for i in range(min(rails, 4)):
                cv.line(
                    x + 14 + i * 10, ly, x + 20 + i * 10, ly - 10, "nic", rail_colour(i + 1, rails)
                )
        elif cls == "mgr":
            cv.line(x + 14, ly - 3, x + 54, ly - 3, cls, MANAGER_COLOUR)
        else:
            cv.line(x + 14, ly - 3, x + 54, ly - 3, cls)
        cv.label(x + 66, ly + 1, text, "legend-t", anchor="start")
        ly += 20
    for n in notes:
        cv.label(x + 14, ly + 1, n, "note", anchor="start")
        ly += 18
    return h
