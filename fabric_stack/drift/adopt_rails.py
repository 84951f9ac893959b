"""Which rail a leaf serves, read from the NICs its hosts use on it (not from the port map).

In a rail-optimized fabric NIC *i* of every server lands on the rail-*i* leaf, so the
NIC names on a leaf's server cables say its rail whatever the site's leaf↔spine port
convention is. A leaf's rail is the majority of its server cables' rails; the others
(a server cabled to the wrong leaf, a NIC swapped) are the *dissent*, always reported.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

Rail = tuple[int, int]
"""(plane, rail) a NIC serves in the plan."""

Adjacency = dict[str, list[tuple[Any, str, Any]]]
"""Observed device → [(its port key, peer, peer's port key)]."""


@dataclass(frozen=True, slots=True)
class RailVote:
    """A leaf's rail by its server cables: the majority and who dissents."""

    rail: Rail
    """(plane, rail) most of its server cables serve."""
    agree: int
    """Server cables on that rail."""
    total: int
    """Server cables whose NIC the plan names."""
    dissent: tuple[tuple[Rail, int], ...]
    """Other (plane, rail) → cables, most first."""
    dissenters: tuple[tuple[Rail, tuple[str, ...]], ...] = ()
    """Other (plane, rail) → the hosts whose NIC of that rail is on this leaf."""

    @property
    def strict(self) -> bool:
        """Whether more than half of its server cables agree (the rail is known)."""
        return self.agree * 2 > self.total

    def dissent_text(self) -> str:
        """``'2 on rail 1, 1 on rail 6'`` (empty when every cable agrees)."""
        hosts = dict(self.dissenters)

        def who(rail: Rail) -> str:
            names = hosts.get(rail, ())
            more = f" +{len(names) - 3}" if len(names) > 3 else ""
            return f" ({', '.join(names[:3])}{more})" if names else ""

        return ", ".join(f"{n} on rail {r[1]}{who(r)}" for r, n in self.dissent)


def nic_rails(
    adj: Adjacency,
    servers: set[str],
    nic_rail: dict[str, Rail],
    switches: set[str],
    inferred: set[tuple[str, str]] | None = None,
) -> dict[str, RailVote]:
    """Each switch with server cables on compute NICs → its :class:`RailVote` (a cable
    whose NIC name was ``inferred`` from the switch's rail casts none)."""
    skip = inferred or set()
    out: dict[str, RailVote] = {}
    for dev in switches:
        votes: Counter[Rail] = Counter()
        hosts: dict[Rail, list[str]] = {}
        for _, peer, pk in adj.get(dev, ()):
            if (
                peer in servers
                and isinstance(pk, str)
                and pk in nic_rail
                and (peer, dev) not in skip
            ):
                votes[nic_rail[pk]] += 1
                hosts.setdefault(nic_rail[pk], []).append(peer)
        if votes:
            ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
            (rail, n), rest = ranked[0], ranked[1:]
            who = tuple((r, tuple(sorted(hosts[r]))) for r, _ in rest)
            out[dev] = RailVote(rail, n, sum(votes.values()), tuple(rest), who)
    return out


def rail_note(moved: int, leaves: int) -> str:
    """The report line for leaves whose NICs overruled the plan's port map."""
    return (
        f"{moved} of {leaves} leaves placed on the rail their NICs say, not the one the "
        "plan's leaf↔spine port numbers say: the site numbers its spine ports in another "
        "convention"
    )


__all__ = ["Adjacency", "Rail", "RailVote", "nic_rails", "rail_note"]
