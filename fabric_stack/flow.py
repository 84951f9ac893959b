"""Flow questions on the compute fabric that must stay fast at 32k GPUs.

Two computations, both pure and both over *aggregated* link capacities (one
number per connected switch pair), not over the 100k-edge port graph:

* :func:`updown_maxflow_gbps` — the bisection after failures. It is a max-flow
  between the two halves of the NIC ports (the cut ``size`` and ``verify``
  use: NIC ports in (SU, rail, server) order, first half against second half),
  over the *up-down* (valley-free) graph: traffic climbs leaf → spine → core
  and descends, never down and up again, as ftree/up-down routing and ECMP
  forward it. Healthy, this equals the sizing figure and ``verify``'s
  networkx min-cut (the tests check it); after failures it is what routing can
  still carry. The trick that keeps it fast: identical switches are merged
  first. Colour refinement finds the coarsest *equitable* partition (every
  member of a class has the same capacity to and from every other class); a
  max-flow on the quotient graph equals the max-flow on the full graph,
  because any quotient flow spreads evenly back over the members. A healthy
  32k-GPU fabric collapses to a few dozen classes, and a failure only splits
  off the switches it touches.
* :func:`ecmp_widths` — first-hop ECMP width for every pair of same-rail
  leaves in different SUs: the uplinks of leaf *a* whose spine still has an
  up-down path to leaf *b*. Leaves with the same uplink vector are counted as
  one class, so the work is per class pair, not per leaf pair.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

INF = 1 << 50
"""Capacity of an edge that never limits (a switch turning traffic around)."""


@dataclass(frozen=True, slots=True)
class PlaneFlow:
    """One plane's flow problem: NIC supply per leaf side and aggregated uplink capacity.

    ``supply[leaf] = (source_gbps, sink_gbps)``: the live NIC capacity on each
    side of the cut. ``uplinks[(lower, upper)]``: live capacity (one way, Gb/s)
    between a leaf and a spine or a spine and a core.
    """

    supply: Mapping[str, tuple[int, int]]
    uplinks: Mapping[tuple[str, str], int]


def _graph(problem: PlaneFlow) -> tuple[int, list[list[tuple[int, int]]], list[int]]:
    """Integer up-down graph: (node count, out-adjacency, initial colours)."""
    ids: dict[tuple[str, int], int] = {("", 0): 0, ("", 1): 1}  # source, sink
    colour = [0, 1]

    def node(name: str, up: int, tier: int) -> int:
        key = (name, up)
        got = ids.get(key)
        if got is None:
            got = ids[key] = len(colour)
            colour.append(2 + 2 * tier + up)
            # every switch turns traffic around: up copy → down copy
            if up:
                down = node(name, 0, tier)
                out[got].append((down, INF))
        return got

    out: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
    tiers: dict[str, int] = {leaf: 0 for leaf in problem.supply}
    for lower, upper in problem.uplinks:
        tiers.setdefault(lower, 0)
        tiers[upper] = max(tiers.get(upper, 0), tiers[lower] + 1)
    for leaf, (s, t) in problem.supply.items():
        if s:
            out[0].append((node(leaf, 1, 0), s))
        if t:
            out[node(leaf, 0, 0)].append((1, t))
    for (lower, upper), cap in problem.uplinks.items():
        if cap <= 0:
            continue
        lo_up, hi_up = node(lower, 1, tiers[lower]), node(upper, 1, tiers[upper])
        out[lo_up].append((hi_up, cap))
        out[node(upper, 0, tiers[upper])].append((node(lower, 0, tiers[lower]), cap))
    n = len(colour)
    return n, [out.get(v, []) for v in range(n)], colour


def equitable_classes(
    n: int, out_adj: Sequence[Sequence[tuple[int, int]]], init: list[int]
) -> list[int]:
    """Coarsest equitable refinement of ``init`` (capacity-weighted colour refinement)."""
    in_adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for v in range(n):
        for w, c in out_adj[v]:
            in_adj[w].append((v, c))
    colour, classes = init, len(set(init))
    while True:
        sigs: dict[tuple[object, ...], int] = {}
        new = [0] * n
        for v in range(n):
            o: defaultdict[int, int] = defaultdict(int)
            for w, c in out_adj[v]:
                o[colour[w]] += c
            i: defaultdict[int, int] = defaultdict(int)
            for u, c in in_adj[v]:
                i[colour[u]] += c
            key = (colour[v], tuple(sorted(o.items())), tuple(sorted(i.items())))
            new[v] = sigs.setdefault(key, len(sigs))
        if len(sigs) == classes:
            return new
        colour, classes = new, len(sigs)


def updown_maxflow_gbps(problem: PlaneFlow) -> int:
    """One-way max-flow (Gb/s) across the cut over the up-down graph of one plane."""
    if not any(s for s, _ in problem.supply.values()) or not any(
        t for _, t in problem.supply.values()
    ):
        return 0
    n, out_adj, init = _graph(problem)
    cls = equitable_classes(n, out_adj, init)
    cap: defaultdict[tuple[int, int], int] = defaultdict(int)
    for v in range(n):
        for w, c in out_adj[v]:
            if cls[v] != cls[w]:
                cap[(cls[v], cls[w])] += c
    g = nx.DiGraph()
    for (a, b), c in cap.items():
        g.add_edge(a, b, capacity=c)
    if cls[0] not in g or cls[1] not in g:
        return 0
    value: int = nx.maximum_flow_value(g, cls[0], cls[1])
    return value


# --------------------------------------------------------------------------- ECMP


@dataclass(frozen=True, slots=True)
class LeafUplinks:
    """One leaf's live links to each spine position of its pod (index j = spine j)."""

    name: str
    plane: int
    rail: int
    su: int
    pod: int
    links: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class EcmpResult:
    """Widths over every pair of same-rail, same-plane leaves in different SUs."""

    pairs: int
    minimum: int | None
    median: float | None
    degraded: int
    worst: tuple[tuple[int, int, int, int, int], ...]
    """Up to 10 (width, plane, rail, su_a, su_b), narrowest first."""


