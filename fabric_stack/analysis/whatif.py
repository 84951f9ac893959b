"""What a failure (or a drain) does to the compute fabric: the `whatif` stage.

:func:`analyze_failures` takes a :class:`~fabric_stack.topology.build.FabricTopology`
and a list of :class:`Failure` (a whole device, or one ``DEVICE:PORT`` cable
end) and returns a :class:`WhatIfResult`:

* **bisection** before and after, over the same cut ``size`` and ``verify`` use
  (NIC ports in (SU, rail, server) order, first half against second half),
  computed as an up-down max-flow on aggregated capacities
  (:func:`fabric_stack.analysis.flow.updown_maxflow_gbps`), ×2 for full duplex;
* **isolated** GPUs and servers (no live NIC link left), per rail and plane,
  rails that lost their leaf, and leaves cut off from every spine;
* **ECMP width** between same-rail leaves of every SU pair
  (:func:`fabric_stack.analysis.flow.measure_ecmp_widths`);
* **capacity lost** per tier (failed cables / cables of that tier).

:func:`n_minus_1` ranks every single switch (or cable) failure by what it
does. Pure: no I/O; the CLI adapts the result. A drained device is taken out
of service exactly like a failed one; only its label differs.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from fabric_stack.analysis.flow import CompiledPlane, LeafUplinks, PlaneFlow, measure_ecmp_widths
from fabric_stack.analysis.whatif_results import (
    BeforeAfter,
    CapacityLost,
    Ecmp,
    EcmpPair,
    FailedItem,
    Failure,
    FailureKind,
    Isolated,
    NMinus1Row,
    WhatIfResult,
)
from fabric_stack.errors import SpecError
from fabric_stack.sizing.rail_groups import GROUPING_MEANING
from fabric_stack.topology.build import COMPUTE_ROLES, FabricTopology, Link


def parse_failure(text: str, kind: FailureKind = "fail") -> Failure:
    """``DEVICE`` or ``DEVICE:PORT`` (device names never contain ':') → :class:`Failure`."""
    device, _, port = text.strip().partition(":")
    if not device:
        raise SpecError(
            f"--{kind}", f"{text!r} names no device", "e.g. spine-01 or su1-r1-leaf:1/1/1"
        )
    return Failure(device=device, port=port, kind=kind)


@dataclass(frozen=True)
class FabricIndex:
    """The compute fabric of a topology, indexed once for many what-if questions."""

    topo: FabricTopology

    @cached_property
    def links(self) -> tuple[Link, ...]:
        """Compute cables (node-leaf, leaf-spine, spine-core)."""
        return tuple(self.topo.links_of(*COMPUTE_ROLES))

    @cached_property
    def by_device(self) -> dict[str, list[int]]:
        """Compute-cable indices per device."""
        out: dict[str, list[int]] = defaultdict(list)
        for i, link in enumerate(self.links):
            out[link.a_device].append(i)
            out[link.b_device].append(i)
        return dict(out)

    @cached_property
    def by_port(self) -> dict[tuple[str, str], int]:
        """Compute-cable index per (device, port) end."""
        out: dict[tuple[str, str], int] = {}
        for i, link in enumerate(self.links):
            out[(link.a_device, link.a_port)] = i
            out[(link.b_device, link.b_port)] = i
        return out

    @cached_property
    def sides(self) -> dict[int, int]:
        """Cut side (0 source, 1 sink) of every node-leaf cable: the size/verify cut."""
        per_plane: dict[int, list[tuple[int, int, int, int]]] = defaultdict(list)
        for i, link in enumerate(self.links):
            if link.role == "node_leaf":
                srv = self.topo.device(link.a_device)
                per_plane[link.plane].append((srv.su, link.rail, srv.index, i))
        out: dict[int, int] = {}
        for ends in per_plane.values():
            ends.sort()
            half = len(ends) // 2
            for k, (_, _, _, i) in enumerate(ends):
                out[i] = 0 if k < half else 1
        return out

    @cached_property
    def role_totals(self) -> dict[str, int]:
        """Cables per compute role."""
        out: dict[str, int] = defaultdict(int)
        for link in self.links:
            out[link.role] += 1
        return dict(out)

    @cached_property
    def spine_slot(self) -> dict[str, tuple[int, int, int]]:
        """(plane, pod, j) of every spine, j its 0-based position in its pod."""
        return {d.name: (d.plane, d.pod, d.index - 1) for d in self.topo.switches("spine")}

    def resolve(self, failures: Iterable[Failure]) -> frozenset[int]:
        """Indices of the compute cables the failures take out; unknown names raise SpecError."""
        out: set[int] = set()
        for f in failures:
            flag = f"--{f.kind}"
            if f.device not in self.by_device:
                raise SpecError(
                    flag,
                    f"{f.device!r} is not a device of the compute fabric",
                    f"e.g. {self._examples()}",
                )
            if not f.port:
                out.update(self.by_device[f.device])
                continue
            idx = self.by_port.get((f.device, f.port))
            if idx is None:
                ports = [p for (d, p) in self.by_port if d == f.device][:3]
                raise SpecError(
                    flag,
                    f"{f.device} has no cabled compute port {f.port!r}",
                    f"e.g. {', '.join(f'{f.device}:{p}' for p in ports)}",
                )
            out.add(idx)
        return frozenset(out)

    def _examples(self) -> str:
        names = [
            next(self.topo.switches(r)).name
            for r in ("leaf", "spine")
            if any(self.topo.switches(r))
        ]
        return ", ".join([*names, self.links[0].a_device])

    # ------------------------------------------------------------------ healthy state, cached

    @cached_property
    def healthy_supply(self) -> dict[int, dict[str, tuple[int, int]]]:
        """Per plane: leaf → (source Gb/s, sink Gb/s) of its NIC cables."""
        out: dict[int, dict[str, list[int]]] = defaultdict(dict)
        for i, link in enumerate(self.links):
            if link.role == "node_leaf":
                st = out[link.plane].setdefault(link.b_device, [0, 0])
                st[self.sides[i]] += link.speed_gbps
        return {p: {k: (v[0], v[1]) for k, v in d.items()} for p, d in out.items()}

    @cached_property
    def healthy_uplinks(self) -> dict[int, dict[tuple[str, str], int]]:
        """Per plane: (lower, upper) → capacity (Gb/s one way) of their cables."""
        out: dict[int, dict[tuple[str, str], int]] = defaultdict(dict)
        for link in self.links:
            if link.role != "node_leaf":
                d = out[link.plane]
                key = (link.a_device, link.b_device)
                d[key] = d.get(key, 0) + link.speed_gbps
        return dict(out)

    @cached_property
    def compiled(self) -> dict[int, CompiledPlane]:
        """Per plane: the healthy up-down flow graph, compiled once."""
        return {
            p: CompiledPlane(PlaneFlow(supply, self.healthy_uplinks.get(p, {})))
            for p, supply in sorted(self.healthy_supply.items())
        }

    @cached_property
    def leaf_vectors(self) -> dict[str, list[int]]:
        """Leaf → cables to spine j of its pod, for every j (healthy)."""
        spines_per_pod = self.topo.plan.spines_per_pod
        out = {d.name: [0] * spines_per_pod for d in self.topo.switches("leaf")}
        for link in self.links:
            if link.role == "leaf_spine":
                out[link.a_device][self.spine_slot[link.b_device][2]] += 1
        return out

    @cached_property
    def spine_cores(self) -> dict[str, dict[str, int]]:
        """Spine → core → cables (healthy; empty in two tiers)."""
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for link in self.links:
            if link.role == "spine_core":
                d = out[link.a_device]
                d[link.b_device] = d.get(link.b_device, 0) + 1
        return dict(out)


# --------------------------------------------------------------------------- metrics


def measure_bisection_tbps(index: FabricIndex, dead: frozenset[int]) -> float:
    """Full-duplex bisection (Tb/s) with the ``dead`` cables out: up-down max-flow ×2."""
    changes: dict[int, dict[int, int]] = defaultdict(dict)
    for i in dead:
        link = index.links[i]
        plane = index.compiled[link.plane]
        if link.role == "node_leaf":
            edges: tuple[int, ...] = (plane.supply_edge[(link.b_device, index.sides[i])],)
        else:
            edges = plane.uplink_edges[(link.a_device, link.b_device)]
        for k in edges:
            now = changes[link.plane].get(k, plane.caps[k])
            changes[link.plane][k] = now - link.speed_gbps
    total = sum(plane.maxflow(changes.get(p)) for p, plane in index.compiled.items())
    return 2 * total / 1000


def find_isolated(index: FabricIndex, dead: frozenset[int], out_devices: set[str]) -> Isolated:
    """GPUs, servers and rails cut off by the ``dead`` cables."""
    topo = index.topo
    planes = topo.plan.planes
    nics = {(n.node, n.name): n for n in topo.nics}
    dead_nic: dict[tuple[str, tuple[int, ...]], set[int]] = defaultdict(set)
    per_server: dict[str, int] = defaultdict(int)
    by_plane: dict[str, int] = defaultdict(int)
    for i in dead:
        link = index.links[i]
        if link.role != "node_leaf":
            continue
        nic = nics[(link.a_device, link.a_port)]
        dead_nic[(link.a_device, nic.gpus)].add(nic.plane)
        per_server[link.a_device] += 1
        by_plane[str(nic.plane)] += len(nic.gpus)
    by_rail: dict[str, int] = defaultdict(int)
    gpus = 0
    for (_node, ngpus), plane_set in dead_nic.items():
        if len(plane_set) == planes:
            gpus += len(ngpus)
            rail = topo.plan.spec.node_profile.nic_for_gpu(ngpus[0]) + 1
            by_rail[str(rail)] += len(ngpus)
    nics_per_server = topo.plan.rails * planes
    servers = sum(1 for n in per_server.values() if n == nics_per_server)
    # A rail of an SU is without a leaf when every leaf it has is out: an SU larger than
    # a leaf gives each rail several (issue #43), and one of them out leaves the rail up.
    out_leaves = [topo.device(name) for name in sorted(out_devices)]
    out_leaves = [d for d in out_leaves if d.role == "leaf"]
    rail_leaves: dict[tuple[int, int, int, int], int] = defaultdict(int)
    if out_leaves:
        for d in topo.switches("leaf"):
            rail_leaves[(d.plane, d.pod, d.su, d.rail)] += 1
    down: dict[tuple[int, int, int, int], int] = defaultdict(int)
    for d in out_leaves:
        down[(d.plane, d.pod, d.su, d.rail)] += 1
    without_leaf = []
    for d in out_leaves:
        key = (d.plane, d.pod, d.su, d.rail)
        if down.pop(key, 0) == rail_leaves[key]:
            without_leaf.append(
                f"SU {d.su} rail {d.rail}" + (f" plane {d.plane}" if planes > 1 else "")
            )
    cut_off = []
    vectors = leaf_vectors_after(index, dead)
    for name, vec in vectors.items():
        if name not in out_devices and not any(vec):
            cut_off.append(name)
    return Isolated(
        gpus=gpus,
        servers=servers,
        by_rail=dict(sorted(by_rail.items(), key=lambda kv: int(kv[0]))),
        by_plane=dict(sorted(by_plane.items())),
        rails_without_leaf=without_leaf,
        leaves_cut_off=sorted(cut_off),
    )


def leaf_vectors_after(index: FabricIndex, dead: frozenset[int]) -> dict[str, list[int]]:
    """Leaf → live cables to spine j of its pod, for every j, with ``dead`` out."""
    vectors = index.leaf_vectors
    changed: dict[str, list[int]] = {}
    for i in dead:
        link = index.links[i]
        if link.role == "leaf_spine":
            vec = changed.setdefault(link.a_device, list(vectors[link.a_device]))
            vec[index.spine_slot[link.b_device][2]] -= 1
    return {**vectors, **changed}


def measure_ecmp(index: FabricIndex, dead: frozenset[int]) -> Ecmp:
    """ECMP width statistics with the ``dead`` cables out."""
    topo = index.topo
    vectors = leaf_vectors_after(index, dead)
    leaves = [
        LeafUplinks(d.name, d.plane, d.rail, d.su, d.pod, tuple(vectors[d.name]))
        for d in topo.switches("leaf")
    ]
    reach: dict[tuple[int, int, int, int], bool] = {}
    if topo.plan.tiers == 3:
        cores: dict[str, dict[str, int]] = {s: dict(c) for s, c in index.spine_cores.items()}
        for i in dead:
            link = index.links[i]
            if link.role == "spine_core":
                cores[link.a_device][link.b_device] -= 1
        live: dict[tuple[int, int, int], set[str]] = {}
        for spine, (plane, pod, j) in index.spine_slot.items():
            live[(plane, pod, j)] = {c for c, n in cores.get(spine, {}).items() if n > 0}
        for (plane, pa, j), ca in live.items():
            for pb in range(1, topo.plan.pods + 1):
                cb = live.get((plane, pb, j), set())
                reach[(plane, pa, pb, j)] = bool(ca & cb)
    healthy = max((sum(v) for v in index.leaf_vectors.values()), default=0)
    res = measure_ecmp_widths(leaves, reach, healthy)
    return Ecmp(
        healthy=healthy,
        min=res.minimum,
        median=res.median,
        pairs=res.pairs,
        degraded_pairs=res.degraded,
        worst=[EcmpPair(su_a=a, su_b=b, rail=r, plane=p, width=w) for w, p, r, a, b in res.worst],
    )


def measure_capacity_lost(index: FabricIndex, dead: frozenset[int]) -> CapacityLost:
    """Percent of each tier's cables in ``dead``."""
    lost: dict[str, int] = defaultdict(int)
    for i in dead:
        lost[index.links[i].role] += 1
    tot = index.role_totals

    def pct(role: str) -> float:
        return round(100 * lost[role] / tot[role], 3) if tot.get(role) else 0.0

    return CapacityLost(
        node_leaf=pct("node_leaf"), leaf_spine=pct("leaf_spine"), spine_core=pct("spine_core")
    )


