"""InfiniBand twin, pure part: the switches' linear forwarding tables (LFTs) and what they route.

:func:`~fabric_stack.twin.lfts.parse_lfts` reads ``dump_fts`` into one ``bytearray`` per
switch (:mod:`fabric_stack.twin.lfts`); this module checks what those tables route.

:func:`verify_routes` checks routing *per switch and destination*, never per HCA pair. Each
switch gets a level from the links ibnetdiscover saw (leaves: switches with an HCA; then
one more per hop away from the leaves). For a destination HCA ``d`` on leaf ``L``, an LFT
entry of switch ``s`` is right when

* ``d`` is below ``s`` (``s`` is ``L`` or reaches ``L`` going down): the out port goes down
  to a switch that also has ``d`` below it, or, on ``L``, is ``d``'s own port;
* ``d`` is not below ``s``: the out port goes up, and to a switch that has ``d`` below it
  whenever one of ``s``'s upper neighbours has (the shortest up/down route).

If every entry of every switch is right, the route from every switch climbs while the
destination is not below it and then only descends (levels strictly rise, then strictly
fall: no loop, no down-up turn), and the first switch it climbs to that has ``d`` below is
the lowest one any route could use: the hop count from each leaf is the fewest a fat tree
of up to three tiers allows (1, 3 or 5 switches, :func:`expected_hops`). Per switch, the
allowed out ports are worked out once per destination *leaf* (switches' leaves below are bit
masks), the out ports of all destinations are picked from the table in one ``itemgetter``,
and only the distinct (out port, allowed ports) pairs are compared: 16,384 GPUs (1,280
switches × 16,378 destinations) take ~9 s of CPU. Pair counts and the hop histogram
follow from the leaves' common ancestors (bit masks of hosts), not from walking pairs.

Destinations with a wrong entry are walked from every leaf (:func:`walk_destination`,
memoised per switch) to say what the wrong entries do: the pairs still delivered, the hops,
and where a route breaks (a loop, a dead end, a wrong HCA, too many hops).
:func:`walk_pairs` is the plain pairwise walk, hop by hop with no memo: ``twin check`` runs
it on a fixed-seed sample of pairs as an independent cross-check of the per-switch result.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from fabric_stack.twin.ibnet import Fabric
from fabric_stack.twin.lfts import NO_ENTRY, grow, lft_port

MAX_FAILED = 20
"""Failed destinations listed in a result (the count is always complete)."""

SAMPLE_PAIRS = 2000
"""HCA pairs ``twin check`` walks one by one as a cross-check of the per-switch check."""

SAMPLE_SEED = 33
"""Seed of that sample: the same fabric samples the same pairs on every run."""


def expected_hops(tiers: int) -> list[int]:
    """Switch hops a pair may take in a rail-optimized fat tree: 1 (same leaf), 3, and 5."""
    return [1, 3, 5][:tiers]


# --------------------------------------------------------------------------- LFT tables


def ca_lids(fab: Fabric) -> dict[str, int]:
    """HCA GUID → LID of every HCA port ibnetdiscover saw with a LID."""
    return {g: lid for g, lid in fab.lid.items() if fab.kind.get(g) == "Ca"}


def missing_destinations(fab: Fabric, lfts: Mapping[str, bytearray]) -> list[int]:
    """HCA LIDs no switch's dumped LFT holds (``ibroute`` leaves out the top LID when it
    opens a new 64-entry block: seen at 4,096 GPUs, LID 0x1140, while ibtracert routes it)."""
    return sorted(
        lid
        for lid in ca_lids(fab).values()
        if not any(lft_port(lfts, sw, lid) is not None for sw in lfts)
    )


# --------------------------------------------------------------------------- the fabric's shape


@dataclass(frozen=True, slots=True)
class Shape:
    """What the per-switch check needs to know about the fabric, computed once.

    Hosts are the HCAs attached to a switch, numbered by LID order; leaves are numbered
    too. ``below[s]`` is the mask of hosts (bit = host index) reachable from switch ``s``
    going down only, ``leaves_below[s]`` the same in leaves.
    """

    hosts: list[str]  # host index → HCA GUID
    index: dict[str, int]  # HCA GUID → host index
    leaf: dict[str, tuple[str, int]]  # HCA GUID → (leaf GUID, leaf port)
    leaves: list[str]  # leaf index → leaf GUID
    level: dict[str, int]  # switch GUID → 0 (leaf), 1, 2 …
    below: dict[str, int]  # switch GUID → mask of hosts below it
    leaves_below: dict[str, int]  # switch GUID → mask of leaves below it (itself included)
    ports: dict[str, list[tuple[int, str, int]]]  # switch → [(port, peer GUID, peer port)]
    up: dict[str, list[str]]  # switch → its upper neighbours (distinct)


def fabric_shape(fab: Fabric) -> Shape:
    """Levels, hosts and below-masks of the switches ibnetdiscover saw."""
    switches = sorted(g for g, k in fab.kind.items() if k == "Switch")
    ports: dict[str, list[tuple[int, str, int]]] = {s: [] for s in switches}
    leaf: dict[str, tuple[str, int]] = {}
    for (g, p), (rg, rp) in fab.peer.items():
        if fab.kind.get(g) == "Switch":
            ports[g].append((p, rg, rp))
        elif fab.kind.get(rg) == "Switch" and p == 1:
            leaf[g] = (rg, rp)
    for plist in ports.values():
        plist.sort()
    lids = ca_lids(fab)
    hosts = sorted(leaf, key=lambda g: (lids.get(g, 1 << 20), g))
    index = {g: i for i, g in enumerate(hosts)}
    leaves = sorted({sw for sw, _ in leaf.values()})
    level = dict.fromkeys(leaves, 0)
    frontier = leaves
    while frontier:
        nxt = []
        for s in frontier:
            for _, peer, _ in ports[s]:
                if fab.kind.get(peer) == "Switch" and peer not in level:
                    level[peer] = level[s] + 1
                    nxt.append(peer)
        frontier = nxt
    below = dict.fromkeys(switches, 0)
    leaves_below = dict.fromkeys(switches, 0)
    for g, (sw, _) in leaf.items():
        below[sw] |= 1 << index[g]
    for i, sw in enumerate(leaves):
        leaves_below[sw] = 1 << i
    up: dict[str, list[str]] = {s: [] for s in switches}
    order = sorted(level, key=lambda s: (level[s], s))
    for s in order:
        for _, peer, _ in ports[s]:
            if level.get(peer) == level[s] + 1 and peer not in up[s]:
                up[s].append(peer)
    for s in order:
        for u in up[s]:
            below[u] |= below[s]
            leaves_below[u] |= leaves_below[s]
    return Shape(hosts, index, leaf, leaves, level, below, leaves_below, ports, up)


# --------------------------------------------------------------------------- per-switch check


def _bits(mask: int) -> Iterable[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _port_kinds(fab: Fabric, shape: Shape, sw: str) -> dict[int, str]:
    """Each connected port of ``sw``: ``ca``, ``down``, ``up`` or ``side``."""
    level = shape.level.get(sw)
    out = {}
    for port, peer, _ in shape.ports[sw]:
        other = shape.level.get(peer)
        if fab.kind.get(peer) == "Ca":
            out[port] = "ca"
        elif level is None or other is None:
            out[port] = "side"
        else:
            out[port] = {level - 1: "down", level + 1: "up"}.get(other, "side")
    return out


def _allowed_by_leaf(shape: Shape, sw: str, kinds: Mapping[int, str]) -> list[frozenset[int]]:
    """For each destination leaf (by leaf index), the out ports of ``sw`` on a shortest
    up/down route to it. ``sw``'s own leaf gets an empty set (its hosts are per port)."""
    peer_of = {p: peer for p, peer, _ in shape.ports[sw]}
    mine = shape.leaves_below[sw]
    acc: dict[int, set[int]] = {}
    for p, kind in kinds.items():
        if kind == "down":
            for leaf in _bits(shape.leaves_below[peer_of[p]]):
                acc.setdefault(leaf, set()).add(p)
    groups: dict[int, set[int]] = {}  # leaves below an upper neighbour → its ports
    for p, kind in kinds.items():
        if kind == "up":
            groups.setdefault(shape.leaves_below[peer_of[p]], set()).add(p)
    for mask, group in groups.items():
        for leaf in _bits(mask & ~mine):
            acc.setdefault(leaf, set()).update(group)
    any_up = frozenset(p for p, k in kinds.items() if k == "up")
    sets: dict[frozenset[int], frozenset[int]] = {}  # one object per distinct set
    out: list[frozenset[int]] = []
    for i in range(len(shape.leaves)):
        got = acc.get(i)
        key = frozenset(got) if got is not None else (frozenset() if mine >> i & 1 else any_up)
        out.append(sets.setdefault(key, key))
    return out