def ecmp_widths(
    leaves: Sequence[LeafUplinks],
    cross_reach: Mapping[tuple[int, int, int, int], bool],
    healthy: int,
) -> EcmpResult:
    """ECMP width statistics (module docstring). ``cross_reach[(plane, pod_a, pod_b, j)]``
    says whether spine j of pod a reaches spine j of pod b through a live core."""
    classes: dict[tuple[int, int, int, tuple[int, ...]], list[LeafUplinks]] = defaultdict(list)
    for leaf in leaves:
        classes[(leaf.plane, leaf.rail, leaf.pod, leaf.links)].append(leaf)
    by_rail: dict[tuple[int, int], list[tuple[int, tuple[int, ...], list[LeafUplinks]]]] = (
        defaultdict(list)
    )
    for (plane, rail, pod, links), members in classes.items():
        by_rail[(plane, rail)].append((pod, links, members))
    hist: defaultdict[int, int] = defaultdict(int)
    worst: list[tuple[int, int, int, int, int]] = []
    for (plane, rail), group in by_rail.items():
        for i, (pod_a, links_a, mem_a) in enumerate(group):
            for k in range(i, len(group)):
                pod_b, links_b, mem_b = group[k]
                same = k == i
                count = len(mem_a) * (len(mem_a) - 1) // 2 if same else len(mem_a) * len(mem_b)
                if not count:
                    continue
                w = _width(plane, pod_a, links_a, pod_b, links_b, cross_reach)
                w2 = _width(plane, pod_b, links_b, pod_a, links_a, cross_reach)
                width = min(w, w2)
                hist[width] += count
                if width < healthy and len(worst) < 200:
                    a, b = mem_a[0], (mem_b[1] if same else mem_b[0])
                    worst.append((width, plane, rail, min(a.su, b.su), max(a.su, b.su)))
    return _summarize(hist, healthy, worst)


def _width(
    plane: int,
    pod_a: int,
    links_a: tuple[int, ...],
    pod_b: int,
    links_b: tuple[int, ...],
    cross_reach: Mapping[tuple[int, int, int, int], bool],
) -> int:
    total = 0
    for j, n in enumerate(links_a):
        if (
            n
            and j < len(links_b)
            and links_b[j]
            and (pod_a == pod_b or cross_reach.get((plane, pod_a, pod_b, j), False))
        ):
            total += n
    return total


def _summarize(
    hist: Mapping[int, int], healthy: int, worst: list[tuple[int, int, int, int, int]]
) -> EcmpResult:
    pairs = sum(hist.values())
    if not pairs:
        return EcmpResult(0, None, None, 0, ())
    ordered = sorted(hist.items())
    lo = (pairs - 1) // 2
    hi = pairs // 2
    seen, vals = 0, {}
    for width, count in ordered:
        for k in (lo, hi):
            if seen <= k < seen + count:
                vals[k] = width
        seen += count
    degraded = sum(c for w, c in hist.items() if w < healthy)
    return EcmpResult(
        pairs,
        ordered[0][0],
        (vals[lo] + vals[hi]) / 2,
        degraded,
        tuple(sorted(set(worst))[:10]),
    )


__all__ = [
    "EcmpResult",
    "LeafUplinks",
    "PlaneFlow",
    "ecmp_widths",
    "equitable_classes",
    "updown_maxflow_gbps",
]