# --------------------------------------------------------------------------- the stage


def random_failures(index: FabricIndex, count: int, seed: int) -> list[Failure]:
    """``count`` distinct compute cables picked with ``random.Random(seed)`` (reproducible)."""
    if not 0 <= count <= len(index.links):
        raise SpecError(
            "--fail-random",
            f"{count} is not between 0 and {len(index.links)}",
            "the number of compute cables",
        )
    picks = random.Random(seed).sample(range(len(index.links)), count)
    return [
        Failure(device=index.links[i].a_device, port=index.links[i].a_port) for i in sorted(picks)
    ]


def _applied(index: FabricIndex, failures: Sequence[Failure]) -> list[FailedItem]:
    out = []
    for f in failures:
        dead = index.resolve([f])
        role = (
            index.links[next(iter(dead))].role
            if f.port and dead
            else index.topo.device(f.device).role
        )
        out.append(FailedItem(target=f.target, kind=f.kind, role=role, cables=len(dead)))
    return out


def grouping_traffic(grouping: str) -> str:
    """What a rail grouping means for the failures measured here ('' for a full grouping)."""
    if grouping != "rail":
        return ""
    return (
        GROUPING_MEANING["rail"] + "; a spine failure narrows only its own rail, and "
        "bisection and ECMP are measured per rail (same-rail leaf pairs)"
    )


