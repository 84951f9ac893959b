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
* :func:`measure_ecmp_widths` — first-hop ECMP width for every pair of same-rail,
  same-plane leaves (in different SUs, or two leaves of one rail in the same SU when
  an SU has several leaves per rail): the uplinks of leaf *a* whose spine still has an
  up-down path to leaf *b*. Leaves with the same uplink vector are counted as
  one class, so the work is per class pair, not per leaf pair.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
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


class CompiledPlane:
    """A plane's up-down graph in integers, built once; failures only change capacities.

    Node 0 is the source and 1 the sink. Every switch has an up and a down copy
    joined by an unbounded edge (it can turn traffic around). Edge ``k`` goes
    ``heads[k] → tails[k]`` with healthy capacity ``caps[k]``; ``supply_edge`` and
    ``uplink_edges`` find the edges of a leaf's NIC side and of a switch pair.
    """

    def __init__(self, problem: PlaneFlow) -> None:
        self.ids: dict[tuple[str, int], int] = {}
        self.heads: list[int] = []
        self.tails: list[int] = []
        self.caps: list[int] = []
        init = [0, 1]
        tiers: dict[str, int] = dict.fromkeys(problem.supply, 0)
        for lower, upper in sorted(problem.uplinks):
            tiers[upper] = max(tiers.get(upper, 0), tiers.setdefault(lower, 0) + 1)

        def node(name: str, up: int) -> int:
            got = self.ids.get((name, up))
            if got is None:
                got = self.ids[(name, up)] = len(init)
                init.append(2 + 2 * tiers.get(name, 0) + up)
            return got

        for name in sorted(tiers):
            self._edge(node(name, 1), node(name, 0), INF)
        self.supply_edge: dict[tuple[str, int], int] = {}
        for leaf, (s, t) in sorted(problem.supply.items()):
            self.supply_edge[(leaf, 0)] = self._edge(0, node(leaf, 1), s)
            self.supply_edge[(leaf, 1)] = self._edge(node(leaf, 0), 1, t)
        self.uplink_edges: dict[tuple[str, str], tuple[int, int]] = {}
        for (lower, upper), cap in sorted(problem.uplinks.items()):
            self.uplink_edges[(lower, upper)] = (
                self._edge(node(lower, 1), node(upper, 1), cap),
                self._edge(node(upper, 0), node(lower, 0), cap),
            )
        self.n = len(init)
        self.out: list[list[int]] = [[] for _ in range(self.n)]
        self.inc: list[list[int]] = [[] for _ in range(self.n)]
        for k, (a, b) in enumerate(zip(self.heads, self.tails, strict=True)):
            self.out[a].append(k)
            self.inc[b].append(k)
        self.healthy_colours = self.refine(init, self.caps)

    def _edge(self, a: int, b: int, cap: int) -> int:
        self.heads.append(a)
        self.tails.append(b)
        self.caps.append(cap)
        return len(self.caps) - 1

    def refine(self, colour: list[int], caps: Sequence[int]) -> list[int]:
        """Capacity-weighted colour refinement from ``colour`` until stable (equitable)."""
        heads, tails, out, inc = self.heads, self.tails, self.out, self.inc
        classes = len(set(colour))
        while True:
            sigs: dict[tuple[object, ...], int] = {}
            new = [0] * self.n
            for v in range(self.n):
                o: dict[int, int] = {}
                for k in out[v]:
                    c = colour[tails[k]]
                    o[c] = o.get(c, 0) + caps[k]
                i: dict[int, int] = {}
                for k in inc[v]:
                    c = colour[heads[k]]
                    i[c] = i.get(c, 0) + caps[k]
                key = (colour[v], tuple(sorted(o.items())), tuple(sorted(i.items())))
                new[v] = sigs.setdefault(key, len(sigs))
            if len(sigs) == classes:
                return new
            colour, classes = new, len(sigs)

    def _signature(self, v: int, colour: list[int], caps: Sequence[int]) -> tuple[object, ...]:
        o: dict[int, int] = {}
        for k in self.out[v]:
            c = colour[self.tails[k]]
            o[c] = o.get(c, 0) + caps[k]
        i: dict[int, int] = {}
        for k in self.inc[v]:
            c = colour[self.heads[k]]
            i[c] = i.get(c, 0) + caps[k]
        return (tuple(sorted(o.items())), tuple(sorted(i.items())))

    def _neighbours(self, v: int) -> Iterator[int]:
        for k in self.out[v]:
            yield self.tails[k]
        for k in self.inc[v]:
            yield self.heads[k]

    def refine_locally(self, changes: Mapping[int, int], caps: Sequence[int]) -> list[int]:
        """Stable refinement after ``changes``, re-examining only what they can reach.

        The ends of every changed edge become singletons. Invariant: inside a
        class, every member that is not *dirty* (next to a node whose colour
        just changed) has the same signature. Each round splits the dirty
        members off their class when their signature differs from a clean
        member's; the nodes that moved make their neighbours dirty. It ends when
        nothing moves, and then the partition is equitable.
        """
        colour = list(self.healthy_colours)
        members: dict[int, set[int]] = defaultdict(set)
        for v, c in enumerate(colour):
            members[c].add(v)
        next_label = max(colour) + 1
        moved: set[int] = set()
        for k in changes:
            for v in (self.heads[k], self.tails[k]):
                if len(members[colour[v]]) > 1 and v not in moved:
                    members[colour[v]].discard(v)
                    colour[v] = next_label
                    members[next_label] = {v}
                    next_label += 1
                moved.add(v)
        while moved:
            dirty = {w for v in moved for w in self._neighbours(v)}
            moved = set()
            by_class: dict[int, list[int]] = defaultdict(list)
            for v in dirty:
                by_class[colour[v]].append(v)
            new_colour: dict[int, int] = {}
            for c, vs in by_class.items():
                clean = next((m for m in members[c] if m not in dirty), None)
                groups: dict[tuple[object, ...], list[int]] = defaultdict(list)
                for v in vs:
                    groups[self._signature(v, colour, caps)].append(v)
                keep = (
                    self._signature(clean, colour, caps)
                    if clean is not None
                    else max(groups, key=lambda g: (len(groups[g]), min(groups[g])))
                )
                for sig, vs_sig in groups.items():
                    if sig == keep:
                        continue
                    for v in vs_sig:
                        new_colour[v] = next_label
                    next_label += 1
            for v, c in new_colour.items():
                members[colour[v]].discard(v)
                members[c].add(v)
                colour[v] = c
                moved.add(v)
        return colour

    def maxflow(self, changes: Mapping[int, int] | None = None) -> int:
        """One-way max-flow source → sink with edge capacities overridden by ``changes``.

        Refinement starts from the healthy classes with the changed edges' ends
        split off, so only the neighbourhood of a failure is re-examined. Any
        stable refinement is equitable, and the quotient keeps the max-flow.
        """
        caps = self.caps
        colour = self.healthy_colours
        if changes:
            caps = list(caps)
            for k, c in changes.items():
                caps[k] = c
            colour = self.refine_locally(changes, caps)
        agg: defaultdict[tuple[int, int], int] = defaultdict(int)
        for k, c in enumerate(caps):
            a, b = colour[self.heads[k]], colour[self.tails[k]]
            if a != b and c > 0:
                agg[(a, b)] += c
        g = nx.DiGraph()
        for (a, b), c in agg.items():
            g.add_edge(a, b, capacity=c)
        if colour[0] not in g or colour[1] not in g:
            return 0
        value: int = nx.maximum_flow_value(g, colour[0], colour[1])
        return value


def updown_maxflow_gbps(problem: PlaneFlow) -> int:
    """One-way max-flow (Gb/s) across the cut over the up-down graph of one plane."""
    return CompiledPlane(problem).maxflow()


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
    """Widths over every pair of same-rail, same-plane leaves (different SUs, or the same
    SU with several leaves per rail)."""

    pairs: int
    minimum: int | None
    median: float | None
    degraded: int
    worst: tuple[tuple[int, int, int, int, int], ...]
    """Up to 10 (width, plane, rail, su_a, su_b), narrowest first."""


def measure_ecmp_widths(
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
    "CompiledPlane",
    "EcmpResult",
    "LeafUplinks",
    "PlaneFlow",
    "measure_ecmp_widths",
    "updown_maxflow_gbps",
]
