"""Identity resolution of observed links: every end on the plan's names, both directions merged.

:class:`Resolver` maps each end a source reported onto the plan's (device, port)
names (:mod:`.identity` does the spelling), merges the two directions LLDP reports
of one cable into one :class:`Observed` link, and completes ends the source could
not name from the plan (see :meth:`Resolver.links`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabric_stack.drift.identity import Identity, is_factory_desc
from fabric_stack.drift.ignore import ActiveRules
from fabric_stack.drift.model import Endpoint, ObservedLink, Snapshot
from fabric_stack.drift.plan import EP, Key, PlanIndex, PortScheme, link_key
from fabric_stack.drift.ports import max_port


@dataclass(slots=True)
class Observed:
    """An observed link after resolution: its endpoints on the plan's names."""

    a: EP
    b: EP
    link: ObservedLink
    speed: float | None
    done: bool = False
    """Set once a finding (or a match) has accounted for this link."""
    hit: bool = False
    """Equal to a planned cable (counted as matched in the coverage)."""


def top_port(scheme: PortScheme) -> int:
    """Highest logical port of a planned switch (a huge number when the plan does not say)."""
    return max_port(scheme) or 1 << 30


def ep_text(ep: EP) -> str:
    """``device port``."""
    return f"{ep[0]} {ep[1]}"


@dataclass(frozen=True, slots=True)
class BoundHca:
    """An HCA with a factory NodeDesc bound to its planned host by the switch port it is on."""

    raw: str
    """The device name the source gave it (``MT4129 ConnectX7 … e09d…``)."""
    host: str
    port: str
    """The host's planned port (``mlx5_5``)."""
    switch_port: EP
    guids: tuple[str, ...]
    where: str