def analyze_failures(
    topo: FabricTopology,
    failures: Sequence[Failure],
    *,
    n_minus_1_scope: str = "",
    index: FabricIndex | None = None,
    on_step: Progress | None = None,
) -> WhatIfResult:
    """Apply ``failures`` to ``topo`` and measure (module docstring). Pure; SpecError on
    an unknown device or port. ``on_step`` is passed to :func:`n_minus_1`."""
    index = index or FabricIndex(topo)
    dead = index.resolve(failures)
    out_devices = {f.device for f in failures if not f.port}
    rows = n_minus_1(index, n_minus_1_scope, dead, on_step) if n_minus_1_scope else []
    return WhatIfResult(
        name=topo.plan.spec.name,
        gpus=topo.plan.gpus,
        failed=_applied(index, failures),
        bisection_tbps=BeforeAfter(
            before=measure_bisection_tbps(index, frozenset()),
            after=measure_bisection_tbps(index, dead),
        ),
        isolated=find_isolated(index, dead, out_devices),
        ecmp=measure_ecmp(index, dead),
        capacity_lost_pct=measure_capacity_lost(index, dead),
        n_minus_1=rows,
        n_minus_1_scope=n_minus_1_scope,
        traffic=grouping_traffic(topo.plan.spine_grouping),
    )


