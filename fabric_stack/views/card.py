"""The sizing card (`fabric-stack size`): rich, Markdown and JSON renderings of a SizingPlan."""

from __future__ import annotations

from typing import Any

from rich.columns import Columns
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from fabric_stack.analysis.guidance import CNI, FABRICS, PRACTICES, Guidance, guidance_for
from fabric_stack.sizing.build_out import build_out_line
from fabric_stack.sizing.managers import plan_manager_shape, sizing_note
from fabric_stack.sizing.rail_groups import GROUPING_MEANING
from fabric_stack.sizing.size import SizingPlan
from fabric_stack.text.numbers import fmt_num


def headline(plan: SizingPlan) -> list[tuple[str, str, str]]:
    """The card's figures as (value, caption, what) rows, in card order."""
    bw = plan.bandwidth
    sw = plan.switches
    nb = "full non-blocking" if plan.non_blocking else f"{plan.oversubscription} oversubscribed"
    rows = [
        (f"{bw.per_gpu_gbps} Gb", "line rate", "per GPU"),
        (f"{bw.per_node_gbps} Gb", f"{plan.rails}× rails", "per node"),
        (f"{fmt_num(bw.bisection_tbps)} Tb", nb, "bisection"),
        (
            fmt_num(plan.rails * plan.planes),
            "rail-optimized",
            "rails" if plan.planes == 1 else "rails × planes",
        ),
        (fmt_num(sw.leaf), f"{plan.radix}-port", "leaf switches"),
        (
            fmt_num(sw.spine),
            "non-blocking" if plan.non_blocking else f"{plan.oversubscription}",
            "spine switches",
        ),
    ]
    if plan.tiers == 3:
        rows.append((fmt_num(sw.core), f"{plan.core_groups} groups", "core switches"))
    return rows


def fabric_line(plan: SizingPlan) -> str:
    """'InfiniBand (rail-optimized, non-blocking)'."""
    fab = next(f for f in FABRICS if f.key == plan.spec.fabric).title.split(" (")[0]
    if plan.spec.fabric == "roce":
        fab = "RoCEv2"
    nb = "non-blocking" if plan.non_blocking else f"{plan.oversubscription} oversubscribed"
    planes = {1: "", 2: ", dual-plane"}.get(plan.planes, f", {plan.planes} planes")
    return f"{fab} (rail-optimized, {nb}{planes})"


def oversub_line(plan: SizingPlan) -> str:
    """The oversubscription sentence."""
    if plan.non_blocking:
        return "Oversubscription: 1:1 (non-blocking) — collectives must not queue"
    return (
        f"Oversubscription: {plan.oversubscription} — leaf uplinks carry "
        f"1/{plan.spec.ratio[0] // plan.spec.ratio[1] or 1} of the downlink load; "
        "collectives will queue"
    )


def model_line(plan: SizingPlan) -> str:
    """Which switch and radix the plan uses, and where the port-level plan is."""
    m = plan.switch_model
    return (
        f"{plan.radix}-port radix: {m.name} at {plan.link_gbps}G "
        f"({m.cages} cages × {plan.ports_per_cage}); {plan.tiers} tiers, "
        f"{plan.sus} SU × {plan.su_nodes} servers"
        + (f" (last SU {plan.last_su_nodes})" if plan.last_su_nodes != plan.su_nodes else "")
        + (f", {plan.leaves_per_rail} leaves per rail" if plan.leaves_per_rail > 1 else "")
        + ". Port-level plan: `fabric-stack cabling`."
    )


def shape_rows(plan: SizingPlan) -> list[tuple[str, str]]:
    """The card's rows for the #43 shape keys: leaves per rail, spine grouping, build-out.

    Empty for a plan with none of them, so today's card is unchanged.
    """
    rows = []
    if plan.leaves_per_rail > 1:
        rows.append(
            (
                "Leaves",
                f"{plan.leaves_per_rail} leaves per rail in each SU ({plan.per_leaf} servers "
                "each): every server's rail-r NIC lands on one of that rail's leaves",
            )
        )
    if plan.spine_grouping != "full":
        rows.append(
            (
                "Spines",
                f"{plan.spine_groups} spine groups of {plan.spines_per_pod} per plane — "
                + GROUPING_MEANING[plan.spine_grouping],
            )
        )
    if plan.build_out is not None:
        rows.append(("Build-out", build_out_line(plan)))
    return rows


