"""Renderers for `whatif` and `estimate`: rich tables, markdown, JSON and an SVG plot.

Pure functions of :class:`~fabric_stack.analysis.whatif.WhatIfResult` and
:class:`~fabric_stack.analysis.estimate.Estimate`; nothing is recomputed here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.analysis.estimate import Estimate
from fabric_stack.analysis.whatif import WhatIfResult

Scenario = tuple[str, Estimate]
"""A labelled estimate (one line of a comparison)."""


def size_label(n: int) -> str:
    """Bytes in nccl-tests' binary units: 1048576 → '1M'."""
    for unit, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return str(n)


def _pct(x: float) -> str:
    return f"{x:g}%"


# --------------------------------------------------------------------------- whatif


def whatif_json(r: WhatIfResult) -> dict[str, Any]:
    """The stable JSON shape (docs/whatif-estimate.md: failed, bisection_tbps, ecmp, …)."""
    return r.model_dump(mode="json")


def _whatif_rows(r: WhatIfResult) -> list[tuple[str, str]]:
    b = r.bisection_tbps
    lost = 100 * (b.before - b.after) / b.before if b.before else 0.0
    iso = r.isolated
    e = r.ecmp
    c = r.capacity_lost_pct
    rows = [
        (
            "failed",
            ", ".join(
                f"{f.target} ({f.kind}, {f.role}, {f.cables} cable{'s' * (f.cables != 1)})"
                for f in r.failed
            )
            or "nothing",
        ),
        ("bisection", f"{b.before:g} → {b.after:g} Tb/s (−{lost:.3g}%)"),
        (
            "isolated",
            f"{iso.gpus} GPUs, {iso.servers} servers"
            + (f"; by rail {iso.by_rail}" if iso.by_rail else ""),
        ),
        ("rails without leaf", ", ".join(iso.rails_without_leaf) or "none"),
        ("leaves cut off", ", ".join(iso.leaves_cut_off) or "none"),
        (
            "ECMP width",
            "no leaf pairs (one SU, one leaf per rail)"
            if e.min is None
            else f"min {e.min}, median {e.median:g} of {e.healthy} ({e.degraded_pairs:,} of "
            f"{e.pairs:,} leaf pairs narrower)",
        ),
        (
            "capacity lost",
            f"node–leaf {_pct(c.node_leaf)}, leaf–spine {_pct(c.leaf_spine)}, "
            f"spine–core {_pct(c.spine_core)}",
        ),
    ]
    if r.traffic:
        rows.append(("spine grouping", r.traffic))
    if e.worst:
        rows.append(
            (
                "narrowest pairs",
                ", ".join(f"SU{w.su_a}↔SU{w.su_b} rail {w.rail}: {w.width}" for w in e.worst[:5]),
            )
        )
    return rows


def _nm1_rows(r: WhatIfResult, limit: int) -> list[tuple[str, ...]]:
    return [
        (
            str(x.rank),
            x.target,
            x.role,
            str(x.equivalent),
            f"{x.bisection_tbps:g}",
            f"{x.bisection_lost_pct:g}%",
            str(x.isolated_gpus),
            "-" if x.ecmp_min is None else str(x.ecmp_min),
        )
        for x in r.n_minus_1[:limit]
    ]


_NM1_HEAD = ("#", "fails", "role", "like it", "bisection Tb/s", "lost", "isolated GPUs", "ECMP min")


def worst_of_each_kind(r: WhatIfResult) -> list[str]:
    """One line per role (leaf, spine, core, cable roles): its worst single failure."""
    seen: dict[str, str] = {}
    for x in r.n_minus_1:  # ranked worst first, so the first of a role is its worst
        if x.role not in seen:
            seen[x.role] = (
                f"{x.role}: {x.target} (bisection −{x.bisection_lost_pct:g}%, "
                f"{x.isolated_gpus} GPUs isolated, ECMP min "
                f"{'-' if x.ecmp_min is None else x.ecmp_min})"
            )
    return list(seen.values())


