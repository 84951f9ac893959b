"""Group HCAs that report no host name into servers, by the leaf-and-port pattern.

A ConnectX whose host never set its NodeDesc reports the factory string
(``MT4129 ConnectX7   Mellanox Technologies``,
:func:`~fabric_stack.drift.identity.is_factory_desc`);
each is its own device in the dump (its own system image GUID), one cable each. In a
rail-optimized fabric one server's rail NICs sit at the **same port position** on the
leaves of its SU (server *j* on port *j* of every rail leaf: the NDR DGX dump's
``a06-p1-dgx-02-c07`` is port 7 of leaves 01-02, 02-02, 03-02, 04-02). So:

* leaves that share named hosts (two or more) are one host group (one SU);
* the factory HCAs at port *P* of a group's leaves are one server: the named host at
  port *P* of the group's other leaves when exactly one is there (``medium`` confidence,
  basis: the port pattern of its named siblings), else a new server labelled by its
  lowest GUID (``low``: nothing but the pattern says they belong together);
* each joins on the NIC its leaf's named hosts use (the leaf's rail), so adopt places it
  as it places named servers.

A named host's cable off its own position (the port most of its cables in the group
share: ``a05-p1-dgx-01-c12``'s HCA-2 on port 11 of leaf 02-01, its others on port 12) is a
miswire drift reports; it does not make that host the owner of port 11.

HCAs the reader already grouped by their shared system image GUID
(:mod:`fabric_stack.naming.ib_nodes`: one device, each port labelled ``hca-<guid>``
because nothing says which NIC it is) get the NIC the named hosts use on the leaf each
is cabled to, the same inference (:func:`name_unlabelled_nics`).

Not grouped (left as they are, for adopt to report, each with its reason in
:attr:`HcaGroups.why`): an HCA on a leaf no named host is cabled to, at a port where two
named hosts disagree, or whose host already has a cable on that leaf. The pattern is a
convention, not a law (UNVERIFIED for sites that cable servers to any free port: there
the leaves' named hosts disagree and nothing is grouped).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

from fabric_stack.drift.identity import is_factory_desc
from fabric_stack.drift.observation import Observation, ObservedDevice

Cable = tuple[str, str, str, str]


@dataclass
class HcaGroups:
    """The rewritten observation and, per grouped server, how sure and why."""

    obs: Observation
    basis: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Server → (confidence, what grouped its factory HCAs)."""
    grouped: int = 0
    """Factory HCAs merged into a server."""
    why: dict[str, str] = field(default_factory=dict)
    """Factory HCA left as it is → why the pattern did not group it (for adopt's report)."""


