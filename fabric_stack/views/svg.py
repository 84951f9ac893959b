"""SVG drawing primitives of the fabric diagram: a layered canvas, boxes, rows, the document.

:mod:`fabric_stack.views.diagram` lays the fabric out; this module knows how to draw a
box, a row of switch boxes collapsed with "… N more", and the final document. Geometry
and collapse limits are here so both modules agree on them.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from fabric_stack.topology.build import Device

# Tableau-10-like palette (distinct in print and for most colour-vision types),
# rail 1 first; rails beyond it get evenly spaced hues.
RAIL_COLOURS: tuple[str, ...] = (
    "#4E79A7",
    "#F28E2B",
    "#E15759",
    "#76B7B2",
    "#59A14F",
    "#EDC948",
    "#B07AA1",
    "#FF9DA7",
    "#9C755F",
    "#2F4B7C",
)
"""Fill colour of rail 1, 2, … (leaf boxes and NIC-to-leaf cables)."""

MAX_SUS = 4
"""SUs drawn in two tiers before collapsing (first two, '… N more', last)."""
MAX_PODS = 2
"""Pods drawn in three tiers before collapsing (first, '… N more', last)."""
MAX_SUS_PER_POD = 2
"""SUs drawn inside a pod before collapsing."""
MAX_SERVERS = 8
"""Servers drawn per SU before collapsing (first four, '… N more', last two)."""
MAX_SPINES = 12
"""Spines drawn in the two-tier spine row before collapsing."""
MAX_PAIR_LINES = 160
"""Above this many leaf–spine pairs drawn, bundles are drawn per SU instead of per leaf."""
MAX_POD_SPINES = 8
"""Spines drawn per pod (three tiers) before collapsing."""
MAX_CORE_GROUPS = 10
"""Core-group boxes drawn before collapsing."""

# Geometry (px).
MARGIN = 40
LEAF_W, LEAF_H, LEAF_GAP = 66, 34, 8
SRV_W, SRV_H, SRV_GAP = 62, 40, 8
SPINE_W, SPINE_H, SPINE_GAP = 72, 32, 8
CORE_W, CORE_H, CORE_GAP = 118, 38, 10
ELLIPSIS_W = 104
SU_PAD = 12
SU_LABEL_H = 26
NODE_LEAF_GAP = 96
POD_PAD = 16
POD_LABEL_H = 28
TIER_GAP = 100


def rail_colour(rail: int, rails: int) -> str:
    """Colour of rail ``rail`` (1-based) in a fabric of ``rails`` rails."""
    if rails <= len(RAIL_COLOURS):
        return RAIL_COLOURS[rail - 1]
    r, g, b = colorsys.hls_to_rgb((rail - 1) / rails, 0.45, 0.55)
    return f"#{int(r * 255):02X}{int(g * 255):02X}{int(b * 255):02X}"


@dataclass
class Item:
    """A drawn box: a device, or an ellipsis standing for ``hidden`` devices."""

    x: float
    y: float
    w: float
    h: float
    device: Device | None = None
    hidden: int = 0
    label: str = ""

    @property
    def cx(self) -> float:
        return self.x + self.w / 2


@dataclass
class Canvas:
    """Accumulates SVG elements in layers (frames under lines under boxes)."""

    frames: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    boxes: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        cls: str,
        fill: str | None = None,
        title: str | None = None,
        layer: str = "boxes",
    ) -> None:
        style = f' fill="{fill}"' if fill else ""
        tip = f"<title>{escape(title)}</title>" if title else ""
        getattr(self, layer).append(
            f'<rect class="{cls}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'rx="4"{style}>{tip}</rect>'
        )

    def label(self, x: float, y: float, text: str, cls: str, anchor: str = "middle") -> None:
        self.text.append(
            f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">'
            f"{escape(text)}</text>"
        )

    def line(
        self, x1: float, y1: float, x2: float, y2: float, cls: str, colour: str | None = None
    ) -> None:
        stroke = f' stroke="{colour}"' if colour else ""
        self.lines.append(
            f'<line class="{cls}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"{stroke}/>'
        )


def sample(items: list[Device], most: int, tail: int = 1) -> list[Device | int]:
    """All items when at most ``most``; else the first ones, the hidden count, the last ``tail``.

    The result has ``most`` entries in all, the hidden count (an int) among them.
    """
    if len(items) <= most:
        return list(items)
    head = max(most - 1 - tail, 1)
    hidden = len(items) - head - tail
    return [*items[:head], hidden, *items[len(items) - tail :]]


def plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def short(name: str) -> str:
    """Server label inside its SU frame: 'node07' for 'su1-node07'."""
    return name.split("-", 1)[1] if "-" in name else name


STYLE = """
text { font-family: 'DejaVu Sans', 'Helvetica Neue', Arial, sans-serif; fill: #1f2933; }
.title { font-size: 22px; font-weight: bold; }
.subtitle { font-size: 13px; fill: #52606d; }
.tier { font-size: 12px; font-weight: bold; fill: #7b8794; letter-spacing: 1px; }
.frame-su { fill: #f5f7fa; stroke: #9aa5b1; stroke-width: 1; }
.frame-pod { fill: #fbfcfd; stroke: #52606d; stroke-width: 1.5; stroke-dasharray: 6 3; }
.frame-label { font-size: 12px; font-weight: bold; fill: #323f4b; }
.frame-sub { font-size: 10px; fill: #616e7c; }
.leaf { stroke: #1f2933; stroke-width: 0.8; }
.leaf-t { font-size: 11px; font-weight: bold; fill: #ffffff; }
.leaf-s { font-size: 8px; fill: #ffffff; }
.server { fill: #ffffff; stroke: #52606d; stroke-width: 1; }
.server-t { font-size: 11px; font-weight: bold; }
.server-s { font-size: 9px; fill: #616e7c; }
.spine { fill: #3e4c59; stroke: #1f2933; stroke-width: 0.8; }
.spine-s { font-size: 8px; fill: #ffffff; }
.manager { fill: #fff4e5; stroke: #b26a00; stroke-width: 1.2; }
.manager-t { font-size: 11px; font-weight: bold; fill: #7a4a00; }
.manager-s { font-size: 9px; fill: #7a4a00; }
.mgr { stroke-width: 1.3; stroke-dasharray: 5 3; fill: none; }
.spine-t { font-size: 11px; font-weight: bold; fill: #ffffff; }
.core { fill: #6b4fa0; stroke: #3d2a66; stroke-width: 0.8; }
.core-t { font-size: 11px; font-weight: bold; fill: #ffffff; }
.core-s { font-size: 9px; fill: #e6defa; }
.more { fill: #ffffff; stroke: #7b8794; stroke-width: 1; stroke-dasharray: 4 3; }
.more-t { font-size: 11px; fill: #52606d; font-style: italic; }
.nic { stroke-width: 1.3; stroke-opacity: 0.85; fill: none; }
.up { stroke: #7b8794; stroke-width: 1; stroke-opacity: 0.55; }
.upc { stroke: #6b4fa0; stroke-width: 1.2; stroke-opacity: 0.6; }
.legend { fill: #ffffff; stroke: #cbd2d9; stroke-width: 1; }
.legend-h { font-size: 12px; font-weight: bold; }
.legend-t { font-size: 11px; }
.note { font-size: 11px; fill: #52606d; }
"""


def collapse(items: list[int], keep: int, head: int) -> list[int | tuple[int]]:
    """Like :func:`sample` for plain ints; the hidden count comes back as a 1-tuple."""
    if len(items) <= keep:
        return list(items)
    tail = max(keep - head - 1, 1)
    hidden = len(items) - head - tail
    return [*items[:head], (hidden,), *items[len(items) - tail :]]


def row_width(sampled: list[Device | int], w: float) -> float:
    """Width of a row drawn by :func:`row`."""
    return sum(w if not isinstance(s, int) else ELLIPSIS_W for s in sampled) + SPINE_GAP * (
        len(sampled) - 1
    )


def row(
    cv: Canvas,
    sampled: list[Device | int],
    y: float,
    center: float,
    w: float,
    h: float,
    cls: str,
    noun: str,
) -> list[Item]:
    """Draw a centred row of switch boxes (ints are '… N more' boxes); return the items."""
    widths = [w if not isinstance(s, int) else ELLIPSIS_W for s in sampled]
    x = center - row_width(sampled, w) / 2
    items: list[Item] = []
    for s, bw in zip(sampled, widths, strict=True):
        if isinstance(s, int):
            cv.rect(x, y, bw, h, "more")
            cv.label(x + bw / 2, y + h / 2 + 4, f"… {s:,} more {noun}", "more-t")
            items.append(Item(x, y, bw, h, hidden=s))
        else:
            cv.rect(x, y, bw, h, cls, title=s.name)
            # A site name is shown whole; a plan name as its last two parts, with its
            # pod (or plane) prefix under them: pod1's spine-01 is not pod32's.
            base = s.name if s.planned else "-".join(s.name.rsplit("-", 2)[-2:])
            prefix = s.name[: -len(base)].rstrip("-")
            if prefix:
                cv.label(x + bw / 2, y + h / 2 - 1, base, f"{cls}-t")
                cv.label(x + bw / 2, y + h / 2 + 10, prefix, f"{cls}-s")
            else:
                cv.label(x + bw / 2, y + h / 2 + 4, base, f"{cls}-t")
            items.append(Item(x, y, bw, h, device=s))
        x += bw + SPINE_GAP
    return items


def spine_row(
    cv: Canvas, spines: list[Device], y: float, center: float, width: float
) -> list[Item]:
    """The spines of a pod (or of the fabric) in a row as wide as ``width`` allows."""
    fit = max(3, int((max(width, 3 * SPINE_W) + SPINE_GAP) // (SPINE_W + SPINE_GAP)))
    return row(
        cv,
        sample(spines, min(MAX_POD_SPINES, fit)),
        y,
        center,
        SPINE_W,
        SPINE_H,
        "spine",
        "spines",
    )


def document(cv: Canvas, w: float, h: float) -> str:
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.0f} {h:.0f}">\n<style>{STYLE}</style>\n'
        f'<rect x="0" y="0" width="{w:.0f}" height="{h:.0f}" fill="#ffffff"/>\n'
    )
    body = "\n".join([*cv.frames, *cv.lines, *cv.boxes, *cv.text])
    return head + body + "\n</svg>\n"
