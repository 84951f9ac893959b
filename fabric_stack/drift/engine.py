"""The drift engine: plan links vs one source's snapshot → findings with fixes.

:func:`compute_drift` is pure (no I/O). It follows diffsync's shape:

1. **Resolve** every observed end onto the plan's names (:mod:`.identity`)
   and merge the two directions LLDP reports of one cable.
2. **Match by identity**: a cable is its unordered pair of endpoints, so a
   planned and an observed link match when their keys are equal (one dict
   lookup each).
3. **Compare attributes of matched pairs**: the few fields that matter
   (speed, width, status, optics, medium) are compared directly, and only
   pairs that differ go through deepdiff, to explain the difference.
4. **Classify what is left**, in an order chosen so one physical mistake is
   one finding: devices never seen / never planned first (their links fold
   into them), then swaps of two cables (one finding, not four), then a
   planned cable whose lower-tier end is plugged elsewhere (wrong port, wrong
   rail, wrong switch), then planned ports that are up without a neighbour,
   then planned ports holding some other cable, and finally plain missing and
   unexpected links. A port the planned switch model cannot have is its own
   ``unknown_port`` finding (folding the planned cable of its other end) and
   is never turned into a move.

Scope matters as much as matching: a source only vouches for what it can see
(:class:`~fabric_stack.drift.model.Snapshot` coverage), so a planned storage
cable is not "missing" from an ibnetdiscover dump. Without ``networks`` the
scope is what the source can see (:func:`~fabric_stack.drift.coverage.infer_networks`),
and every report carries its coverage (:mod:`.coverage`).
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..intent import CABLE_SHARED
from ..naming import switch_port_label
from ..topology import Link
from .coverage import (
    DEFAULT_MIN_COVERAGE,
    NETWORKS,
    CoverageReport,
    compute_coverage,
    infer_networks,
    merge_coverage,
)
from .identity import Identity
from .ignore import IgnoreRules
from .model import (
    KINDS,
    DriftReport,
    Endpoint,
    Finding,
    FindingKind,
    ObservedLink,
    Side,
    Snapshot,
    SourceInfo,
    summarize,
)
from .plan import EP, Key, PlanIndex, PortScheme, link_key
from .ports import max_port

ABSENT_STATUSES = frozenset(
    {"decommissioned", "decommissioning", "removed", "deleted", "retired", "failed", "offline"}
)
"""Record statuses that mean the cable (or switch) is not in service."""

IB_WIDTH = {800: "4x", 400: "4x", 200: "2x", 100: "1x"}
"""Planned InfiniBand link width by link speed (XDR/NDR lanes: 4x800, 4x400, 2x NDR200)."""

LINK_FIELDS = tuple(f for f in CABLE_SHARED if not f.endswith("_speed_gbps"))
"""Planned-link fields a record source (DCIM, inventory) may carry and drift on."""

_TARGET = {"netbox": "NetBox", "inventory": "the inventory"}
_FIELD_SET = frozenset(LINK_FIELDS)
_FLIP = {"a_optic": "b_optic", "b_optic": "a_optic"}
_SPEED_KEYS = frozenset({"a_speed_gbps", "b_speed_gbps"})


@dataclass(slots=True)
class _Obs:
    """An observed link after resolution: its endpoints on the plan's names."""

    a: EP
    b: EP
    link: ObservedLink
    speed: float | None
    done: bool = False
    hit: bool = False  # equal to a planned cable


def _ep_text(ep: EP) -> str:
    return f"{ep[0]} {ep[1]}"


class _Rules:
    """Ignore rules resolved against the plan's names."""

    def __init__(self, rules: IgnoreRules | None, ident: Identity) -> None:
        rules = rules or IgnoreRules()
        self.ports: set[EP] = set()
        self.state_only: set[EP] = set()
        self.state_only_devices: list[str] = []
        self.device_patterns: list[str] = []
        self.findings = set(rules.findings)
        for pattern in rules.devices:
            self.device_patterns.append(pattern)
        for r in rules.ports:
            if r.port is None:
                (self.device_patterns if r.mode == "ignore" else self.state_only_devices).append(
                    r.device
                )
                continue
            dev = ident.device(r.device)
            port, _ = ident.port(dev, r.port)
            (self.ports if r.mode == "ignore" else self.state_only).add((dev, port))
        self._dev_cache: dict[str, bool] = {}
        self._state_cache: dict[str, bool] = {}
        self.active = bool(
            self.ports or self.state_only or self.state_only_devices or self.device_patterns
        )

    @staticmethod
    def _match(name: str, patterns: list[str]) -> bool:
        return any(
            fnmatch.fnmatchcase(name, p) if any(c in p for c in "*?[") else name == p
            for p in patterns
        )

    def device_ignored(self, device: str) -> bool:
        hit = self._dev_cache.get(device)
        if hit is None:
            hit = self._dev_cache[device] = self._match(device, self.device_patterns)
        return hit

    def ignored(self, ep: EP) -> bool:
        return ep in self.ports or (bool(self.device_patterns) and self.device_ignored(ep[0]))

    def state_only_ep(self, ep: EP) -> bool:
        if ep in self.state_only:
            return True
        if not self.state_only_devices:
            return False
        hit = self._state_cache.get(ep[0])
        if hit is None:
            hit = self._state_cache[ep[0]] = self._match(ep[0], self.state_only_devices)
        return hit


