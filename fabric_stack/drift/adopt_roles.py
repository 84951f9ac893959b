"""What each observed switch is, from the wiring alone, whether or not it fits the plan.

A switch servers hang on is a leaf, one leaves hang on a spine, one above that a core;
one reached only on servers' storage / in-band / BMC ports is that access network's
switch. Leaves that share most of their servers form one host group (an SU in a
rail-optimized fabric). These roles hold on any fabric, also one that is not
rail-optimized or not of the plan's size, where no planned *position* can be named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fabric_stack.drift.adopt_rails import Adjacency, RailVote

_NUM = re.compile(r"(\d+)")


@dataclass(frozen=True, slots=True)
class Role:
    """An observed switch's role and what says so."""

    device: str
    role: str
    """leaf / spine / core / storage / inband / oob."""
    basis: str
    """What the wiring says (hosts on it, its NICs' rail, its host group)."""
    group: str = ""
    """The host group of a leaf: its first host … last host (an SU when rail-optimized)."""
    rail: int = 0
    """The rail its NICs say (0: not known)."""


def natural(text: str) -> list[Any]:
    """Sort key: digits as numbers (``node2`` before ``node10``)."""
    return [int(t) if t.isdigit() else t for t in _NUM.split(text)]


def host_groups(adj: Adjacency, servers: set[str], leaves: set[str]) -> dict[str, str]:
    """Leaf → its host group, named ``first…last`` host: leaves sharing more than half of
    their servers are one group (a miswired cable or two does not join two groups)."""
    hosts = {leaf: {p for _, p, _ in adj.get(leaf, ()) if p in servers} for leaf in sorted(leaves)}
    parent = {leaf: leaf for leaf in hosts}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    leaves_of: dict[str, list[str]] = {}
    for leaf, hs in hosts.items():
        for h in hs:
            leaves_of.setdefault(h, []).append(leaf)
    for leaf, hs in hosts.items():
        shared: dict[str, int] = {}
        for h in hs:
            for other in leaves_of[h]:
                if other != leaf:
                    shared[other] = shared.get(other, 0) + 1
        for other, n in shared.items():
            if n * 2 > min(len(hs), len(hosts[other])):
                parent[root(other)] = root(leaf)
    members: dict[str, set[str]] = {}
    for leaf, hs in hosts.items():
        members.setdefault(root(leaf), set()).update(hs)
    label = {}
    for r, hs in members.items():
        ordered = sorted(hs, key=natural)
        label[r] = f"{ordered[0]}…{ordered[-1]}" if len(ordered) > 1 else ordered[0]
    return {leaf: label[root(leaf)] for leaf in hosts}


def wiring(cables: list[tuple[str, str, str, str]]) -> Adjacency:
    """Device-level adjacency of every cable, whatever its port names (for roles only)."""
    adj: Adjacency = {}
    for a, pa, b, pb in cables:
        if a != b:
            adj.setdefault(a, []).append((pa, b, pb))
            adj.setdefault(b, []).append((pb, a, pa))
    return adj


def raw_tiers(
    adj: Adjacency, servers: set[str], skip: set[str], nics: set[str] | None = None
) -> dict[str, int]:
    """Switch tiers by hops from the hosts (1 leaf, 2 spine, 3 core), ``skip`` left out.

    With ``nics``, only a cable on one of those server ports makes a leaf (a switch
    reached only on storage / in-band / BMC ports is an access switch, no tier)."""
    out: dict[str, int] = {}
    seen = set(servers) | skip
    frontier = [s for s in servers if s in adj]
    for tier in (1, 2, 3):
        nxt = []
        for dev in frontier:
            for port, peer, _ in adj[dev]:
                if tier == 1 and nics is not None and port not in nics:
                    continue
                if peer not in seen:
                    seen.add(peer)
                    out[peer] = tier
                    nxt.append(peer)
        frontier = nxt
    return out


def infer_roles(
    adj: Adjacency,
    servers: set[str],
    tier: dict[str, int],
    access: dict[str, str],
    rails: dict[str, RailVote],
) -> dict[str, Role]:
    """Every observed switch → its :class:`Role` (see the module docstring).

    ``adj`` is the wiring of every cable (:func:`wiring`); ``tier`` what the plan's port
    names gave (a switch missing there is tiered by hops from the hosts)."""
    tier = {**raw_tiers(adj, servers, set(access)), **tier}
    leaves = {d for d, t in tier.items() if t == 1}
    groups = host_groups(adj, servers, leaves)
    out: dict[str, Role] = {}
    for dev, t in tier.items():
        links = adj.get(dev, ())
        if t == 1:
            n = sum(1 for _, p, _ in links if p in servers)
            rv = rails.get(dev)
            basis = f"{n} host cable(s) on it"
            rail = 0
            if rv is not None and rv.strict:
                rail = rv.rail[1]
                basis += f"; rail {rail} by its NICs ({rv.agree} of {rv.total})"
            out[dev] = Role(dev, "leaf", basis, groups.get(dev, ""), rail)
        else:
            below = sum(1 for _, p, _ in links if tier.get(p) == t - 1)
            role = "spine" if t == 2 else "core"
            lower = "leaves" if t == 2 else "spines"
            out[dev] = Role(dev, role, f"no host on it; {below} cable(s) to {lower}")
    for dev, role in access.items():
        n = sum(1 for _, p, _ in adj.get(dev, ()) if p in servers)
        out[dev] = Role(dev, role, f"{n} server {role} port(s) on it, no rail NIC")
    return out


__all__ = ["Role", "host_groups", "infer_roles", "natural", "raw_tiers", "wiring"]