def tiers_line(plan: SizingPlan) -> str | None:
    """Each tier's switch model, ports and speeds; None when the spec sets no per-tier key
    (the card of a one-model, one-speed fabric is unchanged)."""
    if not plan.spec.per_tier:
        return None
    parts = []
    for t in plan.tier_plans:
        m = plan.tier_model(t.role)
        ppc = plan.tier_ports_per_cage(t.role)
        text = f"{t.role} {m.key.upper()}: {t.ports_down} × {t.down_gbps}G down ({ppc} per cage)"
        if t.ports_up:
            up_ppc = plan.leaf_up_ports_per_cage if t.role == "leaf" else ppc
            text += f", {t.ports_up} × {t.up_gbps}G up ({up_ppc} per cage)"
            text += (
                f" ({t.capacity_down_gbps / 1000:g} Tb/s down, {t.capacity_up_gbps / 1000:g} up)"
            )
        parts.append(text)
    return "; ".join(parts)


def render_card(
    plan: SizingPlan, explain: bool = False, recommendation: str | None = None
) -> RenderableType:
    """Rich renderable of the card; ``explain`` adds comparison, CNI and practices.
    ``recommendation`` replaces the fixed paragraph (`guide` passes the one
    :func:`fabric_stack.views.options.compare_fabrics` derives)."""
    g = guidance_for(plan, recommendation)
    tiles = []
    for value, caption, what in headline(plan):
        body = Text.assemble((value, "bold cyan"), "\n", (caption, "dim"))
        tiles.append(Panel(body, title=what, title_align="left", width=22, padding=(0, 1)))
    details = Table.grid(padding=(0, 2))
    details.add_column(style="bold")
    details.add_column()
    details.add_row("Fabric", fabric_line(plan))
    details.add_row("", oversub_line(plan))
    tiers = tiers_line(plan)
    if tiers:
        details.add_row("Tiers", tiers)
    details.add_row("Cables", _cable_text(plan))
    for name, text in shape_rows(plan):
        details.add_row(name, text)
    if plan.managers:
        details.add_row("Managers", managers_line(plan))
    details.add_row(
        "Optics",
        f"{plan.transceivers.total:,} transceivers "
        f"({plan.transceivers.switch:,} switch, {plan.transceivers.nic:,} NIC)",
    )
    server = server_line(plan)
    if server:
        details.add_row("Servers", server)
    essentials = Text()
    for line in g.essentials:
        essentials.append("• ", style="green")
        essentials.append(line + "\n")
    for w in g.warnings:
        essentials.append("! ", style="yellow")
        essentials.append(w + "\n")
    essentials.rstrip()
    parts: list[RenderableType] = [
        Text(f"Networking architecture — {plan.spec.name}", style="bold"),
        Columns(tiles, equal=True),
        details,
        Panel(essentials, title="Essentials", title_align="left"),
        Text(model_line(plan), style="dim"),
    ]
    if explain:
        parts.extend(_explain(plan, g))
    return Group(*parts)


def server_line(plan: SizingPlan) -> str | None:
    """The server profile's rail names, NIC and what is unverified; None for neutral names.

    Shown only for a profile that names its ports (``dgx-h100`` …), so the default card of
    ``mlx5_0 … mlx5_N`` servers is unchanged.
    """
    prof = plan.spec.node_profile
    if not prof.compute_ports:
        return None
    rails = ", ".join(
        prof.rdma_name(r, p) for p in range(1, plan.planes + 1) for r in range(1, plan.rails + 1)
    )
    cages = prof.compute_cages(plan.planes)
    text = (
        f"{prof.name}: {prof.rdma_nics} × {prof.nic_model} (max {prof.nic_max_gbps}G); "
        f"rails {rails}; {cages} server optic(s) each"
    )
    notes = prof.unverified_notes()
    return text + (f". UNVERIFIED: {'; '.join(notes)}" if notes else "")


def _cable_text(plan: SizingPlan) -> str:
    c = plan.cables
    text = f"{c.node_leaf:,} node–leaf, {c.leaf_spine:,} leaf–spine"
    if plan.tiers == 3:
        text += f", {c.spine_core:,} spine–core"
    if c.manager_leaf:
        text += f", {c.manager_leaf:,} manager–leaf"
    return text + f" ({c.total:,} in all)"


