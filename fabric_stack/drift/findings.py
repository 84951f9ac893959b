"""Finding builders: each kind of drift as one finding, with the fix text people act on.

:class:`FindingBuilder` turns a classified difference into a
:class:`~fabric_stack.drift.model.Finding`: a summary, the expected and actual sides,
and a concrete fix worded for the source (a physical fabric is re-cabled, a DCIM
record is edited, the inventory is restored with ``pulumi refresh`` / ``pulumi up``).
Finding ids hash the source, kind and endpoints, so the same drift keeps its id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Any

from fabric_stack.drift.compare import LinkDiff, explain, planned_rates, rate_text
from fabric_stack.drift.identity import DEFAULT_HOSTNAMES, Identity
from fabric_stack.drift.ignore import ActiveRules
from fabric_stack.drift.model import DeviceSeen, Finding, FindingKind, Side, Snapshot
from fabric_stack.drift.plan import EP, PlanIndex
from fabric_stack.drift.resolve import BoundHca, Observed, ep_text, top_port
from fabric_stack.topology.build import Link

_TARGET = {"netbox": "NetBox", "inventory": "the inventory"}
_GUID_TAIL = re.compile(r"\s+[0-9a-f]{16}$", re.I)


class FindingBuilder:
    """Collects the findings of one comparison of a plan with one snapshot."""

    def __init__(
        self, plan: PlanIndex, snap: Snapshot, ident: Identity, rules: ActiveRules
    ) -> None:
        self.plan = plan
        self.snap = snap
        self.ident = ident
        self.rules = rules
        self.findings: list[Finding] = []
        self.physical = snap.physical
        self.target = _TARGET.get(snap.source, snap.source)

    def port_text(self, ep: EP) -> str:
        """``device port`` in the plan's spelling of the port."""
        return f"{ep[0]} {self.ident.port_text(ep[0], ep[1])}"

    def link_side(self, link: Link) -> Side:
        """The expected side of a finding: a planned link."""
        return Side(
            a_device=link.a_device,
            a_port=link.a_port,
            b_device=link.b_device,
            b_port=link.b_port,
            speed_gbps=link.speed_gbps,
            where=f"plan:{link.id}",
        )

    def obs_side(self, o: Observed, orient: EP | None = None) -> Side:
        """The actual side of a finding: an observed link (a-end ``orient`` when given)."""
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
        """File one finding (unless accepted by id in the ignore rules)."""
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

    def speed_mismatch(self, link: Link, o: Observed, diff: LinkDiff) -> None:
        """A matched cable running at the wrong speed (or IB width)."""
        exp_speed, act_speed = diff.exp_speed, diff.act_speed
        width = o.link.width
        a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
        cable = f"{self.port_text(a)} ↔ {self.port_text(b)}"
        changes = explain(exp_speed, act_speed)
        actual = o.link.rate or (f"{o.speed} Gb/s" if o.speed else ", ".join(changes))
        planned = f"{link.speed_gbps} Gb/s"
        if width is not None:
            planned = rate_text(planned_rates(self.plan, link), link.speed_gbps)
            actual = f"{o.link.rate} ({o.speed:g} Gb/s)" if o.speed else str(o.link.rate)
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

    def unplanned_speed(
        self, o: Observed, sw: EP, far: EP, host: bool, speed: float, rates: tuple[str, ...]
    ) -> None:
        """An unplanned cable that also runs slower than a cable of its class should."""
        cable = f"{self.port_text(sw)} ↔ {self.port_text(far)}"
        actual = o.link.rate or f"{o.speed:g} Gb/s"
        if o.link.rate and o.speed is not None:
            actual = f"{o.link.rate} ({o.speed:g} Gb/s)"
        planned = rate_text(rates if o.link.width else (), speed)
        what = "server" if host else "switch"
        summary = (
            f"{cable} runs {actual}; a {sw[0]}↔{what} cable should run {planned} "
            "(the cable is not in the plan)"
        )
        fix = (
            f"replace the cable {cable} (or its optics) with one rated for {speed:g}G and "
            f"check the far end's port runs {planned}; it is also not in the plan (see the "
            "cabling finding)"
        )
        self.add(
            "speed_mismatch",
            summary,
            fix,
            actual=[self.obs_side(o, sw)],
            switch=sw[0],
            identity=[f"class|{sw[0]}|{sw[1]}|{far[0]}|{far[1]}"],
        )

    def factory_nodedesc(self, host: str, hcas: Sequence[BoundHca]) -> None:
        """One finding per host whose HCAs report a factory NodeDesc (bound by switch port).

        The fix is rdma-core's ``rdma-ndd``, which writes ``%h %d`` (host name, device
        name) as every RDMA device's NodeDesc by default (rdma-ndd(8), rdma-core).
        """
        hcas = sorted(hcas, key=lambda h: h.port)
        desc = _GUID_TAIL.sub("", hcas[0].raw)
        desc = " ".join(desc.split())
        each = ", ".join(
            f"{h.port} (GUID {', '.join(h.guids) or '?'}, on {ep_text(h.switch_port)})"
            for h in hcas
        )
        n = len(hcas)
        summary = (
            f"{host}: {n} HCA{'s' if n != 1 else ''} report{'' if n != 1 else 's'} the "
            f"NodeDesc {desc!r}, "
            f"not '{host} mlx5_N': {each}"
        )
        setname = ""
        if desc.split(" ", 1)[0].lower() in DEFAULT_HOSTNAMES:
            setname = f"set its host name to {host} (hostnamectl set-hostname {host}), then "
        fix = (
            f"on {host}, {setname}run rdma-ndd (rdma-core; its default NodeDesc is '%h %d', "
            f"the host and device name) so {'they' if n != 1 else 'it'} "
            f"report{'' if n != 1 else 's'} '{host} <device>'; the cabling is as planned"
        )
        self.add(
            "attribute_changed",
            summary,
            fix,
            expected=[Side(a_device=host, attributes={"node_desc": f"{host} <device>"})],
            actual=[
                Side(
                    a_device=host,
                    a_port=h.port,
                    where=h.where,
                    attributes={"node_desc": desc, "guids": list(h.guids)},
                )
                for h in hcas
            ],
            switch="",
            changes=[f"node_desc: '{host} <device>' → {desc!r}"],
            identity=[f"nodedesc|{host}"],
        )

    def cable_attributes_changed(self, link: Link, o: Observed, diff: LinkDiff) -> None:
        """A matched cable whose record attributes (status, optics, medium…) drifted."""
        exp, act = diff.exp, diff.act
        a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
        cable = f"{self.port_text(a)} ↔ {self.port_text(b)}"
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

    def device_attributes_changed(
        self, name: str, seen: DeviceSeen, exp: dict[str, Any], act: dict[str, Any]
    ) -> None:
        """A device record (or side file) whose GUID, model or status drifted."""
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

    def unknown_port(self, bad: EP, good: EP, o: Observed, link: Link | None) -> None:
        """A port the planned switch model cannot have (seen with ``good`` at the other end).

        ``link`` is the missing planned cable of ``good`` folded into this finding: one
        mistake, one finding, and no move instruction to a port that does not exist.
        """
        scheme = self.plan.schemes.get(bad[0])
        model = scheme.model if scheme is not None and scheme.model else "switch"
        top = top_port(scheme) if scheme is not None else 0
        size = f", {top} ports at the planned speed" if top else ""
        planned = ""
        if link is not None:
            peer = self.plan.peer(good)
            planned = f"; planned peer {self.port_text(peer)}" if peer is not None else ""
        summary = (
            f"{bad[0]} port {bad[1]!r} (seen with {ep_text(good)}) cannot exist on the "
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
        """A planned device the source never saw (its missing links folded in)."""
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

    def unexpected_device(self, device: str, obs: list[Observed]) -> None:
        """A device the plan does not have (its links folded in)."""
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

    def swap(
        self, l1: Link, l2: Link, a1: EP, b1: EP, x2: EP, y: EP, o1: Observed, o2: Observed
    ) -> None:
        """Two planned cables whose far ends are exchanged: one finding, not four."""
        pt = self.ident.port_text
        if b1[0] == y[0]:
            cause = "swap_same_switch"
            where = f"{b1[0]} ports {pt(*b1)} and {pt(*y)}"
            if self.physical:
                fix = (
                    f"swap the cables in {where}: {ep_text(a1)} belongs on {pt(*b1)}, "
                    f"{ep_text(x2)} on {pt(*y)}"
                )
            else:
                fix = (
                    f"swap the {b1[0]} ends of cable records {l1.id} and {l2.id} in "
                    f"{self.target}: {ep_text(a1)} belongs on {pt(*b1)}, "
                    f"{ep_text(x2)} on {pt(*y)}"
                )
            summary = f"cables of {ep_text(a1)} and {ep_text(x2)} are swapped in {where}"
        else:
            cause = "swap_across_switches"
            if a1[0] == x2[0]:
                lead = f"swap the cables at {a1[0]} {a1[1]} and {x2[1]}"
            else:
                lead = f"swap the far ends of the cables at {ep_text(a1)} and {ep_text(x2)}"
            if not self.physical:
                lead = f"swap the far ends of cable records {l1.id} and {l2.id} in {self.target}"
            fix = (
                f"{lead}: {ep_text(a1)} belongs on {self.port_text(b1)}, {ep_text(x2)} on "
                f"{self.port_text(y)}"
            )
            summary = (
                f"{ep_text(a1)} is on {self.port_text(y)} and {ep_text(x2)} on "
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

    def moved(self, link: Link, a: EP, b: EP, o: Observed) -> None:
        """A planned cable whose lower-tier end is plugged into the wrong place."""
        y = o.b if o.a == a else o.a
        cause = self._cause(b, y)
        where = {
            "wrong_port": "the wrong port",
            "wrong_rail": "another rail's leaf",
            "wrong_switch": "the wrong switch",
            "wrong_server": "the wrong server",
        }[cause]
        if self.physical:
            fix = f"move the cable at {ep_text(a)} from {self.port_text(y)} to {self.port_text(b)}"
        else:
            fix = (
                f"change the far end of cable {link.id} from {self.port_text(y)} to "
                f"{self.port_text(b)} in {self.target}"
            )
        summary = f"{ep_text(a)} is on {where}: {self.port_text(y)}, planned {self.port_text(b)}"
        self.add(
            "wrong_peer",
            summary,
            fix,
            expected=[self.link_side(link)],
            actual=[self.obs_side(o, a)],
            link=link,
            cause=cause,
        )

    def displaced(self, link: Link, a: EP, b: EP, o: Observed) -> None:
        """A planned upper-tier port holding some other cable."""
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
            f"{self.port_text(b)} holds the cable of {self.port_text(x)}, planned {ep_text(a)}"
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
        """A port up without an LLDP neighbour (planned cable or none)."""
        actual = Side(
            a_device=ep[0], a_port=ep[1], speed_gbps=speed, state="up, no neighbour", where=where
        )
        if link is not None:
            peer = self.plan.peer(ep)
            assert peer is not None
            summary = (
                f"{self.port_text(ep)} is up but reports no LLDP neighbour "
                f"(planned {ep_text(peer)})"
            )
            fix = (
                f"enable LLDP on {peer[0]} (or trace the cable at {self.port_text(ep)}: "
                f"it should come from {ep_text(peer)})"
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
        """A planned cable the source does not report."""
        a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
        cable = f"{self.port_text(a)} ↔ {self.port_text(b)}"
        if self.physical:
            part = self.plan.part_of(link)
            media = f", {part}" if part else ""
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

    def unexpected_link(self, o: Observed) -> None:
        """An observed cable the plan does not have."""
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
