"""The routed underlay of a RoCE/Ethernet fabric: loopbacks, ASNs, fabric links, rail addressing.

:func:`plan_underlay` is a pure stage after :func:`~fabric_stack.topology.build.build_topology`.
It follows the published pure-L3 AI back-end designs, which route every rail
instead of stretching one VLAN across leaves (a stretched rail VLAN has no path
between SUs once leaves are routed):

* **eBGP everywhere, RFC 7938 ASNs.** Every leaf has its own ASN; the spines of
  one pod (per plane) share one ASN, the cores of a plane share one. Sharing an
  ASN across a tier lets BGP's AS-path loop check stop valley paths
  (leaf→spine→leaf→spine) without policy (RFC 7938 §5.2.1). ASNs come from the
  4-byte private range (RFC 6996) starting at ``underlay.asn_base``: one per
  plane reserved for the cores, then per pod its spine groups and its leaves.
* **Growth never renumbers** (issue #27): loopbacks, ASNs and /31s sit at fixed
  slots keyed by each switch's identity (:class:`SlotLayout`), rail blocks are
  sized for a full leaf and indexed by SU, a host's address follows its leaf port.
* **BGP unnumbered fabric links** by default (RFC 5549 IPv4 over IPv6
  link-local next hops): no /31 to plan or mis-type, and the default NVIDIA
  recommends for Cumulus Linux and that SONiC/FRR support. ``p2p31`` gives every
  fabric link a /31 from ``underlay.p2p`` instead (upper tier even, lower odd).
* **A subnet per rail per leaf, leaf as gateway** by default: the rail subnet
  (``networks.compute.subnet`` split per rail/plane) is cut into one block per
  SU; the leaf takes the first address, the server on leaf port *k* the
  *k*-th after it. One
  connected route per leaf is advertised, which is what NVIDIA Spectrum-X and
  the Juniper/Arista rail-optimised reference designs describe (see docs/underlay.md
  for the cited pages). ``p2p31`` gives every host port a /31
  from the same block (leaf even, host odd) and the leaf advertises the block.

Every pool overflow is a :class:`~fabric_stack.errors.SpecError` naming the field.
Records are slotted frozen dataclasses (a 32,768-GPU plan has ~33k host ports).
"""

from __future__ import annotations

import math
import socket
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from ipaddress import IPv4Network
from operator import attrgetter

from fabric_stack.errors import SpecError
from fabric_stack.records import fast_init
from fabric_stack.sizing.model import SizingPlan
from fabric_stack.spec.underlay import PRIVATE_ASN_LAST, UnderlaySettings
from fabric_stack.topology.build import FabricTopology, Link
from fabric_stack.topology.model import Device

FABRIC_ROLES = ("leaf_spine", "spine_core")
"""Link roles between switches (routed with BGP)."""


@dataclass(frozen=True, slots=True)
class SwitchUnderlay:
    """One switch's routing identity."""

    name: str
    role: str
    plane: int
    asn: int
    loopback: str
    router_id: str


@fast_init
@dataclass(frozen=True, slots=True)
class FabricLinkUnderlay:
    """Addressing of one switch-to-switch cable: both ends unnumbered or both /31."""

    link_id: str
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    a_address: str | None
    b_address: str | None

    @property
    def unnumbered(self) -> bool:
        """True when both ends use BGP unnumbered (no IPv4 address)."""
        return self.a_address is None and self.b_address is None


@dataclass(frozen=True, slots=True)
class RailBlock:
    """The addresses one leaf serves on its rail: originated by that leaf only."""

    leaf: str
    rail: int
    plane: int
    su: int
    subnet: str
    gateway: str


@fast_init
@dataclass(frozen=True, slots=True)
class HostPort:
    """One server rail NIC: address, its gateway (the leaf port), and its routing table."""

    server: str
    nic: str
    rail: int
    plane: int
    leaf: str
    leaf_port: str
    address: str
    prefixlen: int
    gateway: str
    table: int


