"""`render report`: one self-contained HTML design report (inline CSS and SVG, no scripts).

What an architect attaches to a design review: the sizing card's figures, the
topology diagram, the policy results, the bill of materials, the networks and
rails, the lossless / control-plane settings the other targets render, the
essentials and warnings, and the list of deployment files. Every figure comes
from the existing renderers (:mod:`fabric_stack.views.card`,
:mod:`~fabric_stack.views.diagram`, :mod:`~fabric_stack.views.bom`,
:mod:`fabric_stack.policy`, :mod:`fabric_stack.analysis.guidance`); nothing is
recomputed here. The output is deterministic (no timestamps), so it has a
golden file like every other artifact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

import yaml

import fabric_stack.artifacts.report_document as doc
from fabric_stack import __version__
from fabric_stack.analysis.guidance import guidance_for
from fabric_stack.artifacts._base import Artifact, RenderContext
from fabric_stack.artifacts.document import PAPER_SIZES
from fabric_stack.artifacts.infiniband import IB_MTU_CODES
from fabric_stack.artifacts.nccl import traffic_class
from fabric_stack.artifacts.opensm import sm_instances
from fabric_stack.artifacts.report_estimate import render_collectives_section
from fabric_stack.artifacts.report_options import options_comparison, render_options_section
from fabric_stack.artifacts.report_plant import render_plant_section
from fabric_stack.artifacts.report_style import CSS, page_css
from fabric_stack.policy import evaluate
from fabric_stack.sizing.managers import asked_vs_built
from fabric_stack.views.bom import bill_of_materials, power_cell
from fabric_stack.views.card import card_markdown, fabric_line, headline, model_line, oversub_line
from fabric_stack.views.diagram import diagram_svg

TARGET = "report"


def _e(x: object) -> str:
    return escape(str(x), quote=True)


def _table(
    head: Sequence[str],
    rows: Iterable[Sequence[object]],
    numeric: Sequence[int] = (),
    total: Sequence[object] | None = None,
) -> str:
    def cell(tag: str, i: int, v: object) -> str:
        cls = ' class="n"' if i in numeric else ""
        return f"<{tag}{cls}>{v}</{tag}>"

    out = [
        "<table><thead><tr>",
        *(cell("th", i, _e(h)) for i, h in enumerate(head)),
        "</tr></thead><tbody>",
    ]
    for row in rows:
        out.append("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>")
    if total is not None:
        out.append(
            '<tr class="total">' + "".join(cell("td", i, v) for i, v in enumerate(total)) + "</tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _num(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def _section(title: str, body: str, anchor: str) -> str:
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{body}</section>'


# --------------------------------------------------------------------------- sections


def _su_text(ctx: RenderContext) -> str:
    plan = ctx.plan
    text = f"{plan.sus} × {plan.su_nodes}-server SU"
    if plan.last_su_nodes != plan.su_nodes:
        text += f" (last holds {plan.last_su_nodes})"
    return text


def _header(ctx: RenderContext, status: str) -> str:
    spec, plan = ctx.spec, ctx.plan
    gpus = f"{plan.gpus:,}" + (f" of {spec.gpus:,} asked" if plan.gpus != spec.gpus else "")
    facts = [
        ("GPUs", gpus),
        ("Servers", f"{plan.nodes:,} × {spec.node_profile.name}"),
        ("Switch", plan.switch_model.name),
        ("Link", f"{plan.link_gbps}G"),
        ("Tiers", str(plan.tiers)),
        ("Scalable units", _su_text(ctx)),
        ("Planes", str(plan.planes)),
    ]
    label = {"pass": "policy: pass", "warn": "policy: warnings", "fail": "policy: blocking"}[status]
    title = _e(ctx.document.title_for(spec.name)) + f" — rev. {_e(ctx.document.revision)}"
    return (
        "<header>"
        f'<h1>{title} <span class="badge {status}">{_e(label)}</span></h1>'
        f'<div class="sub">{_e(fabric_line(plan))}</div>'
        '<div class="facts">'
        + "".join(f"<span>{_e(k)}: <b>{_e(v)}</b></span>" for k, v in facts)
        + "</div></header>"
    )


def _summary(ctx: RenderContext, report: Any) -> str:
    """Three sentences a reviewer reads first: what, how big, and whether it passes."""
    spec, plan = ctx.spec, ctx.plan
    sw = plan.switches
    tiers = f"{sw.leaf:,} leaves and {sw.spine:,} spines"
    if plan.tiers == 3:
        tiers = f"{sw.leaf:,} leaves, {sw.spine:,} spines and {sw.core:,} cores"
    fab = fabric_line(plan).split(" (")[0]
    nb = "non-blocking" if plan.non_blocking else f"{plan.oversubscription} oversubscribed"
    planes = " in two planes" if plan.planes == 2 else ""
    counts = report.counts
    verdict = {
        "pass": "every policy rule that applies passes",
        "warn": f"{counts.get('advisory', 0):,} advisory finding(s), nothing blocking",
        "fail": f"{counts.get('mandatory', 0):,} mandatory violation(s) block this design",
    }[report.status]
    text = (
        f"{plan.gpus:,} GPUs in {plan.nodes:,} {spec.node_profile.name} servers on a "
        f"rail-optimized {fab} fabric{planes}: {plan.rails} rails of {plan.link_gbps}G, "
        f"{tiers} ({plan.switch_model.name}) in {plan.tiers} tiers, {nb}, "
        f"{plan.bandwidth.bisection_tbps:,.1f} Tb/s bisection over {plan.cables.total:,} compute "
        f"cables. Policy: {verdict}."
    )
    short = asked_vs_built(spec.gpus, plan.gpus, plan.servers_removed, plan.manager_su)
    if short:
        text += f" {short[0].upper()}{short[1:]}."
    nav = " · ".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in (*_SECTIONS, APPENDIX))
    return f'<p class="lead">{_e(text)}</p><nav>{nav}</nav>'


_SECTIONS: tuple[tuple[str, str], ...] = tuple(
    (anchor, f"{i} {title}")
    for i, (anchor, title) in enumerate(
        (
            ("control", "Document control"),
            ("scope", "Scope"),
            ("assumptions", "Assumptions"),
            ("sizing", "Sizing"),
            ("topology", "Topology"),
            ("policy", "Policy checks"),
            ("bom", "Bill of materials"),
            ("networks", "Networks and rails"),
            ("lossless", "Lossless and control plane"),
            ("essentials", "Essentials"),
            ("software", "Software baseline"),
            ("acceptance", "Acceptance tests"),
            ("risks", "Risks and open items"),
            ("overbuild", "Overbuild cost"),
            ("artifacts", "Deployment artifacts"),
            ("collectives", "Collectives and failures"),
            ("plant", "Physical plant: rack elevations"),
            ("options", "Options considered"),
        ),
        start=1,
    )
)
"""Report sections in order: (anchor, numbered title)."""

APPENDIX = ("appendix", "Appendix: the spec this design was derived from")
"""The last section (anchor, title): the spec as YAML, printed in full."""


def _sizing(ctx: RenderContext) -> str:
    plan = ctx.plan
    tiles = "".join(
        f'<div class="tile"><div class="what">{_e(what)}</div><div class="value">{_e(value)}</div>'
        f'<div class="cap">{_e(cap)}</div></div>'
        for value, cap, what in headline(plan)
    )
    c, t = plan.cables, plan.transceivers
    cables = f"{c.node_leaf:,} node–leaf, {c.leaf_spine:,} leaf–spine"
    if plan.tiers == 3:
        cables += f", {c.spine_core:,} spine–core"
    rows = [
        ("Oversubscription", _e(oversub_line(plan).removeprefix("Oversubscription: "))),
        ("Compute cables", _e(f"{cables} ({c.total:,} in all)")),
        ("Transceivers", _e(f"{t.total:,} ({t.switch:,} switch, {t.nic:,} NIC)")),
        (
            "Radix and layout",
            _e(model_line(plan).removesuffix(" Port-level plan: `fabric-stack cabling`.")),
        ),
    ]
    return (
        f'<div class="tiles">{tiles}</div>'
        + _table(("Figure", "Value"), rows)
        + '<details class="screen"><summary>Sizing card as Markdown (for a pull request)</summary>'
        f"<pre>{_e(card_markdown(plan))}</pre></details>"
    )


def _diagram(ctx: RenderContext) -> str:
    """The drawing scaled to the page (its viewBox kept, its pixel size dropped): a
    1,024-GPU fabric is 2,560 px wide; `fabric-stack diagram` keeps the full size."""
    svg = diagram_svg(ctx.topo)
    # Inline the SVG itself (drop an XML declaration if the renderer adds one).
    if svg.lstrip().startswith("<?xml"):
        svg = svg.split("?>", 1)[1]
    svg = svg.strip()
    head, rest = svg.split(">", 1)
    size = re.search(r'width="(\d+)" height="(\d+)"', head)
    w, h = (int(size[1]), int(size[2])) if size else (0, 0)
    head = re.sub(r' width="\d+" height="\d+"', ' width="100%"', head, count=1)
    note = (
        f'<p class="note">Scaled to the page; full size ({w:,} × {h:,} px): '
        "<code>fabric-stack diagram --out fabric.svg</code> with the same spec.</p>"
    )
    return f'<div class="diagram">{head}>{rest}</div>' + (note if w else "")


def _policy(report: Any) -> str:
    rows = [
        (
            f"<code>{_e(r.id)}</code>",
            _e(r.title),
            _e(r.level),
            f'<span class="badge {_e(r.status)}">{_e(r.status)}</span>',
            _num(r.violations),
            _e(r.reason),
        )
        for r in report.rules
    ]
    counts = report.counts
    summary = (
        f'<p>Result: <span class="badge {_e(report.status)}">{_e(report.status)}</span> — '
        f"{counts.get('mandatory', 0):,} mandatory and {counts.get('advisory', 0):,} advisory "
        "violation(s). The same rules run in <code>fabric-stack check</code> and in the "
        "CrossGuard policy pack on <code>pulumi preview</code>.</p>"
    )
    body = summary + _table(
        ("Rule", "What it checks", "Level", "Status", "Violations", "Note"), rows, numeric=(4,)
    )
    by_rule: dict[str, list[Any]] = {}
    for v in report.violations:
        by_rule.setdefault(v.rule, []).append(v)
    for rule, found in by_rule.items():
        # A rule broken on many switches usually has one cause: show a few, count the rest.
        body += f"<h3>{_e(rule)} — {len(found):,} violation(s)</h3>"
        for v in found[:PER_RULE]:
            body += (
                f'<div class="violation {_e(v.level)}">{_e(v.kind)} '
                f"<code>{_e(v.resource)}</code>: {_e(v.message)}<br>"
                f'<span class="note">Fix: {_e(v.fix)}</span></div>'
            )
        if len(found) > PER_RULE:
            rest = [v.resource for v in found[PER_RULE:]]
            body += (
                f'<p class="note">… and {len(rest):,} more: {_e(_some(rest))} '
                "(<code>fabric-stack check</code> lists them all).</p>"
            )
    return body


PER_RULE = 3
"""Violations shown per rule in the report; the rest are counted and named."""


def _bom(ctx: RenderContext) -> str:
    bom = bill_of_materials(ctx.topo)
    sw = _table(
        ("Switch", "Roles", "Count", "RU each", "RU total", "W each", "W total"),
        [
            (
                _e(s.name),
                _e(", ".join(f"{n:,} {r}" for r, n in s.roles.items())),
                _num(s.count),
                _num(s.rack_units),
                _num(s.rack_units_total),
                power_cell(s.power_w, s.power_unverified),
                power_cell(s.power_w_total, s.power_unverified),
            )
            for s in bom.switches
        ],
        numeric=(2, 3, 4, 5, 6),
        total=(
            "Total",
            "",
            _num(bom.totals.switches),
            "",
            _num(bom.totals.switch_rack_units),
            "",
            _num(bom.totals.switch_power_w),
        ),
    )
    cables = _table(
        ("Cable", "Role", "Speed", "Links", "Cables"),
        [
            (_e(c.cable_type), _e(c.role), f"{c.speed_gbps}G", _num(c.links), _num(c.count))
            for c in bom.cables
        ],
        numeric=(2, 3, 4),
        total=("Total", "", "", _num(bom.totals.links), _num(bom.totals.cables)),
    )
    optics = _table(
        ("Module", "End", "Network", "Count", "W each"),
        [
            (
                _e(o.optic + ("" if o.verified else " *")),
                _e(o.side),
                _e(o.network),
                _num(o.count),
                f"{o.power_w:g}",
            )
            for o in bom.optics
        ],
        numeric=(3, 4),
        total=("Total", "", "", _num(bom.totals.optics), f"{bom.totals.optics_power_w:,.0f}"),
    )
    servers = _table(
        ("Server profile", "Count", "GPUs", "RU total"),
        [
            (_e(s.profile), _num(s.count), _num(s.gpus), _num(s.rack_units_total))
            for s in bom.servers
        ],
        numeric=(1, 2, 3),
    )
    comp = bom.compute
    match = (
        "Compute counts match the sizing card (counted from the port-level link list)."
        if comp.matches_sizing
        else "Compute counts DIFFER from the sizing card — review before ordering."
    )
    power = (
        f"Power {bom.totals.power_w:,.0f} W: switches {bom.totals.switch_power_w:,} W (catalog "
        f"figure) + optics {bom.totals.optics_power_w:,.0f} W, one module per lit cage "
        "(* UNVERIFIED: see open items)"
    )
    if bom.totals.switches_without_power:
        power += f"; {bom.totals.switches_without_power:,} switch(es) have no published figure"
    return (
        "<h3>Switches</h3>"
        + sw
        + '<div class="cols"><div><h3>Cables</h3>'
        + cables
        + "</div><div><h3>Optics</h3>"
        + optics
        + "</div></div><h3>Servers</h3>"
        + servers
        + f'<p class="note">{_e(match)} {_e(power)}.</p>'
    )


def _some(names: Sequence[str], keep: int = 3) -> str:
    """'a, b, c' or 'a, b … z (12)' so a row stays one line at any scale."""
    if len(names) <= keep + 1:
        return ", ".join(names)
    return f"{', '.join(names[: keep - 1])} … {names[-1]} ({len(names):,})"


def _networks(ctx: RenderContext) -> str:
    spec = ctx.spec
    compute = [v for v in ctx.intent.vlans if v.network == "compute"]
    rows: list[tuple[object, ...]] = []
    if compute:
        carriers = {c for v in compute for c in v.carriers}
        vlans = sorted(v.vlan for v in compute if v.vlan)
        ident = (
            f"VLAN {vlans[0]}–{vlans[-1]} (one per rail)"
            if len(vlans) > 1
            else (f"VLAN {vlans[0]}" if vlans else f"P_Key {spec.networks.compute.pkey}")
        )
        rows.append(
            (
                "compute",
                _e(ident),
                _e(f"{spec.networks.compute.subnet} (split per rail)"),
                "own switches",
                _num(len(carriers)),
                _num(compute[0].mtu),
            )
        )
    for v in ctx.intent.vlans:
        if v.network == "compute":
            continue
        rows.append(
            (
                _e(v.network),
                _e(f"VLAN {v.vlan}"),
                _e(v.subnet),
                _e("own switches" if v.attach == "dedicated" else f"{v.attach} switches"),
                _num(len(v.carriers)),
                _num(v.mtu),
            )
        )
    nets = _table(
        ("Network", "VLAN / partition", "Subnet", "Carried by", "Switches carrying it", "Host MTU"),
        rows,
        numeric=(4, 5),
    )
    nics = ctx.rail_nics()
    rails = _table(
        ("Rail", "Server NIC", "Leaves", "NIC ports", "Subnet", "VLAN / P_Key"),
        [
            (
                _e(r.name),
                f"<code>{_e(nics[(r.plane - 1) * ctx.plan.rails + r.rail - 1])}</code>",
                _e(_some(r.leaves)),
                _num(r.nics),
                _e(r.subnet),
                _e(str(r.vlan) if r.vlan else r.pkey),
            )
            for r in ctx.intent.rails
        ],
        numeric=(3,),
    )
    return "<h3>Separate networks</h3>" + nets + "<h3>Compute rails</h3>" + rails


def _onoff(flag: bool) -> str:
    return "on" if flag else '<b class="bad">off</b>'


def _roce_settings(ctx: RenderContext) -> str:

    # One row per tier and distinct setting set: a per-tier override stands out as
    # its own row instead of hiding in hundreds of identical ones.
    groups: dict[tuple[str, int, bool, tuple[int, ...], bool], list[str]] = {}
    for sw in ctx.compute_switches():
        q = ctx.switch_config(sw, routed=False).qos
        key = (sw.role, q.mtu, q.dscp_trust, q.pfc_priorities, q.ecn)
        groups.setdefault(key, []).append(sw.name)
    rows = [
        (
            _e(role),
            _e(_some(names)),
            _num(mtu) if mtu == ctx.spec.roce.mtu else f'<b class="bad">{_num(mtu)}</b>',
            _onoff(trust),
            _e(",".join(map(str, pfc))) if pfc else _onoff(False),
            _onoff(ecn),
        )
        for (role, mtu, trust, pfc, ecn), names in groups.items()
    ]
    roce = ctx.spec.roce
    prio = roce.pfc_priorities[0] if roce.pfc_priorities else "—"
    intro = (
        f"<p>Lossless RoCEv2, the same on every hop: RoCE DSCP {roce.roce_dscp} → priority {prio} "
        f"(PFC, ECN marking {roce.ecn_min_kb:,}–{roce.ecn_max_kb:,} KB at "
        f"{roce.ecn_probability} %); CNP DSCP {roce.cnp_dscp} → priority {roce.cnp_priority} "
        f"(strict). Hosts mark <code>NCCL_IB_TC={traffic_class(roce.roce_dscp)}</code>, "
        "GID index 3. "
        "Rendered as <code>roce-qos/</code> (intent) and <code>cumulus/</code> (NVUE). "
        "One row per tier and setting set; a value in red differs from the spec.</p>"
    )
    head = ("Tier", "Switches", "MTU", "DSCP trust", "PFC priorities", "ECN")
    return intro + _table(head, rows, numeric=(2,))


def _ib_settings(ctx: RenderContext) -> str:

    spec = ctx.spec
    ib = spec.infiniband
    sms = sm_instances(ctx)
    rows = [
        (
            _e(sm.name),
            ("master" if sm.index == 0 else "standby")
            + (f" (plane {sm.plane})" if ctx.plan.planes > 1 else ""),
            _num(sm.priority),
            f"<code>{_e(ib.routing_engine)}</code>",
            "on" if ib.sharp else "off",
        )
        for sm in sms
    ]
    sharp = "on (sharp_enabled 2, NCCL CollNet)" if ib.sharp else "off"
    intro = (
        f"<p>{len(sms)} subnet manager(s) on {_e(ib.sm_location)}; routing engine "
        f"<code>{_e(ib.routing_engine)}</code>, LMC 0; compute partition P_Key "
        f"{_e(spec.networks.compute.pkey)} with IPoIB MTU {ib.mtu:,} "
        f"(code {IB_MTU_CODES.get(ib.mtu, '?')}); SHARP {sharp}. Rendered as "
        "<code>infiniband/</code>: opensm-*.conf, partitions.conf, ib-node-name-map and the "
        "planned <code>.topo</code> for <code>ibdiagnet -t</code>.</p>"
    )
    head = ("Subnet manager", "Role", "sm_priority", "Routing", "SHARP")
    return intro + _table(head, rows, numeric=(2,))


def _lossless(ctx: RenderContext) -> str:
    if ctx.fabric == "roce":
        return _roce_settings(ctx)
    if ctx.fabric == "infiniband":
        return _ib_settings(ctx)
    return (
        "<p>Plain Ethernet (TCP): no lossless configuration; NCCL runs over sockets on the rail "
        "interfaces (<code>nccl/ethernet.env</code>).</p>"
    )


def _essentials(ctx: RenderContext, recommendation: str | None = None) -> str:
    g = guidance_for(ctx.plan, recommendation)
    body = '<ul class="ess">' + "".join(f"<li>{_e(e)}</li>" for e in g.essentials) + "</ul>"
    body += "".join(f'<div class="warnbox">{_e(w)}</div>' for w in g.warnings)
    body += f'<p class="note">{_e(g.recommendation)}</p>'
    return body


ArtifactRow = tuple[str, str, list[str]]
"""(target, what it is, the files it writes) of one render target that fits the plan."""


def _artifacts(listing: Sequence[ArtifactRow]) -> str:
    rows = []
    for name, help_text, paths in listing:
        shown = ", ".join(f"<code>{_e(f)}</code>" for f in paths[:3])
        if len(paths) > 3:
            shown += f" … ({len(paths):,} files)"
        rows.append((f"<code>{_e(name)}</code>", _e(help_text), shown))
    return (
        "<p>Everything below is rendered from this plan by "
        "<code>fabric-stack render all --out-dir DIR</code> (same spec: <code>--config</code> or "
        "flags).</p>" + _table(("Target", "What", "Files"), rows)
    )


def _spec_yaml(ctx: RenderContext) -> str:
    data = ctx.spec.model_dump(mode="json")
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def render_html(ctx: RenderContext, listing: Sequence[ArtifactRow]) -> str:
    """The report as one HTML document; ``listing`` is what ``render all`` would write.

    The target registry passes ``listing`` (:func:`fabric_stack.artifacts.report_html`),
    so this module does not import the registry that imports it.
    """
    report = evaluate(ctx.intent)
    options = options_comparison(ctx.spec)
    derived = None if isinstance(options, str) else options.recommendation.paragraph
    bodies = {
        "sizing": _sizing(ctx),
        "topology": _diagram(ctx),
        "policy": _policy(report),
        "bom": _bom(ctx),
        "networks": _networks(ctx),
        "lossless": _lossless(ctx),
        "essentials": _essentials(ctx, derived),
        "artifacts": _artifacts(listing),
        "collectives": render_collectives_section(ctx.topo),
        "plant": render_plant_section(ctx.topo),
        "control": doc.document_control(ctx, report.status),
        "scope": doc.scope(ctx),
        "assumptions": doc.assumptions(ctx),
        "software": doc.software_baseline(ctx),
        "acceptance": doc.acceptance_tests(ctx),
        "risks": doc.risks(ctx),
        "overbuild": doc.overbuild(ctx),
        "options": render_options_section(options),
    }
    sections = "".join(_section(title, bodies[anchor], anchor) for anchor, title in _SECTIONS)
    # printed, not collapsed: the footer cites it and a PDF has no <details> to open
    spec_block = _section(APPENDIX[1], f"<pre>{_e(_spec_yaml(ctx))}</pre>", APPENDIX[0])
    footer = (
        f"<footer>Generated by fabric-stack {_e(__version__)} "
        "(<code>fabric-stack render report</code>) from the port-level plan; every figure is "
        "derived from the spec in the appendix.</footer>"
    )
    paper = PAPER_SIZES[ctx.document.paper]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(ctx.document.title_for(ctx.spec.name))}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{CSS}{page_css(paper)}</style></head><body><main>"
        + _header(ctx, report.status)
        + _summary(ctx, report)
        + sections
        + spec_block
        + footer
        + "</main></body></html>\n"
    )


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    return ["report/design-report.html"]


def render(ctx: RenderContext, listing: Sequence[ArtifactRow]) -> list[Artifact]:
    """``report/design-report.html``."""
    return [Artifact(TARGET, files(ctx)[0], render_html(ctx, listing))]
