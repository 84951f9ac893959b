"""The underlay's addresses as integer spans, for proving a plan clean without listing them.

At 131,072 GPUs with four planes a plan has ~524k host addresses (and ~786k link ends
with ``p2p31``). Formatting each as a dotted quad and comparing them one by one cost the
``underlay-consistency`` rule about 3 s (#43), but the planner places them by rule: a
leaf's hosts follow its leaf ports inside its block (:func:`~fabric_stack.underlay.plan.
host_address`, strictly increasing in the port), a fabric link's ends are its /31 pair.
So :func:`underlay_extents` gives, from the very helpers :func:`~fabric_stack.underlay.
plan.plan_underlay` formats, one :class:`AddressSpan` per leaf's hosts, one for all link
ends and one per loopback: when the spans are pairwise disjoint, each distinct inside and
each inside the block it must lie in, no address of the plan is used twice and every host
lies in its leaf's block. The rule falls back to the full plan when the proof fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from socket import inet_aton
from typing import NamedTuple

from fabric_stack.spec.underlay import UnderlaySettings
from fabric_stack.topology.build import FabricTopology
from fabric_stack.underlay.plan import (
    LeafHosts,
    RailBlock,
    SwitchUnderlay,
    assign_switches,
    host_address,
    layout_of,
    leaf_hosts,
    link_pairs,
    pair_ends,
    rail_block,
)

_PORT = attrgetter("b_port_number")


class AddressSpan(NamedTuple):
    """Addresses of one owner group, as integers: all lie in ``first..last``.

    A named tuple, not a dataclass: one per leaf (4,096 at 131k GPUs), built in a loop."""

    owner: str
    """Who holds them: a leaf's name (its hosts), ``fabric links`` or ``loopbacks``."""
    first: int
    last: int
    distinct: bool
    """True when no address of the group is used twice within it."""
    within: tuple[int, int] | None = None
    """The block every address must lie in (a leaf's hosts); None when unconstrained."""


@dataclass(frozen=True, slots=True)
class UnderlayExtents:
    """What the consistency proof reads: the switches and blocks (few: judged as records),
    and the spans of every address; ``p2p_aligned`` False when a /31 pair could straddle
    two /31s (an odd pool base)."""

    settings: UnderlaySettings
    switches: dict[str, SwitchUnderlay]
    blocks: tuple[RailBlock, ...]
    spans: tuple[AddressSpan, ...]
    p2p_aligned: bool


def underlay_extents(topo: FabricTopology) -> UnderlayExtents:
    """The extents of ``plan_underlay(topo)``, computed in the same order from the same
    helpers (so the same SpecError is raised for an overflowing pool)."""
    st = topo.plan.spec.underlay
    layout = layout_of(topo.plan)
    switches = assign_switches(topo, st, layout)
    pairs = link_pairs(topo, st, layout)[1] if st.fabric_links == "p2p31" else []
    # The loopbacks as one span over the range they use: the pool is its own range (the
    # spec refuses pools that overlap each other or the networks), so the span overlaps
    # no other; were it to, the proof fails and the full check decides.
    loopbacks = [_int(s.loopback) for s in switches.values()]
    spans = []
    if loopbacks:
        distinct = len(set(loopbacks)) == len(loopbacks)
        spans.append(AddressSpan("loopbacks", min(loopbacks), max(loopbacks), distinct))
    base = int(st.p2p.network_address)
    if pairs:
        # The pairs' ends fill pair_ends(lowest)..pair_ends(highest), one per pair.
        lo, hi = pair_ends(base, min(pairs)), pair_ends(base, max(pairs))
        distinct = len(set(pairs)) == len(pairs)
        spans.append(AddressSpan("fabric links", min(lo), max(hi), distinct))
    p2p = st.host_addressing == "p2p31"
    blocks: list[RailBlock] = []
    for lh in leaf_hosts(topo, st):
        blocks.append(rail_block(st, lh))
        if lh.links:
            spans.append(_host_span(p2p, lh))
    a, b = pair_ends(base, 0)  # every pair is pair 0 moved by an even offset
    return UnderlayExtents(st, switches, tuple(blocks), tuple(spans), a // 2 == b // 2)


def _int(dotted: str) -> int:
    """A dotted quad (as :func:`~fabric_stack.underlay.plan.plan_underlay` writes them) as
    an integer, through the C parser."""
    return int.from_bytes(inet_aton(dotted), "big")


def _host_span(p2p: bool, lh: LeafHosts) -> AddressSpan:
    """A leaf's hosts: bounded by its lowest and highest port (the address is strictly
    increasing in the port), distinct when no port is cabled twice."""
    ports = list(map(_PORT, lh.links))
    start = int(lh.block.network_address)
    return AddressSpan(
        lh.leaf.name,
        host_address(p2p, start, min(ports) - 1),
        host_address(p2p, start, max(ports) - 1),
        len(set(ports)) == len(ports),
        (start, start + lh.block.num_addresses - 1),
    )


def spans_disjoint(spans: tuple[AddressSpan, ...]) -> bool:
    """True when every span is distinct inside, inside its block, and no two overlap."""
    last = -1
    for s in sorted(spans, key=lambda x: x.first):
        if not s.distinct or s.first <= last:
            return False
        if s.within is not None and not s.within[0] <= s.first <= s.last <= s.within[1]:
            return False
        last = s.last
    return True