def group_factory_hcas(obs: Observation) -> HcaGroups:
    """Merge one-cable factory-named HCAs into servers by the leaf-and-port pattern
    (a new :class:`Observation`; ``obs`` is left as it is)."""
    devs = obs.devices
    factory = {n for n, d in devs.items() if d.kind == "server" and is_factory_desc(n) and d.guids}
    if not factory and not any(p.startswith(UNLABELLED) for c in obs.cables for p in c[1::2]):
        return HcaGroups(obs)
    seats: dict[str, list[tuple[str, str, str]]] = {}  # host -> (leaf, leaf port, host port)
    for a, pa, b, pb in obs.cables:
        for h, hp, sw, sp in ((a, pa, b, pb), (b, pb, a, pa)):
            if devs[h].kind == "server" and devs[sw].kind == "switch":
                seats.setdefault(h, []).append((sw, sp, hp))
    lone = {h for h in factory if len(seats.get(h, ())) == 1}
    group_of = _leaf_groups(seats, lone)
    named_at: dict[tuple[int, str], set[str]] = {}
    nic_votes: dict[str, Counter[str]] = {}
    for h, rows in seats.items():
        if h in lone or is_factory_desc(h):
            continue
        home = _home_ports(rows, group_of)
        for sw, sp, hp in rows:
            if sw in group_of and not hp.startswith(UNLABELLED):
                nic_votes.setdefault(sw, Counter())[hp] += 1
                # A named host's cable off the port most of its cables in the group share
                # is a miswire (drift reports it), not the group's owner of that port.
                if home.get(group_of[sw], sp) == sp:
                    named_at.setdefault((group_of[sw], sp), set()).add(h)
    members: dict[tuple[int, str], list[str]] = {}
    out_why: dict[str, str] = {}
    for h in sorted(lone):
        sw, sp, _ = seats[h][0]
        if sw in group_of and sw in nic_votes:
            members.setdefault((group_of[sw], sp), []).append(h)
        else:
            out_why[h] = f"a factory-named HCA on {sw} port {sp}, a leaf no named host is on"
    devs = dict(devs)
    out = HcaGroups(
        Observation(obs.source, obs.origin, devs, obs.cables, rates=obs.rates), why=out_why
    )
    rename: dict[tuple[str, str], tuple[str, str]] = {}
    for (g, sp), hcas in sorted(members.items()):
        owners = named_at.get((g, sp), set())
        if len(owners) > 1:
            for h in hcas:
                out.why[h] = (
                    f"a factory-named HCA on {seats[h][0][0]} port {sp}, where its host "
                    f"group's other leaves hold {', '.join(sorted(owners))}: the port "
                    "pattern does not say which server it is"
                )
            continue
        on_leaf = {sw: sp_ for sw, sp_, _ in seats.get(next(iter(owners)), [])} if owners else {}
        if owners:
            host = next(iter(owners))
            out.basis.setdefault(
                host,
                ("medium", f"its factory-named HCAs sit at leaf port {sp} of its host group"),
            )
        else:
            host = _new_host(hcas, devs)
            out.basis[host] = (
                "low",
                f"{len(hcas)} factory-named HCAs at leaf port {sp} of one host group "
                "(no NodeDesc names the server)",
            )
        for h in hcas:
            sw = seats[h][0][0]
            if sw in on_leaf:  # its host already has a cable on that leaf: not this pattern
                out.why[h] = (
                    f"a factory-named HCA on {sw} port {sp}, the port of {host} in its host "
                    f"group, but {host} already has a cable on {sw} (port {on_leaf[sw]}): "
                    "the port pattern does not say whose HCA it is (a swapped cable?)"
                )
                continue
            on_leaf[sw] = sp
            nic = nic_votes[sw].most_common(1)[0][0]
            rename[(h, seats[h][0][2])] = (host, nic)
            out.obs.inferred_nics.add((host, sw))
            old = devs.get(host) or ObservedDevice(host, "server")
            devs[host] = ObservedDevice(
                host,
                old.kind,
                old.guids + [g for g in devs[h].guids if g not in old.guids],
                list(old.macs),
            )
            out.grouped += 1
    if rename:
        out.obs.cables = [_renamed(c, rename) for c in obs.cables]
        for h, _ in rename:
            devs.pop(h, None)
    out.obs.cables = list(out.obs.cables)  # relabelled in place below; obs stays as it is
    out.grouped += name_unlabelled_nics(out.obs, nic_votes)
    return out


UNLABELLED = "hca-"
"""The reader's port label for an HCA grouped by system image GUID whose NIC is unknown."""


