"""Adopt's placement machinery: anchors from the port map, votes propagated from placed
devices, and the passes for what the port map cannot say (a leaf's rail by its NICs,
switches the wiring cannot tell apart, hosts cabled to any free port). See
:mod:`fabric_stack.drift.adopt` for the method and what it reports."""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabric_stack.drift.adopt_plan import (
    POSITION_ATTRS,
    UPLINK_ROLE,
    PlanPorts,
    natural_key,
)
from fabric_stack.drift.adopt_ports import PortMap
from fabric_stack.drift.adopt_rails import Adjacency, RailVote, nic_rails
from fabric_stack.drift.adopt_roles import host_groups, natural, raw_tiers, wiring
from fabric_stack.drift.observation import Observation

_HOSTS = frozenset({"server", "manager"})
"""Planned roles an observed host (a device whose ports are NICs) can take."""


Offer = tuple[int, str, str, tuple[str, str]]
"""(agreeing cables, observed device, planned position, (confidence, basis))."""


def adjacency(obs: Observation, keys: dict[tuple[str, str], Any]) -> Adjacency:
    adj: Adjacency = {}
    for a, pa, b, pb in obs.cables:
        ka, kb = keys.get((a, pa)), keys.get((b, pb))
        if ka is None or kb is None or a == b:
            continue
        adj.setdefault(a, []).append((ka, b, kb))
        adj.setdefault(b, []).append((kb, a, ka))
    return adj


def _access_roles(
    adj: Adjacency, servers: set[str], access_role: dict[str, str], tiered: set[str]
) -> dict[str, str]:
    """Switches reached only on servers' storage / in-band / BMC ports → that network's role
    (the role most of those server ports serve in the plan)."""
    out: dict[str, str] = {}
    for dev, links in adj.items():
        if dev in servers or dev in tiered:
            continue
        votes = Counter(access_role[pk] for _, p, pk in links if p in servers and pk in access_role)
        if votes:
            role, n = votes.most_common(1)[0]
            if n * 2 > sum(votes.values()):
                out[dev] = role
    return out


def tiers(obs: Observation, adj: Adjacency, nics: set[str] | None = None) -> dict[str, int]:
    """Switch tiers by distance from the servers: 1 leaf, 2 spine, 3 core (only cables on
    ``nics`` make a leaf: see :func:`fabric_stack.drift.adopt_roles.raw_tiers`)."""
    servers = {d for d in adj if obs.devices[d].kind == "server"}
    return raw_tiers(adj, servers, set(), nics)


_PLANE, _RAIL = POSITION_ATTRS.index("plane"), POSITION_ATTRS.index("rail")


def _rail_of(
    dev: str, t: int, adj: Adjacency, tier: dict[str, int], rails: dict[str, RailVote]
) -> tuple[int, int] | None:
    """(plane, rail) of a leaf by its NICs, or of a spine by most of its leaves' NICs."""
    if t == 1:
        rv = rails.get(dev)
        return rv.rail if rv is not None and rv.strict else None
    if t != 2:
        return None
    below = Counter(
        rails[p].rail for _, p, _ in adj[dev] if tier.get(p) == 1 and p in rails and rails[p].strict
    )
    if not below:
        return None
    rail, n = below.most_common(1)[0]
    return rail if n * 2 > below.total() else None


