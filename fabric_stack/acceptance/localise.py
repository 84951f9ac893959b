"""The per-rail sweep read as a matrix: which NIC, cable, leaf, host or spine path is slow.

A perftest run measures one path: the host's rail NIC, its cable, the rail leaf
(and, between SUs, a spine), the peer's cable and NIC. One slow run cannot say
which; the sweep can, by elimination. On each rail:

1. a server **cleared** by a run at the floor (as host or peer) is not the fault;
2. a **leaf** whose every measured server is slow on that rail, while those
   servers pass on their other rails, is the fault (its ports, config or power);
3. a **server** slow on every rail it was measured on, while other servers pass
   on those rails, is the fault, not the fabric (PCIe, NUMA, host settings);
4. otherwise each slow run's uncleared end is: its NIC or its cable to the leaf
   (both ends uncleared: one of the two);
5. with both ends cleared, the direction: a run carries data one way (perftest's
   client writes or sends to its server; iperf3's client sends, ``-R`` receives). A
   server into which every run on that rail is slow, from two or more senders that
   send at the floor to others, while it sends at the floor itself, has the fault on
   its receive side: the leaf port's egress toward it, its cable's leaf → server
   direction or its NIC's receive path (the mirror case: the transmit side). A shaper
   or a policer on one port, or one dirty fibre of a pair, looks like this;
6. otherwise the path between the two: the leaf-spine uplinks when the two are in
   different SUs.

Each finding names the plan's cables and the drift command that would confirm it.
"""

from __future__ import annotations

from collections import defaultdict

from fabric_stack.acceptance.checks import (
    cable_text,
    drift_check,
    nic_check,
    rail_cable,
    uplinks,
)
from fabric_stack.acceptance.placement import AcceptContext
from fabric_stack.acceptance.results import MatrixCell, Suspect, TestResult


def _leaf(ctx: AcceptContext, c: MatrixCell) -> str:
    link = rail_cable(ctx, c.server, c.device)
    return link.b_device if link else "?"


def _evidence(c: MatrixCell, tests: list[TestResult]) -> str:
    t = tests[c.test]
    return f"{t.kind} {c.gbps:g} Gb/s < {t.pass_at:g} ({t.file}:{t.line})"


def localise(
    cells: list[MatrixCell], tests: list[TestResult], ctx: AcceptContext
) -> dict[int, list[Suspect]]:
    """Suspects per failing test index (module docstring)."""
    out: dict[int, list[Suspect]] = defaultdict(list)
    by_rail: dict[tuple[int, int], list[MatrixCell]] = defaultdict(list)
    for c in cells:
        by_rail[c.rail, c.plane].append(c)
    passing_rails: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for c in cells:
        if c.passed:
            passing_rails[c.server].add((c.rail, c.plane))
    done: set[int] = set()
    for s in _leaf_faults(ctx, cells, tests, passing_rails):
        for i in s[1]:
            out[i].append(s[0])
            done.add(i)
    hosts = _host_faults(ctx, cells, tests, by_rail)
    for rail_cells in by_rail.values():
        cleared = {c.server for c in rail_cells if c.passed}
        cleared |= {c.peer for c in rail_cells if c.passed and c.peer}
        for c in rail_cells:
            if c.passed or c.test in done:
                continue
            ends = [e for e in (c.server, c.peer) if e and e not in cleared]
            if any(e in hosts for e in ends):  # a slow host explains its runs, either end
                out[c.test] += [hosts[e] for e in ends if e in hosts]
                continue
            same = _same_path_passes(c, rail_cells, tests)
            if not same and c.server in cleared and (c.peer is None or c.peer in cleared):
                same = _direction_fault(ctx, c, rail_cells, tests)
            out[c.test] += same or _path_faults(ctx, c, cleared, passing_rails, tests)
    return dict(out)


def _ends(c: MatrixCell) -> tuple[str, str] | None:
    """(sender, receiver) of a run whose direction is known."""
    if c.peer is None or c.flow is None:
        return None
    return (c.server, c.peer) if c.flow == "to peer" else (c.peer, c.server)


def _direction_fault(
    ctx: AcceptContext, c: MatrixCell, rail_cells: list[MatrixCell], tests: list[TestResult]
) -> list[Suspect]:
    """Step 5 of the module docstring: the receive or transmit side of one server's port."""
    ends = _ends(c)
    if ends is None:
        return []
    sender, receiver = ends
    runs = [(o, e) for o in rail_cells if (e := _ends(o)) is not None]
    sends_ok = {e[0] for o, e in runs if o.passed}
    receives_ok = {e[1] for o, e in runs if o.passed}
    slow_into = sorted({e[0] for o, e in runs if not o.passed and e[1] == receiver})
    slow_from = sorted({e[1] for o, e in runs if not o.passed and e[0] == sender})
    # Two slow paths that share only this end's one direction, and this end's other
    # direction, like every other end of those paths, at the floor elsewhere.
    into = receiver in sends_ok and all(s in sends_ok for s in slow_into)
    if receiver not in receives_ok and len(slow_into) >= 2 and into:
        return [_side_fault(ctx, c, receiver, "receive", slow_into, tests)]
    out_of = sender in receives_ok and all(r in receives_ok for r in slow_from)
    if sender not in sends_ok and len(slow_from) >= 2 and out_of:
        return [_side_fault(ctx, c, sender, "transmit", slow_from, tests)]
    return []