class Resolver:
    """Resolves one snapshot's links onto the plan (one instance per comparison)."""

    def __init__(self, plan: PlanIndex, ident: Identity, rules: ActiveRules) -> None:
        self.plan = plan
        self.ident = ident
        self.rules = rules
        self.unknown_eps: set[EP] = set()
        """Ends naming a port the planned switch model cannot have."""
        self.unknown_obs: dict[Key, Observed] = {}
        """The observations with such an end (an ``unknown_port`` finding each, never a move)."""
        self.bound: dict[str, list[BoundHca]] = {}
        """Host → its HCAs that report a factory NodeDesc, bound by their switch port."""

    def endpoint(self, ep: Endpoint) -> tuple[EP, bool]:
        """``ep`` on the plan's names, and whether its port was resolved to a plan name."""
        r = self.ident.endpoint(ep)
        if r.port_type == "name":
            return (r.device, r.port), True
        if r.port_type == "unknown":
            self.unknown_eps.add((r.device, r.port))
        port = f"mac {r.port}" if r.port_type == "mac" else r.port
        return (r.device, port), False

    def links(self, snap: Snapshot) -> dict[Key, Observed]:
        """Resolve and merge observations; complete ends the source could not name.

        A port given only as a MAC (no MAC table) or as an unknown interface name
        is completed, in order, (1) from the planned peer of the other end when
        that peer is on the same device, (2) from the only planned cable between
        the two devices that no other observation claims, (3) by elimination, the
        only planned port of the device nobody claims. Completed ports are not
        verified and the report notes say so.
        """
        plan, ident = self.plan, self.ident
        at, schemes = plan.at, plan.schemes
        tops = {d: top_port(sch) for d, sch in schemes.items()}  # highest port of each switch
        devices = ident.device
        known = ident.known_devices
        rules = self.rules if self.rules.active else None
        by_key: dict[Key, Observed] = {}
        pending: list[list[Any]] = []
        for link in snap.links:
            la, lb = link.a, link.b
            # Fast paths (most of a big snapshot): the port spelled as the plan spells it,
            # or a bare logical number on a planned switch (ibnetdiscover).
            dev = known.get(la.device) or devices(la.device)
            pt = la.port_type
            sch = schemes.get(dev) if pt == "number" else None
            if pt == "name" and (dev, la.port) in at:
                a, ok_a = (dev, la.port), True
            elif (
                sch is not None
                and la.port.isdigit()
                and 0 < int(la.port) <= tops[dev]
                and (named := sch.label(int(la.port))) is not None
            ):
                a, ok_a = (dev, named), True
            else:
                a, ok_a = self.endpoint(la)
            dev = known.get(lb.device) or devices(lb.device)
            pt = lb.port_type
            sch = schemes.get(dev) if pt == "number" else None
            if pt == "name" and (dev, lb.port) in at:
                b, ok_b = (dev, lb.port), True
            elif (
                sch is not None
                and lb.port.isdigit()
                and 0 < int(lb.port) <= tops[dev]
                and (named := sch.label(int(lb.port))) is not None
            ):
                b, ok_b = (dev, named), True
            else:
                b, ok_b = self.endpoint(lb)
            if (
                not (ok_a and ok_b)
                and self.unknown_eps
                and (a in self.unknown_eps or b in self.unknown_eps)
            ):
                self.unknown_obs.setdefault(link_key(a, b), Observed(a, b, link, link.speed_gbps))
                continue
            if ok_a != ok_b:
                good, bad = (a, b) if ok_a else (b, a)
                peer = plan.peer(good)
                if peer is not None and peer[0] == bad[0]:
                    ident.note("completed", f"{ep_text(bad)} → {peer[1]}")
                    a, b = (good, peer) if ok_a else (peer, good)
                    ok_a = ok_b = True
            if not (ok_a and ok_b):
                pending.append([a, ok_a, b, ok_b, link])
                continue
            if rules is not None and (rules.ignored(a) or rules.ignored(b)):
                continue
            key = (a, b) if a <= b else (b, a)
            prev = by_key.get(key)
            if prev is None:
                by_key[key] = Observed(a, b, link, link.speed_gbps)
            elif prev.speed is None and link.speed_gbps is not None:
                # The second direction knows the speed (EOS status, lldpd MAU): keep it.
                prev.speed = link.speed_gbps
        if pending:
            self._complete_pending(pending, by_key)
        if snap.devices:
            self._bind_factory_hcas(snap, by_key)
        return by_key

    def _bind_factory_hcas(self, snap: Snapshot, by_key: dict[Key, Observed]) -> None:
        """Bind HCAs named only by their factory NodeDesc to the host the plan puts there.

        An unplanned server device whose name is a factory NodeDesc (:func:`is_factory_desc`)
        and whose every cable lands on a planned switch port is the planned host of those
        ports, port by port, when they all name one host and no other observed cable claims
        that host's ports. Its cables are re-keyed onto the host and the device name resolves
        to the host from now on, so the host is seen once (one finding about the NodeDescs,
        from :meth:`FindingBuilder.factory_nodedesc`) instead of "power on" for the host and
        "disconnect" for each of its HCAs. A contradiction (two hosts, a claimed port) binds
        nothing: the device stays unexpected.
        """
        plan = self.plan
        devices = plan.devices
        cands: dict[str, list[tuple[Key, Observed, EP, EP]]] = {}
        poisoned: set[str] = set()
        for key, o in by_key.items():
            for mine, other, end in ((o.a, o.b, o.link.a), (o.b, o.a, o.link.b)):
                if mine[0] in devices or end.port_type not in ("unresolved", "name"):
                    continue
                seen = snap.devices.get(end.device)
                if seen is None or seen.kind != "server" or not is_factory_desc(end.device):
                    continue
                peer = plan.peer(other)
                info = devices.get(other[0])
                if (
                    peer is None
                    or info is None
                    or info.is_server
                    or not plan.is_server(peer[0])
                    or (
                        end.port_type == "name" and self.ident.port(peer[0], end.port)[0] != peer[1]
                    )
                ):
                    # A cable the plan cannot place, or an HCA named other than the plan's
                    # port there: bind nothing (the contradiction stays a finding).
                    poisoned.add(end.device)
                else:
                    cands.setdefault(end.device, []).append((key, o, other, peer))
        if not cands:
            return
        claimed = {ep for key in by_key for ep in key}
        for raw, rows in sorted(cands.items()):
            if raw in poisoned:
                continue
            hosts = {peer[0] for *_, peer in rows}
            peers = [peer for *_, peer in rows]
            if len(hosts) != 1 or len(set(peers)) != len(peers) or any(p in claimed for p in peers):
                continue
            host = peers[0][0]
            seen = snap.devices[raw]
            guids = seen.attrs.get("hca_guids") or [seen.attrs.get("guid", "")]
            for key, o, sw, peer in rows:
                del by_key[key]
                by_key[link_key(sw, peer)] = Observed(sw, peer, o.link, o.speed)
                claimed.add(peer)
                self.bound.setdefault(host, []).append(
                    BoundHca(raw, host, peer[1], sw, tuple(str(g) for g in guids if g), seen.where)
                )
            self.ident.bind(raw, host)

    def _complete_pending(self, pending: list[list[Any]], by_key: dict[Key, Observed]) -> None:
        """Steps (2) and (3) of :meth:`links` for the rows with an unnamed end."""
        plan, ident = self.plan, self.ident
        claimed = {ep for key in by_key for ep in key}
        claimed |= {r[0] for r in pending if r[1]} | {r[2] for r in pending if r[3]}
        half = [r for r in pending if r[1] != r[3]]
        for r in half:  # (2) the one unclaimed cable between the two devices
            good, bad = (r[0], r[2]) if r[1] else (r[2], r[0])
            ports = plan.server_ports.get(bad[0], ())
            cands = [
                p
                for p in sorted(ports)
                if (bad[0], p) not in claimed and (plan.peer((bad[0], p)) or ("", ""))[0] == good[0]
            ]
            if len(cands) == 1:
                self._complete(r, (bad[0], cands[0]), claimed)
        left: dict[str, list[list[Any]]] = {}
        for r in half:
            if r[1] != r[3]:
                bad = r[2] if r[1] else r[0]
                left.setdefault(bad[0], []).append(r)
        for device, group in sorted(left.items()):  # (3) by elimination
            free = [
                p for p in sorted(plan.server_ports.get(device, ())) if (device, p) not in claimed
            ]
            if len(group) == 1 and len(free) == 1:
                self._complete(group[0], (device, free[0]), claimed)
        rules = self.rules if self.rules.active else None
        for a, ok_a, b, ok_b, link in pending:
            for ep, ok in ((a, ok_a), (b, ok_b)):
                if not ok:
                    what = "mac_unresolved" if ep[1].startswith("mac ") else "unresolved"
                    ident.note(what, ep_text(ep))
            if rules is not None and (rules.ignored(a) or rules.ignored(b)):
                continue
            key = link_key(a, b)
            prev = by_key.get(key)
            if prev is None:
                by_key[key] = Observed(a, b, link, link.speed_gbps)
            elif prev.speed is None and link.speed_gbps is not None:
                prev.speed = link.speed_gbps

    def _complete(self, row: list[Any], ep: EP, claimed: set[EP]) -> None:
        i = 2 if row[1] else 0
        self.ident.note("completed", f"{ep_text(row[i])} → {ep[1]}")
        row[i], row[i + 1] = ep, True
        claimed.add(ep)