def name_unlabelled_nics(obs: Observation, nic_votes: dict[str, Counter[str]]) -> int:
    """Relabel each ``hca-<guid>`` host port with the NIC the leaf's named hosts use on it
    (in place); a host's ports must land on distinct leaves and distinct NICs, else its
    cables are left as they are for adopt to report. Returns the HCAs relabelled."""
    devs = obs.devices
    by_host: dict[str, list[tuple[int, str, str]]] = {}
    for i, (a, pa, b, pb) in enumerate(obs.cables):
        for h, hp, sw in ((a, pa, b), (b, pb, a)):
            if hp.startswith(UNLABELLED) and devs[sw].kind == "switch" and sw in nic_votes:
                by_host.setdefault(h, []).append((i, sw, hp))
    done = 0
    for h, rows in by_host.items():
        nics = [nic_votes[sw].most_common(1)[0][0] for _, sw, _ in rows]
        taken = {p for c in obs.cables for d, p in ((c[0], c[1]), (c[2], c[3])) if d == h}
        if len(set(nics)) < len(nics) or len({sw for _, sw, _ in rows}) < len(rows):
            continue
        if set(nics) & taken:
            continue  # a named sibling HCA already uses that NIC: not this pattern
        for (i, sw, hp), nic in zip(rows, nics, strict=True):
            a, pa, b, pb = obs.cables[i]
            obs.cables[i] = (a, nic, b, pb) if (a, pa) == (h, hp) else (a, pa, b, nic)
            obs.inferred_nics.add((h, sw))
            done += 1
    return done


def hca_note(groups: HcaGroups) -> str:
    """The report's note on the grouped HCAs."""
    new = sum(1 for c, _ in groups.basis.values() if c == "low")
    return (
        f"{groups.grouped} HCA(s) reporting only a factory NodeDesc grouped into "
        f"{len(groups.basis)} server(s) by the leaf-and-port pattern (the HCAs at one port "
        f"position on the leaves of one host group are one server; {new} server(s) no "
        "NodeDesc names are labelled by their lowest GUID, confidence low)"
    )


def _renamed(c: Cable, rename: dict[tuple[str, str], tuple[str, str]]) -> Cable:
    a, pa, b, pb = c
    a, pa = rename.get((a, pa), (a, pa))
    b, pb = rename.get((b, pb), (b, pb))
    return a, pa, b, pb


def _new_host(hcas: list[str], devs: dict[str, ObservedDevice]) -> str:
    """A label for a server no NodeDesc names: the factory string's first word and its
    lowest GUID (``mt4129-e09d730300858d88``), as adopt labels other unnamed devices."""
    guid = min(g for h in hcas for g in devs[h].guids).lower().removeprefix("0x")
    word = "".join(ch for ch in hcas[0].split()[0].lower() if ch.isalnum())[:20] or "hca"
    return f"{word}-{guid}"


def _home_ports(rows: list[tuple[str, str, str]], group_of: dict[str, int]) -> dict[int, str]:
    """Host group → the leaf port most of a named host's cables in it share (two or more, and
    more than any other port): the position the pattern gives it there."""
    ports: dict[int, Counter[str]] = {}
    for sw, sp, _ in rows:
        if sw in group_of:
            ports.setdefault(group_of[sw], Counter())[sp] += 1
    out: dict[int, str] = {}
    for g, c in ports.items():
        (top, n), *rest = [*c.most_common(2), ("", 0)]
        if n >= 2 and n > rest[0][1]:
            out[g] = top
    return out


def _leaf_groups(seats: dict[str, list[tuple[str, str, str]]], lone: set[str]) -> dict[str, int]:
    """Leaf → host group: leaves two or more named hosts share are one group."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    pairs: Counter[tuple[str, str]] = Counter()
    for h, rows in seats.items():
        if h in lone or is_factory_desc(h):
            continue
        leaves = sorted({sw for sw, _, _ in rows})
        for sw in leaves:
            find(sw)
        for x, y in itertools.pairwise(leaves):
            pairs[(x, y)] += 1
    for (x, y), n in pairs.items():
        if n >= 2:
            parent[find(x)] = find(y)
    for rows in (seats[h] for h in lone):
        find(rows[0][0])
    roots = sorted({find(x) for x in parent})
    index = {r: i for i, r in enumerate(roots)}
    return {x: index[find(x)] for x in parent}


__all__ = ["HcaGroups", "group_factory_hcas", "hca_note"]