def _side_fault(
    ctx: AcceptContext,
    c: MatrixCell,
    server: str,
    side: str,
    others: list[str],
    tests: list[TestResult],
) -> Suspect:
    link = rail_cable(ctx, server, c.device)
    leaf = link.b_device if link else "its leaf"
    port = f"{leaf}:{link.b_port}" if link else leaf
    cable = cable_text(link) if link else f"{server}:{c.device}"
    if side == "receive":
        what = f"{server}'s rail-{c.rail} port, leaf → server: {port}'s egress or the cable"
        runs = f"every run into {server} on rail {c.rail} is slow (from {', '.join(others)})"
        rest = f"those senders reach the floor toward other servers and {server} sends at it"
        look = f"on {leaf}: port {link.b_port if link else '?'}'s egress shaping, QoS and discard"
    else:
        what = f"{server}'s rail-{c.rail} port, server → leaf: its transmit side or the cable"
        runs = f"every run out of {server} on rail {c.rail} is slow (to {', '.join(others)})"
        rest = f"those receivers reach the floor from other servers and {server} receives at it"
        look = f"on {server}: {c.device}'s transmit rate limits and counters; on {leaf}: port "
        look += f"{link.b_port if link else '?'}'s ingress policing and discard"
    return Suspect(
        what=what,
        where=cable,
        why=f"{_evidence(c, tests)}; {runs}; {rest}: one direction of {cable}",
        check=f"{look} counters (`tc -s qdisc show dev <port>` on a Linux NOS, `ethtool -S`); "
        f"{nic_check(c.device, server)}; {drift_check(ctx, cable)}",
        cables=[cable] if link else [],
    )


def _same_path_passes(
    c: MatrixCell, rail_cells: list[MatrixCell], tests: list[TestResult]
) -> list[Suspect]:
    """A slow run whose exact path (same host, peer, device) passes another perftest."""
    other = next(
        (
            o
            for o in rail_cells
            if o.passed and (o.server, o.peer, o.device) == (c.server, c.peer, c.device)
        ),
        None,
    )
    if other is None:
        return []
    t, o = tests[c.test], tests[other.test]
    return [
        Suspect(
            what=f"the {t.kind} test, not the path",
            where=f"{c.server} ↔ {c.peer or 'its peer'} on {c.device} (rail {c.rail})",
            why=f"{_evidence(c, tests)}, but {o.kind} on the same path reaches {other.gbps:g} "
            f"Gb/s ({o.file}:{o.line}): the path carries line rate; the {t.kind} figure is held "
            "to the ib_write_bw floor (UNVERIFIED for this test)",
            check=f"rerun {t.kind} with more queue pairs (-q 4) to see whether it is per-QP bound",
        )
    ]


def _leaf_faults(
    ctx: AcceptContext,
    cells: list[MatrixCell],
    tests: list[TestResult],
    passing_rails: dict[str, set[tuple[int, int]]],
) -> list[tuple[Suspect, list[int]]]:
    by_leaf: dict[str, list[MatrixCell]] = defaultdict(list)
    for c in cells:
        by_leaf[_leaf(ctx, c)].append(c)
    out = []
    for leaf, lc in sorted(by_leaf.items()):
        servers = {c.server for c in lc}
        elsewhere = all(passing_rails[s] - {(lc[0].rail, lc[0].plane)} for s in servers)
        if leaf == "?" or len(servers) < 2 or any(c.passed for c in lc) or not elsewhere:
            continue
        links = [lk for c in lc if (lk := rail_cable(ctx, c.server, c.device)) is not None]
        gb = sorted(c.gbps for c in lc)
        out.append(
            (
                Suspect(
                    what=f"leaf {leaf} (rail {lc[0].rail}, SU {lc[0].su})",
                    where=f"{leaf}: ports {', '.join(lk.b_port for lk in links)}",
                    why=f"every measured port of {leaf} is slow ({len(servers)} servers, "
                    f"{gb[0]:g}–{gb[-1]:g} Gb/s) while the same servers pass on their other "
                    f"rails; e.g. {_evidence(lc[0], tests)}",
                    check=drift_check(ctx, f"every {leaf} port")
                    + "; if drift is clean, the leaf itself: port speed/FEC settings"
                    + (", PFC/ECN on the lossless priority" if _roce(ctx) else "")
                    + ", its power and temperature",
                    cables=[cable_text(lk) for lk in links],
                ),
                sorted({c.test for c in lc}),
            )
        )
    return out