N_MINUS_1_SCOPES = ("switch", "link", "all")
"""What `--n-minus-1` fails one at a time."""

Progress = Callable[[int, int], None]
"""Called after each N−1 failure with (done, total): the caller shows progress and may
raise to stop (the CLI's ``--max-seconds``); this module stays free of clocks and I/O."""


def _candidates(index: FabricIndex, scope: str) -> list[tuple[Failure, int]]:
    """Single failures to try, with how many equivalent failures each stands for.

    Switches are tried one by one. Cables are grouped (same role, plane, pod,
    and the same NIC supply on each side of the cut at their leaf or pod) and
    one per group is tried: cables in a group are interchangeable in the
    fabric's symmetry, which the tests check exhaustively on small fabrics.
    """
    out: list[tuple[Failure, int]] = []
    if scope in ("switch", "all"):
        out += [(Failure(device=d.name), 1) for d in index.topo.switches("leaf", "spine", "core")]
    if scope in ("link", "all"):
        groups: dict[tuple[object, ...], list[Link]] = defaultdict(list)
        pods = _pod_supplies(index)
        for link in index.links:
            if link.role == "node_leaf":
                continue
            groups[_link_class(index, link, pods)].append(link)
        for members in groups.values():
            first = members[0]
            out.append((Failure(device=first.a_device, port=first.a_port), len(members)))
    return out


