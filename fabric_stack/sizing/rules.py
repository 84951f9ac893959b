"""The sizing rules as pure functions of numbers: divisors, the leaf's port split, the
even-spreading spine count, the spine port stride, the bisection and the cages in use.

:func:`fabric_stack.sizing.size.size_fabric` applies them (its module docstring gives the
rules in order) and re-exports them; they hold no state and know no spec.
"""

from __future__ import annotations

import math
from functools import cache

__all__ = [
    "bisection_gbps",
    "cages_used",
    "divisors",
    "port_stride",
    "spine_count",
    "split_ports",
]


@cache
def divisors(n: int) -> tuple[int, ...]:
    """All positive divisors of ``n`` in increasing order."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def split_ports(radix: int, down: int, up: int) -> tuple[int, int]:
    """Leaf ports (down, up) for a reduced ratio ``down:up`` on a ``radix``-port switch."""
    k = radix // (down + up)
    return down * k, up * k


def spine_count(switches_below: int, uplinks_each: int, ports_per_spine: int) -> int | None:
    """The even-spreading rule: smallest divisor ``s`` of ``uplinks_each`` with enough ports.

    Each of ``switches_below`` switches sends ``uplinks_each / s`` links to each
    of ``s`` switches above, which takes ``switches_below × uplinks_each / s``
    ports on each of them. Returns ``None`` when even ``s = uplinks_each`` (one
    link to every switch above) does not fit: the tier is full.
    """
    need = switches_below * uplinks_each
    for s in divisors(uplinks_each):
        if s * ports_per_spine >= need:
            return s
    return None


def port_stride(ports: int, slots: int) -> int:
    """Port distance between consecutive link slots of one downstream switch.

    Links land on an upper switch slot-major: slot *t* of downstream switch *ℓ*
    uses port ``t × stride + ℓ + 1``. When the upper tier doubles (growth), the
    links in even slots keep both ends; those in odd slots move to spine
    ``s + S_old`` (port ``t' × stride + ℓ + 1``), and the new SU's leaves take
    the spine ports they vacate. Re-patching is one move per moved cable.
    """
    return ports // slots


def bisection_gbps(leaf_nodes: list[int], uplinks: int, link_gbps: int) -> int:
    """Full-duplex bisection of one plane, in Gb/s.

    The cut halves the NIC ports in (SU, rail, server) order, so whole leaves
    fall on each side (the worst case for an oversubscribed leaf layer). Traffic
    across it is limited by the ports that stay inside a split leaf plus the
    smaller side's usable uplinks (each leaf forwards at most min(its servers on
    that side, its uplinks)). ``fabric_stack.topology.verify`` computes the same cut with
    networkx max-flow; the tests check the two agree.
    """
    half = sum(leaf_nodes) // 2
    seen = shared = src_up = snk_up = 0
    for n in leaf_nodes:
        s = min(n, max(0, half - seen))
        t = n - s
        seen += n
        here = min(s, t)
        shared += here
        src_up += min(s - here, uplinks)
        snk_up += min(t - here, uplinks)
    return 2 * (shared + min(src_up, snk_up)) * link_gbps


def cages_used(port_ranges: list[tuple[int, int]], ports_per_cage: int) -> int:
    """Distinct cages touched by inclusive 1-based port ranges (one optic per cage)."""
    spans = sorted(
        ((lo - 1) // ports_per_cage, (hi - 1) // ports_per_cage)
        for lo, hi in port_ranges
        if hi >= lo
    )
    total, cur_lo, cur_hi = 0, -1, -2
    for lo, hi in spans:
        if lo > cur_hi:
            total += cur_hi - cur_lo + 1 if cur_hi >= cur_lo else 0
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    total += cur_hi - cur_lo + 1 if cur_hi >= cur_lo else 0
    return total
