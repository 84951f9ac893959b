"""Deciding between fabric options: criteria scores, weights, reasons.

Each criterion scores a candidate against the best one (1.0 = best; higher-is-better
figures as value ÷ best, lower-is-better ones as best ÷ value); the weighted sum decides and
the reasons quote the figures that did (the criteria: :mod:`fabric_stack.views.options`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fabric_stack.views.options_model import (
    CRITERIA,
    CandidateResult,
    Recommendation,
    Weights,
)


def _ratio(values: Sequence[float], higher_better: bool) -> list[float]:
    """Each value against the best: value/best (higher better) or best/value."""
    if higher_better:
        best = max(values)
        return [v / best if best > 0 else 1.0 for v in values]
    best = min(values)
    return [best / v if v > 0 else 1.0 for v in values]


def score_criteria(cands: Sequence[CandidateResult]) -> dict[str, list[float] | None]:
    """Per criterion, a score per candidate (1 = best); None when it cannot be scored."""
    perf_parts = [
        _ratio([c.allreduce_busbw_gbs for c in cands], True),
        _ratio([c.alltoall_busbw_gbs for c in cands], True),
        _ratio([c.latency_us for c in cands], False),
    ]
    costs = [c.cost.total if c.cost and not c.cost.unpriced else None for c in cands]
    priced = all(t is not None and t > 0 for t in costs)
    return {
        "performance": [sum(p[i] for p in perf_parts) / 3 for i in range(len(cands))],
        "cost": _ratio([t or 0.0 for t in costs], False) if priced else None,
        "operations": _ratio([float(c.operations.burden) for c in cands], False),
        "headroom": _ratio([float(c.two_tier_max_gpus) for c in cands], True),
    }


def _figures(criterion: str, cands: Sequence[CandidateResult], size: str) -> str:
    """The figures behind a criterion, one per candidate."""

    def each(fmt: Callable[[CandidateResult], str]) -> str:
        return "; ".join(f"{c.label} {fmt(c)}" for c in cands)

    if criterion == "performance":
        return (
            f"all-reduce busbw at {size}: "
            + each(lambda c: f"{c.allreduce_busbw_gbs:,.1f} GB/s" + (" (SHARP)" if c.sharp else ""))
            + f"; all-to-all at {size}: "
            + each(lambda c: f"{c.alltoall_busbw_gbs:,.1f} GB/s")
            + "; longest-path latency: "
            + each(lambda c: f"{c.latency_us:.2f} µs")
        )
    if criterion == "cost":
        return "priced BOM: " + each(
            lambda c: f"{c.cost.total:,.2f} {c.cost.currency}" if c.cost else "—"
        )
    if criterion == "operations":
        return "things to run or keep identical: " + each(
            lambda c: (
                f"{c.operations.burden} ({len(c.operations.every_hop)} per switch × "
                f"{c.operations.switches:,}, {len(c.operations.every_host)} per host × "
                f"{c.operations.hosts:,})"
            )
        )
    return "two-tier ceiling: " + each(lambda c: f"{c.two_tier_max_gpus:,} GPUs")


def recommend(
    cands: Sequence[CandidateResult], weights: Weights, size_label: str
) -> Recommendation:
    """Weighted sum of the criteria scores; the reasons quote the deciding figures."""
    scores = score_criteria(cands)
    w = weights.model_dump()
    used = {k: w[k] for k in CRITERIA if scores[k] is not None and w[k] > 0}
    norm = sum(used.values()) or 1.0
    totals = [sum(used[k] / norm * (scores[k] or [])[i] for k in used) for i in range(len(cands))]
    best = max(range(len(cands)), key=lambda i: (totals[i], -i))
    win = cands[best]
    ranked = sorted(
        used,
        key=lambda k: -used[k] * (max(scores[k] or [0]) - min(scores[k] or [0])),
    )
    reasons = [
        f"{k} (weight {used[k] / norm:.2f}): {_figures(k, cands, size_label)} — best "
        f"{cands[max(range(len(cands)), key=lambda i: (scores[k] or [])[i])].label}"
        for k in ranked
    ]
    if scores["cost"] is None and w["cost"] > 0:
        reasons.append(
            f"cost (weight {w['cost']:.2f}) not scored: "
            + (
                "no --prices given"
                if all(c.cost is None for c in cands)
                else "unpriced parts: "
                + "; ".join(
                    f"{c.label} {', '.join(c.cost.unpriced[:4])}"
                    for c in cands
                    if c.cost and c.cost.unpriced
                )
            )
            + "; the other weights were rescaled"
        )
    reasons.append(
        "weighted score: "
        + "; ".join(f"{c.label} {t:.3f}" for c, t in zip(cands, totals, strict=True))
    )
    table = {
        c.label: {k: round((scores[k] or [0.0] * len(cands))[i], 4) for k in CRITERIA if scores[k]}
        | {"total": round(totals[i], 4)}
        for i, c in enumerate(cands)
    }
    return Recommendation(
        fabric=win.fabric,
        switch=win.switch,
        scores=table,
        reasons=reasons,
        paragraph=_paragraph(win, cands, totals, ranked, used, norm),
    )


def _paragraph(
    win: CandidateResult,
    cands: Sequence[CandidateResult],
    totals: Sequence[float],
    ranked: Sequence[str],
    used: dict[str, float],
    norm: float,
) -> str:
    """The recommendation as one paragraph for `guide` and the design report."""
    others = ", ".join(
        f"{c.title} {t:.2f}" for c, t in zip(cands, totals, strict=True) if c is not win
    )
    top = ", ".join(f"{k} ({used[k] / norm:.2f})" for k in ranked[:2])
    win_total = totals[list(cands).index(win)]
    return (
        f"{win.title} scores {win_total:.2f} against {others} on the weighted criteria; "
        f"{top} decided most. It gives {win.allreduce_busbw_gbs:,.1f} GB/s all-reduce busbw, "
        f"{win.latency_us:.2f} µs on the longest path and {win.two_tier_max_gpus:,} GPUs in "
        f"two tiers, and needs {', '.join(win.operations.control_plane)}"
        + (
            f" plus {len(win.operations.every_hop)} settings on every hop"
            if win.operations.every_hop
            else ""
        )
        + ". `fabric-stack compare` shows the figures side by side."
    )