@dataclass(frozen=True)
class UnderlayPlan:
    """The whole underlay: switches, fabric links, rail blocks, host ports (immutable)."""

    settings: UnderlaySettings
    switches: dict[str, SwitchUnderlay]
    links: tuple[FabricLinkUnderlay, ...]
    blocks: tuple[RailBlock, ...]
    hosts: tuple[HostPort, ...]
    mtu: int

    def blocks_of(self, leaf: str) -> list[RailBlock]:
        """The rail blocks a leaf originates."""
        return self._index[0].get(leaf, [])

    def links_of(self, switch: str) -> list[tuple[str, FabricLinkUnderlay]]:
        """(local port, link) for every fabric link ending on ``switch``."""
        return self._index[1].get(switch, [])

    def hosts_of(self, device: str) -> list[HostPort]:
        """Host ports of a server, or the host ports a leaf serves."""
        return self._index[2].get(device, [])

    @cached_property
    def _index(
        self,
    ) -> tuple[
        dict[str, list[RailBlock]],
        dict[str, list[tuple[str, FabricLinkUnderlay]]],
        dict[str, list[HostPort]],
    ]:
        # Built once: renderers ask per switch/server, and a scan each time is quadratic.
        blocks: dict[str, list[RailBlock]] = defaultdict(list)
        links: dict[str, list[tuple[str, FabricLinkUnderlay]]] = defaultdict(list)
        hosts: dict[str, list[HostPort]] = defaultdict(list)
        for b in self.blocks:
            blocks[b.leaf].append(b)
        for lk in self.links:
            links[lk.a_device].append((lk.a_port, lk))
            links[lk.b_device].append((lk.b_port, lk))
        for h in self.hosts:
            hosts[h.server].append(h)
            hosts[h.leaf].append(h)
        return dict(blocks), dict(links), dict(hosts)


def plan_underlay(topo: FabricTopology) -> UnderlayPlan:
    """The routed underlay of a RoCE/Ethernet topology. Raises SpecError on pool overflow."""
    spec = topo.plan.spec
    if spec.fabric == "infiniband":
        raise SpecError("fabric", "an InfiniBand fabric has no IP underlay", "use roce or ethernet")
    st = spec.underlay
    layout = layout_of(topo.plan)
    switches = assign_switches(topo, st, layout)
    links = address_fabric_links(topo, st, layout)
    blocks, hosts = address_hosts(topo, st)
    mtu = spec.networks.compute.mtu or 9000
    return UnderlayPlan(st, switches, links, blocks, hosts, mtu)


@dataclass(frozen=True, slots=True)
class SlotLayout:
    """Where each switch's allocations sit in a pool: a fixed slot per stable identity.

    Growth must never renumber what exists (issue #27), so no allocation is an
    enumeration index. Every slot is a function of the switch's identity (plane,
    pod, SU, rail, spine index, core group/member) and of figures growth leaves
    alone (rails, planes, the leaf and spine port budgets, SUs per pod in three
    tiers), exactly as a cable's id is its a-end port:

    * cores first, ``core_groups × spine_up`` slots per plane (a group gains
      members as pods arrive, at most one per spine uplink);
    * then one chunk per pod: ``planes × leaf_up`` spine slots (every leaf of a
      pod reaches every spine of it, so a pod never has more), then the pod's
      leaves SU-major by ``(su, plane, rail)``.

    Two tiers have one pod, so adding SUs appends leaves at the end and a new
    spine takes the slot reserved for it. Going from two tiers to three changes
    the layout itself: that renumbers, and the plan's address changes list it.
    """

    planes: int
    rails: int
    leaf_down: int
    leaf_up: int
    spine_down: int
    spine_up: int
    core_groups: int
    cores_per_group: int
    sus_per_pod: int
    tiers: int
    leaves_per_rail: int = 1
    """Leaves of each rail in one SU (#43): a leaf's slot follows its place in the rail."""
    spine_groups: int = 1
    """Spine groups per plane and pod (#43): the rails when the spines are rail-grouped."""

    @property
    def core_slots(self) -> int:
        """Slots reserved for the cores of all planes (none in two tiers)."""
        return self.planes * self.core_groups * self.spine_up if self.tiers == 3 else 0

    @property
    def pod_leaves(self) -> int:
        """Leaf slots per pod (three tiers; the one pod of two tiers is open-ended)."""
        return self.sus_per_pod * self.planes * self.rails * self.leaves_per_rail

    @property
    def pod_spines(self) -> int:
        """Spine slots per pod: ``leaf_up`` per plane and spine group (a leaf reaches at
        most that many spines of its group)."""
        return self.planes * self.spine_groups * self.leaf_up

    def spine_ordinal(self, d: Device) -> int:
        """A spine's rank in its pod: plane-major, then its rail group, then its index."""
        group = max(d.rail, 1) - 1 if self.spine_groups > 1 else 0
        return ((max(d.plane, 1) - 1) * self.spine_groups + group) * self.leaf_up + d.index - 1

    def pod_of(self, d: Device) -> int:
        """0-based pod chunk of a switch (always 0 in two tiers)."""
        return max(d.pod, 1) - 1 if self.tiers == 3 else 0

    def leaf_ordinal(self, d: Device) -> int:
        """A leaf's rank inside its pod, SU-major, so a new SU appends."""
        su = d.su - 1 - self.pod_of(d) * self.sus_per_pod
        per_su = self.rails * self.leaves_per_rail
        # A leaf's index is its place among its SU's leaves of the plane, (rail, leaf k) in
        # order; with one leaf per rail that is the rail.
        at = d.index - 1 if self.leaves_per_rail > 1 else d.rail - 1
        return (su * self.planes + max(d.plane, 1) - 1) * per_su + at

    def switch_slot(self, d: Device) -> int:
        """The switch's fixed offset in the loopback pool (see the class docstring)."""
        plane = max(d.plane, 1) - 1
        if d.role == "core":
            # The index is group-major over the current group size, which grows with
            # pods: recover (group, member), the identity the core's name carries.
            g, m = divmod(d.index - 1, max(self.cores_per_group, 1))
            return (plane * self.core_groups + g) * self.spine_up + m
        base = self.core_slots + self.pod_of(d) * (self.pod_spines + self.pod_leaves)
        if d.role == "spine":
            return base + self.spine_ordinal(d)
        return base + self.pod_spines + self.leaf_ordinal(d)

    def asn_slot(self, d: Device) -> int:
        """Offset from ``asn_base``: one per plane for the cores (reserved in two
        tiers too), then per pod one per plane for its spines and one per leaf."""
        plane = max(d.plane, 1) - 1
        if d.role == "core":
            return plane
        base = self.planes + self.pod_of(d) * (self.planes + self.pod_leaves)
        if d.role == "spine":
            return base + plane
        return base + self.planes + self.leaf_ordinal(d)

    def link_pair(self, a: Device, a_port_number: int) -> int:
        """The /31 pair of a fabric link, keyed by its a-end switch and uplink.

        Per pod: its leaves' uplinks (``leaf_up`` pairs each), then its spines'
        (``spine_up`` each), so a link's pair depends only on its a-end port.
        """
        chunk = (self.pod_leaves + self.planes * self.spine_groups * self.spine_up) * self.leaf_up
        base = self.pod_of(a) * chunk
        if a.role == "leaf":
            return base + self.leaf_ordinal(a) * self.leaf_up + a_port_number - self.leaf_down - 1
        spine = self.spine_ordinal(a)
        base += self.pod_leaves * self.leaf_up
        return base + spine * self.spine_up + a_port_number - self.spine_down - 1


