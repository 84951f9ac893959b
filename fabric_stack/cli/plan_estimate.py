"""`fabric-stack plan --estimate`: what a capacity change does to the full-cluster all-reduce.

The preview's Fabric summary record carries the spec before and after
(:attr:`~fabric_stack.adapters.pulumi.changes.ChangeSummary.spec_before`); each side is sized,
built and estimated (:mod:`fabric_stack.analysis.estimate`) for a job on the whole
cluster. An adapter: it only calls the pipeline stages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from pydantic import ValidationError
from rich.table import Table

from fabric_stack.adapters.pulumi.changes import ChangeSummary
from fabric_stack.analysis.estimate import Estimate, estimate_collective, parse_sizes
from fabric_stack.cli.common import console, echo_json
from fabric_stack.spec.model import FabricSpec

SIZES = parse_sizes("16M,1G,16G")
"""Message sizes compared."""


def _estimate(spec: dict[str, Any]) -> Estimate | None:
    if not spec:
        return None
    from fabric_stack.pipeline import paused_gc
    from fabric_stack.sizing.size import size_fabric
    from fabric_stack.topology.build import build_topology

    try:
        parsed = FabricSpec.model_validate(spec)
    except ValidationError:
        return None  # redacted by Pulumi's output (see artifacts/growth.with_growth): "—"
    with paused_gc():
        topo = build_topology(size_fabric(parsed))
    return estimate_collective(topo, "all_reduce", SIZES)


def estimate_change(summary: ChangeSummary) -> dict[str, Any]:
    """``{"collective", "before", "after"}``: full-cluster all-reduce per side (None: absent)."""
    before, after = _estimate(summary.spec_before), _estimate(summary.spec_after)
    return {
        "collective": "all_reduce",
        "before": before.model_dump(mode="json") if before else None,
        "after": after.model_dump(mode="json") if after else None,
    }


def _rows(data: dict[str, Any]) -> list[tuple[str, ...]]:
    rows = []
    for side in ("before", "after"):
        est = data[side]
        if est is None:
            rows.append((side, "—", *(["—"] * len(SIZES))))
            continue
        bws = [f"{p['busbw_gbs']:,.1f} ({p['algorithm']})" for p in est["points"]]
        rows.append((side, f"{est['job']['gpus']:,} GPUs, {est['job']['sus']} SUs", *bws))
    return rows


def emit_with_estimate(
    summary: ChangeSummary,
    fmt: str,
    emit: Callable[[ChangeSummary, str], None],
    as_json: Callable[[ChangeSummary], dict[str, Any]],
) -> None:
    """The change summary as ``emit`` prints it, then the estimate before and after."""
    data = estimate_change(summary)
    if fmt == "json":
        echo_json({**as_json(summary), "estimate": data})
        return
    emit(summary, fmt)
    heads = ("", "job", *(f"busbw {s} GB/s" for s in ("16M", "1G", "16G")))
    if fmt == "markdown":
        out = [
            "",
            "#### Full-cluster all-reduce estimate",
            "",
            "| " + " | ".join(heads) + " |",
            "|" + "---|" * len(heads),
        ]
        out += ["| " + " | ".join(r) + " |" for r in _rows(data)]
        click.echo("\n".join(out) + "\n", nl=False)
        return
    t = Table(title="Full-cluster all-reduce estimate (fabric-stack estimate)")
    for h in heads:
        t.add_column(h)
    for r in _rows(data):
        t.add_row(*r)
    console().print(t)
