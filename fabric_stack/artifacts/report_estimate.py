"""The design report's "Collectives and failures" section (HTML fragment).

All-reduce estimates (:mod:`fabric_stack.analysis.estimate`) for a job on the whole
cluster and for a job filling one SU, healthy and after the single failure that
hurts each most (:func:`~fabric_stack.analysis.estimate.worst_single_failure`), plus the
worst single switch failure for the bisection (:mod:`fabric_stack.analysis.whatif`).
Nothing is recomputed beyond calling those stages.
"""

from __future__ import annotations

from html import escape

from fabric_stack.analysis.estimate import (
    Estimate,
    estimate_collective,
    parse_sizes,
    worst_single_failure,
)
from fabric_stack.analysis.placement import Placement, PlacementComparison, compare_placements
from fabric_stack.analysis.whatif import FabricIndex, Failure, n_minus_1
from fabric_stack.topology.build import FabricTopology

SIZES = parse_sizes("16M,1G,16G")
"""Message sizes shown in the report."""


def _row(label: str, failure: Failure | None, est: Estimate) -> str:
    cells = [escape(label), escape(failure.target if failure else "—")]
    cells += [f"{p.busbw_gbs:,.1f}" for p in est.points]
    cells.append(escape(est.points[-1].algorithm))
    return (
        "<tr>"
        + "".join(
            f'<td class="n">{c}</td>' if 2 <= i < 2 + len(est.points) else f"<td>{c}</td>"
            for i, c in enumerate(cells)
        )
        + "</tr>"
    )


def render_collectives_section(topo: FabricTopology) -> str:
    """HTML body of the section (see the module docstring)."""
    plan = topo.plan
    index = FabricIndex(topo)
    gpn = plan.spec.gpus_per_node
    one_su = min(plan.su_nodes, plan.nodes) * gpn
    rows = []
    for label, job in (
        (f"whole cluster ({plan.gpus:,} GPUs)", None),
        (f"one SU ({one_su:,} GPUs)", one_su),
    ):
        healthy = estimate_collective(topo, "all_reduce", SIZES, job_gpus=job, index=index)
        worst, _ = worst_single_failure(topo, job_gpus=job, index=index)
        failed = estimate_collective(
            topo, "all_reduce", SIZES, job_gpus=job, index=index, failures=[worst] if worst else []
        )
        rows.append(_row(f"{label}, healthy", None, healthy))
        rows.append(_row(f"{label}, worst single failure", worst, failed))
    head = "".join(f'<th class="n">busbw {escape(s)} (GB/s)</th>' for s in ("16M", "1G", "16G"))
    table = (
        "<table><thead><tr><th>All-reduce job</th><th>failed</th>"
        + head
        + "<th>algorithm (16G)</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
    ranked = n_minus_1(index, "switch")
    worst_sw = ranked[0] if ranked else None
    bis = (
        f"Worst single switch failure for the bisection: <b>{escape(worst_sw.target)}</b> "
        f"({escape(worst_sw.role)}): {worst_sw.bisection_tbps:,.1f} Tb/s "
        f"(−{worst_sw.bisection_lost_pct:g} %), {worst_sw.isolated_gpus:,} GPUs isolated."
        if worst_sw
        else ""
    )
    note = (
        "Estimates, not measurements: nccl-tests busbw from the model in "
        "<code>fabric_stack/analysis/estimate.py</code>, calibrated against published figures "
        "(docs/calibration.md). Try others with <code>fabric-stack estimate</code> and "
        "<code>fabric-stack whatif --n-minus-1</code>."
    )
    placement = render_placement(topo, index)
    return table + f"<p>{bis}</p>" + placement + f'<p class="note">{note}</p>'


def _span(topo: FabricTopology, p: Placement) -> str:
    pods = f", {p.pods} pod(s)" if topo.plan.tiers == 3 else ""
    return f"{p.sus} SU(s){pods}: {escape(p.hosts[0])} … {escape(p.hosts[-1])}"


def _same_note(*comparisons: PlacementComparison) -> str:
    same = all(
        abs(c.best_estimate.points[-1].busbw_gbs - c.worst_estimate.points[-1].busbw_gbs)
        <= 0.01 * c.best_estimate.points[-1].busbw_gbs
        for c in comparisons
    )
    return (
        "Within 1 %: the estimate's model finds this fabric's spine layer wide enough for "
        "the job either way (the placement matters where uplinks are shared or failed). "
        if same
        else ""
    )


def render_placement(topo: FabricTopology, index: FabricIndex) -> str:
    """Best vs worst contiguous placement of a job of one SU's GPUs (fewest SUs, then pods;
    the run of consecutive servers crossing the most pods and SUs), all-reduce and
    all-to-all at 16G: what a topology-aware scheduler (render slurm, render k8s-topology)
    is worth on this fabric."""
    plan = topo.plan
    gpn = plan.spec.gpus_per_node
    gpus = min(plan.su_nodes, plan.nodes) * gpn
    if plan.sus < 2 or gpus < 2:
        return (
            "<h3>Job placement</h3><p>One SU: every job is inside one SU, so no placement "
            "crosses the spines.</p>"
        )
    size = parse_sizes("16G")
    ar = compare_placements(topo, gpus, "all_reduce", size, index)
    a2a = compare_placements(topo, gpus, "alltoall", size, index)
    rows = []
    for label, p, e1, e2 in (
        ("best (fewest SUs, then pods)", ar.best, ar.best_estimate, a2a.best_estimate),
        ("worst contiguous (host order)", ar.worst, ar.worst_estimate, a2a.worst_estimate),
    ):
        rows.append(
            f"<tr><td>{label}</td><td>{_span(topo, p)}</td>"
            f'<td class="n">{e1.points[-1].busbw_gbs:,.1f}</td>'
            f'<td class="n">{e2.points[-1].busbw_gbs:,.1f}</td></tr>'
        )
    return (
        f"<h3>Job placement ({gpus:,} GPUs, one SU's worth)</h3>"
        "<table><thead><tr><th>Placement</th><th>Servers</th>"
        '<th class="n">all-reduce busbw 16G (GB/s)</th>'
        '<th class="n">all-to-all busbw 16G (GB/s)</th></tr></thead><tbody>'
        + "".join(rows)
        + "</tbody></table><p>"
        + _same_note(ar, a2a)
        + "The scheduler gets the best placement from "
        "<code>slurm/topology.conf</code> (the SU is its lowest tree level) or Kueue's "
        "<code>network.topology.nvidia.com/leaf</code> level; without them it may hand out "
        "the worst.</p>"
    )


__all__ = ["render_collectives_section", "render_placement"]