def layout_of(plan: SizingPlan) -> SlotLayout:
    """The slot layout of a sized plan (figures growth leaves alone)."""
    return SlotLayout(
        planes=max(plan.planes, 1),
        rails=plan.rails,
        leaf_down=plan.leaf_down,
        leaf_up=plan.leaf_up,
        spine_down=plan.spine_down,
        spine_up=plan.spine_up,
        core_groups=plan.core_groups,
        cores_per_group=plan.cores_per_group,
        sus_per_pod=plan.sus_per_pod,
        tiers=plan.tiers,
        leaves_per_rail=plan.leaves_per_rail,
        spine_groups=plan.spine_groups,
    )


def assign_asns(topo: FabricTopology, base: int, layout: SlotLayout) -> dict[str, int]:
    """RFC 7938 ASNs: one per plane for cores, one per (plane, pod) for spines, one per leaf.

    Each is ``base`` plus the switch's :meth:`SlotLayout.asn_slot`, so growth never
    moves an ASN.
    """
    out = {d.name: base + layout.asn_slot(d) for d in topo.switches("leaf", "spine", "core")}
    last = max(out.values(), default=base)
    if last > PRIVATE_ASN_LAST:
        need = last - base + 1
        raise SpecError(
            "underlay.asn_base",
            f"{base} leaves too few private ASNs for {need} (the range ends at {PRIVATE_ASN_LAST})",
            f"try {PRIVATE_ASN_LAST - need + 1} or lower",
        )
    return out


def assign_switches(
    topo: FabricTopology, st: UnderlaySettings, layout: SlotLayout
) -> dict[str, SwitchUnderlay]:
    """Loopback (= router-id) and ASN of every leaf, spine and core, at fixed slots."""
    fabric = list(topo.switches("leaf", "spine", "core"))
    slots = {d.name: layout.switch_slot(d) for d in fabric}
    need = max(slots.values(), default=-1) + 1
    if need > st.loopbacks.num_addresses - 2:
        raise SpecError(
            "underlay.loopbacks",
            f"{st.loopbacks} holds {st.loopbacks.num_addresses - 2} "
            f"loopbacks but the fabric's {len(fabric)} switches reach slot {need} "
            "(slots are reserved so growth never renumbers)",
            f"use a larger pool, e.g. /{_prefix_for(need + 2)}",
        )
    asns = assign_asns(topo, st.asn_base, layout)
    first = int(st.loopbacks.network_address) + 1
    out = {}
    for d in fabric:
        addr = _dotted(first + slots[d.name])
        out[d.name] = SwitchUnderlay(d.name, d.role, d.plane, asns[d.name], addr, addr)
    return out


