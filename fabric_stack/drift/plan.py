"""The plan side of a drift comparison, indexed for lookups by endpoint and by cable.

:class:`PlanIndex` is built once from the topology's link list (and, when the
caller has the topology, the switch models that say how each switch names its
ports). Everything the engine and identity resolution ask of the plan is a
dict lookup here, so a 115k-link plan is indexed in well under a second.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fabric_stack.errors import CatalogError
from fabric_stack.hardware.switches import lookup_switch, port_mode
from fabric_stack.naming.devices import switch_port_label
from fabric_stack.nos import PortRef, for_family
from fabric_stack.topology.build import FabricTopology, Link

EP = tuple[str, str]
"""A resolved endpoint: (device, port) with the port spelled as the plan spells it."""

Key = tuple[EP, EP]
"""Identity of a cable regardless of direction: its two endpoints, sorted."""

SERVER_ROLES = frozenset({"node_leaf", "manager_leaf", "storage", "inband", "oob"})
"""Link roles whose a-end is a host port (mlx5_N, stor1, mgmt1, bmc1): a GPU server or a
fabric manager (UFM / OpenSM host), never a switch."""


def link_key(a: EP, b: EP) -> Key:
    """The unordered identity of a cable between ``a`` and ``b`` (same as ``Link.key()``)."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class PortScheme:
    """How a switch names its ports: OS family, logical ports per cage, radix (0: unknown),
    and the model's cages and catalog key (0 / empty when the plan does not say).

    A *mixed* leaf (uplinks faster than its downlinks, issue #43) runs its cages from
    ``up_cage`` on at ``up_ports_per_cage``: its ports keep the downlink layout's numbers
    (an uplink is numbered after its first lane) but are labelled in the uplink layout
    (``swp33`` for a whole 800G cage), as :func:`fabric_stack.sizing.tiers.leaf_uplink_port`
    plans them. ``up_cage`` 0: every cage runs at ``ports_per_cage``.
    """

    os_family: str
    ports_per_cage: int
    radix: int = 0
    cages: int = 0
    model: str = ""
    up_cage: int = 0
    up_ports_per_cage: int = 0

    def lanes(self, cage: int) -> int:
        """Logical ports cage ``cage`` (1-based) gives at its planned speed."""
        if self.up_cage and cage >= self.up_cage and self.up_ports_per_cage:
            return self.up_ports_per_cage
        return self.ports_per_cage

    def number(self, cage: int, lane: int) -> int | None:
        """Logical port number of port ``lane`` of ``cage`` (both 1-based); ``None`` when
        the cage gives no such port at its planned speed or the model has no such cage."""
        lanes = self.lanes(cage)
        if cage < 1 or lane < 1 or lane > lanes or (self.cages and cage > self.cages):
            return None
        return (cage - 1) * self.ports_per_cage + (lane - 1) * (self.ports_per_cage // lanes) + 1

    def label(self, number: int) -> str | None:
        """The plan's label of logical port ``number``; ``None`` for a number inside an
        uplink cage that names no port there (a lane an uplink port spans)."""
        ppc = self.ports_per_cage
        cage, lane = divmod(number - 1, ppc)
        lanes = self.lanes(cage + 1)
        if lanes == ppc:
            return switch_port_label(self.os_family, number, ppc)
        step = ppc // lanes
        if lane % step:
            return None
        return switch_port_label(self.os_family, cage * lanes + lane // step + 1, lanes)


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """What the plan knows about a device: its role, and the rail/SU/plane of a leaf."""

    role: str
    rail: int = 0
    su: int = 0
    plane: int = 0

    @property
    def is_server(self) -> bool:
        """True for hosts — GPU servers and fabric managers (their ports are NICs)."""
        return self.role in ("server", "manager")


_LABELLED = tuple((f, for_family(f)) for f in ("mlnx-os", "nvos", "cumulus", "generic"))
"""The OSes whose plan labels are read back, in the order tried (a ``p<n>`` label says
nothing about the cage, so the generic OS only stops the search)."""


def _read_label(label: str) -> tuple[str, PortRef] | None:
    """(os_family, what it names) of a plan port label, if a labelled OS spells it."""
    for family, os in _LABELLED:
        if (ref := os.parse_label(label)) is not None:
            return family, ref
    return None


def infer_schemes(links: Iterable[Link]) -> dict[str, PortScheme]:
    """Best-effort port schemes from the labels and numbers of planned links alone.

    Used when the caller has only the link list: a label ``1/17/1`` at logical
    port 33 means MLNX-OS with 2 ports per cage. Ports of cage 1 only bound
    the cage size from below, so a switch with every planned port in cage 1 is
    read as its largest lane.
    """
    samples: dict[str, set[tuple[str, int]]] = {}
    for link in links:
        if link.role not in SERVER_ROLES:
            samples.setdefault(link.a_device, set()).add((link.a_port, link.a_port_number))
        samples.setdefault(link.b_device, set()).add((link.b_port, link.b_port_number))
    out: dict[str, PortScheme] = {}
    for dev, pairs in samples.items():
        os_family, ppc, lane_max = "generic", 0, 1
        for label, number in pairs:
            cage = lane = 0
            read = _read_label(label)
            if read is not None:
                if read[0] == "generic":
                    continue
                os_family, cage, lane = read[0], read[1].cage, read[1].lane
            lane_max = max(lane_max, lane)
            if cage > 1:
                ppc = max(ppc, (number - lane) // (cage - 1))
        out[dev] = PortScheme(os_family, ppc or lane_max, 0)
    return out


def _uplink_ports(topo: FabricTopology) -> tuple[dict[str, int], dict[str, int]]:
    """Each leaf's uplink speed and lowest uplink port number, read off its planned
    leaf-spine links (where a mixed leaf's uplink cages begin)."""
    speed: dict[str, int] = {}
    first: dict[str, int] = {}
    for link in topo.links:
        if link.role == "leaf_spine":
            speed.setdefault(link.a_device, link.speed_gbps)
            n = first.get(link.a_device)
            if n is None or link.a_port_number < n:
                first[link.a_device] = link.a_port_number
    return speed, first


def port_schemes(topo: FabricTopology) -> dict[str, PortScheme]:
    """Port schemes of every switch from its catalog model and the speed its ports run at."""
    speed: dict[str, int] = {}
    for link in topo.links:
        speed.setdefault(link.b_device, link.speed_gbps)
        if link.role not in SERVER_ROLES:
            speed.setdefault(link.a_device, link.speed_gbps)
    up_speed, up_first = _uplink_ports(topo)
    out: dict[str, PortScheme] = {}
    fallback: dict[str, PortScheme] | None = None
    for d in topo.switches():
        try:
            model = lookup_switch(d.model)
            mode = port_mode(model, speed.get(d.name, model.native_speed_gbps))
            up_cage = up_ppc = 0
            if d.name in up_speed and up_speed[d.name] != mode.speed_gbps:
                up_ppc = port_mode(model, up_speed[d.name]).ports_per_cage
                up_cage = (up_first[d.name] - 1) // mode.ports_per_cage + 1
            out[d.name] = PortScheme(
                model.os_family,
                mode.ports_per_cage,
                d.radix,
                model.cages,
                model.key,
                up_cage,
                up_ppc,
            )
        except CatalogError:
            # A model the catalog no longer knows: read the scheme off the labels.
            if fallback is None:
                fallback = infer_schemes(topo.links)
            if d.name in fallback:
                out[d.name] = fallback[d.name]
    return out


def device_expectations(topo: FabricTopology) -> dict[str, dict[str, Any]]:
    """Attributes an inventory's switch records should carry, per switch."""
    return {
        d.name: {"role": d.role, "model": d.model, "rail": d.rail, "su": d.su, "plane": d.plane}
        for d in topo.switches()
    }


class PlanIndex:
    """The planned links keyed by cable identity and by endpoint, plus device facts.

    Build with :meth:`from_topology` when the topology is at hand (exact port
    schemes and device attributes) or from a bare link list.
    """

    __slots__ = (
        "_device_networks",
        "_media",
        "_topo",
        "at",
        "by_key",
        "devices",
        "links",
        "netdevs",
        "schemes",
        "server_ports",
        "switch_attrs",
    )

    def __init__(
        self,
        links: Iterable[Link],
        schemes: Mapping[str, PortScheme] | None = None,
        switch_attrs: Mapping[str, Mapping[str, Any]] | None = None,
        netdevs: Mapping[str, str] | None = None,
    ) -> None:
        self.links: tuple[Link, ...] = tuple(links)
        self._topo: FabricTopology | None = None
        self._media: dict[EP, str] | None = None
        self.netdevs: dict[str, str] = dict(netdevs or {})
        """Server netdev → the plan's port name (the profile's RDMA device), e.g. ibp64s0 →
        mlx5_3: what a host-side source reports for a rail port."""
        self.by_key: dict[Key, Link] = {}
        self.at: dict[EP, Link] = {}
        self.server_ports: dict[str, set[str]] = {}
        devices: dict[str, DeviceInfo] = {}
        for link in self.links:
            a, b = (link.a_device, link.a_port), (link.b_device, link.b_port)
            self.by_key[link_key(a, b)] = link
            self.at[a] = link
            self.at[b] = link
            role = link.role
            if role in SERVER_ROLES:
                ports = self.server_ports.get(link.a_device)
                if ports is None:
                    ports = self.server_ports[link.a_device] = set()
                    devices[link.a_device] = DeviceInfo("server", 0, link.su, 0)
                ports.add(link.a_port)
                if link.b_device not in devices:
                    devices[link.b_device] = (
                        DeviceInfo("leaf", link.rail, link.su, link.plane)
                        if role == "node_leaf"
                        else DeviceInfo(role, 0, link.su, 0)
                    )
            elif role == "leaf_spine":
                if link.a_device not in devices:
                    devices[link.a_device] = DeviceInfo("leaf", link.rail, link.su, link.plane)
                if link.b_device not in devices:
                    devices[link.b_device] = DeviceInfo("spine", 0, 0, link.plane)
            else:
                if link.a_device not in devices:
                    devices[link.a_device] = DeviceInfo("spine", 0, 0, link.plane)
                if link.b_device not in devices:
                    devices[link.b_device] = DeviceInfo("core", 0, 0, link.plane)
        self.devices = devices
        self.schemes: dict[str, PortScheme] = (
            dict(schemes) if schemes is not None else infer_schemes(self.links)
        )
        self.switch_attrs: dict[str, dict[str, Any]] = {
            k: dict(v) for k, v in (switch_attrs or {}).items()
        }
        for name in self.switch_attrs:
            devices.setdefault(name, DeviceInfo(str(self.switch_attrs[name].get("role", "switch"))))
        self._device_networks: dict[str, frozenset[str]] | None = None

    def device_networks(self) -> dict[str, frozenset[str]]:
        """Each planned device → the networks of its planned links (built on first use)."""
        if self._device_networks is None:
            nets: dict[str, set[str]] = {}
            for link in self.links:
                for d in (link.a_device, link.b_device):
                    s = nets.get(d)
                    if s is None:
                        s = nets[d] = set()
                    s.add(link.network)
            self._device_networks = {d: frozenset(s) for d, s in nets.items()}
        return self._device_networks

    @classmethod
    def from_topology(cls, topo: FabricTopology) -> PlanIndex:
        """Index ``topo``'s links with exact port schemes and switch attributes."""
        prof = topo.plan.spec.node_profile
        netdevs = {p.netdev: p.rdma for p in prof.compute_ports if p.netdev}
        index = cls(topo.links, port_schemes(topo), device_expectations(topo), netdevs)
        index._topo = topo
        return index

    def media_of(self, link: Link) -> frozenset[str]:
        """The media a record may name for ``link``: the builder's class (``mmf``) and the
        cable the physical plant chose for its run (``acc``; a DCIM ``dac-*`` type reads as
        ``copper``). The plant is derived once, on the first record that names a medium."""
        if self._topo is None:
            return frozenset((link.medium,))
        if self._media is None:
            from fabric_stack.plant import plant_of  # only drifts that compare media pay

            topo = self._topo
            runs = plant_of(topo, strict=False).runs
            self._media = {
                (k.a_device, k.a_port): r.medium for k, r in zip(topo.links, runs, strict=True)
            }
        chosen = self._media.get((link.a_device, link.a_port), link.medium)
        copper = ("copper",) if chosen in ("dac", "acc") else ()
        return frozenset((link.medium, chosen, *copper))

    def part_of(self, link: Link) -> str:
        """What to fit for ``link``: the part `bom`'s order list names for it (the plant's
        DAC/ACC/splitter/fibre choice), else the builder's class when no topology is at
        hand (an index built from records)."""
        if self._topo is None:
            return link.cable_type
        from fabric_stack.plant.order import link_parts  # only fixes that name a cable pay

        part = link_parts(self._topo).get(link.id)
        return part.description if part is not None else link.cable_type

    def peer(self, ep: EP) -> EP | None:
        """The planned far end of the cable at ``ep``, if the plan has one."""
        link = self.at.get(ep)
        if link is None:
            return None
        a = (link.a_device, link.a_port)
        return (link.b_device, link.b_port) if ep == a else a

    def is_server(self, device: str) -> bool:
        """True for planned servers."""
        info = self.devices.get(device)
        return info is not None and info.is_server

    def switch_of(self, link: Link) -> str:
        """The switch a finding about ``link`` is filed under (the leaf for server links)."""
        return link.b_device if link.role in SERVER_ROLES else link.a_device

    def planned_number(self, ep: EP) -> int | None:
        """Logical port number of a planned switch port."""
        link = self.at.get(ep)
        if link is None:
            return None
        if ep == (link.b_device, link.b_port):
            return link.b_port_number
        return None if link.role in SERVER_ROLES else link.a_port_number