def _roce(ctx: AcceptContext) -> bool:
    return ctx.topo.plan.spec.fabric == "roce"


def _host_faults(
    ctx: AcceptContext,
    cells: list[MatrixCell],
    tests: list[TestResult],
    by_rail: dict[tuple[int, int], list[MatrixCell]],
) -> dict[str, Suspect]:
    by_server: dict[str, list[MatrixCell]] = defaultdict(list)
    for c in cells:
        by_server[c.server].append(c)
    out = {}
    for server, sc in sorted(by_server.items()):
        rails = {(c.rail, c.plane) for c in sc}
        cleared = any(o.passed and server in (o.server, o.peer) for r in rails for o in by_rail[r])
        others_pass = all(
            any(o.passed and server not in (o.server, o.peer) for o in by_rail[r]) for r in rails
        )
        if len(rails) < 2 or cleared or not others_pass:
            continue
        numa = sorted({n.numa for n in ctx.topo.nics if n.node == server})
        out[server] = Suspect(
            what=f"server {server} (every rail slow)",
            where=server,
            why=f"all {len(rails)} rails measured on {server} are slow while other "
            f"servers pass on them; e.g. {_evidence(sc[0], tests)}: not the fabric",
            check=f"on {server}: each NIC's PCIe link (`lspci -vv`, LnkSta against "
            f"LnkCap) and ib_write_bw pinned to the NIC's NUMA node (`numactl -N`; the "
            f"plan puts the rail NICs on NUMA {', '.join(map(str, numa))}); CPU "
            "frequency governor",
        )
    return out


def _path_faults(
    ctx: AcceptContext,
    c: MatrixCell,
    cleared: set[str],
    passing_rails: dict[str, set[tuple[int, int]]],
    tests: list[TestResult],
) -> list[Suspect]:
    ends = [c.server] + ([c.peer] if c.peer else [])
    uncleared = [e for e in ends if e not in cleared]
    if uncleared:
        both = len(uncleared) > 1
        return [_cable_fault(ctx, c, e, cleared, passing_rails, tests, both) for e in uncleared]
    leaf_a, leaf_b = _leaf(ctx, c), (_peer_leaf(ctx, c) or "?")
    if leaf_a == leaf_b or leaf_b == "?":
        return [
            Suspect(
                what=f"the path {c.server} ↔ {c.peer} on {leaf_a}",
                where=leaf_a,
                why=f"{_evidence(c, tests)} although both ends pass with other peers: an "
                "intermittent fault, or the leaf's forwarding between these two ports",
                check="rerun this pair; " + drift_check(ctx, leaf_a),
            )
        ]
    links = uplinks(ctx, leaf_a) + uplinks(ctx, leaf_b)
    return [
        Suspect(
            what=f"the spine path between {leaf_a} and {leaf_b}",
            where=f"leaf-spine uplinks of {leaf_a} and {leaf_b}",
            why=f"{_evidence(c, tests)} between SUs while both ends pass with other peers",
            check=drift_check(ctx, f"the uplinks of {leaf_a} and {leaf_b}")
            + "; per-uplink error and discard counters on the spines",
            cables=[cable_text(lk) for lk in links],
        )
    ]


def _peer_leaf(ctx: AcceptContext, c: MatrixCell) -> str | None:
    if not c.peer:
        return None
    link = rail_cable(ctx, c.peer, c.device)
    return link.b_device if link else None


def _cable_fault(
    ctx: AcceptContext,
    c: MatrixCell,
    server: str,
    cleared: set[str],
    passing_rails: dict[str, set[tuple[int, int]]],
    tests: list[TestResult],
    ambiguous: bool,
) -> Suspect:
    link = rail_cable(ctx, server, c.device)
    passing = sorted(cleared - {server})
    why = _evidence(c, tests)
    why += (
        f"; rail {c.rail} passes on {len(passing)} other server(s)"
        if passing
        else f"; no run on rail {c.rail} passes"
    )
    others = sorted(r for r, _p in passing_rails.get(server, set()) if r != c.rail)
    if others:
        why += f"; {server} passes on rail(s) {', '.join(map(str, others))}"
    if ambiguous:
        why += f"; both ends are unproven: {c.server} or {c.peer} (rerun each against a third host)"
    cable = cable_text(link) if link else f"{server}:{c.device}"
    return Suspect(
        what=f"{server}'s rail-{c.rail} NIC {c.device} or its cable",
        where=cable,
        why=why,
        check=nic_check(c.device, server) + "; " + drift_check(ctx, cable),
        cables=[cable] if link else [],
    )


__all__ = ["localise"]