def _why(kind: str | None, dst_below: bool, allowed: frozenset[int]) -> str:
    """What an LFT entry out of a port of this kind does wrong."""
    if kind is None:
        return "dead end (no entry, or the port leads nowhere)"
    if kind == "ca":
        return "delivers to another HCA"
    if kind == "side":
        return "goes sideways or off the tree (not an up/down link)"
    if kind == "up":
        if dst_below:
            return "goes up although the destination is below (a down-up turn)"
        if not allowed:
            return "goes up from the top tier"
        return "goes up to a switch that cannot reach it down, where another can (too long)"
    return "goes down where the destination is not (down, then up again)"


def check_entries(
    fab: Fabric, lfts: Mapping[str, bytearray], shape: Shape
) -> dict[int, list[tuple[str, int, str]]]:
    """Every LFT entry of every switch for every host: host index → [(switch, out port,
    what is wrong)] of the entries that are wrong (empty when routing is right everywhere).

    Per switch: the out ports of all hosts (one ``itemgetter`` over the table), the set of
    ports allowed for each host's leaf (:func:`_allowed_by_leaf`), then the distinct
    (port, allowed) pairs only; positions are looked up for the wrong pairs alone.
    """
    n = len(shape.hosts)
    lids = ca_lids(fab)
    positions = [lids.get(g, 0) for g in shape.hosts]
    top = max(positions, default=0)
    leaf_no = {sw: i for i, sw in enumerate(shape.leaves)}
    host_leaf = [leaf_no[shape.leaf[g][0]] for g in shape.hosts]
    no_lid = [i for i, g in enumerate(shape.hosts) if not lids.get(g)]
    bad: dict[int, list[tuple[str, int, str]]] = {}
    if n == 0:
        return bad
    pick_port = itemgetter(*positions) if n > 1 else (lambda t: (t[positions[0]],))
    pick_leaf = itemgetter(*host_leaf) if n > 1 else (lambda t: (t[host_leaf[0]],))
    for sw in sorted(shape.ports):
        table = bytearray(lfts.get(sw, b""))
        grow(table, top)
        got = list(pick_port(table))
        for i in no_lid:
            got[i] = NO_ENTRY
        kinds = _port_kinds(fab, shape, sw)
        allowed = list(pick_leaf(_allowed_by_leaf(shape, sw, kinds)))
        for p, peer, _ in shape.ports[sw]:
            if peer in shape.index:  # a host on this leaf: exactly its own port
                allowed[shape.index[peer]] = frozenset((p,))
        wrong = {(p, a) for p, a in set(zip(got, allowed, strict=True)) if p not in a}
        if not wrong:
            continue
        for i, pair in enumerate(zip(got, allowed, strict=True)):
            if pair in wrong:
                dst_below = bool(shape.below[sw] >> i & 1)
                why = _why(kinds.get(pair[0]), dst_below, pair[1])
                bad.setdefault(i, []).append((sw, pair[0], why))
    return bad