def _anchors(
    obs: Observation,
    plan: PlanPorts,
    adj: Adjacency,
    tier: dict[str, int],
    rails: dict[str, RailVote],
) -> dict[str, tuple[str, int, int]]:
    """Step 1: switch-to-switch cables vote for their ends' attributes by port-number pair.

    A cable's pair of port numbers says what every planned cable with those numbers
    shares (in two tiers: everything; in three, the rail of a leaf or the pod of a
    spine); each attribute takes its majority, and a complete set names the position.
    Where every rail cables its leaves to its own spine group on the same ports
    (``spine_grouping: rail``), a port pair says nothing of the rail: a leaf's comes from
    its NICs, a spine's from most of its leaves' NICs.
    """
    out: dict[str, tuple[str, int, int]] = {}
    common = plan.common
    memo: dict[tuple[str, int, int], tuple[Any, Any] | None] = {}
    for dev, links in adj.items():
        t = tier.get(dev)
        if t is None:
            continue
        votes: list[Counter[Any]] = [Counter() for _ in POSITION_ATTRS]
        voters = 0
        up, down = UPLINK_ROLE.get(t), UPLINK_ROLE.get(t - 1)
        for k, peer, pk in links:
            pt = tier.get(peer)
            if pt == t + 1 and up is not None:
                key, side = (up, k, pk), 0
            elif pt == t - 1 and down is not None:
                key, side = (down, pk, k), 1
            else:
                continue
            if key in memo:
                com = memo[key]
            else:
                com = memo[key] = common(key)
            voters += 1  # a port pair the plan never cables votes against every position
            if com is not None:
                for i, v in com[side]:
                    votes[i][v] += 1
        if voters and (not votes[_RAIL] or not votes[_PLANE]):
            said = _rail_of(dev, t, adj, tier, rails)
            if said is not None:
                for i, v in ((_PLANE, said[0]), (_RAIL, said[1])):
                    if not votes[i]:
                        votes[i][v] = voters
        tup: list[Any] = []
        strength = 1 << 30
        for c in votes:
            if not c:
                break
            v, n = c.most_common(1)[0]
            tup.append(v)
            strength = min(strength, n)
        else:
            cand = plan.position.get(tuple(tup))
            if cand is not None:
                out[dev] = (cand, strength, voters)
    return out


def _votes(
    dev: str,
    adj: Adjacency,
    plan: PlanPorts,
    placed: dict[str, str],
    anchor: tuple[str, int, int] | None,
) -> tuple[Counter[str], int]:
    """(votes per planned position, cables that voted) for an unplaced device."""
    c: Counter[str] = Counter({anchor[0]: anchor[1]} if anchor else {})
    voters = anchor[2] if anchor else 0
    for _, peer, pk in adj[dev]:
        p = placed.get(peer)
        if p is None:
            continue
        q = plan.peer.get((p, pk))
        if q is not None:
            c[q[0]] += 1
        voters += 1
    return c, voters