def managers_line(plan: SizingPlan) -> str:
    """Where the fabric managers plug in and what it cost ('' when none are cabled)."""
    return sizing_note(
        plan_manager_shape(plan), plan.spec.infiniband.sm_location, plan.spec.gpus_per_node
    )


def _explain(plan: SizingPlan, g: Guidance) -> list[RenderableType]:
    cmp = Table(title="Fabric comparison", show_lines=True)
    for col in ("Fabric", "RDMA latency", "Lossless", "Best for", "Trade-off"):
        cmp.add_column(col)
    for f in FABRICS:
        style = "bold" if f.key == plan.spec.fabric else ""
        cmp.add_row(f.title, f.rdma_latency, f.lossless, f.best_for, f.tradeoff, style=style)
    cni = Table(title="Kubernetes networking")
    cni.add_column("CNI")
    cni.add_column("Use it for")
    for name, use in CNI:
        cni.add_row(name, use)
    prac = Table(title="Practices", show_header=False)
    prac.add_column(style="bold")
    prac.add_column()
    for name, text in PRACTICES:
        prac.add_row(name, text)
    return [cmp, Text("Recommendation: " + g.recommendation), cni, prac]


def card_json(
    plan: SizingPlan, explain: bool = False, recommendation: str | None = None
) -> dict[str, Any]:
    """The plan as JSON: stable keys tiers, switches.*, cables.*, bandwidth.*, oversubscription."""
    data = plan.model_dump(mode="json")
    data["spec"] = plan.spec.model_dump(
        mode="json", exclude={"node_profile", "networks", "roce", "infiniband"}
    )
    data["spec"]["node_profile"] = plan.spec.node_profile.name
    server = server_line(plan)
    if server:
        data["server_profile"] = server
    data["switch_model"] = plan.switch_model.key
    tiers = tiers_line(plan)
    if tiers:
        data["tiers_line"] = tiers
    data["headline"] = [{"value": v, "caption": c, "what": w} for v, c, w in headline(plan)]
    g = guidance_for(plan, recommendation)
    data["guidance"] = {"essentials": list(g.essentials), "warnings": list(g.warnings)}
    if explain:
        data["guidance"]["recommendation"] = g.recommendation
        data["guidance"]["fabrics"] = [f.model_dump() for f in FABRICS]
        data["guidance"]["cni"] = [{"name": n, "use": u} for n, u in CNI]
        data["guidance"]["practices"] = [{"name": n, "text": t} for n, t in PRACTICES]
    return data


def card_markdown(
    plan: SizingPlan, explain: bool = False, recommendation: str | None = None
) -> str:
    """The card as Markdown (for a pull request or a design document)."""
    g = guidance_for(plan, recommendation)
    lines = [f"### Networking architecture — {plan.spec.name}", ""]
    lines.append("| " + " | ".join(w for _, _, w in headline(plan)) + " |")
    lines.append("|" + "---|" * len(headline(plan)))
    lines.append("| " + " | ".join(f"**{v}** {c}" for v, c, _ in headline(plan)) + " |")
    lines += ["", f"**{fabric_line(plan)}**", "", oversub_line(plan), ""]
    tiers = tiers_line(plan)
    if tiers:
        lines += [f"Tiers: {tiers}.", ""]
    lines.append(f"Cables: {_cable_text(plan)}. Optics: {plan.transceivers.total:,}.")
    lines += [line for name, text in shape_rows(plan) for line in ("", f"{name}: {text}.")]
    if plan.managers:
        lines += ["", f"Managers: {managers_line(plan)}."]
    server = server_line(plan)
    if server:
        lines += ["", f"Servers: {server}."]
    lines.append("")
    lines += [f"- {e}" for e in g.essentials]
    lines += [f"- ⚠ {w}" for w in g.warnings]
    lines += ["", f"_{model_line(plan)}_"]
    if explain:
        lines += [
            "",
            "| Fabric | RDMA latency | Lossless | Best for | Trade-off |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {f.title} | {f.rdma_latency} | {f.lossless} | {f.best_for} | {f.tradeoff} |"
            for f in FABRICS
        ]
        lines += [
            "",
            f"Recommendation: {g.recommendation}",
            "",
            "| CNI | Use it for |",
            "|---|---|",
        ]
        lines += [f"| {n} | {u} |" for n, u in CNI]
        lines += ["", "| Practice | Why |", "|---|---|"]
        lines += [f"| {n} | {t} |" for n, t in PRACTICES]
    return "\n".join(lines) + "\n"