# --------------------------------------------------------------------------- walks


def walk_destination(
    fab: Fabric, lfts: Mapping[str, bytearray], dst: str, max_hops: int, starts: Iterable[str]
) -> dict[str, tuple[int | None, str, str]]:
    """Follow the LFTs to ``dst`` from each switch of ``starts`` (the leaves), memoised per
    switch: switch GUID → (switches crossed to deliver, or None; where it breaks; how)."""
    lid = fab.lid.get(dst, 0)
    memo: dict[str, tuple[int | None, str, str]] = {}
    for start in starts:
        path: list[str] = []
        node = start
        verdict: tuple[int | None, str, str] = (None, start, "too many hops")
        while True:
            if node in memo:
                h, where, how = memo[node]
                verdict = (None if h is None else h + len(path), where, how)
                break
            if node in path:
                verdict = (None, node, "loop")
                break
            if len(path) > max_hops:
                verdict = (None, node, "too many hops")
                break
            port = lft_port(lfts, node, lid)
            nxt = fab.peer.get((node, port)) if port else None
            path.append(node)
            if nxt is None:
                verdict = (None, node, "dead end")
                break
            if nxt[0] == dst:
                verdict = (len(path), node, "delivered")
                break
            if fab.kind.get(nxt[0]) != "Switch":
                verdict = (None, node, "delivered to another HCA")
                break
            node = nxt[0]
        h, where, how = verdict
        for i, sw in enumerate(reversed(path)):
            step = None if h is None else h - (len(path) - 1 - i)
            memo.setdefault(sw, (step, where, how))
    return memo