class Placer:
    """Steps 2-3: propagate and place by majority (state shared by the rounds)."""

    def __init__(self, obs: Observation, plan: PlanPorts, adj: Adjacency) -> None:
        self.obs, self.plan, self.adj = obs, plan, adj
        self.tier = tiers(obs, adj, plan.nic_names)
        self.servers = {d for d in adj if obs.devices[d].kind == "server"}
        self.rails = nic_rails(
            adj,
            self.servers,
            plan.nic_rail,
            {d for d, t in self.tier.items() if t == 1},
            obs.inferred_nics,
        )
        self.anchors = _anchors(obs, plan, adj, self.tier, self.rails)
        self.access = _access_roles(adj, self.servers, plan.access_role, set(self.tier))
        self.placed: dict[str, str] = {}
        self.taken: dict[str, str] = {}
        self.why: dict[str, str] = {}
        self.basis: dict[str, tuple[str, str]] = {}
        """Placed device → (confidence high/medium/low, what placed it)."""
        self.overruled: dict[str, str] = {}
        """Leaf → the position the port map said, where its NICs said another rail."""
        self.low_hosts: set[str] = set()
        """Hosts placed in their SU by :meth:`by_group` (their leaf ports name no position)."""

    def want(self, dev: str) -> str:
        """The planned role an observed device can take (by kind, tier or access ports)."""
        if self.obs.devices[dev].kind == "server":
            return "server"
        role = {1: "leaf", 2: "spine", 3: "core"}.get(self.tier.get(dev, 0), "")
        return role or self.access.get(dev, "")

    def rounds(self) -> None:
        """Place by votes until nothing changes (each round sees the last one's placements)."""
        for _ in range(16):
            offers: list[Offer] = []
            for dev in self.adj:
                if dev in self.placed:
                    continue
                offer = self._offer(dev)
                if offer is not None:
                    offers.append(offer)
            if not self._accept(offers):
                break

    def _offer(self, dev: str) -> Offer | None:
        c, voters = _votes(dev, self.adj, self.plan, self.placed, self.anchors.get(dev))
        want = self.want(dev)
        fits = _HOSTS if want == "server" else {want}
        for cand in [x for x in c if self.plan.role.get(x) not in fits]:
            del c[cand]
        said: dict[str, str] = {}
        if want == "leaf":
            c, said = self._by_nics(dev, c)
        best = c.most_common(2)
        if not best:
            return None
        (cand, n), second = best[0], (best[1][1] if len(best) > 1 else 0)
        # A fabric manager (UFM / OpenSM host) has one cable per plane on a leaf port the
        # plan reserves for it: one cable is enough when every cable it has agrees.
        # A single-HCA host (a one-rail fabric, a login or storage node) has one cable: when
        # that is every cable it has, its one vote is all the wiring says, and it agrees.
        manager = self.plan.role.get(cand) == "manager"
        only = voters == 1 and len(self.adj[dev]) == 1 and want == "server" and not manager
        enough = n >= 1 and n == voters if manager or only else n >= 2
        if not enough or n * 2 < voters or n == second:
            self.why[dev] = (
                f"its cables agree on no single position (best {cand}: {n} of {voters})"
                if n == second or n * 2 < voters
                else f"only {n} cable(s) say where it is"
            )
            return None
        basis = f"{n} of {voters} cables agree" if not only else "its only cable"
        confidence = "high" if n * 4 >= voters * 3 and not only else "medium"
        if cand in said:
            basis += f"; its NICs say rail {self.plan.attrs[cand].rail}, the port map {said[cand]}"
            confidence = "medium"
            self.overruled[dev] = said[cand]
        return n, dev, cand, (confidence, basis)

    def _by_nics(self, dev: str, c: Counter[str]) -> tuple[Counter[str], dict[str, str]]:
        """Votes for leaf positions moved onto the rail the leaf's NICs say (majority).

        The port map says a leaf's SU and rail; the NIC names on its server cables say the
        rail whatever the site's spine-port convention. A vote for another rail counts for
        the same SU's leaf on the NICs' rail (``said``: that position → the one voted)."""
        rv = self.rails.get(dev)
        if rv is None or not rv.strict:
            return c, {}
        direct: Counter[str] = Counter()
        moved: Counter[str] = Counter()
        said: dict[str, str] = {}
        plane, rail = rv.rail
        for cand, n in c.items():
            a = self.plan.attrs[cand]
            if (a.plane, a.rail) == rv.rail:
                direct[cand] += n
                continue
            alt = self.plan.leaf_at.get((plane, a.pod, a.su, rail))
            if alt is not None:
                moved[alt] += n
                said.setdefault(alt, cand)
        said = {alt: x for alt, x in said.items() if moved[alt] > direct[alt]}
        return direct + moved, said

    def _accept(self, offers: list[Offer]) -> bool:
        changed = False
        for _n, dev, cand, basis in sorted(offers, key=lambda o: (-o[0], o[1])):
            if cand in self.taken:
                self.why[dev] = f"position {cand} is held by {self.taken[cand]} (more cables agree)"
                continue
            self.placed[dev], self.taken[cand] = cand, dev
            self.basis[dev] = basis
            self.why.pop(dev, None)
            changed = True
        return changed

    def by_rail(self) -> bool:
        """Leaves the port map could not place, by the rail of the NICs they serve, when
        one planned leaf of that plane and rail is left (a site cabled differently above
        the leaves, or a single SU). Returns whether any was placed."""
        offers: list[Offer] = []
        for dev in self.adj:
            if dev in self.placed or self.want(dev) != "leaf":
                continue
            rv = self.rails.get(dev)
            if rv is None or not rv.strict:
                continue
            free = [x for x in self.plan.leaves.get(rv.rail, ()) if x not in self.taken]
            if len(free) == 1:
                basis = (
                    f"the only free leaf of rail {rv.rail[1]}, the rail {rv.agree} of "
                    f"{rv.total} of its server cables say"
                )
                offers.append((rv.agree, dev, free[0], ("medium", basis)))
        return self._accept(offers)

    def by_symmetry(self) -> bool:
        """Switches no cable tells apart, on the free positions of their role in order.

        On a fabric cabled otherwise than the plan's port map (a site's own uplink
        numbering, a one-rail cluster) the leaves of one rail are interchangeable as far
        as the wiring goes: each carries a host group, each reaches every spine. What the
        wiring does say is kept (a leaf's rail by its NICs, its host group); which SU
        number a group gets is read from its hosts' names (natural order), and spines
        take their positions in the order of their names. Placed at low confidence, the
        basis says so; a switch whose cables still vote (some position's ports agree)
        is left to the votes. Returns whether any was placed."""
        pending: dict[tuple[str, Any], list[str]] = {}
        for dev in self.adj:
            if dev in self.placed:
                continue
            want = self.want(dev)
            if want == "leaf":
                rv = self.rails.get(dev)
                if rv is None or not rv.strict:
                    continue
                pending.setdefault(("leaf", rv.rail), []).append(dev)
            elif want in ("spine", "core") and self._below_placed(dev):
                pending.setdefault((want, None), []).append(dev)
        if not pending:
            return False
        groups = host_groups(
            wiring(self.obs.cables), self.servers, {d for d, t in self.tier.items() if t == 1}
        )
        # A host group some of whose leaves are placed (other rails) has its SU already.
        group_at: dict[str, Counter[tuple[int, int]]] = {}
        for dev, g in groups.items():
            if dev in self.placed:
                a = self.plan.attrs[self.placed[dev]]
                group_at.setdefault(g, Counter())[(a.pod, a.su)] += 1
        offers: list[Offer] = []
        for (role, rail), devs in pending.items():
            if role == "leaf":
                offers += self._leaf_offers(rail, devs, groups, group_at)
                continue
            free = sorted(
                (x for x, r in self.plan.role.items() if r == role and x not in self.taken),
                key=natural_key,
            )
            how = f"position by name order: the wiring cannot tell the {role}s apart"
            for dev, cand in zip(sorted(devs, key=natural), free, strict=False):
                offers.append((0, dev, cand, ("low", how)))
        return self._accept(offers)

    def _leaf_offers(
        self,
        rail: tuple[int, int],
        devs: list[str],
        groups: dict[str, str],
        group_at: dict[str, Counter[tuple[int, int]]],
    ) -> list[Offer]:
        """Leaves of ``rail`` no cable tells apart: a host group with a placed leaf keeps
        its SU; the others take the rail's free leaves in host-group order (the same
        order on every rail, so one group is one SU)."""
        offers: list[Offer] = []
        rest = []
        for dev in devs:
            known = group_at.get(groups.get(dev, ""))
            if known:
                pod, su = known.most_common(1)[0][0]
                cand = self.plan.leaf_at.get((rail[0], pod, su, rail[1]))
                if cand is not None and cand not in self.taken:
                    basis = f"its host group's other leaves are in SU {su}"
                    offers.append((0, dev, cand, ("medium", basis)))
                    continue
            rest.append(dev)
        taken = {o[2] for o in offers}
        free = [x for x in self.plan.leaves.get(rail, ()) if x not in self.taken and x not in taken]
        rest.sort(key=lambda d: (natural(groups.get(d, "")), natural(d)))
        for dev, cand in zip(rest, free, strict=False):
            basis = (
                f"position by its host group {groups.get(dev, '?')}: the wiring cannot tell "
                f"rail {rail[1]}'s leaves apart"
            )
            offers.append((0, dev, cand, ("low", basis)))
        return offers

    def _below_placed(self, dev: str) -> bool:
        """Whether every switch one tier below ``dev`` that is cabled to it is placed (a
        spine is only told apart from the plan's through its leaves)."""
        t = self.tier.get(dev, 0)
        below = [p for _, p, _ in self.adj[dev] if self.tier.get(p) == t - 1]
        return bool(below) and all(p in self.placed for p in below)

    def loose_leaves(self) -> set[str]:
        """Placed leaves that follow no port convention: a quarter or more of their host
        cables are not on the port the plan gives a host placed there (unplaced hosts
        count as not; a miswire or two leave nearly all agreeing)."""
        placed, peer = self.placed, self.plan.peer
        out: set[str] = set()
        for dev, t in self.tier.items():
            if t != 1 or dev not in placed:
                continue
            hosts = [(p, pk, k) for k, p, pk in self.adj.get(dev, ()) if p in self.servers]
            agree = sum(
                1
                for h, hk, k in hosts
                if h in placed and peer.get((placed[h], hk)) == (placed[dev], k)
            )
            if not hosts or agree * 4 < len(hosts) * 3:
                out.add(dev)
        # An SU's rail leaves are cabled by one hand: when one follows no convention, its
        # siblings' agreement is chance (four hosts on a leaf agree three times in four
        # about once in 24 shuffles; found by tests/unit/test_adopt_properties.py).
        sus = {self.plan.attrs[placed[d]].su for d in out}
        for dev, t in self.tier.items():
            if t == 1 and dev in placed and self.plan.attrs[placed[dev]].su in sus:
                out.add(dev)
        return out

    def by_group(self) -> bool:
        """Hosts whose cables all land on placed leaves of one SU but on ports that name
        no one position of it (a site that cabled its hosts to any free port): the SU is
        what the wiring says, the index within it is not, so each takes the free server
        position of that SU most of its cables vote for (else the first), at low
        confidence; drift then compares its cables in the site's port numbering (the
        leaf's downlinks join the learned port map). Only on leaves that follow no port
        convention (:meth:`loose_leaves`): where ports place hosts, a host they do not
        place (a UFM, a login node) stays unplaced with its reason. Returns whether any
        was placed."""
        offers: list[Offer] = []
        waiting = [d for d in self.servers if d not in self.placed and d in self.adj]
        if not waiting:
            return False
        free: dict[int, list[str]] = {}
        for x, r in self.plan.role.items():
            if r == "server" and x not in self.taken:
                free.setdefault(self.plan.attrs[x].su, []).append(x)
        for xs in free.values():
            xs.sort(key=natural_key)
        loose = self.loose_leaves()
        for dev in sorted(waiting, key=natural):
            links = self.adj[dev]
            if not all(peer in loose for _, peer, _ in links):
                continue  # a leaf with a port convention: its ports place hosts, or nothing
            leaves = [self.placed.get(peer) for _, peer, _ in links]
            if not links or any(p is None or self.plan.role.get(p) != "leaf" for p in leaves):
                continue
            sus = {self.plan.attrs[p].su for p in leaves if p is not None}
            if len(sus) != 1:
                continue
            su = sus.pop()
            votes, _ = _votes(dev, self.adj, self.plan, self.placed, None)
            room = free.get(su, [])
            if not room:
                continue
            cand = max(room, key=lambda x: votes.get(x, 0))  # the first of the most voted
            room.remove(cand)
            basis = (
                f"its {len(links)} cable(s) all land on SU {su}'s leaves, on ports that name "
                "no one position of it: a free position of that SU"
            )
            self.low_hosts.add(dev)
            offers.append((0, dev, cand, ("low", basis)))
        return self._accept(offers)