class _Drift:
    """One comparison of a plan with one snapshot (see the module docstring for the order)."""

    def __init__(
        self,
        plan: PlanIndex,
        snap: Snapshot,
        ignore: IgnoreRules | None,
        networks: frozenset[str] | None = None,
    ) -> None:
        self.plan = plan
        self.snap = snap
        self.ident = Identity(plan, snap)
        self.rules = _Rules(ignore, self.ident)
        self.findings: list[Finding] = []
        self.physical = snap.physical
        self.target = _TARGET.get(snap.source, snap.source)
        self.observed: list[_Obs] = []
        # Ends naming a port the planned switch model cannot have, and their observations.
        self.unknown_eps: set[EP] = set()
        self.unknown_obs: dict[Key, _Obs] = {}
        self.scope_networks: frozenset[str] | None = networks
        self.matched: set[Key] = set()
        self.in_scope: list[tuple[Key, Link]] = []
        self.scope_why = "--network"
        self.scope: frozenset[str] = frozenset()
        self.seen: set[str] = set()
        self.planes: set[int] | None = None
        self.matched_by_network: dict[str, int] = {}

    # ------------------------------------------------------------------ helpers

    def port_text(self, ep: EP) -> str:
        return f"{ep[0]} {self.ident.port_text(ep[0], ep[1])}"

    def link_side(self, link: Link) -> Side:
        return Side(
            a_device=link.a_device,
            a_port=link.a_port,
            b_device=link.b_device,
            b_port=link.b_port,
            speed_gbps=link.speed_gbps,
            where=f"plan:{link.id}",
        )

    def obs_side(self, o: _Obs, orient: EP | None = None) -> Side:
        a, b = (o.b, o.a) if orient is not None and o.b == orient else (o.a, o.b)
        attrs = dict(o.link.attrs or {})
        status = attrs.pop("status", None)
        return Side(
            a_device=a[0],
            a_port=a[1],
            b_device=b[0],
            b_port=b[1],
            speed_gbps=o.speed,
            rate=o.link.rate,
            state=str(status) if status else o.link.state,
            where=o.link.where,
            attributes={k: v for k, v in attrs.items() if v not in (None, "")},
        )

    def add(
        self,
        kind: FindingKind,
        summary: str,
        fix: str,
        *,
        expected: Sequence[Side] = (),
        actual: Sequence[Side] = (),
        link: Link | None = None,
        switch: str = "",
        cause: str = "",
        changes: Sequence[str] = (),
        links: int = 0,
        identity: Iterable[str] = (),
        su: int = 0,
    ) -> None:
        parts = sorted(identity) or sorted(
            f"{s.a_device}|{s.a_port}|{s.b_device}|{s.b_port}" for s in (*expected, *actual)
        )
        digest = hashlib.sha1(
            "\n".join([self.snap.source, kind, *parts]).encode(), usedforsecurity=False
        ).hexdigest()[:10]
        fid = f"{kind}:{digest}"
        if fid in self.rules.findings:
            return
        rail = plane = 0
        if link is not None:
            rail, su, plane = link.rail, link.su, link.plane
            switch = switch or self.plan.switch_of(link)
        elif switch and switch in self.plan.devices:
            info = self.plan.devices[switch]
            rail, su, plane = info.rail, su or info.su, info.plane
        self.findings.append(
            Finding(
                id=fid,
                kind=kind,
                cause=cause,
                source=self.snap.source,
                switch=switch,
                rail=rail,
                su=su,
                plane=plane,
                summary=summary,
                fix=fix,
                expected=list(expected),
                actual=list(actual),
                changes=list(changes),
                links=links,
            )
        )

    def switch_end(self, a: EP, b: EP) -> str:
        """The end to file an unplanned link under: a planned switch if there is one."""
        for ep in (a, b):
            info = self.plan.devices.get(ep[0])
            if info is not None and not info.is_server:
                return ep[0]
        for ep in (a, b):
            if ep[0] not in self.plan.devices:
                return ep[0]
        return a[0]

    # ------------------------------------------------------------------ resolution

    def _resolve(self, ep: Endpoint) -> tuple[EP, bool]:
        r = self.ident.endpoint(ep)
        if r.port_type == "name":
            return (r.device, r.port), True
        if r.port_type == "unknown":
            self.unknown_eps.add((r.device, r.port))
        port = f"mac {r.port}" if r.port_type == "mac" else r.port
        return (r.device, port), False

    def resolve(self) -> dict[Key, _Obs]:
        """Resolve and merge observations; complete ends the source could not name.

        A port given only as a MAC (no MAC table) or as an unknown interface name
        is completed, in order, (1) from the planned peer of the other end when
        that peer is on the same device, (2) from the only planned cable between
        the two devices that no other observation claims, (3) by elimination, the
        only planned port of the device nobody claims. Completed ports are not
        verified and the report notes say so.
        """
        plan, ident = self.plan, self.ident
        at, schemes, label = plan.at, plan.schemes, switch_port_label
        tops = {d: _top(sch) for d, sch in schemes.items()}  # highest port of each switch
        devices = ident.device
        known = ident.known_devices
        rules = self.rules if self.rules.active else None
        by_key: dict[Key, _Obs] = {}
        pending: list[list[Any]] = []
        for link in self.snap.links:
            la, lb = link.a, link.b
            # Fast paths (most of a big snapshot): the port spelled as the plan spells it,
            # or a bare logical number on a planned switch (ibnetdiscover).
            dev = known.get(la.device) or devices(la.device)
            pt = la.port_type
            sch = schemes.get(dev) if pt == "number" else None
            if pt == "name" and (dev, la.port) in at:
                a, ok_a = (dev, la.port), True
            elif sch is not None and la.port.isdigit() and 0 < int(la.port) <= tops[dev]:
                a, ok_a = (dev, label(sch.os_family, int(la.port), sch.ports_per_cage)), True
            else:
                a, ok_a = self._resolve(la)
            dev = known.get(lb.device) or devices(lb.device)
            pt = lb.port_type
            sch = schemes.get(dev) if pt == "number" else None
            if pt == "name" and (dev, lb.port) in at:
                b, ok_b = (dev, lb.port), True
            elif sch is not None and lb.port.isdigit() and 0 < int(lb.port) <= tops[dev]:
                b, ok_b = (dev, label(sch.os_family, int(lb.port), sch.ports_per_cage)), True
            else:
                b, ok_b = self._resolve(lb)
            if (
                not (ok_a and ok_b)
                and self.unknown_eps
                and (a in self.unknown_eps or b in self.unknown_eps)
            ):
                self.unknown_obs.setdefault(link_key(a, b), _Obs(a, b, link, link.speed_gbps))
                continue
            if ok_a != ok_b:
                good, bad = (a, b) if ok_a else (b, a)
                peer = plan.peer(good)
                if peer is not None and peer[0] == bad[0]:
                    ident.note("completed", f"{_ep_text(bad)} → {peer[1]}")
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
                by_key[key] = _Obs(a, b, link, link.speed_gbps)
            elif prev.speed is None and link.speed_gbps is not None:
                # The second direction knows the speed (EOS status, lldpd MAU): keep it.
                prev.speed = link.speed_gbps
        if pending:
            self._complete_pending(pending, by_key)
        return by_key

    def _complete_pending(self, pending: list[list[Any]], by_key: dict[Key, _Obs]) -> None:
        """Steps (2) and (3) of :meth:`resolve` for the rows with an unnamed end."""
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
                    ident.note(what, _ep_text(ep))
            if rules is not None and (rules.ignored(a) or rules.ignored(b)):
                continue
            key = link_key(a, b)
            prev = by_key.get(key)
            if prev is None:
                by_key[key] = _Obs(a, b, link, link.speed_gbps)
            elif prev.speed is None and link.speed_gbps is not None:
                prev.speed = link.speed_gbps

    def _complete(self, row: list[Any], ep: EP, claimed: set[EP]) -> None:
        i = 2 if row[1] else 0
        self.ident.note("completed", f"{_ep_text(row[i])} → {ep[1]}")
        row[i], row[i + 1] = ep, True
        claimed.add(ep)

    # ------------------------------------------------------------------ run

    def run(self) -> list[Finding]:
        plan, snap, rules = self.plan, self.snap, self.rules
        obs_keys = self.resolve()
        observed = self.observed = list(obs_keys.values())

        # ---- devices the source saw
        seen: set[str] = {self.ident.device(n) for n in snap.devices}
        seen.update({o.a[0] for o in observed})
        seen.update({o.b[0] for o in observed})
        for o in self.unknown_obs.values():
            seen.update((o.a[0], o.b[0]))
        covered = None if snap.covered is None else {self.ident.device(n) for n in snap.covered}
        if covered is not None:
            seen |= covered

        # ---- scope: the planned links this source vouches for
        networks = snap.networks
        if self.scope_networks is None and networks is None:
            servers = {d for d, info in plan.devices.items() if info.is_server}
            inferred, self.scope_why = infer_networks(plan.device_networks(), seen, servers)
            networks = inferred
        elif self.scope_networks is None:
            self.scope_why = f"what {snap.source} can see"
        if self.scope_networks is not None:
            networks = self.scope_networks if networks is None else networks & self.scope_networks
        planes: set[int] | None = None
        if snap.one_plane:
            planes = {
                plan.devices[d].plane for d in seen if d in plan.devices and plan.devices[d].plane
            }
            # No planned switch seen at all: every plane is in scope (and coverage is low),
            # rather than an empty scope that would look clean.
            planes = planes or None
        self.planes = planes
        self.scope = networks if networks is not None else frozenset(NETWORKS)
        self.seen = seen
        by_key = plan.by_key
        in_scope: list[tuple[Key, Link]] = []
        for key, link in by_key.items():
            if networks is not None and link.network not in networks:
                continue
            if planes is not None and link.plane not in planes:
                continue
            if (
                covered is not None
                and link.a_device not in covered
                and link.b_device not in covered
            ):
                continue
            if rules.active and (rules.ignored(key[0]) or rules.ignored(key[1])):
                continue
            in_scope.append((key, link))

        # ---- match by identity, compare attributes of matched pairs
        matched: set[Key] = set()
        matched_nets = self.matched_by_network
        for key, o in obs_keys.items():
            hit = by_key.get(key)
            if hit is None:
                continue
            matched.add(key)
            o.done = o.hit = True
            net = hit.network
            matched_nets[net] = matched_nets.get(net, 0) + 1
            if not self.differs(hit, o):
                continue  # the common case, kept cheap: deepdiff only explains differences
            if rules.active and (rules.state_only_ep(key[0]) or rules.state_only_ep(key[1])):
                continue
            self.compare(hit, o)

        self.matched, self.in_scope = matched, in_scope
        missing: list[Link] = [link for key, link in in_scope if key not in matched]
        if self.unknown_obs:
            missing = self.unknown_ports(missing)
        extra: list[_Obs] = [o for o in observed if not o.done]

        # ---- devices never seen / never planned: their links fold into one finding
        scope_devices: set[str] = set()
        for _, link in in_scope:
            scope_devices.add(link.a_device)
            scope_devices.add(link.b_device)
        gone = {d for d in scope_devices - seen if not rules.device_ignored(d)}
        if gone:
            folded: dict[str, list[Link]] = {d: [] for d in gone}
            keep: list[Link] = []
            for link in missing:
                d = (
                    link.a_device
                    if link.a_device in gone
                    else (link.b_device if link.b_device in gone else None)
                )
                if d is None:
                    keep.append(link)
                else:
                    folded[d].append(link)
            missing = keep
            for d in sorted(gone):
                self.missing_device(d, folded[d])
        strangers = {d for d in seen if d not in plan.devices and not rules.device_ignored(d)}
        if strangers:
            their: dict[str, list[_Obs]] = {d: [] for d in strangers}
            rest: list[_Obs] = []
            for o in extra:
                d = o.a[0] if o.a[0] in strangers else (o.b[0] if o.b[0] in strangers else None)
                if d is None:
                    rest.append(o)
                else:
                    their[d].append(o)
                    o.done = True
            extra = rest
            for d in sorted(strangers):
                self.unexpected_device(d, their[d])

        # ---- what is left: swaps, moved cables, silent ports, missing / unexpected
        at: dict[EP, list[_Obs]] = {}
        for o in extra:
            at.setdefault(o.a, []).append(o)
            at.setdefault(o.b, []).append(o)
        open_at: dict[EP, Link] = {}
        for link in missing:
            open_at[(link.a_device, link.a_port)] = link
            open_at[(link.b_device, link.b_port)] = link
        used: set[str] = set()

        def free_obs(ep: EP) -> _Obs | None:
            for cand in at.get(ep, ()):
                if not cand.done:
                    return cand
            return None

        # Link-state-only ports: anything up there satisfies the plan.
        states_up = {}
        for ps in snap.port_states:
            ep, ok = self._resolve(ps.endpoint)
            if ok and ps.up:
                states_up[ep] = ps
        for link in missing:
            a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
            for ep in (a, b):
                if rules.state_only_ep(ep):
                    up = free_obs(ep)
                    if up is not None or ep in states_up:
                        used.add(link.id)
                        if up is not None:
                            up.done = True
                        break

        for link in missing:
            if link.id in used:
                continue
            a1, b1 = (link.a_device, link.a_port), (link.b_device, link.b_port)
            o1 = free_obs(a1)
            if o1 is None:
                continue
            y = o1.b if o1.a == a1 else o1.a
            link2 = open_at.get(y)
            if link2 is None or link2.id in used or link2 is link:
                continue
            ends2 = ((link2.a_device, link2.a_port), (link2.b_device, link2.b_port))
            x2 = ends2[0] if ends2[1] == y else ends2[1]
            o2 = next(
                (c for c in at.get(x2, ()) if not c.done and b1 in (c.a, c.b) and c is not o1), None
            )
            if o2 is None:
                continue
            used.update((link.id, link2.id))
            o1.done = o2.done = True
            self.swap(link, link2, a1, b1, x2, y, o1, o2)

        for link in missing:
            if link.id in used:
                continue
            a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
            at_a = free_obs(a)
            if at_a is None:
                continue
            used.add(link.id)
            at_a.done = True
            self.moved(link, a, b, at_a)

        watched = set(states_up)
        if watched:
            any_obs = {o.a for o in observed} | {o.b for o in observed}
            for ep, ps in sorted(states_up.items()):
                if ep in any_obs or rules.ignored(ep) or rules.state_only_ep(ep):
                    continue
                open_link = open_at.get(ep)
                if open_link is not None and open_link.id in used:
                    continue
                if open_link is None and ep in plan.at:
                    continue  # planned link out of scope or matched elsewhere
                if open_link is not None:
                    used.add(open_link.id)
                self.silent_port(ep, open_link, ps.where, ps.speed_gbps)

        for link in missing:
            if link.id in used:
                continue
            a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
            at_b = free_obs(b)
            if at_b is None:
                continue
            used.add(link.id)
            at_b.done = True
            self.displaced(link, a, b, at_b)

        for link in missing:
            if link.id not in used:
                self.missing_link(link)
        for o in extra:
            if not o.done:
                self.unexpected_link(o)

        self.device_attributes()
        order = {k: i for i, k in enumerate(KINDS)}
        self.findings.sort(key=lambda f: (f.switch, order[f.kind], f.summary, f.id))
        return self.findings

    # ------------------------------------------------------------------ comparisons

    def differs(self, link: Link, o: _Obs) -> bool:
        """Cheap check: does any compared field of the matched pair differ?"""
        speed = link.speed_gbps
        if o.speed is not None and o.speed != speed:
            return True
        ol = o.link
        if ol.width is not None and ol.width != IB_WIDTH.get(speed, ol.width):
            return True
        attrs = ol.attrs
        if not attrs:
            return False
        st = attrs.get("status")
        if st and str(st).lower() in ABSENT_STATUSES:
            return True
        flip = o.a[0] != link.a_device or o.a[1] != link.a_port
        for k, v in attrs.items():
            if v is None or v == "":
                continue
            if k in _FIELD_SET:
                name = _FLIP.get(k, k) if flip else k
                if v != getattr(link, name):
                    return True
            elif k in _SPEED_KEYS and v != speed:
                return True
        return False

    def compare(self, link: Link, o: _Obs) -> None:
        """Attributes of a matched pair: cheap equality first, deepdiff only to explain."""
        exp_speed: dict[str, Any] = {}
        act_speed: dict[str, Any] = {}
        if o.speed is not None and o.speed != link.speed_gbps:
            exp_speed["speed_gbps"], act_speed["speed_gbps"] = link.speed_gbps, o.speed
        width = o.link.width
        if width is not None and width != IB_WIDTH.get(link.speed_gbps, width):
            exp_speed["width"], act_speed["width"] = IB_WIDTH[link.speed_gbps], width
        exp: dict[str, Any] = {}
        act: dict[str, Any] = {}
        attrs = o.link.attrs
        if attrs:
            flip = o.a != (link.a_device, link.a_port)
            for k, v in attrs.items():
                if v is None or v == "":
                    continue
                name = k
                if flip and k[:2] in ("a_", "b_"):
                    name = ("b_" if k[0] == "a" else "a_") + k[2:]
                if name in ("a_speed_gbps", "b_speed_gbps"):
                    if v != link.speed_gbps:
                        exp_speed[name], act_speed[name] = link.speed_gbps, v
                elif name == "status":
                    if str(v).lower() in ABSENT_STATUSES:
                        exp[name], act[name] = "in service", v
                elif name in LINK_FIELDS:
                    planned = getattr(link, name)
                    if v != planned:
                        if name == "medium" and attrs.get("type"):
                            # DCIM records say the cable type; explain in its terms.
                            exp["type"], act["type"] = f"{planned} cable", attrs["type"]
                        else:
                            exp[name], act[name] = planned, v
        if not exp_speed and not exp:
            return
        a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
        cable = f"{self.port_text(a)} ↔ {self.port_text(b)}"
        if exp_speed:
            changes = explain(exp_speed, act_speed)
            actual = o.link.rate or (f"{o.speed} Gb/s" if o.speed else ", ".join(changes))
            planned = f"{link.speed_gbps} Gb/s"
            if width is not None:
                planned = (
                    f"{IB_WIDTH.get(link.speed_gbps, '')}{_ib_name(link.speed_gbps)} ({planned})"
                )
                actual = f"{o.link.rate} ({o.speed} Gb/s)" if o.speed else str(o.link.rate)
            if self.physical:
                fix = (
                    f"reseat or replace the cable {cable}: it runs {actual}, the plan needs "
                    f"{planned}; check both optics and the cable are rated for "
                    f"{link.speed_gbps}G"
                )
            elif self.snap.source == "inventory":
                fix = (
                    f"run `pulumi refresh` to see the edit to cable record {link.id}, then "
                    f"`pulumi up` to restore {link.speed_gbps}G ({'; '.join(changes)})"
                )
            else:
                fix = (
                    f"set the speed of cable {link.id} back to {link.speed_gbps}G in "
                    f"{self.target} ({'; '.join(changes)})"
                )
            summary = (
                f"{cable} runs {actual}, planned {planned}"
                if self.physical
                else f"cable {cable}: {'; '.join(changes)}"
            )
            self.add(
                "speed_mismatch",
                summary,
                fix,
                expected=[self.link_side(link)],
                actual=[self.obs_side(o, a)],
                link=link,
                changes=changes,
            )
        if exp:
            changes = explain(exp, act)
            if self.snap.source == "inventory":
                fix = (
                    f"run `pulumi refresh` to see the edit to cable record {link.id}, then "
                    f"`pulumi up` to restore the planned values ({'; '.join(changes)})"
                )
            elif self.physical:
                fix = f"check cable {cable}: {'; '.join(changes)}"
            else:
                fix = f"edit cable {cable} in {self.target}: {'; '.join(changes)}"
            self.add(
                "attribute_changed",
                f"cable {cable}: {'; '.join(changes)}",
                fix,
                expected=[self.link_side(link)],
                actual=[self.obs_side(o, a)],
                link=link,
                changes=changes,
            )

    def device_attributes(self) -> None:
        """Device records and side files: GUIDs, models, statuses that drifted."""
        for raw, seen in sorted(self.snap.devices.items()):
            name = self.ident.device(raw)
            if self.rules.device_ignored(name):
                continue
            exp: dict[str, Any] = {}
            act: dict[str, Any] = {}
            for k, v in seen.expected.items():
                if k in seen.attrs and seen.attrs[k] != v:
                    exp[k], act[k] = v, seen.attrs[k]
            planned = self.plan.switch_attrs.get(name, {})
            for k, v in seen.attrs.items():
                if k == "status":
                    if str(v).lower() in ABSENT_STATUSES and name in self.plan.devices:
                        exp[k], act[k] = "in service", v
                elif k in planned and v not in (None, "") and planned[k] != v:
                    exp[k], act[k] = planned[k], v
            if not exp:
                continue
            changes = explain(exp, act)
            if "guid" in exp:
                fix = (
                    f"update the node-name-map: {name} now has GUID {act['guid']} (the map "
                    f"says {exp['guid']}); the device was replaced or the map is stale"
                )
            elif self.snap.source == "inventory":
                fix = (
                    f"run `pulumi refresh` to see the edit to {name}, then `pulumi up` to "
                    f"restore it ({'; '.join(changes)})"
                )
            else:
                fix = f"edit {name} in {self.target}: {'; '.join(changes)}"
            self.add(
                "attribute_changed",
                f"{name}: {'; '.join(changes)}",
                fix,
                expected=[Side(a_device=name, attributes=exp)],
                actual=[Side(a_device=name, where=seen.where, attributes=act)],
                switch=name if not self.plan.is_server(name) else "",
                changes=changes,
                identity=[f"device|{name}"],
            )

    # ------------------------------------------------------------------ findings

    def unknown_ports(self, missing: list[Link]) -> list[Link]:
        """One ``unknown_port`` finding per observed port the planned model cannot have.

        The planned cable of the other end (when it is missing) folds into the
        finding: one mistake, one finding, and no move instruction to a port
        that does not exist. Returns the missing links left.
        """
        open_at: dict[EP, Link] = {}
        for link in missing:
            open_at[(link.a_device, link.a_port)] = link
            open_at[(link.b_device, link.b_port)] = link
        folded: set[str] = set()
        for o in self.unknown_obs.values():
            bad = o.a if o.a in self.unknown_eps else o.b
            good = o.b if bad == o.a else o.a
            if self.rules.ignored(bad) or self.rules.ignored(good):
                continue
            planned = open_at.get(good)
            if planned is not None and planned.id in folded:
                planned = None
            if planned is not None:
                folded.add(planned.id)
            self.unknown_port(bad, good, o, planned)
        return [link for link in missing if link.id not in folded]

    def unknown_port(self, bad: EP, good: EP, o: _Obs, link: Link | None) -> None:
        scheme = self.plan.schemes.get(bad[0])
        model = scheme.model if scheme is not None and scheme.model else "switch"
        top = _top(scheme) if scheme is not None else 0
        size = f", {top} ports at the planned speed" if top else ""
        planned = ""
        if link is not None:
            peer = self.plan.peer(good)
            planned = f"; planned peer {self.port_text(peer)}" if peer is not None else ""
        summary = (
            f"{bad[0]} port {bad[1]!r} (seen with {_ep_text(good)}) cannot exist on the "
            f"planned {model}{size}{planned}"
        )
        fix = (
            f"check how {bad[0]} names its ports (OS, breakout mode, model) and that the "
            f"plan has the right model; the raw name {bad[1]!r} is not moved anywhere"
        )
        self.add(
            "unknown_port",
            summary,
            fix,
            expected=[self.link_side(link)] if link is not None else [],
            actual=[self.obs_side(o)],
            link=link,
            switch=bad[0],
            identity=[f"unknown|{bad[0]}|{bad[1]}"],
        )

    def missing_device(self, device: str, links: list[Link]) -> None:
        n = len(links)
        what = f"{n} planned link{'s' if n != 1 else ''} not seen" if n else "no links seen"
        if self.physical:
            fix = f"power on {device} and check its cabling ({what}; see the cabling plan)"
        elif self.snap.source == "inventory":
            fix = f"run `pulumi up` to restore {device} and its records in the inventory"
        else:
            fix = f"add {device} and its {n} cable(s) to {self.target}"
        info = self.plan.devices.get(device)
        # A server spans every rail: it is filed under "(servers)", not under one leaf.
        switch = device if info is not None and not info.is_server else ""
        self.add(
            "missing_device",
            f"{device} is planned but was not seen ({what})",
            fix,
            expected=[Side(a_device=device)],
            switch=switch,
            links=n,
            identity=[f"device|{device}"],
            su=info.su if info is not None else 0,
        )

    def unexpected_device(self, device: str, obs: list[_Obs]) -> None:
        n = len(obs)
        ports = ", ".join(self.port_text(o.b if o.a[0] == device else o.a) for o in obs[:3]) + (
            ", …" if n > 3 else ""
        )
        where = f" ({n} link{'s' if n != 1 else ''}: {ports})" if n else ""
        if self.physical:
            fix = f"disconnect {device}{where} or add it to the plan"
        else:
            fix = f"remove {device} from {self.target}{where} or add it to the plan"
        seen = next(
            (s for raw, s in self.snap.devices.items() if self.ident.device(raw) == device), None
        )
        sw = ""
        for o in obs:
            far = o.b if o.a[0] == device else o.a
            if far[0] in self.plan.devices and not self.plan.is_server(far[0]):
                sw = far[0]
                break
        self.add(
            "unexpected_device",
            f"{device} is not in the plan{where}",
            fix,
            actual=[
                Side(
                    a_device=device,
                    where=(obs[0].link.where if obs else (seen.where if seen else "")),
                )
            ],
            switch=sw or device,
            links=n,
            identity=[f"device|{device}"],
        )

    def swap(self, l1: Link, l2: Link, a1: EP, b1: EP, x2: EP, y: EP, o1: _Obs, o2: _Obs) -> None:
        pt = self.ident.port_text
        if b1[0] == y[0]:
            cause = "swap_same_switch"
            where = f"{b1[0]} ports {pt(*b1)} and {pt(*y)}"
            if self.physical:
                fix = (
                    f"swap the cables in {where}: {_ep_text(a1)} belongs on {pt(*b1)}, "
                    f"{_ep_text(x2)} on {pt(*y)}"
                )
            else:
                fix = (
                    f"swap the {b1[0]} ends of cable records {l1.id} and {l2.id} in "
                    f"{self.target}: {_ep_text(a1)} belongs on {pt(*b1)}, "
                    f"{_ep_text(x2)} on {pt(*y)}"
                )
            summary = f"cables of {_ep_text(a1)} and {_ep_text(x2)} are swapped in {where}"
        else:
            cause = "swap_across_switches"
            if a1[0] == x2[0]:
                lead = f"swap the cables at {a1[0]} {a1[1]} and {x2[1]}"
            else:
                lead = f"swap the far ends of the cables at {_ep_text(a1)} and {_ep_text(x2)}"
            if not self.physical:
                lead = f"swap the far ends of cable records {l1.id} and {l2.id} in {self.target}"
            fix = (
                f"{lead}: {_ep_text(a1)} belongs on {self.port_text(b1)}, {_ep_text(x2)} on "
                f"{self.port_text(y)}"
            )
            summary = (
                f"{_ep_text(a1)} is on {self.port_text(y)} and {_ep_text(x2)} on "
                f"{self.port_text(b1)}: swapped"
            )
        self.add(
            "wrong_peer",
            summary,
            fix,
            expected=[self.link_side(l1), self.link_side(l2)],
            actual=[self.obs_side(o1, a1), self.obs_side(o2, x2)],
            link=l1,
            cause=cause,
        )

    def _cause(self, planned: EP, actual: EP) -> str:
        if planned[0] == actual[0]:
            return "wrong_port"
        p, q = self.plan.devices.get(planned[0]), self.plan.devices.get(actual[0])
        if p is not None and q is not None and p.role == q.role == "leaf" and p.rail != q.rail:
            return "wrong_rail"
        if q is not None and q.is_server:
            return "wrong_server"
        return "wrong_switch"

    def moved(self, link: Link, a: EP, b: EP, o: _Obs) -> None:
        y = o.b if o.a == a else o.a
        cause = self._cause(b, y)
        where = {
            "wrong_port": "the wrong port",
            "wrong_rail": "another rail's leaf",
            "wrong_switch": "the wrong switch",
            "wrong_server": "the wrong server",
        }[cause]
        if self.physical:
            fix = f"move the cable at {_ep_text(a)} from {self.port_text(y)} to {self.port_text(b)}"
        else:
            fix = (
                f"change the far end of cable {link.id} from {self.port_text(y)} to "
                f"{self.port_text(b)} in {self.target}"
            )
        summary = f"{_ep_text(a)} is on {where}: {self.port_text(y)}, planned {self.port_text(b)}"
        self.add(
            "wrong_peer",
            summary,
            fix,
            expected=[self.link_side(link)],
            actual=[self.obs_side(o, a)],
            link=link,
            cause=cause,
        )

    def displaced(self, link: Link, a: EP, b: EP, o: _Obs) -> None:
        x = o.b if o.a == b else o.a
        cause = self._cause(a, x)
        if self.physical:
            fix = (
                f"move the cable at {self.port_text(b)} from {self.port_text(x)} to "
                f"{self.port_text(a)}"
            )
        else:
            fix = (
                f"change the {a[0]} end of cable {link.id} from {self.port_text(x)} to "
                f"{self.port_text(a)} in {self.target}"
            )
        summary = (
            f"{self.port_text(b)} holds the cable of {self.port_text(x)}, planned {_ep_text(a)}"
        )
        self.add(
            "wrong_peer",
            summary,
            fix,
            expected=[self.link_side(link)],
            actual=[self.obs_side(o, b)],
            link=link,
            cause=cause,
        )

    def silent_port(self, ep: EP, link: Link | None, where: str, speed: float | None) -> None:
        actual = Side(
            a_device=ep[0], a_port=ep[1], speed_gbps=speed, state="up, no neighbour", where=where
        )
        if link is not None:
            peer = self.plan.peer(ep)
            assert peer is not None
            summary = (
                f"{self.port_text(ep)} is up but reports no LLDP neighbour "
                f"(planned {_ep_text(peer)})"
            )
            fix = (
                f"enable LLDP on {peer[0]} (or trace the cable at {self.port_text(ep)}: "
                f"it should come from {_ep_text(peer)})"
            )
            self.add(
                "link_up_no_neighbor",
                summary,
                fix,
                expected=[self.link_side(link)],
                actual=[actual],
                link=link,
            )
        else:
            summary = f"{self.port_text(ep)} is up with no LLDP neighbour and no planned cable"
            fix = (
                f"trace the cable at {self.port_text(ep)} and remove it (the plan leaves it empty)"
            )
            self.add(
                "link_up_no_neighbor",
                summary,
                fix,
                actual=[actual],
                switch=ep[0],
                identity=[f"{ep[0]}|{ep[1]}"],
            )

    def missing_link(self, link: Link) -> None:
        a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
        cable = f"{self.port_text(a)} ↔ {self.port_text(b)}"
        if self.physical:
            media = f", {link.cable_type}" if link.cable_type else ""
            fix = (
                f"connect {self.port_text(a)} to {self.port_text(b)} ({link.speed_gbps}G{media}); "
                f"if it is cabled, reseat it and check both ports are up"
            )
        elif self.snap.source == "inventory":
            fix = f"run `pulumi up` to restore the cable record {link.id} ({cable})"
        else:
            fix = f"add the cable {cable} to {self.target} (label {link.id})"
        self.add(
            "missing_link",
            f"{cable} is planned but not seen",
            fix,
            expected=[self.link_side(link)],
            link=link,
        )

    def unexpected_link(self, o: _Obs) -> None:
        cable = f"{self.port_text(o.a)} ↔ {self.port_text(o.b)}"
        if self.physical:
            fix = (
                f"remove the cable between {self.port_text(o.a)} and {self.port_text(o.b)} "
                "(not in the plan)"
            )
        else:
            fix = f"delete the cable {cable} from {self.target} (not in the plan)"
        self.add(
            "unexpected_link",
            f"{cable} is not in the plan",
            fix,
            actual=[self.obs_side(o)],
            switch=self.switch_end(o.a, o.b),
        )