def address_fabric_links(
    topo: FabricTopology, st: UnderlaySettings, layout: SlotLayout
) -> tuple[FabricLinkUnderlay, ...]:
    """Every switch-to-switch cable, unnumbered or with a /31 (upper tier even).

    A /31 is the a-end port's fixed pair (:meth:`SlotLayout.link_pair`).
    """
    links, pairs = link_pairs(topo, st, layout)
    if st.fabric_links == "unnumbered":
        return tuple(_fabric(link, None, None) for link in links)
    base = int(st.p2p.network_address)
    ends = (pair_ends(base, i) for i in pairs)
    return tuple(
        _fabric(link, _dotted(a), _dotted(b)) for (a, b), link in zip(ends, links, strict=True)
    )


def pair_ends(base: int, pair: int) -> tuple[int, int]:
    """(a-end, b-end) addresses of /31 pair ``pair`` of the pool at ``base``: the upper
    tier (b-end) takes the even address."""
    return base + 2 * pair + 1, base + 2 * pair


def link_pairs(
    topo: FabricTopology, st: UnderlaySettings, layout: SlotLayout
) -> tuple[list[Link], list[int]]:
    """The switch-to-switch cables and, with ``p2p31``, each one's /31 pair in
    ``underlay.p2p`` (none when unnumbered). Raises SpecError when the pool is too small.

    Pair *i*'s ends are :func:`pair_ends`.
    """
    links = list(topo.links_of(*FABRIC_ROLES))
    if st.fabric_links == "unnumbered":
        return links, []
    devices = {d.name: d for d in topo.switches("leaf", "spine")}
    pairs = [layout.link_pair(devices[lk.a_device], lk.a_port_number) for lk in links]
    need = max(pairs, default=-1) + 1
    if 2 * need > st.p2p.num_addresses:
        raise SpecError(
            "underlay.p2p",
            f"{st.p2p} holds {st.p2p.num_addresses // 2} /31 pairs but the fabric's "
            f"{len(links)} switch links reach pair {need} "
            "(pairs are reserved so growth never renumbers)",
            f"use /{_prefix_for(2 * need)} or larger",
        )
    return links, pairs


def _fabric(link: Link, a: str | None, b: str | None) -> FabricLinkUnderlay:
    return FabricLinkUnderlay(link.id, link.a_device, link.a_port, link.b_device, link.b_port, a, b)


def _prefix_for(addresses: int) -> int:
    return 32 - max(0, math.ceil(math.log2(max(addresses, 1))))


@dataclass(frozen=True, slots=True)
class LeafHosts:
    """One leaf, its rail block and the server cables it takes (in topology order)."""

    leaf: Device
    block: IPv4Network
    links: list[Link]


def address_hosts(
    topo: FabricTopology, st: UnderlaySettings
) -> tuple[tuple[RailBlock, ...], tuple[HostPort, ...]]:
    """Address every leaf's rail block (:func:`leaf_hosts`) and the servers on it."""
    nic_index = {n: i + 1 for i, n in enumerate(sorted({n.name for n in topo.nics}))}
    blocks: list[RailBlock] = []
    hosts: list[HostPort] = []
    for lh in leaf_hosts(topo, st):
        blocks.append(rail_block(st, lh))
        leaf_links = sorted(lh.links, key=lambda lk: lk.b_port_number)
        hosts.extend(_host_ports(st, lh.block, leaf_links, nic_index))
    return tuple(blocks), tuple(hosts)


def rail_block(st: UnderlaySettings, lh: LeafHosts) -> RailBlock:
    """The rail block record of one leaf: its gateway is the block's first address after
    the network (leaf-subnet) or the network address itself (p2p31, the first /31's even end)."""
    leaf, block = lh.leaf, lh.block
    gw = str(block.network_address + (0 if st.host_addressing == "p2p31" else 1))
    return RailBlock(leaf.name, leaf.rail, leaf.plane, leaf.su, str(block), gw)