def walk_pairs(
    fab: Fabric, lfts: Mapping[str, bytearray], pairs: Sequence[tuple[str, str]], max_hops: int
) -> list[int | None]:
    """Switches crossed from each source HCA to its destination (None: not delivered),
    one pair at a time, hop by hop."""
    out: list[int | None] = []
    for src, dst in pairs:
        lid = fab.lid.get(dst, 0)
        node = fab.peer.get((src, 1), ("", 0))[0]
        hops: int | None = None
        for crossed in range(1, max_hops + 1):
            if fab.kind.get(node) != "Switch":
                break
            port = lft_port(lfts, node, lid)
            nxt = fab.peer.get((node, port)) if port else None
            if nxt is None:
                break
            if nxt[0] == dst:
                hops = crossed
                break
            node = nxt[0]
        out.append(hops)
    return out


def sample_pairs(hcas: Sequence[str], count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` ordered pairs of distinct HCAs, the same for the same HCAs and seed (all
    pairs when there are fewer)."""
    ordered = sorted(hcas)
    n = len(ordered)
    if n * (n - 1) <= count:
        return [(a, b) for a in ordered for b in ordered if a != b]
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        a, b = rng.sample(range(n), 2)
        out.append((ordered[a], ordered[b]))
    return out


# --------------------------------------------------------------------------- the verdict


def _hops_from_leaves(shape: Shape, leaf: str) -> dict[int, int]:
    """Mask of the hosts whose shortest up/down route to ``leaf`` crosses h switches: h → mask."""
    out = {1: shape.below[leaf]}
    seen = shape.below[leaf]
    tier = [leaf]
    hops = 1
    while tier:
        tier = sorted({u for s in tier for u in shape.up.get(s, [])})
        hops += 2
        reach = 0
        for u in tier:
            reach |= shape.below[u]
        if reach & ~seen:
            out[hops] = reach & ~seen
        seen |= reach
    return out


def verify_routes(
    fab: Fabric,
    lfts: Mapping[str, bytearray],
    tiers: int,
    sample: int = SAMPLE_PAIRS,
    seed: int = SAMPLE_SEED,
) -> dict[str, Any]:
    """Check every switch's route to every HCA (see the module docstring), count pairs and
    hops from it, and cross-check a sample of pairs walked one by one.

    ``pairs``/``ok``/``hops`` count ordered HCA pairs as the pairwise walk would;
    ``all`` is true when every entry is right, every pair is delivered within
    :func:`expected_hops` and the sample agrees.
    """
    shape = fabric_shape(fab)
    cas = sorted(g for g, k in fab.kind.items() if k == "Ca")
    n_hosts = len(shape.hosts)
    loose = len(cas) - n_hosts  # HCAs on no switch: every pair with them fails
    pairs = len(cas) * (len(cas) - 1)
    max_hops = 2 * tiers + 2
    bad = check_entries(fab, lfts, shape)
    per_leaf: dict[str, dict[int, int]] = {}
    hops: dict[int, int] = {}
    ok = 0
    failed: list[dict[str, Any]] = []
    walked: dict[str, dict[str, tuple[int | None, str, str]]] = {}
    for i, dst in enumerate(shape.hosts):
        leaf = shape.leaf[dst][0]
        if i not in bad:
            table = per_leaf.get(leaf)
            if table is None:
                table = per_leaf[leaf] = {
                    h: m.bit_count() for h, m in _hops_from_leaves(shape, leaf).items()
                }
            for h, count in table.items():
                senders = count - (1 if h == 1 else 0)
                if senders:
                    hops[h] = hops.get(h, 0) + senders
                ok += senders
            continue
        routes = walked[dst] = walk_destination(fab, lfts, dst, max_hops, shape.leaves)
        delivered = 0
        breaks: dict[tuple[str, str], int] = {}
        for src in shape.hosts:
            if src == dst:
                continue
            got, where, how = routes.get(shape.leaf[src][0], (None, "", "no leaf"))
            if got is not None and got <= max_hops:
                delivered += 1
                hops[got] = hops.get(got, 0) + 1
            else:
                breaks[(where, how)] = breaks.get((where, how), 0) + 1
        ok += delivered
        sw, port, reason = bad[i][0]
        failed.append(
            {
                "lid": fab.lid.get(dst),
                "hca": fab.desc.get(dst, dst),
                "switch": fab.desc.get(sw, sw),
                "port": port,
                "reason": reason,
                "wrong_entries": len(bad[i]),
                "pairs_failed": n_hosts - 1 - delivered,
                "walk": [
                    {"switch": fab.desc.get(w, w), "result": how, "pairs": c}
                    for (w, how), c in sorted(breaks.items(), key=lambda kv: -kv[1])[:3]
                ],
            }
        )
    cross = cross_check(fab, lfts, shape, bad, walked, cas, sample, seed, max_hops)
    allowed = expected_hops(tiers)
    return {
        "method": (
            f"per-switch LFT check (dump_fts): {len(shape.ports)} switches × {n_hosts} "
            "destination LIDs, each entry on an up/down shortest path; pairs counted from "
            f"it, {cross['pairs']} pairs walked one by one as a cross-check"
        ),
        "pairs": pairs,
        "ok": ok,
        "hops": {str(k): v for k, v in sorted(hops.items())},
        "expected_hops": allowed,
        "switches": len(shape.ports),
        "destinations": n_hosts,
        "unattached_hcas": loose,
        "failed_destinations": len(failed),
        "failed": failed[:MAX_FAILED],
        "sample": cross,
        "all": ok == pairs
        and not bad
        and all(h in allowed for h in hops)
        and cross["agree"] == cross["pairs"],
    }


def cross_check(
    fab: Fabric,
    lfts: Mapping[str, bytearray],
    shape: Shape,
    bad: Mapping[int, object],
    walked: Mapping[str, Mapping[str, tuple[int | None, str, str]]],
    cas: Sequence[str],
    sample: int,
    seed: int,
    max_hops: int,
) -> dict[str, Any]:
    """Walk a fixed-seed sample of pairs one by one and compare each with what the
    per-switch check concluded for it (hops, or not delivered)."""
    pairs = sample_pairs(cas, sample, seed)
    seen = walk_pairs(fab, lfts, pairs, max_hops)
    shortest: dict[str, dict[int, int]] = {}
    agree = 0
    differ: list[str] = []
    for (src, dst), got in zip(pairs, seen, strict=True):
        want: int | None = None
        i = shape.index.get(dst)
        if i is not None and src in shape.leaf:
            src_leaf = shape.leaf[src][0]
            if i in bad:
                h = walked[dst].get(src_leaf, (None, "", ""))[0]
                want = h if h is not None and h <= max_hops else None
            else:
                dst_leaf = shape.leaf[dst][0]
                if dst_leaf not in shortest:
                    shortest[dst_leaf] = _hops_from_leaves(shape, dst_leaf)
                j = shape.index[src]
                want = next((h for h, m in shortest[dst_leaf].items() if m >> j & 1), None)
        if got == want:
            agree += 1
        elif len(differ) < MAX_FAILED:
            differ.append(f"{fab.desc.get(src, src)} → {fab.desc.get(dst, dst)}: {got} vs {want}")
    return {"pairs": len(pairs), "seed": seed, "agree": agree, "differ": differ}