def _top(scheme: PortScheme) -> int:
    """Highest logical port of a planned switch (a huge number when the plan does not say)."""
    return max_port(scheme) or 1 << 30


def _ib_name(speed: int) -> str:
    return {800: "XDR", 400: "NDR", 200: "NDR", 100: "NDR"}.get(speed, "")


def explain(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """``["speed_gbps: 400 → 200", …]`` for two small dicts that differ (via deepdiff)."""
    from deepdiff import DeepDiff  # imported only when something differs

    diff = DeepDiff(dict(expected), dict(actual), verbose_level=2)
    out: list[str] = []
    for section in ("values_changed", "type_changes"):
        for path, change in diff.get(section, {}).items():
            name = str(path).removeprefix("root['").removesuffix("']")
            out.append(f"{name}: {change['old_value']!r} → {change['new_value']!r}")
    for section, verb in (
        ("dictionary_item_added", "added"),
        ("dictionary_item_removed", "removed"),
    ):
        for path, value in diff.get(section, {}).items():
            name = str(path).removeprefix("root['").removesuffix("']")
            out.append(f"{name}: {verb} {value!r}")
    return sorted(out)


def compute_drift(
    plan: Sequence[Link] | PlanIndex,
    snapshot: Snapshot,
    ignore: IgnoreRules | None = None,
    networks: frozenset[str] | None = None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> DriftReport:
    """Compare the planned links with one source's snapshot. Pure.

    ``plan`` is the topology's link list or a :class:`PlanIndex` (build one with
    :meth:`PlanIndex.from_topology` to get exact port schemes and switch
    attributes, and reuse it across sources). ``networks`` limits the scope
    (``None``: what the source can see); ``min_coverage`` is the share of
    planned devices below which the report's coverage is low.
    """
    index = plan if isinstance(plan, PlanIndex) else PlanIndex(plan)
    run = _Drift(index, snapshot, ignore, networks)
    findings = run.run()
    devices = {run.ident.device(n) for n in snapshot.devices}
    obs_count = len(run.observed)
    for o in run.observed:
        devices.add(o.a[0])
        devices.add(o.b[0])
    coverage = _coverage(run, devices, min_coverage)
    info = SourceInfo(
        source=snapshot.source,
        origin=snapshot.origin,
        links=obs_count,
        devices=len(devices),
        notes=[*snapshot.notes, *run.ident.notes()],
        coverage=coverage,
    )
    return DriftReport(
        summary=summarize(findings), coverage=coverage, sources=[info], findings=findings
    )


def _coverage(run: _Drift, devices: set[str], min_coverage: float) -> CoverageReport:
    """Coverage of one run: the planned links of the networks (and planes) in scope."""
    planes = run.planes
    planned = (
        run.plan.links
        if planes is None
        else [link for link in run.plan.links if link.plane in planes]
    )
    matched = run.matched_by_network
    unmatched = [(o.a[0], o.b[0]) for o in run.observed if not o.hit]
    unmatched += [(o.a[0], o.b[0]) for o in run.unknown_obs.values()]
    seen_links = len(run.observed) + len(run.unknown_obs)
    scope = run.scope_why
    if scope == "--network":
        scope = "--network " + ",".join(sorted(run.scope))
    return compute_coverage(
        planned, devices, matched, unmatched, seen_links, run.scope, scope, min_coverage
    )


def combine(reports: Sequence[DriftReport]) -> DriftReport:
    """One report of several sources (findings keep their source; sorted as one list)."""
    order = {k: i for i, k in enumerate(KINDS)}
    findings = sorted(
        (f for r in reports for f in r.findings),
        key=lambda f: (f.switch, order[f.kind], f.summary, f.source, f.id),
    )
    return DriftReport(
        summary=summarize(findings),
        coverage=merge_coverage([r.coverage for r in reports if r.coverage is not None]),
        sources=[s for r in reports for s in r.sources],
        findings=findings,
    )