def render_whatif(r: WhatIfResult, limit: int = 20) -> RenderableType:
    """Rich tables: the effect of the failures, then the ranked N−1 table."""
    t = Table(title=f"What if — {r.name} ({r.gpus:,} GPUs)", show_header=False)
    t.add_column(style="bold")
    t.add_column()
    for k, v in _whatif_rows(r):
        t.add_row(k, v)
    parts: list[RenderableType] = [t]
    if r.n_minus_1:
        n = Table(title=f"N−1 ({r.n_minus_1_scope}): worst single failures first")
        for h in _NM1_HEAD:
            text = h in ("fails", "role")
            n.add_column(h, justify="left" if text else "right", no_wrap=text)
        for row in _nm1_rows(r, limit):
            n.add_row(*row)
        parts.append(n)
        if len(r.n_minus_1) > limit:
            parts.append(Text(f"… {len(r.n_minus_1) - limit} more (--format json for all)"))
        parts.append(
            Text("Worst of each kind:\n" + "\n".join(f"  • {w}" for w in worst_of_each_kind(r)))
        )
    return Group(*parts)


def whatif_markdown(r: WhatIfResult, limit: int = 50) -> str:
    """Markdown for a pull request or a change ticket."""
    out = [f"### What if — {r.name} ({r.gpus:,} GPUs)", "", "| | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in _whatif_rows(r)]
    if r.n_minus_1:
        out += [
            "",
            f"#### N−1 ({r.n_minus_1_scope})",
            "",
            "| " + " | ".join(_NM1_HEAD) + " |",
            "|" + "---|" * len(_NM1_HEAD),
        ]
        out += ["| " + " | ".join(row) + " |" for row in _nm1_rows(r, limit)]
        out += ["", "Worst of each kind:", ""] + [f"- {w}" for w in worst_of_each_kind(r)]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- estimate


def estimate_json(scenarios: Sequence[Scenario]) -> dict[str, Any]:
    """One scenario: the Estimate itself; several: ``{"scenarios": [{label, …}]}``."""
    if len(scenarios) == 1:
        return scenarios[0][1].model_dump(mode="json")
    return {"scenarios": [{"label": k, **e.model_dump(mode="json")} for k, e in scenarios]}


def _title(e: Estimate) -> str:
    j = e.job
    pods = f", {j.pods} pods" if j.pods > 1 else ""
    sus = f"{j.sus} SU{'s' * (j.sus > 1)}"
    return f"{e.collective} — {j.gpus:,} GPUs on {j.nodes:,} servers, {sus}{pods}"


def _us(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1e6:,.1f}"


def _assumptions(scenarios: Sequence[Scenario]) -> list[str]:
    """Every scenario's assumptions, each once, in order (labelled when they differ)."""
    seen: dict[str, None] = {}
    for label, e in scenarios:
        for a in e.assumptions:
            shared = all(a in other.assumptions for _, other in scenarios)
            seen.setdefault(a if shared or len(scenarios) == 1 else f"{label}: {a}", None)
    return list(seen)


def render_estimate(scenarios: Sequence[Scenario]) -> RenderableType:
    """Rich table per scenario, nccl-tests columns, then the assumptions."""
    parts: list[RenderableType] = []
    for label, e in scenarios:
        t = Table(
            title=f"{label + ': ' if len(scenarios) > 1 or label != 'healthy' else ''}{_title(e)}"
        )
        for h in ("size", "time (µs)", "algbw GB/s", "busbw GB/s", "algorithm"):
            t.add_column(h, justify="left" if h == "algorithm" else "right")
        for p in e.points:
            t.add_row(
                size_label(p.bytes),
                "—" if p.time_s is None else f"{p.time_s * 1e6:,.1f}",
                f"{p.algbw_gbs:,.2f}",
                f"{p.busbw_gbs:,.2f}",
                p.algorithm,
            )
        parts.append(t)
    parts.append(Text("Assumptions:\n" + "\n".join(f"  • {a}" for a in _assumptions(scenarios))))
    return Group(*parts)


def estimate_markdown(scenarios: Sequence[Scenario]) -> str:
    """Markdown table(s) and the assumptions."""
    out: list[str] = []
    for label, e in scenarios:
        out += [
            f"### {label + ': ' if len(scenarios) > 1 or label != 'healthy' else ''}{_title(e)}",
            "",
            "| size | time (µs) | algbw GB/s | busbw GB/s | algorithm |",
            "|---:|---:|---:|---:|---|",
        ]
        out += [
            f"| {size_label(p.bytes)} | {_us(p.time_s)} | {p.algbw_gbs:,.2f} | "
            f"{p.busbw_gbs:,.2f} | {p.algorithm} |"
            for p in e.points
        ]
        out.append("")
    out += ["Assumptions:", ""] + [f"- {a}" for a in _assumptions(scenarios)]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- SVG

_COLOURS = ("#0b6e4f", "#b3261e", "#1f5fbf", "#b26a00", "#6a3d9a", "#444444")


def estimate_svg(scenarios: Sequence[Scenario], title: str = "") -> str:
    """busbw against message size (log x), one line per scenario. Self-contained SVG."""
    w, h, left, right, top, bottom = 720, 420, 70, 200, 50, 55
    pw, ph = w - left - right, h - top - bottom
    xs = sorted({p.bytes for _, e in scenarios for p in e.points})
    ymax = max((p.busbw_gbs for _, e in scenarios for p in e.points), default=1.0) or 1.0
    step = _nice_step(ymax)
    ytop = step * math.ceil(ymax / step)
    lx0, lx1 = math.log2(xs[0]), math.log2(xs[-1]) if xs[-1] > xs[0] else math.log2(xs[0]) + 1

    def x(b: int) -> float:
        return left + pw * (math.log2(b) - lx0) / (lx1 - lx0)

    def y(v: float) -> float:
        return top + ph * (1 - v / ytop)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="Helvetica,Arial,sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="#fff"/>',
        f'<text x="{left}" y="24" font-size="15" font-weight="bold">'
        f"{escape(title or _title(scenarios[0][1]))}</text>",
    ]
    v = 0.0
    while v <= ytop + 1e-9:
        out.append(
            f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + pw}" y2="{y(v):.1f}" stroke="#e3e6ea"/>'
        )
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
        v += step
    for b in xs:
        out.append(
            f'<text x="{x(b):.1f}" y="{top + ph + 18}" text-anchor="middle">{size_label(b)}</text>'
        )
    out += [
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#333"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="#333"/>',
        f'<text x="{left + pw / 2}" y="{h - 12}" text-anchor="middle">'
        "message size (bytes, log scale)</text>",
        f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {top + ph / 2})">busbw (GB/s)</text>',
    ]
    for k, (label, e) in enumerate(scenarios):
        colour = _COLOURS[k % len(_COLOURS)]
        pts = " ".join(f"{x(p.bytes):.1f},{y(p.busbw_gbs):.1f}" for p in e.points)
        dash = ' stroke-dasharray="6 4"' if k % 2 else ""
        out.append(
            f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2.5"{dash}/>'
        )
        out += [
            f'<circle cx="{x(p.bytes):.1f}" cy="{y(p.busbw_gbs):.1f}" r="3" fill="{colour}"/>'
            for p in e.points
        ]
        ly = top + 16 + 36 * k
        out.append(
            f'<line x1="{left + pw + 16}" y1="{ly}" x2="{left + pw + 40}" y2="{ly}" '
            f'stroke="{colour}" stroke-width="2.5"{dash}/>'
        )
        last = e.points[-1].busbw_gbs if e.points else 0
        out.append(
            f'<text x="{left + pw + 46}" y="{ly + 4}">{escape(label)}</text>'
            f'<text x="{left + pw + 46}" y="{ly + 17}" fill="#5b6877" font-size="11">'
            f"{last:.1f} GB/s at {size_label(e.points[-1].bytes)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _nice_step(ymax: float) -> float:
    raw = ymax / 6
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


__all__ = [
    "estimate_json",
    "estimate_markdown",
    "estimate_svg",
    "render_estimate",
    "render_whatif",
    "size_label",
    "whatif_json",
    "whatif_markdown",
]