def leaf_hosts(topo: FabricTopology, st: UnderlaySettings) -> list[LeafHosts]:
    """Cut each rail subnet into one block per SU (per leaf of the rail in the SU, when an
    SU has several), each leaf with the server cables it takes.

    A block is sized for a full leaf (every downlink in ``leaf_down``) from the
    first SU on, block *n* of a rail belongs to SU *n*, and a host's address
    follows its leaf port (:func:`host_address`): servers arriving never resize or
    move a block. Raises SpecError when a rail subnet cannot hold its blocks.
    """
    plan = topo.plan
    compute = next(n for n in topo.networks if n.name == "compute")
    per_leaf: dict[str, list[Link]] = defaultdict(list)
    # One plain loop over the link list (not links_of's generator) and the highest port
    # by map in C: ~524k server cables at 131k GPUs with four planes (#43).
    for link in topo.links:
        if link.role == "node_leaf":
            per_leaf[link.b_device].append(link)
    port_of = attrgetter("b_port_number")
    top = max((max(map(port_of, v)) for v in per_leaf.values()), default=1)
    prefix = _prefix_for(_block_size(st, max(plan.leaf_down, top)))
    rail_nets: dict[int, IPv4Network] = {}  # parsed once per rail, not once per leaf
    out: list[LeafHosts] = []
    # An SU larger than one leaf has several leaves per rail (topology order: leaf k of
    # each (plane, SU, rail) in turn): leaf k of SU n takes block (n-1)·leaves_per_rail + k-1.
    kth: dict[tuple[int, int, int], int] = defaultdict(int)
    for leaf in topo.switches("leaf"):
        idx = (leaf.plane - 1) * plan.rails + leaf.rail - 1 if leaf.plane else leaf.rail - 1
        kth[(leaf.plane, leaf.su, leaf.rail)] += 1
        n = (leaf.su - 1) * plan.leaves_per_rail + kth[(leaf.plane, leaf.su, leaf.rail)] - 1
        if idx not in rail_nets:
            rail_nets[idx] = IPv4Network(compute.subnets[idx])
        block = _nth_block(rail_nets[idx], prefix, n)
        out.append(LeafHosts(leaf, block, per_leaf.get(leaf.name, [])))
    return out


def host_address(p2p: bool, base: int, k: int) -> int:
    """The address (as an integer) of the server on leaf port ``k + 1`` of the block at
    ``base``: its own /31's odd end with ``p2p31``, else the ``k``-th after the gateway.

    Strictly increasing in ``k``, which the underlay-consistency rule relies on to bound
    a leaf's hosts by its lowest and highest port.
    """
    return base + 2 * k + 1 if p2p else base + 2 + k


def _block_size(st: UnderlaySettings, ports: int) -> int:
    # leaf-subnet: network, gateway, hosts and their pods' addresses, broadcast;
    # p2p31: one pair per host port (no room for pods by design).
    if st.host_addressing == "p2p31":
        return 2 * ports
    return ports * (1 + st.pod_addresses_per_port) + 3


def _nth_block(rail_net: IPv4Network, prefix: int, n: int) -> IPv4Network:
    if prefix < rail_net.prefixlen or (n + 1) << (32 - prefix) > rail_net.num_addresses:
        raise SpecError(
            "networks.compute.subnet",
            f"the rail subnet {rail_net} cannot hold {n + 1} leaf blocks of /{prefix}",
            "use a larger networks.compute.subnet",
        )
    return IPv4Network((int(rail_net.network_address) + (n << (32 - prefix)), prefix))


def _dotted(addr: int) -> str:
    """``str(IPv4Address(addr))`` through the C formatter (a tenth of the cost)."""
    return socket.inet_ntoa(addr.to_bytes(4, "big"))


def _host_ports(
    st: UnderlaySettings, block: IPv4Network, links: list[Link], nic_index: dict[str, int]
) -> Iterator[HostPort]:
    """The host ports of one leaf's ``links`` (by leaf port) in its rail ``block``."""
    # Dotted quads through the C formatter, the gateway once per block: str(IPv4Address)
    # per address cost seconds for ~1M host addresses at 131k GPUs (#43).
    ntoa = socket.inet_ntoa
    base = int(block.network_address)
    table = st.route_table_base
    p2p = st.host_addressing == "p2p31"
    plen = 31 if p2p else block.prefixlen
    gw = ntoa((base + 1).to_bytes(4, "big"))
    for link in links:
        k = link.b_port_number - 1
        addr = host_address(p2p, base, k)
        if p2p:
            gw = ntoa((addr - 1).to_bytes(4, "big"))
        yield HostPort(
            link.a_device,
            link.a_port,
            link.rail,
            link.plane,
            link.b_device,
            link.b_port,
            ntoa(addr.to_bytes(4, "big")),
            plen,
            gw,
            table + nic_index[link.a_port],
        )