def _pod_supplies(index: FabricIndex) -> dict[tuple[int, int], tuple[tuple[int, int], ...]]:
    """(plane, pod) → the sorted NIC supplies of its leaves: computed once, not per cable
    (per cable it was cables × leaves, a quarter of a minute at 32,768 GPUs)."""
    out: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for d in index.topo.switches("leaf"):
        out[(d.plane, d.pod)].append(index.healthy_supply.get(d.plane, {}).get(d.name, (0, 0)))
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _link_class(
    index: FabricIndex, link: Link, pods: dict[tuple[int, int], tuple[tuple[int, int], ...]]
) -> tuple[object, ...]:
    supply = index.healthy_supply[link.plane]
    if link.role == "leaf_spine":
        return (link.role, link.plane, link.pod, supply.get(link.a_device, (0, 0)))
    return (link.role, link.plane, link.pod, pods.get((link.plane, link.pod), ()))


def switch_classes(index: FabricIndex) -> dict[str, int]:
    """Switch → class id: switches of one class are interchangeable in the healthy fabric.

    Colour refinement (1-dimensional Weisfeiler-Lehman) over the compute switches:
    the first colour is a switch's role, plane, pod and, for a leaf, its NIC cables
    (speed, side of the bisection cut, how many compute cables the server has in
    all); each round adds the multiset of (neighbour colour, capacity, up or down)
    until the partition stops splitting. Failures of same-class switches give the
    same bisection, isolation, ECMP and capacity figures in these rail-optimised
    fabrics (``tests/unit/test_whatif_symmetry.py`` checks it exhaustively on small
    ones), so :func:`n_minus_1` measures one switch per class.
    """
    server_cables: dict[str, int] = defaultdict(int)
    for link in index.links:
        if link.role == "node_leaf":
            server_cables[link.a_device] += 1
    nics: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for i, link in enumerate(index.links):
        if link.role == "node_leaf":
            nics[link.b_device].append(
                (link.speed_gbps, index.sides[i], server_cables[link.a_device])
            )
    adj: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for uplinks in index.healthy_uplinks.values():
        for (lower, upper), cap in uplinks.items():
            adj[lower].append((upper, cap, 1))
            adj[upper].append((lower, cap, 0))
    names = [d.name for d in index.topo.switches("leaf", "spine", "core")]
    first = {
        d.name: (d.role, d.plane, d.pod, tuple(sorted(nics.get(d.name, []))))
        for d in index.topo.switches("leaf", "spine", "core")
    }
    colour = _relabel(first)
    for _ in range(len(names)):  # each round splits a class or ends; bounded by the count
        sig = {
            n: (colour[n], tuple(sorted((colour[u], c, up) for u, c, up in adj[n]))) for n in names
        }
        new = _relabel(sig)
        if len(set(new.values())) == len(set(colour.values())):
            break
        colour = new
    return colour


