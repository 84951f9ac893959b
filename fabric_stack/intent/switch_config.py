"""The configuration of one fabric switch as typed records, built once for every NOS renderer.

:func:`build_switch_config` gathers what a switch's configuration says from the stages that
decided it: its compute ports (from the topology), its lossless QoS (the switch intent's
per-hop fields and the spec's fabric-wide ``roce`` markings and thresholds) and, on routed
fabrics, its routing (the underlay plan's loopback, ASN, fabric-link addresses, BGP
neighbours and rail gateways). Nothing here is OS syntax: ``render frr``, ``render sonic``,
``render cumulus`` and ``render roce-qos`` each serialize the same :class:`SwitchConfig`
(the port names each OS prints are :mod:`fabric_stack.nos`'s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fabric_stack.intent.model import SwitchIntent
from fabric_stack.nos.cumulus import vlan_interface
from fabric_stack.sizing.tiers import uplink_layout_number
from fabric_stack.spec.model import FabricSpec
from fabric_stack.topology.build import Link
from fabric_stack.underlay.plan import UnderlayPlan


@dataclass(frozen=True, slots=True)
class PortConfig:
    """One compute port of the switch: its plan label and number, and the cable on it."""

    number: int
    """Logical port number, 1-based."""
    name: str
    """The port as the plan labels it (the switch OS's spelling: ``swp1s0``)."""
    peer_device: str
    """The device at the far end of the cable."""
    peer_port: str
    """The far end's port."""
    role: str
    """The link's role: ``node_leaf``, ``leaf_spine`` or ``spine_core``."""
    medium: str
    """The cable's medium class (``copper``, ``mmf``, ``smf``)."""
    cable_m: float
    """The planned length of the cable on this port, metres (the plant's run, rounded up to a
    length the cable family sells): what each NOS sizes the port's PFC headroom from."""
    speed_gbps: int = 0
    """The link's speed (a mixed leaf's uplinks run faster than its downlinks)."""

    @property
    def peer(self) -> str:
        """``device:port`` of the far end."""
        return f"{self.peer_device}:{self.peer_port}"


@dataclass(frozen=True, slots=True)
class CageLayout:
    """How one cage of a mixed leaf splits: its ports and their speed."""

    cage: int
    """The cage, 1-based."""
    ports_per_cage: int
    """Logical ports the cage splits into."""
    speed_gbps: int
    """Speed of each of them."""


@dataclass(frozen=True, slots=True)
class QosConfig:
    """The lossless RoCEv2 settings of one switch.

    Per-hop fields come from the switch intent; markings and thresholds from the spec. The
    RoCE data priority is the spec's first PFC priority: the DSCP→priority mapping must not
    move when one tier's PFC is (mis)configured differently, or the mismatch the
    roce-lossless-consistency policy reports would be hidden.
    """

    mtu: int
    """Port MTU, identical on every hop."""
    dscp_trust: bool
    """Classify on DSCP (else 802.1p)."""
    pfc_priorities: tuple[int, ...]
    """Priorities PFC pauses (empty: lossy)."""
    ecn: bool
    """ECN marking on the RoCE traffic class."""
    roce_dscp: int
    """DSCP the hosts mark RoCE data with."""
    roce_priority: int
    """Switch priority of RoCE data."""
    roce_tc: int
    """Traffic class of RoCE data (Cumulus maps priority N to TC N; kept for SP3)."""
    cnp_dscp: int
    """DSCP of congestion notifications."""
    cnp_priority: int
    """Switch priority of congestion notifications."""
    cnp_tc: int
    """Traffic class of congestion notifications."""
    ecn_min_bytes: int
    """ECN marking starts at this queue depth (NVIDIA's KB are 1,000 bytes)."""
    ecn_max_bytes: int
    """ECN marks with full probability from this queue depth."""
    ecn_probability: int
    """Marking probability between the thresholds, percent."""


@dataclass(frozen=True, slots=True)
class FabricInterface:
    """A routed fabric port: its address (None: unnumbered) and its BGP neighbour."""

    name: str
    """The port as the plan labels it."""
    address: str | None
    """This end's /31 address; None on BGP-unnumbered links (both ends, never mixed)."""
    peer_address: str | None
    """The far end's /31 address (None: unnumbered)."""
    peer: str
    """The neighbouring switch."""
    peer_asn: int
    """The neighbour's ASN."""

    @property
    def neighbour(self) -> str:
        """What BGP peers with: the interface (unnumbered) or the far end's address."""
        return self.name if self.peer_address is None else self.peer_address


@dataclass(frozen=True, slots=True)
class HostGateway:
    """A host port of a ``p2p31`` leaf: the port and the leaf's /31 address on it."""

    port: str
    """The leaf port the host NIC is cabled to."""
    gateway: str
    """The leaf's address on that /31."""


@dataclass(frozen=True, slots=True)
class RailGateway:
    """The leaf's gateway for one rail: the leaf-local VLAN interface and the rail block."""

    rail: int
    """The rail, 1-based."""
    vlan: int
    """The rail's VLAN id (the leaf-local bridge carrying the gateway in ``leaf-subnet``)."""
    subnet: str
    """The rail block this leaf originates."""
    gateway: str
    """The leaf's address in the block."""
    hosts: tuple[HostGateway, ...]
    """The hosts' ports of this rail on this leaf, with their /31 gateways (``p2p31``)."""

    @property
    def interface(self) -> str:
        """The leaf-local VLAN interface that carries the gateway (``vlan101``)."""
        return vlan_interface(self.vlan)

    @property
    def prefixlen(self) -> str:
        """The block's prefix length, as written after the gateway (``26``)."""
        return self.subnet.split("/")[1]


@dataclass(frozen=True, slots=True)
class RoutingConfig:
    """The routed underlay of one switch: loopback, eBGP, fabric interfaces, rail gateways."""

    role: str
    """The switch's tier as the underlay plans it (``leaf``, ``spine``, ``core``)."""
    plane: int
    """The plane whose underlay the switch is in."""
    asn: int
    """The switch's ASN (RFC 7938 plan)."""
    router_id: str
    """BGP router id (= the loopback)."""
    loopback: str
    """Loopback address (/32)."""
    fabric_links: str
    """``unnumbered`` or ``p2p31``."""
    host_addressing: str
    """``leaf-subnet`` or ``p2p31``."""
    bfd: bool
    """BFD on every fabric neighbour."""
    maximum_paths: int
    """ECMP width the spec asks for."""
    mtu: int
    """The hosts' MTU (what the rail gateway's VLAN interface carries)."""
    interfaces: tuple[FabricInterface, ...]
    """Fabric ports, in plan order."""
    gateways: tuple[RailGateway, ...]
    """Rail gateways (leaves only), in plan order."""

    @property
    def p2p31_hosts(self) -> bool:
        """True when hosts are addressed on a /31 per port rather than a rail subnet."""
        return self.host_addressing == "p2p31"


@dataclass(frozen=True, slots=True)
class SwitchConfig:
    """Everything a NOS renderer writes for one fabric switch, typed."""

    switch: SwitchIntent
    """The switch as planned (name, role, model, plane, SU, rail…)."""
    ports_per_cage: int
    """Logical ports per cage at the planned speed (breakout when > 1)."""
    ports: tuple[PortConfig, ...]
    """Compute ports, by port number."""
    qos: QosConfig
    """Lossless RoCE settings."""
    routing: RoutingConfig | None
    """The routed underlay; None on InfiniBand, or when not asked for."""
    up_ports_per_cage: int = 0
    """Logical ports per uplink cage of a mixed leaf (uplinks faster than downlinks); 0
    when every port runs at ``speed_gbps``."""
    cages: int = 0
    """Cages of the switch's model (its catalog record)."""

    def cage_layouts(self) -> tuple[CageLayout, ...]:
        """Every cage's split on a mixed leaf, in cage order: a cage carrying an uplink runs
        the uplink layout, every other cage the downlink one. Empty when the switch is not
        mixed (every cage splits alike: the platform's default split)."""
        if not self.up_ports_per_cage or not self.cages:
            return ()
        up: dict[int, int] = {}
        for p in self.ports:
            number, ppc, speed = self.port_layout(p)
            if speed != self.speed_gbps:
                up[(number - 1) // ppc + 1] = speed
        down = (self.ports_per_cage, self.speed_gbps)
        return tuple(
            CageLayout(c, *((self.up_ports_per_cage, up[c]) if c in up else down))
            for c in range(1, self.cages + 1)
        )

    def port_layout(self, port: PortConfig) -> tuple[int, int, int]:
        """(number in its cage layout, ports per cage, speed) of ``port``: a mixed leaf's
        uplink is numbered in the uplink layout (a whole 800G cage is port ``cage``), every
        other port as planned (:mod:`fabric_stack.sizing.tiers`)."""
        speed = port.speed_gbps or self.speed_gbps
        if not self.up_ports_per_cage or speed == self.speed_gbps:
            return port.number, self.ports_per_cage, speed
        up = self.up_ports_per_cage
        return uplink_layout_number(port.number, self.ports_per_cage, up), up, speed

    @property
    def name(self) -> str:
        """The switch's name."""
        return self.switch.name

    @property
    def speed_gbps(self) -> int:
        """Logical port speed, Gb/s."""
        return self.switch.port_gbps


def build_qos(spec: FabricSpec, sw: SwitchIntent) -> QosConfig:
    """The QoS of one switch: per-hop fields from ``sw``, markings from ``spec.roce``."""
    roce = spec.roce
    roce_prio = roce.pfc_priorities[0] if roce.pfc_priorities else 3
    return QosConfig(
        mtu=sw.mtu,
        dscp_trust=sw.dscp_trust,
        pfc_priorities=tuple(sw.pfc_priorities),
        ecn=sw.ecn,
        roce_dscp=roce.roce_dscp,
        roce_priority=roce_prio,
        # Cumulus maps switch priority N to traffic class N by default; the RoCE
        # profile keeps that for SP3 (RoCE) and SP6 (CNP) and sends the rest to TC0.
        roce_tc=roce_prio,
        cnp_dscp=roce.cnp_dscp,
        cnp_priority=roce.cnp_priority,
        cnp_tc=roce.cnp_priority,
        # NVIDIA states the thresholds in KB = 1,000 bytes (150 KB → 150000 B, which
        # `nv show qos roce` prints as 146.48 KiB).
        ecn_min_bytes=roce.ecn_min_kb * 1000,
        ecn_max_bytes=roce.ecn_max_kb * 1000,
        ecn_probability=roce.ecn_probability,
    )


def build_ports(name: str, links: Sequence[tuple[Link, str, int, float]]) -> tuple[PortConfig, ...]:
    """The compute ports of switch ``name`` from its (link, port label, port number, planned
    cable length) list."""
    out = []
    for link, label, number, length in links:
        mine_a = link.a_device == name and link.role != "node_leaf"
        peer, peer_port = (link.b_device, link.b_port) if mine_a else (link.a_device, link.a_port)
        out.append(
            PortConfig(
                number, label, peer, peer_port, link.role, link.medium, length, link.speed_gbps
            )
        )
    return tuple(out)


def build_routing(spec: FabricSpec, u: UnderlayPlan, name: str) -> RoutingConfig | None:
    """The routed underlay of switch ``name`` (None: the underlay plans no such switch)."""
    s = u.switches.get(name)
    if s is None:
        return None
    interfaces = []
    for port, link in u.links_of(name):
        mine_a = link.a_device == name
        interfaces.append(
            FabricInterface(
                name=port,
                address=link.a_address if mine_a else link.b_address,
                peer_address=link.b_address if mine_a else link.a_address,
                peer=link.b_device if mine_a else link.a_device,
                peer_asn=u.switches[link.b_device if mine_a else link.a_device].asn,
            )
        )
    hosts = u.hosts_of(name)
    gateways = tuple(
        RailGateway(
            rail=b.rail,
            vlan=spec.rail_vlan(b.rail),
            subnet=b.subnet,
            gateway=b.gateway,
            hosts=tuple(HostGateway(h.leaf_port, h.gateway) for h in hosts if h.rail == b.rail),
        )
        for b in u.blocks_of(name)
    )
    st = u.settings
    return RoutingConfig(
        role=s.role,
        plane=s.plane,
        asn=s.asn,
        router_id=s.router_id,
        loopback=s.loopback,
        fabric_links=st.fabric_links,
        host_addressing=st.host_addressing,
        bfd=st.bfd,
        maximum_paths=st.maximum_paths,
        mtu=u.mtu,
        interfaces=tuple(interfaces),
        gateways=gateways,
    )


def build_switch_config(
    spec: FabricSpec,
    sw: SwitchIntent,
    ports_per_cage: int,
    links: Sequence[tuple[Link, str, int, float]],
    underlay: UnderlayPlan | None,
    up_ports_per_cage: int = 0,
    cages: int = 0,
) -> SwitchConfig:
    """The configuration of one switch, built once per render (steps in order: its compute
    ports, its QoS, then its routing when ``underlay`` is given)."""
    return SwitchConfig(
        switch=sw,
        ports_per_cage=ports_per_cage,
        ports=build_ports(sw.name, links),
        qos=build_qos(spec, sw),
        routing=build_routing(spec, underlay, sw.name) if underlay is not None else None,
        up_ports_per_cage=up_ports_per_cage,
        cages=cages,
    )
