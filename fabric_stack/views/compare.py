"""`fabric-stack compare` views: a terminal table, JSON, a decision record, an SVG chart.

Each view reads a :class:`~fabric_stack.views.options.Comparison`; none recomputes a
figure. The Markdown is a decision record for a pull request: context, the options in one
table, the decision with its reasons, the consequences (what the chosen fabric needs to
operate), and the sources of the latency figures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.views.costs import money
from fabric_stack.views.options import CandidateResult, Comparison, size_label
from fabric_stack.views.whatif import estimate_svg

Row = tuple[str, Callable[[CandidateResult], str]]


def _counts(d: dict[str, int]) -> str:
    return ", ".join(f"{n:,} × {k}" for k, n in d.items()) or "—"


def _cost(c: CandidateResult) -> str:
    if c.cost is None:
        return "— (no --prices)"
    return money(c.cost.total, c.cost.currency) + (
        f" ({len(c.cost.unpriced)} parts unpriced)" if c.cost.unpriced else ""
    )


def option_rows(cmp: Comparison) -> list[Row]:
    """(criterion, cell per candidate) for the options table, every format alike."""
    big = size_label(cmp.sizes[-1])
    return [
        ("tiers", lambda c: str(c.tiers)),
        (
            "compute switches",
            lambda c: ", ".join(f"{n:,} {t}" for t, n in c.switches_by_tier.items() if n),
        ),
        ("switches by model", lambda c: _counts(c.switches)),
        ("two-tier ceiling", lambda c: f"{c.two_tier_max_gpus:,} GPUs"),
        ("cables", lambda c: f"{sum(c.cables.values()):,} ({len(c.cables)} part numbers)"),
        ("optics", lambda c: _counts(c.optics)),
        ("power", lambda c: f"{c.power_w:,} W"),
        (
            "latency, longest path",
            lambda c: (
                f"{c.latency_us:.2f} µs ({c.latency.switch_hops} × "
                f"{c.latency.switch_ns} ns + NICs {c.latency.nic_ns} ns)"
                + ("" if c.latency.verified else " UNVERIFIED")
            ),
        ),
        (
            f"all-reduce busbw {big}",
            lambda c: f"{c.allreduce_busbw_gbs:,.1f} GB/s" + (" (SHARP)" if c.sharp else ""),
        ),
        (f"all-to-all busbw {big}", lambda c: f"{c.alltoall_busbw_gbs:,.1f} GB/s"),
        ("adaptive routing", lambda c: "on" if c.adaptive_routing else "off"),
        ("control plane", lambda c: "; ".join(c.operations.control_plane)),
        ("on every switch", lambda c: "; ".join(c.operations.every_hop) or "nothing to tune"),
        ("on every host", lambda c: "; ".join(c.operations.every_host) or "nothing to tune"),
        ("cost", _cost),
        ("score", lambda c: f"{cmp.recommendation.scores[c.label]['total']:.3f}"),
    ]


def compare_json(cmp: Comparison) -> dict[str, Any]:
    """The comparison as JSON (the estimates' per-size points included)."""
    return cmp.model_dump(mode="json")


def compare_table(cmp: Comparison) -> RenderableType:
    """The options side by side, then the recommendation and its reasons."""
    rec = cmp.recommendation
    t = Table(title=f"{cmp.name}: {cmp.gpus:,} GPUs — fabric options")
    t.add_column("")
    for c in cmp.candidates:
        mark = " ✓" if c.fabric == rec.fabric and c.switch == rec.switch else ""
        t.add_column(c.label + mark)
    for name, cell in option_rows(cmp):
        t.add_row(name, *(cell(c) for c in cmp.candidates))
    reasons = Text()
    for r in rec.reasons:
        reasons.append("• " + r + "\n")
    weights = ", ".join(f"{k} {v:.2f}" for k, v in cmp.weights.model_dump().items())
    return Group(
        t,
        Text(f"Recommendation: {rec.fabric} on {rec.switch} (weights {weights})", style="bold"),
        reasons,
    )


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def compare_markdown(cmp: Comparison) -> str:
    """A decision record: context, options, decision, consequences, sources."""
    rec = cmp.recommendation
    win = next(c for c in cmp.candidates if c.fabric == rec.fabric and c.switch == rec.switch)
    weights = ", ".join(f"{k} {v:.2f}" for k, v in cmp.weights.model_dump().items())
    out = [
        f"# Decision: {win.title} for {cmp.name}",
        "",
        "## Context",
        "",
        f"{cmp.gpus:,} GPUs. Each option below is the same cluster planned with the whole "
        "pipeline (`size`, `cabling`, `bom`, `estimate`) on that fabric and switch. "
        f"Weights: {weights}.",
        "",
        "## Options",
        "",
        "| | " + " | ".join(c.label for c in cmp.candidates) + " |",
        "|---|" + "---|" * len(cmp.candidates),
    ]
    out += [
        f"| {name} | " + " | ".join(_md_cell(cell(c)) for c in cmp.candidates) + " |"
        for name, cell in option_rows(cmp)
    ]
    out += ["", "## Decision", "", rec.paragraph, ""]
    out += [f"- {_md_cell(r)}" for r in rec.reasons]
    ops = win.operations
    out += [
        "",
        "## Consequences",
        "",
        f"- Run: {'; '.join(ops.control_plane)}.",
        f"- Keep identical on all {ops.switches:,} fabric switches: "
        + ("; ".join(ops.every_hop) or "nothing beyond the subnet manager's own settings")
        + ".",
        f"- Keep identical on all {ops.hosts:,} servers: "
        + ("; ".join(ops.every_host) or "nothing fabric-specific")
        + ".",
        f"- Tooling: {', '.join(ops.tooling)}.",
        "",
        "## Sources",
        "",
    ]
    seen: list[str] = []
    for c in cmp.candidates:
        seen += [s for s in c.latency.sources if s not in seen]
    out += [f"- {s}" for s in seen]
    out.append(
        "- Estimates: `fabric-stack estimate`'s model (docs/calibration.md); all-reduce "
        "with SHARP per NVIDIA/nccl#320 (calibration row S1)."
    )
    return "\n".join(out) + "\n"


def compare_svg(cmp: Comparison) -> str:
    """All-reduce and all-to-all busbw against size, one line per candidate and collective."""
    scenarios = []
    for c in cmp.candidates:
        scenarios.append((f"{c.label} all-reduce", c.allreduce))
        scenarios.append((f"{c.label} all-to-all", c.alltoall))
    return estimate_svg(scenarios, title=f"{cmp.name}: {cmp.gpus:,} GPUs — fabric options")
