"""The fabric as a picture (`fabric-stack diagram`): a self-contained SVG.

Tiers run top-down — core groups, spines, rail leaves, servers — with each
rail in its own colour (leaf boxes and the NIC-to-leaf cables), scalable
units in labelled frames and, in three tiers, SUs grouped into pod frames.
A legend explains colours and line kinds.

Large fabrics collapse so the picture stays readable and its size bounded:
past a handful of members only representative SUs, pods, servers, spines and
core groups are drawn, with a dashed "… N more" box standing for the rest;
leaf-to-spine and spine-to-core cabling is drawn as one line per switch pair
(a *bundle*), its cable count in the legend, never cable by cable. Plane 2 of
a dual-plane fabric mirrors plane 1 and is noted rather than drawn.

Everything drawn is read from the topology's devices and links; the counts in
labels are counted, not recomputed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from fabric_stack.topology.build import Device, FabricTopology
from fabric_stack.views.diagram_legend import legend
from fabric_stack.views.svg import (
    CORE_GAP,
    CORE_H,
    CORE_W,
    ELLIPSIS_W,
    LEAF_GAP,
    LEAF_H,
    LEAF_W,
    MARGIN,
    MAX_CORE_GROUPS,
    MAX_PAIR_LINES,
    MAX_PODS,
    MAX_SERVERS,
    MAX_SPINES,
    MAX_SUS,
    MAX_SUS_PER_POD,
    NODE_LEAF_GAP,
    POD_LABEL_H,
    POD_PAD,
    RAIL_COLOURS,
    SPINE_H,
    SPINE_W,
    SRV_GAP,
    SRV_H,
    SRV_W,
    SU_LABEL_H,
    SU_PAD,
    TIER_GAP,
    Canvas,
    Item,
    collapse,
    document,
    plural,
    rail_colour,
    row,
    row_width,
    sample,
    short,
    spine_row,
)


@dataclass
class _Structure:
    """What the picture shows, read from the devices and links (plane 1; plane 2 mirrors it)."""

    servers_by_su: dict[int, list[Device]] = field(default_factory=lambda: defaultdict(list))
    leaves: dict[tuple[int, int], Device] = field(default_factory=dict)
    spines_by_pod: dict[int, list[Device]] = field(default_factory=lambda: defaultdict(list))
    cores_by_group: dict[int, list[Device]] = field(default_factory=lambda: defaultdict(list))
    access: Counter[str] = field(default_factory=Counter)
    bundle: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Cables per (lower switch, upper switch) pair."""
    sus: list[int] = field(default_factory=list)
    three: bool = False
    managers: dict[int, list[tuple[Device, list[int]]]] = field(default_factory=dict)
    """Per SU, its fabric-manager hosts and the rails (plane 1) each is cabled to."""


@dataclass
class _Layout:
    """Where things go: frame sizes, tier rows, and the items drawn so far."""

    su_w: float
    su_h: float
    core_y: float
    pod_y: float
    spine_y: float
    su_y: float
    leaf_items: list[Item] = field(default_factory=list)
    spine_items: dict[int, list[Item]] = field(default_factory=dict)
    pod_boxes: list[tuple[float, float, int]] = field(default_factory=list)
    """(x, width, pod) of each pod frame."""
    srv_items: list[Item] = field(default_factory=list)
    content_w: float = 0.0


def diagram_svg(topo: FabricTopology) -> str:
    """Render ``topo`` as a self-contained SVG document (see the module docstring).

    The steps, in drawing order (the canvas keeps its layers, so later steps may draw
    under earlier ones): :func:`_read_structure`, :func:`_start_layout`,
    :func:`_draw_rows` (SU frames with leaves and servers, spine rows),
    :func:`_draw_pod_frames`, :func:`_draw_cores`, :func:`_draw_bundles` (leaf → spine
    lines), then :func:`_finish` (legend, titles, document).
    """
    s = _read_structure(topo)
    cv = Canvas()
    lay = _start_layout(topo, s)
    _draw_rows(cv, topo, s, lay)
    _draw_pod_frames(cv, topo, s, lay)
    if s.three:
        _draw_cores(cv, topo, s, lay)
    per_su = _draw_bundles(cv, s, lay)
    return _finish(cv, topo, s, lay, per_su)


