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

import colorsys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from ..topology import Device, FabricTopology

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
class _Item:
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
class _Canvas:
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


def _sample(items: list[Device], most: int, tail: int = 1) -> list[Device | int]:
    """All items when at most ``most``; else the first ones, the hidden count, the last ``tail``.

    The result has ``most`` entries in all, the hidden count (an int) among them.
    """
    if len(items) <= most:
        return list(items)
    head = max(most - 1 - tail, 1)
    hidden = len(items) - head - tail
    return [*items[:head], hidden, *items[len(items) - tail :]]


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _short(name: str) -> str:
    """Server label inside its SU frame: 'node07' for 'su1-node07'."""
    return name.split("-", 1)[1] if "-" in name else name


_STYLE = """
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


def diagram_svg(topo: FabricTopology) -> str:
    """Render ``topo`` as a self-contained SVG document (see the module docstring)."""
    plan = topo.plan
    rails = plan.rails
    cv = _Canvas()

    # ---- structure, read from the devices (plane 1; plane 2 mirrors it)
    servers_by_su: dict[int, list[Device]] = defaultdict(list)
    leaves: dict[tuple[int, int], Device] = {}
    spines_by_pod: dict[int, list[Device]] = defaultdict(list)
    cores_by_group: dict[int, list[Device]] = defaultdict(list)
    access: Counter[str] = Counter()
    for d in topo.devices:
        if d.role == "server":
            servers_by_su[d.su].append(d)
        elif d.role == "leaf" and d.plane == 1:
            leaves[(d.su, d.rail)] = d
        elif d.role == "spine" and d.plane == 1:
            spines_by_pod[d.pod].append(d)
        elif d.role == "core" and d.plane == 1:
            cores_by_group[(d.index - 1) // max(1, plan.cores_per_group) + 1].append(d)
        elif d.role in ("storage", "inband", "oob"):
            access[d.role] += 1
    bundle: Counter[tuple[str, str]] = Counter()
    for k in topo.links_of("leaf_spine", "spine_core"):
        if k.plane == 1:
            bundle[(k.a_device, k.b_device)] += 1
    sus = sorted(servers_by_su)
    three = plan.tiers == 3

    # ---- horizontal layout of SU frames (and pods)
    leaf_row_w = rails * (LEAF_W + LEAF_GAP) - LEAF_GAP
    most = max((len(v) for v in servers_by_su.values()), default=1)
    srv_shown = min(most, MAX_SERVERS)
    srv_row_w = srv_shown * (SRV_W + SRV_GAP) - SRV_GAP + (20 if most > MAX_SERVERS else 0)
    su_w = max(leaf_row_w, srv_row_w, 150) + 2 * SU_PAD
    su_h = SU_LABEL_H + LEAF_H + NODE_LEAF_GAP + SRV_H + SU_PAD

    def su_groups() -> list[tuple[int, list[int | tuple[int]]]]:
        """(pod, [su or (hidden_count,)]) in drawing order."""
        if not three:
            return [(0, _collapse(sus, MAX_SUS, head=MAX_SUS - 2))]
        pods = sorted({(s - 1) // plan.sus_per_pod + 1 for s in sus})
        shown = _collapse(pods, MAX_PODS + 1, head=1) if len(pods) > MAX_PODS else pods
        out: list[tuple[int, list[int | tuple[int]]]] = []
        for p in shown:
            if isinstance(p, tuple):
                out.append((0, [p]))  # a hidden-pods marker
                continue
            members = [s for s in sus if (s - 1) // plan.sus_per_pod + 1 == p]
            if len(members) <= MAX_SUS_PER_POD:
                out.append((p, list(members)))
            elif len(shown) < len(pods):
                # Pods collapsed too: one SU and a '… N more' box per pod keeps it compact.
                out.append((p, [members[0], (len(members) - 1,)]))
            else:
                out.append((p, _collapse(members, MAX_SUS_PER_POD + 1, head=1)))
        return out

    groups = su_groups()
    title_h = 84
    y = MARGIN + title_h
    core_y = y
    if three:
        y += CORE_H + TIER_GAP
    pod_y = y
    spine_y = y + (POD_LABEL_H + 8 if three else 0)
    su_y = spine_y + SPINE_H + TIER_GAP

    x: float = MARGIN
    two_tier_spines: list[Device | int] = []
    if not three:
        # Two tiers: the spine row may be wider than the SUs; centre the narrower of the two.
        two_tier_spines = _sample(spines_by_pod.get(0, []), MAX_SPINES)
        members0 = groups[0][1]
        su_span = (
            sum(su_w if not isinstance(m, tuple) else ELLIPSIS_W for m in members0)
            + (len(members0) - 1) * 2 * LEAF_GAP
        )
        row_w = _row_width(two_tier_spines, SPINE_W)
        x += max(0.0, (row_w - su_span) / 2)
    leaf_items: list[_Item] = []
    spine_items: dict[int, list[_Item]] = {}
    pod_boxes: list[tuple[float, float, int]] = []  # (x, width, pod)
    srv_items: list[_Item] = []
    for pod, members in groups:
        if pod == 0 and three:  # hidden pods
            hidden_pods = members[0][0] if isinstance(members[0], tuple) else 0
            h = su_y + su_h - pod_y
            cv.rect(x, pod_y, ELLIPSIS_W + 20, h, "more")
            cv.label(
                x + (ELLIPSIS_W + 20) / 2, pod_y + h / 2 - 6, f"… {hidden_pods:,} more", "more-t"
            )
            cv.label(x + (ELLIPSIS_W + 20) / 2, pod_y + h / 2 + 10, "pods (identical)", "more-t")
            x += ELLIPSIS_W + 20 + 2 * LEAF_GAP
            continue
        start = x + (POD_PAD if three else 0)
        sx = start
        for m in members:
            if isinstance(m, tuple):
                cv.rect(sx, su_y, ELLIPSIS_W, su_h, "more")
                cv.label(sx + ELLIPSIS_W / 2, su_y + su_h / 2 - 6, f"… {m[0]:,} more", "more-t")
                cv.label(sx + ELLIPSIS_W / 2, su_y + su_h / 2 + 10, "SUs (identical)", "more-t")
                sx += ELLIPSIS_W + 2 * LEAF_GAP
                continue
            leaf_items += _draw_su(
                cv,
                m,
                sx,
                su_y,
                su_w,
                su_h,
                servers_by_su[m],
                leaves,
                rails,
                plan.leaf_up,
                srv_items,
            )
            sx += su_w + 2 * LEAF_GAP
        width: float = sx - 2 * LEAF_GAP - start
        if not three:
            x = sx - 2 * LEAF_GAP
            break
        items = _spine_row(cv, spines_by_pod.get(pod, []), spine_y, start + width / 2, width)
        spine_items[pod] = items
        width = max(width, items[-1].x + items[-1].w - items[0].x if items else 0)
        pod_boxes.append((x, width + 2 * POD_PAD, pod))
        x += width + 2 * POD_PAD + 3 * LEAF_GAP
    if not three:
        span = x - start
        spine_items[0] = _row(
            cv, two_tier_spines, spine_y, start + span / 2, SPINE_W, SPINE_H, "spine", "spines"
        )
        x = max(x, MARGIN + _row_width(two_tier_spines, SPINE_W))
    else:
        x -= 3 * LEAF_GAP
    # Text is not measured by SVG; ~7 px per character of the 13 px subtitle is safe.
    content_w = max(x - MARGIN, 640, 7.0 * max(len(t) for t in _titles(topo)))

    # ---- pod frames (drawn under everything else)
    for px, pw, pod in pod_boxes:
        h = su_y + su_h + SU_PAD - pod_y
        cv.rect(px, pod_y, pw, h, "frame-pod", layer="frames")
        cv.frames.insert(0, cv.frames.pop())  # under the SU frames drawn before it
        n_sus = plan.sus_in_pod(pod)
        cv.label(px + 12, pod_y + 19, f"Pod {pod}", "frame-label", anchor="start")
        cv.label(
            px + 26 + 8 * len(f"Pod {pod}"),
            pod_y + 19,
            f"{n_sus} SU{'s' if n_sus != 1 else ''} · {len(spines_by_pod.get(pod, [])):,} spines",
            "frame-sub",
            anchor="start",
        )

    # ---- cores (three tiers): one box per core group
    core_items: dict[int, _Item] = {}
    if three:
        groups_all = sorted(cores_by_group)
        fit = max(3, int((content_w + CORE_GAP) // (CORE_W + CORE_GAP)))
        keep = min(fit, MAX_CORE_GROUPS)
        shown = _collapse(groups_all, keep, head=keep - 2)
        core_row_w = (
            sum(CORE_W if not isinstance(g, tuple) else ELLIPSIS_W for g in shown)
            + (len(shown) - 1) * CORE_GAP
        )
        cx = MARGIN + (content_w - core_row_w) / 2
        for g in shown:
            if isinstance(g, tuple):
                cv.rect(cx, core_y, ELLIPSIS_W, CORE_H, "more")
                cv.label(cx + ELLIPSIS_W / 2, core_y + 16, f"… {g[0]:,} more", "more-t")
                cv.label(cx + ELLIPSIS_W / 2, core_y + 30, "core groups", "more-t")
                cx += ELLIPSIS_W + CORE_GAP
                continue
            group = cores_by_group[g]
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
            core_items[g] = _Item(cx, core_y, CORE_W, CORE_H)
            cx += CORE_W + CORE_GAP
        # spine j of every pod → core group j
        for items in spine_items.values():
            for it in items:
                if it.device is None:
                    continue
                target = core_items.get(it.device.index)
                if target is not None:
                    cv.line(it.cx, it.y, target.cx, target.y + target.h, "upc")

    # ---- leaf → spine bundles: one line per (leaf, spine) pair actually cabled, or per
    # (SU, spine) pair when that would be a grey mesh
    per_su = not three and len(leaf_items) * len(spine_items.get(0, [])) > MAX_PAIR_LINES
    by_su: dict[int, list[_Item]] = defaultdict(list)
    for leaf in leaf_items:
        assert leaf.device is not None
        by_su[leaf.device.su].append(leaf)
    for su_leaves in by_su.values():
        first = su_leaves[0]
        assert first.device is not None
        pod_sp = spine_items.get(first.device.pod, [])
        if per_su:
            left, right = su_leaves[0].x, su_leaves[-1].x + su_leaves[-1].w
            drawn = [s for s in pod_sp if s.device is not None]
            for i, s in enumerate(drawn):
                lx = left + (i + 1) * (right - left) / (len(drawn) + 1)
                cv.line(lx, su_y, s.cx, s.y + s.h, "up")
            continue
        for leaf in su_leaves:
            assert leaf.device is not None
            drawn = [
                s
                for s in pod_sp
                if s.device is not None and bundle.get((leaf.device.name, s.device.name))
            ]
            for i, s in enumerate(drawn):
                lx = leaf.x + (i + 1) * leaf.w / (len(drawn) + 1)
                cv.line(lx, leaf.y, s.cx, s.y + s.h, "up")

    height: float = su_y + su_h + SU_PAD + (SU_PAD if three else 0)
    legend_y = height + 28
    legend_h = _legend(cv, MARGIN, legend_y, content_w, rails, bundle, access, topo, per_su)
    total_w = content_w + 2 * MARGIN
    total_h = legend_y + legend_h + MARGIN

    title, subtitle, counts = _titles(topo)
    cv.label(MARGIN, MARGIN + 22, title, "title", anchor="start")
    cv.label(MARGIN, MARGIN + 44, subtitle, "subtitle", anchor="start")
    cv.label(MARGIN, MARGIN + 62, counts, "subtitle", anchor="start")

    return _document(cv, total_w, total_h)


def _titles(topo: FabricTopology) -> tuple[str, str, str]:
    """Title, subtitle (the spec) and the counted switches line."""
    plan = topo.plan
    spec = plan.spec
    fabric = {"infiniband": "InfiniBand", "roce": "RoCEv2", "ethernet": "Ethernet"}[spec.fabric]
    nb = "non-blocking" if plan.non_blocking else f"{plan.oversubscription} oversubscribed"
    subtitle = (
        f"{spec.gpus:,} GPUs · {_plural(plan.nodes, 'server')} × {spec.gpus_per_node} GPUs · "
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
    if plan.planes == 2:
        counts += " (both planes)"
    return f"{spec.name} — rail-optimized {fabric} fabric", subtitle, counts


def _collapse(items: list[int], keep: int, head: int) -> list[int | tuple[int]]:
    """Like :func:`_sample` for plain ints; the hidden count comes back as a 1-tuple."""
    if len(items) <= keep:
        return list(items)
    tail = max(keep - head - 1, 1)
    hidden = len(items) - head - tail
    return [*items[:head], (hidden,), *items[len(items) - tail :]]


def _row_width(sampled: list[Device | int], w: float) -> float:
    """Width of a row drawn by :func:`_row`."""
    return sum(w if not isinstance(s, int) else ELLIPSIS_W for s in sampled) + SPINE_GAP * (
        len(sampled) - 1
    )


def _row(
    cv: _Canvas,
    sampled: list[Device | int],
    y: float,
    center: float,
    w: float,
    h: float,
    cls: str,
    noun: str,
) -> list[_Item]:
    """Draw a centred row of switch boxes (ints are '… N more' boxes); return the items."""
    widths = [w if not isinstance(s, int) else ELLIPSIS_W for s in sampled]
    x = center - _row_width(sampled, w) / 2
    items: list[_Item] = []
    for s, bw in zip(sampled, widths, strict=True):
        if isinstance(s, int):
            cv.rect(x, y, bw, h, "more")
            cv.label(x + bw / 2, y + h / 2 + 4, f"… {s:,} more {noun}", "more-t")
            items.append(_Item(x, y, bw, h, hidden=s))
        else:
            cv.rect(x, y, bw, h, cls, title=s.name)
            cv.label(
                x + bw / 2,
                y + h / 2 + 4,
                s.name.rsplit("-", 2)[-2] + "-" + s.name.rsplit("-", 1)[-1],
                f"{cls}-t",
            )
            items.append(_Item(x, y, bw, h, device=s))
        x += bw + SPINE_GAP
    return items


def _spine_row(
    cv: _Canvas, spines: list[Device], y: float, center: float, width: float
) -> list[_Item]:
    """The spines of a pod (or of the fabric) in a row as wide as ``width`` allows."""
    fit = max(3, int((max(width, 3 * SPINE_W) + SPINE_GAP) // (SPINE_W + SPINE_GAP)))
    return _row(
        cv,
        _sample(spines, min(MAX_POD_SPINES, fit)),
        y,
        center,
        SPINE_W,
        SPINE_H,
        "spine",
        "spines",
    )


def _draw_su(
    cv: _Canvas,
    su: int,
    x: float,
    y: float,
    w: float,
    h: float,
    servers: list[Device],
    leaves: dict[tuple[int, int], Device],
    rails: int,
    uplinks: int,
    srv_items: list[_Item],
) -> list[_Item]:
    """One SU frame: its rail leaves, representative servers and NIC cables."""
    cv.rect(x, y, w, h, "frame-su", layer="frames")
    cv.label(x + SU_PAD, y + 17, f"SU {su}", "frame-label", anchor="start")
    cv.label(
        x + SU_PAD + 14 + 8 * len(f"SU {su}"),
        y + 17,
        f"{_plural(len(servers), 'server')} · {rails} rail leaves",
        "frame-sub",
        anchor="start",
    )
    leaf_row_w = rails * (LEAF_W + LEAF_GAP) - LEAF_GAP
    lx = x + (w - leaf_row_w) / 2
    ly = y + SU_LABEL_H
    items: list[_Item] = []
    leaf_pos: dict[int, _Item] = {}
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
        it = _Item(lx, ly, LEAF_W, LEAF_H, device=d)
        items.append(it)
        leaf_pos[r] = it
        lx += LEAF_W + LEAF_GAP
    sampled = _sample(servers, MAX_SERVERS, tail=2)
    widths = [SRV_W if not isinstance(s, int) else SRV_W + 20 for s in sampled]
    total = sum(widths) + SRV_GAP * (len(sampled) - 1)
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
            cv.label(sx + bw / 2, sy + 17, _short(s.name), "server-t")
            cv.label(sx + bw / 2, sy + 31, s.model, "server-s")
            srv_items.append(_Item(sx, sy, bw, SRV_H, device=s))
            j = shown.index(s)
            for r, leaf in leaf_pos.items():
                # NIC r leaves the server top at its own x; lands spread along the leaf bottom.
                nx_ = sx + r * bw / (rails + 1)
                tx = leaf.x + (j + 1) * leaf.w / (len(shown) + 1)
                cv.line(nx_, sy, tx, leaf.y + leaf.h, "nic", rail_colour(r, rails))
        sx += bw + SRV_GAP
    return items


def _legend(
    cv: _Canvas,
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
        else:
            cv.line(x + 14, ly - 3, x + 54, ly - 3, cls)
        cv.label(x + 66, ly + 1, text, "legend-t", anchor="start")
        ly += 20
    for n in notes:
        cv.label(x + 14, ly + 1, n, "note", anchor="start")
        ly += 18
    return h


def _document(cv: _Canvas, w: float, h: float) -> str:
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" height="{h:.0f}" '
        f'viewBox="0 0 {w:.0f} {h:.0f}">\n<style>{_STYLE}</style>\n'
        f'<rect x="0" y="0" width="{w:.0f}" height="{h:.0f}" fill="#ffffff"/>\n'
    )
    body = "\n".join([*cv.frames, *cv.lines, *cv.boxes, *cv.text])
    return head + body + "\n</svg>\n"


__all__ = ["RAIL_COLOURS", "diagram_svg", "rail_colour"]