def place(obs: Observation, plan: PlanPorts, adj: Adjacency) -> Placer:
    """Propagate from the anchors; then leaves by rail; then switches the wiring cannot
    tell apart (:meth:`Placer.by_symmetry`); propagate again after each."""
    p = Placer(obs, plan, adj)
    p.rounds()
    while p.by_rail():
        p.rounds()
    while p.by_symmetry():
        p.rounds()
        while p.by_rail():
            p.rounds()
    while p.by_group():
        p.rounds()
    return p


def any_port_hosts(placer: Placer) -> set[str]:
    """Hosts placed by their SU (:attr:`Placer.low_hosts`), and every host all of whose
    cables land on leaves that follow no port convention (:meth:`Placer.loose_leaves`):
    a port agreeing there is chance, the others are the site's numbering, not miswires."""
    low = placer.low_hosts
    if not low:
        return low
    loose = placer.loose_leaves()
    out = set(low)
    for h in placer.servers:
        links = placer.adj.get(h, ())
        if links and all(p in loose for _, p, _ in links):
            out.add(h)
    return out


def downlink_map(
    plan: PlanPorts,
    obs: Observation,
    keys: dict[tuple[str, str], Any],
    placed: dict[str, str],
    hosts: set[str],
) -> PortMap:
    """(leaf, site port) → the plan's port, for the cables of ``hosts`` (placed in their SU
    by :meth:`Placer.by_group`): the site's way of cabling hosts to any free leaf port."""
    out: PortMap = {}
    for a, pa, b, pb in obs.cables:
        if b in hosts:
            a, pa, b, pb = b, pb, a, pa
        if a not in hosts or a not in placed or b not in placed:
            continue
        want = plan.peer.get((placed[a], keys.get((a, pa))))
        have = keys.get((b, pb))
        if want is not None and want[0] == placed[b] and have is not None and have != want[1]:
            out[(b, pb)] = int(want[1])
    return out


__all__ = ["Offer", "Placer", "adjacency", "any_port_hosts", "downlink_map", "place", "tiers"]
