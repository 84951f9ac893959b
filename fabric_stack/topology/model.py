"""The records of a port-level topology: devices, NICs, cables, network plans.

:func:`fabric_stack.topology.build.build_topology` fills them; everything downstream reads
them (import them from :mod:`fabric_stack.topology.build`, which re-exports them).

Records are slotted frozen dataclasses rather than pydantic models: a
131,072-GPU plan has ~460k links, and validating each would cost seconds for
no gain (they are built from already-validated data).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from fabric_stack.records import fast_init
from fabric_stack.sizing.size import SizingPlan

if TYPE_CHECKING:
    import networkx as nx

LinkRole = Literal[
    "node_leaf", "leaf_spine", "spine_core", "manager_leaf", "storage", "inband", "oob"
]
"""What a cable connects. The first three are the compute fabric."""

COMPUTE_ROLES: tuple[str, ...] = ("node_leaf", "leaf_spine", "spine_core")
"""Link roles of the compute fabric's GPU servers and switches."""

MANAGER_ROLE = "manager_leaf"
"""Link role of an InfiniBand fabric-manager host (UFM / OpenSM) to leaf cable."""

FABRIC_ROLES: tuple[str, ...] = (*COMPUTE_ROLES, MANAGER_ROLE)
"""Every link role of the compute fabric, fabric-manager cables included (what an
InfiniBand subnet holds: the .topo, P2P and twin read these)."""

HOST_ROLES: tuple[str, ...] = ("server", "manager")
"""Device roles that are hosts, not switches: GPU servers and fabric-manager hosts."""

SERVERS_PER_RACK = 4
"""Servers per rack: four 8-GPU servers (~40 kW) is the common air-cooled density."""


@fast_init
@dataclass(frozen=True, slots=True)
class Device:
    """A switch or host. ``role`` is leaf/spine/core, server, manager (a UFM/OpenSM host),
    or storage/inband/oob."""

    name: str
    role: str
    model: str
    network: str
    plane: int = 0
    su: int = 0
    pod: int = 0
    rail: int = 0
    index: int = 0
    radix: int = 0
    rack: str = ""
    position: int = 0
    planned: str = ""
    """The plan's own name when the site renamed the device (naming templates, names file)."""

    @property
    def planned_name(self) -> str:
        """The plan's default name of the device (``su1-node07``), renamed or not."""
        return self.planned or self.name


@fast_init
@dataclass(frozen=True, slots=True)
class Nic:
    """A compute RDMA NIC port of a server and its PCIe placement."""

    node: str
    name: str
    rail: int
    plane: int
    pcie_switch: str
    numa: int
    gpus: tuple[int, ...]
    gpu_pcie_switches: tuple[str, ...]
    gpu_numas: tuple[int, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class Link:
    """One cable. The a-end is the lower tier (server, leaf, spine); ``id`` is its a-end."""

    id: str
    role: str
    network: str
    a_device: str
    a_port: str
    a_port_number: int
    b_device: str
    b_port: str
    b_port_number: int
    speed_gbps: int
    plane: int = 0
    rail: int = 0
    su: int = 0
    pod: int = 0
    medium: str = ""
    a_optic: str = ""
    b_optic: str = ""
    cable_type: str = ""

    def key(self) -> frozenset[tuple[str, str]]:
        """Identity of the cable regardless of direction: its two (device, port) ends."""
        return frozenset(((self.a_device, self.a_port), (self.b_device, self.b_port)))


@dataclass(frozen=True, slots=True)
class NetworkPlan:
    """One of the four networks: VLAN(s), subnet(s) and the switches that carry it."""

    name: str
    title: str
    attach: str
    vlans: tuple[int, ...]
    subnets: tuple[str, ...]
    carriers: tuple[str, ...]
    mtu: int


@dataclass(frozen=True)
class FabricTopology:
    """The port-level plan: devices, NICs, links and network plans (immutable)."""

    plan: SizingPlan
    devices: tuple[Device, ...]
    nics: tuple[Nic, ...]
    links: tuple[Link, ...]
    networks: tuple[NetworkPlan, ...]
    _by_name: dict[str, Device] = field(default_factory=dict, repr=False, compare=False)
    memo: dict[str, object] = field(default_factory=dict, repr=False, compare=False)
    """Results derived once from this topology (the physical plant), keyed by stage."""

    def device(self, name: str) -> Device:
        """Device by name."""
        if not self._by_name:
            self._by_name.update((d.name, d) for d in self.devices)
        return self._by_name[name]

    def switches(self, *roles: str) -> Iterator[Device]:
        """Switches, optionally only those of the given roles."""
        for d in self.devices:
            if d.role not in HOST_ROLES and (not roles or d.role in roles):
                yield d

    def links_of(self, *roles: str) -> Iterator[Link]:
        """Links of the given roles (all when none given)."""
        for link in self.links:
            if not roles or link.role in roles:
                yield link

    def count_links(self) -> dict[str, int]:
        """Cables per role, counted from the link list."""
        out: dict[str, int] = {}
        for link in self.links:
            out[link.role] = out.get(link.role, 0) + 1
        return out

    def count_switches(self) -> dict[str, int]:
        """Switches per role, counted from the device list."""
        out: dict[str, int] = {}
        for d in self.devices:
            if d.role not in HOST_ROLES:
                out[d.role] = out.get(d.role, 0) + 1
        return out

    @cached_property
    def graph(self) -> nx.MultiGraph:
        """networkx MultiGraph: devices, GPUs, NICs and PCIe switches; one edge per cable.

        Built on first use (it is the expensive part at large scale). Cable edges
        carry ``key=link.id`` and the link's attributes; PCIe attachments carry
        ``role='pcie'``.
        """
        import networkx as nx

        g: nx.MultiGraph = nx.MultiGraph()
        for d in self.devices:
            g.add_node(d.name, kind=d.role, model=d.model, plane=d.plane, su=d.su, rail=d.rail)
        for n in self.nics:
            nic = f"{n.node}/{n.name}"
            sw = f"{n.node}/{n.pcie_switch}"
            g.add_node(nic, kind="nic", rail=n.rail, plane=n.plane, numa=n.numa)
            g.add_node(sw, kind="pcie_switch", numa=n.numa)
            g.add_edge(n.node, sw, role="pcie")
            g.add_edge(sw, nic, role="pcie")
            for gpu, gsw in zip(n.gpus, n.gpu_pcie_switches, strict=True):
                gname = f"{n.node}/gpu{gpu}"
                if gname not in g:
                    g.add_node(gname, kind="gpu")
                    g.add_edge(gname, f"{n.node}/{gsw}", role="pcie")
        for link in self.links:
            a = f"{link.a_device}/{link.a_port}" if link.role == "node_leaf" else link.a_device
            g.add_edge(a, link.b_device, key=link.id, role=link.role, speed_gbps=link.speed_gbps)
        return g