def _read_structure(topo: FabricTopology) -> _Structure:
    """Servers per SU, plane-1 leaves, spines per pod, core groups, access switch counts."""
    plan = topo.plan
    s = _Structure()
    for d in topo.devices:
        if d.role == "server":
            s.servers_by_su[d.su].append(d)
        elif d.role == "leaf" and d.plane == 1:
            s.leaves[(d.su, d.rail)] = d
        elif d.role == "spine" and d.plane == 1:
            s.spines_by_pod[d.pod].append(d)
        elif d.role == "core" and d.plane == 1:
            s.cores_by_group[(d.index - 1) // max(1, plan.cores_per_group) + 1].append(d)
        elif d.role in ("storage", "inband", "oob"):
            s.access[d.role] += 1
    for k in topo.links_of("leaf_spine", "spine_core"):
        if k.plane == 1:
            s.bundle[(k.a_device, k.b_device)] += 1
    leaf_rail = {d.name: d.rail for d in s.leaves.values()}
    rails_of: dict[str, list[int]] = defaultdict(list)
    for k in topo.links_of("manager_leaf"):
        if k.b_device in leaf_rail:
            rails_of[k.a_device].append(leaf_rail[k.b_device])
    for d in topo.devices:
        if d.role == "manager":
            s.managers.setdefault(d.su, []).append((d, sorted(rails_of[d.name])))
    s.sus = sorted(s.servers_by_su)
    s.three = plan.tiers == 3
    return s


def _start_layout(topo: FabricTopology, s: _Structure) -> _Layout:
    """SU frame size (fits the leaf row and the servers drawn) and the y of every tier row."""
    rails = topo.plan.rails
    leaf_row_w = rails * (LEAF_W + LEAF_GAP) - LEAF_GAP
    # A manager takes a server's box in its SU's row (as it takes a server position),
    # so the row, and every SU frame, stays as wide as MAX_SERVERS boxes.
    per_su = [len(v) + len(s.managers.get(su, [])) for su, v in s.servers_by_su.items()]
    boxes = min(max(per_su, default=1), MAX_SERVERS)
    srv_row_w = (
        boxes * (SRV_W + SRV_GAP) - SRV_GAP + (20 if max(per_su, default=1) > MAX_SERVERS else 0)
    )
    srv_row_w += 2 * SRV_GAP if s.managers else 0
    su_w = max(leaf_row_w, srv_row_w, 150) + 2 * SU_PAD
    su_h = SU_LABEL_H + LEAF_H + NODE_LEAF_GAP + SRV_H + SU_PAD
    title_h = 84
    y = MARGIN + title_h
    core_y = y
    if s.three:
        y += CORE_H + TIER_GAP
    pod_y = y
    spine_y = y + (POD_LABEL_H + 8 if s.three else 0)
    su_y = spine_y + SPINE_H + TIER_GAP
    return _Layout(su_w, su_h, core_y, pod_y, spine_y, su_y)


def _su_groups(topo: FabricTopology, s: _Structure) -> list[tuple[int, list[int | tuple[int]]]]:
    """(pod, [su or (hidden_count,)]) in drawing order; pod 0 holds hidden pods (or 2 tiers)."""
    plan = topo.plan
    sus = s.sus
    if not s.three:
        return [(0, collapse(sus, MAX_SUS, head=MAX_SUS - 2))]
    pods = sorted({(su - 1) // plan.sus_per_pod + 1 for su in sus})
    shown = collapse(pods, MAX_PODS + 1, head=1) if len(pods) > MAX_PODS else pods
    out: list[tuple[int, list[int | tuple[int]]]] = []
    for p in shown:
        if isinstance(p, tuple):
            out.append((0, [p]))  # a hidden-pods marker
            continue
        members = [su for su in sus if (su - 1) // plan.sus_per_pod + 1 == p]
        if len(members) <= MAX_SUS_PER_POD:
            out.append((p, list(members)))
        elif len(shown) < len(pods):
            # Pods collapsed too: one SU and a '… N more' box per pod keeps it compact.
            out.append((p, [members[0], (len(members) - 1,)]))
        else:
            out.append((p, collapse(members, MAX_SUS_PER_POD + 1, head=1)))
    return out


def _draw_rows(cv: Canvas, topo: FabricTopology, s: _Structure, lay: _Layout) -> None:
    """SU frames left to right (grouped in pods in three tiers) and the spine row(s) above."""
    groups = _su_groups(topo, s)
    x: float = MARGIN
    two_tier_spines: list[Device | int] = []
    if not s.three:
        # Two tiers: the spine row may be wider than the SUs; centre the narrower of the two.
        two_tier_spines = sample(s.spines_by_pod.get(0, []), MAX_SPINES)
        members0 = groups[0][1]
        su_span = (
            sum(lay.su_w if not isinstance(m, tuple) else ELLIPSIS_W for m in members0)
            + (len(members0) - 1) * 2 * LEAF_GAP
        )
        row_w = row_width(two_tier_spines, SPINE_W)
        x += max(0.0, (row_w - su_span) / 2)
    start = x
    for pod, members in groups:
        if pod == 0 and s.three:  # hidden pods
            x = _draw_hidden_pods(cv, lay, x, members)
            continue
        start = x + (POD_PAD if s.three else 0)
        sx = _draw_sus(cv, topo, s, lay, members, start)
        width: float = sx - 2 * LEAF_GAP - start
        if not s.three:
            x = sx - 2 * LEAF_GAP
            break
        items = spine_row(cv, s.spines_by_pod.get(pod, []), lay.spine_y, start + width / 2, width)
        lay.spine_items[pod] = items
        width = max(width, items[-1].x + items[-1].w - items[0].x if items else 0)
        lay.pod_boxes.append((x, width + 2 * POD_PAD, pod))
        x += width + 2 * POD_PAD + 3 * LEAF_GAP
    if not s.three:
        span = x - start
        lay.spine_items[0] = row(
            cv, two_tier_spines, lay.spine_y, start + span / 2, SPINE_W, SPINE_H, "spine", "spines"
        )
        x = max(x, MARGIN + row_width(two_tier_spines, SPINE_W))
    else:
        x -= 3 * LEAF_GAP
    # Text is not measured by SVG; ~7 px per character of the 13 px subtitle is safe.
    lay.content_w = max(x - MARGIN, 640, 7.0 * max(len(t) for t in _titles(topo)))


def _draw_hidden_pods(cv: Canvas, lay: _Layout, x: float, members: list[int | tuple[int]]) -> float:
    """The '… N more pods' box; returns the x after it."""
    hidden_pods = members[0][0] if isinstance(members[0], tuple) else 0
    h = lay.su_y + lay.su_h - lay.pod_y
    cv.rect(x, lay.pod_y, ELLIPSIS_W + 20, h, "more")
    cv.label(x + (ELLIPSIS_W + 20) / 2, lay.pod_y + h / 2 - 6, f"… {hidden_pods:,} more", "more-t")
    cv.label(x + (ELLIPSIS_W + 20) / 2, lay.pod_y + h / 2 + 10, "pods (identical)", "more-t")
    return x + ELLIPSIS_W + 20 + 2 * LEAF_GAP


def _draw_sus(
    cv: Canvas,
    topo: FabricTopology,
    s: _Structure,
    lay: _Layout,
    members: list[int | tuple[int]],
    sx: float,
) -> float:
    """The SU frames of one group (and '… N more SUs' boxes); returns the x after them."""
    plan = topo.plan
    su_y, su_h = lay.su_y, lay.su_h
    for m in members:
        if isinstance(m, tuple):
            cv.rect(sx, su_y, ELLIPSIS_W, su_h, "more")
            cv.label(sx + ELLIPSIS_W / 2, su_y + su_h / 2 - 6, f"… {m[0]:,} more", "more-t")
            cv.label(sx + ELLIPSIS_W / 2, su_y + su_h / 2 + 10, "SUs (identical)", "more-t")
            sx += ELLIPSIS_W + 2 * LEAF_GAP
            continue
        lay.leaf_items += _draw_su(
            cv,
            m,
            sx,
            su_y,
            lay.su_w,
            su_h,
            s.servers_by_su[m],
            s.leaves,
            plan.rails,
            plan.leaf_up,
            lay.srv_items,
            s.managers.get(m, []),
        )
        sx += lay.su_w + 2 * LEAF_GAP
    return sx


def _draw_pod_frames(cv: Canvas, topo: FabricTopology, s: _Structure, lay: _Layout) -> None:
    """Pod frames, drawn under everything else."""
    for px, pw, pod in lay.pod_boxes:
        h = lay.su_y + lay.su_h + SU_PAD - lay.pod_y
        cv.rect(px, lay.pod_y, pw, h, "frame-pod", layer="frames")
        cv.frames.insert(0, cv.frames.pop())  # under the SU frames drawn before it
        n_sus = topo.plan.sus_in_pod(pod)
        cv.label(px + 12, lay.pod_y + 19, f"Pod {pod}", "frame-label", anchor="start")
        cv.label(
            px + 26 + 8 * len(f"Pod {pod}"),
            lay.pod_y + 19,
            f"{n_sus} SU{'s' if n_sus != 1 else ''} · {len(s.spines_by_pod.get(pod, [])):,} spines",
            "frame-sub",
            anchor="start",
        )


def _draw_cores(cv: Canvas, topo: FabricTopology, s: _Structure, lay: _Layout) -> None:
    """Three tiers: one box per core group, and spine j of every pod → core group j."""
    plan = topo.plan
    core_y = lay.core_y
    core_items: dict[int, Item] = {}
    groups_all = sorted(s.cores_by_group)
    fit = max(3, int((lay.content_w + CORE_GAP) // (CORE_W + CORE_GAP)))
    keep = min(fit, MAX_CORE_GROUPS)
    shown = collapse(groups_all, keep, head=keep - 2)
    core_row_w = (
        sum(CORE_W if not isinstance(g, tuple) else ELLIPSIS_W for g in shown)
        + (len(shown) - 1) * CORE_GAP
    )
    cx = MARGIN + (lay.content_w - core_row_w) / 2
    for g in shown:
        if isinstance(g, tuple):
            cv.rect(cx, core_y, ELLIPSIS_W, CORE_H, "more")
            cv.label(cx + ELLIPSIS_W / 2, core_y + 16, f"… {g[0]:,} more", "more-t")
            cv.label(cx + ELLIPSIS_W / 2, core_y + 30, "core groups", "more-t")
            cx += ELLIPSIS_W + CORE_GAP
            continue
        group = s.cores_by_group[g]
        cv.rect(
            cx,
            core_y,
            CORE_W,
            CORE_H,
            "core",
            title=f"core group {g}: " + ", ".join(m.name for m in group),
        )
        cv.label(cx + CORE_W / 2, core_y + 16, f"core group {g}", "core-t")
        cv.label(
            cx + CORE_W / 2,
            core_y + 30,
            f"{len(group)} × {plan.switch_model.key.upper()}",
            "core-s",
        )
        core_items[g] = Item(cx, core_y, CORE_W, CORE_H)
        cx += CORE_W + CORE_GAP
    for items in lay.spine_items.values():
        for it in items:
            if it.device is None:
                continue
            target = core_items.get(it.device.index)
            if target is not None:
                cv.line(it.cx, it.y, target.cx, target.y + target.h, "upc")


def _draw_bundles(cv: Canvas, s: _Structure, lay: _Layout) -> bool:
    """Leaf → spine bundles: one line per (leaf, spine) pair actually cabled, or per
    (SU, spine) pair when that would be a grey mesh. Returns True for per-SU lines."""
    per_su = not s.three and len(lay.leaf_items) * len(lay.spine_items.get(0, [])) > MAX_PAIR_LINES
    by_su: dict[int, list[Item]] = defaultdict(list)
    for leaf in lay.leaf_items:
        assert leaf.device is not None
        by_su[leaf.device.su].append(leaf)
    for su_leaves in by_su.values():
        first = su_leaves[0]
        assert first.device is not None
        pod_sp = lay.spine_items.get(first.device.pod, [])
        if per_su:
            left, right = su_leaves[0].x, su_leaves[-1].x + su_leaves[-1].w
            drawn = [sp for sp in pod_sp if sp.device is not None]
            for i, sp in enumerate(drawn):
                lx = left + (i + 1) * (right - left) / (len(drawn) + 1)
                cv.line(lx, lay.su_y, sp.cx, sp.y + sp.h, "up")
            continue
        for leaf in su_leaves:
            assert leaf.device is not None
            drawn = [
                sp
                for sp in pod_sp
                if sp.device is not None and s.bundle.get((leaf.device.name, sp.device.name))
            ]
            for i, sp in enumerate(drawn):
                lx = leaf.x + (i + 1) * leaf.w / (len(drawn) + 1)
                cv.line(lx, leaf.y, sp.cx, sp.y + sp.h, "up")
    return per_su


def _finish(cv: Canvas, topo: FabricTopology, s: _Structure, lay: _Layout, per_su: bool) -> str:
    """Legend under the drawing, the titles on top, and the SVG document."""
    rails = topo.plan.rails
    height: float = lay.su_y + lay.su_h + SU_PAD + (SU_PAD if s.three else 0)
    legend_y = height + 28
    content_w = lay.content_w
    legend_h = legend(cv, MARGIN, legend_y, content_w, rails, s.bundle, s.access, topo, per_su)
    total_w = content_w + 2 * MARGIN
    total_h = legend_y + legend_h + MARGIN
    title, subtitle, counts = _titles(topo)
    cv.label(MARGIN, MARGIN + 22, title, "title", anchor="start")
    cv.label(MARGIN, MARGIN + 44, subtitle, "subtitle", anchor="start")
    cv.label(MARGIN, MARGIN + 62, counts, "subtitle", anchor="start")
    return document(cv, total_w, total_h)


def _titles(topo: FabricTopology) -> tuple[str, str, str]:
    """Title, subtitle (the spec) and the counted switches line."""
    plan = topo.plan
    spec = plan.spec
    fabric = {"infiniband": "InfiniBand", "roce": "RoCEv2", "ethernet": "Ethernet"}[spec.fabric]
    nb = "non-blocking" if plan.non_blocking else f"{plan.oversubscription} oversubscribed"
    subtitle = (
        f"{plan.gpus:,} GPUs · {plural(plan.nodes, 'server')} × {spec.gpus_per_node} GPUs · "
        f"{plan.rails} rails{' × 2 planes' if plan.planes == 2 else ''} · "
        f"{plan.switch_model.name} at {plan.link_gbps}G · {plan.tiers} tiers · {nb}"
    )
    roles = Counter(d.role for d in topo.devices)
    counts = f"{roles['leaf']:,} leaves · {roles['spine']:,} spines"
    if plan.tiers == 3:
        counts += f" · {roles['core']:,} cores"
    counts += f" · {plan.sus:,} SU{'s' if plan.sus != 1 else ''}"
    if plan.tiers == 3:
        counts += f" in {plan.pods:,} pods"
    if roles["manager"]:
        counts += (
            f" · {roles['manager']} fabric manager{'s' if roles['manager'] != 1 else ''} "
            f"on the SU {plan.manager_su} rail leaves"
        )
    if plan.planes == 2:
        counts += " (both planes)"
    return f"{spec.name} — rail-optimized {fabric} fabric", subtitle, counts


def _draw_su(
    cv: Canvas,
    su: int,
    x: float,
    y: float,
    w: float,
    h: float,
    servers: list[Device],
    leaves: dict[tuple[int, int], Device],
    rails: int,
    uplinks: int,
    srv_items: list[Item],
    managers: list[tuple[Device, list[int]]],
) -> list[Item]:
    """One SU frame: its rail leaves, representative servers and NIC cables, and the
    fabric managers cabled to its leaves (they take server positions: drawn in that row)."""
    cv.rect(x, y, w, h, "frame-su", layer="frames")
    cv.label(x + SU_PAD, y + 17, f"SU {su}", "frame-label", anchor="start")
    cv.label(
        x + SU_PAD + 14 + 8 * len(f"SU {su}"),
        y + 17,
        f"{plural(len(servers), 'server')} · {rails} rail leaves",
        "frame-sub",
        anchor="start",
    )
    leaf_row_w = rails * (LEAF_W + LEAF_GAP) - LEAF_GAP
    lx = x + (w - leaf_row_w) / 2
    ly = y + SU_LABEL_H
    items: list[Item] = []
    leaf_pos: dict[int, Item] = {}
    for r in range(1, rails + 1):
        d = leaves.get((su, r))
        if d is None:
            continue
        colour = rail_colour(r, rails)
        cv.rect(
            lx,
            ly,
            LEAF_W,
            LEAF_H,
            "leaf",
            fill=colour,
            title=f"{d.name} — rail {r}, {uplinks} uplinks",
        )
        cv.label(lx + LEAF_W / 2, ly + 15, f"rail {r}", "leaf-t")
        cv.label(lx + LEAF_W / 2, ly + 27, d.name, "leaf-s")
        it = Item(lx, ly, LEAF_W, LEAF_H, device=d)
        items.append(it)
        leaf_pos[r] = it
        lx += LEAF_W + LEAF_GAP
    sampled = sample(servers, max(MAX_SERVERS - len(managers), 4), tail=2)
    widths = [SRV_W if not isinstance(s, int) else SRV_W + 20 for s in sampled]
    total = sum(widths) + SRV_GAP * (len(sampled) - 1)
    total += len(managers) * (SRV_W + SRV_GAP) + (2 * SRV_GAP if managers else 0)
    sx = x + (w - total) / 2
    sy = ly + LEAF_H + NODE_LEAF_GAP
    shown = [s for s in sampled if not isinstance(s, int)]
    for s, bw in zip(sampled, widths, strict=True):
        if isinstance(s, int):
            cv.rect(sx, sy, bw, SRV_H, "more")
            cv.label(sx + bw / 2, sy + 17, f"… {s:,} more", "more-t")
            cv.label(sx + bw / 2, sy + 31, "servers", "more-t")
        else:
            cv.rect(sx, sy, bw, SRV_H, "server", title=s.name)
            label = s.name if s.planned else short(s.name)  # a site name is shown whole
            cv.label(sx + bw / 2, sy + 17, label, "server-t")
            cv.label(sx + bw / 2, sy + 31, s.model, "server-s")
            srv_items.append(Item(sx, sy, bw, SRV_H, device=s))
            j = shown.index(s)
            for r, leaf in leaf_pos.items():
                # NIC r leaves the server top at its own x; lands spread along the leaf bottom.
                nx_ = sx + r * bw / (rails + 1)
                tx = leaf.x + (j + 1) * leaf.w / (len(shown) + 1)
                cv.line(nx_, sy, tx, leaf.y + leaf.h, "nic", rail_colour(r, rails))
        sx += bw + SRV_GAP
    sx += 2 * SRV_GAP if managers else 0
    for m, on in managers:
        cv.rect(sx, sy, SRV_W, SRV_H, "manager", title=f"{m.name} — {m.model}")
        cv.label(sx + SRV_W / 2, sy + 17, m.name, "manager-t")
        cv.label(sx + SRV_W / 2, sy + 31, "manager", "manager-s")
        for r in on:
            if r in leaf_pos:
                leaf = leaf_pos[r]
                tx = leaf.x + leaf.w * 0.85
                cv.line(sx + SRV_W / 2, sy, tx, leaf.y + leaf.h, "mgr", rail_colour(r, rails))
        sx += SRV_W + SRV_GAP
    return items


__all__ = ["RAIL_COLOURS", "diagram_svg", "rail_colour"]