def _relabel(signatures: Mapping[str, Hashable]) -> dict[str, int]:
    """Signatures → small ints (equal signatures, equal ids), so rounds stay cheap."""
    ids: dict[Hashable, int] = {}
    return {n: ids.setdefault(sig, len(ids)) for n, sig in signatures.items()}


def n_minus_1(
    index: FabricIndex,
    scope: str,
    already: frozenset[int] = frozenset(),
    on_step: Progress | None = None,
) -> list[NMinus1Row]:
    """Every single failure of ``scope`` (on top of ``already``), worst first.

    ``on_step(done, total)`` runs after each failure (progress, and a time bound:
    whatever it raises ends the ranking).
    """
    if scope not in N_MINUS_1_SCOPES:
        raise SpecError("--n-minus-1", f"{scope!r} is not a scope", " | ".join(N_MINUS_1_SCOPES))
    healthy = measure_bisection_tbps(index, frozenset())
    rows = []
    candidates = _candidates(index, scope)
    # On the healthy fabric, a switch like one already measured gives its figures: one
    # switch per class is measured (N−1 over everything at 32,768 GPUs was quadratic).
    # With failures already applied the symmetry is broken: every switch is measured.
    classes = switch_classes(index) if not already and scope in ("switch", "all") else {}
    measured: dict[int, tuple[float, int, int | None, CapacityLost]] = {}
    if on_step is not None:
        on_step(0, len(candidates))
    for failure, count in candidates:
        cls = classes.get(failure.device) if not failure.port else None
        if cls is not None and cls in measured:
            bis, gpus, emin, lost = measured[cls]
            role = index.topo.device(failure.device).role
            rows.append((bis, -gpus, failure, role, count, gpus, emin, lost))
            if on_step is not None:
                on_step(len(rows), len(candidates))
            continue
        dead = already | index.resolve([failure])
        bis = measure_bisection_tbps(index, dead)
        iso = find_isolated(index, dead, {failure.device} if not failure.port else set())
        role = (
            index.links[next(iter(index.resolve([failure])))].role
            if failure.port
            else (index.topo.device(failure.device).role)
        )
        rows.append(
            (
                bis,
                -iso.gpus,
                failure,
                role,
                count,
                iso.gpus,
                measure_ecmp(index, dead).min,
                measure_capacity_lost(index, dead),
            )
        )
        if cls is not None:
            measured[cls] = (rows[-1][0], rows[-1][5], rows[-1][6], rows[-1][7])
        if on_step is not None:
            on_step(len(rows), len(candidates))
    rows.sort(key=lambda r: (r[0], r[1], r[6] if r[6] is not None else 0, r[2].target))
    return [
        NMinus1Row(
            rank=k,
            target=f.target,
            role=role,
            equivalent=count,
            bisection_tbps=round(bis, 6),
            bisection_lost_pct=round(100 * (healthy - bis) / healthy, 3) if healthy else 0.0,
            isolated_gpus=gpus,
            ecmp_min=emin,
            capacity_lost_pct=lost,
        )
        for k, (bis, _, f, role, count, gpus, emin, lost) in enumerate(rows, start=1)
    ]


__all__ = [
    "N_MINUS_1_SCOPES",
    "FabricIndex",
    "Failure",
    "WhatIfResult",
    "analyze_failures",
    "leaf_vectors_after",
    "n_minus_1",
    "parse_failure",
    "random_failures",
    "switch_classes",
]
