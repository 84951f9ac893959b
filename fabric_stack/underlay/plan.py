"""The routed underlay of a RoCE/Ethernet fabric: loopbacks, ASNs, fabric links, rail addressing.

:func:`plan_underlay` is a pure stage after :func:`~fabric_stack.topology.build.build_topology`.
It follows the published pure-L3 AI back-end designs, which route every rail
instead of stretching one VLAN across leaves (a stretched rail VLAN has no path
between SUs once leaves are routed):

* **eBGP everywhere, RFC 7938 ASNs.** Every leaf has its own ASN; the spines of
  one pod (per plane) share one ASN, the cores of a plane share one. Sharing an
  ASN across a tier lets BGP's AS-path loop check stop valley paths
  (leaf→spine→leaf→spine) without policy (RFC 7938 §5.2.1). ASNs come from the
  4-byte private range (RFC 6996) starting at ``underlay.asn_base``: cores first,
  then the spine groups, then the leaves.
* **BGP unnumbered fabric links** by default (RFC 5549 IPv4 over IPv6
  link-local next hops): no /31 to plan or mis-type, and the default NVIDIA
  recommends for Cumulus Linux and that SONiC/FRR support. ``p2p31`` gives every
  fabric link a /31 from ``underlay.p2p`` instead (upper tier even, lower odd).
* **A subnet per rail per leaf, leaf as gateway** by default: the rail subnet
  (``networks.compute.subnet`` split per rail/plane) is cut into one block per
  SU; the leaf takes the first address, server *k* of the leaf the next. One
  connected route per leaf is advertised, which is what NVIDIA Spectrum-X and
  the Juniper/Arista rail-optimised reference designs describe (see docs/underlay.md
  for the cited pages). ``p2p31`` gives every host port a /31
  from the same block (leaf even, host odd) and the leaf advertises the block.

Every pool overflow is a :class:`~fabric_stack.errors.SpecError` naming the field.
Records are slotted frozen dataclasses (a 32,768-GPU plan has ~33k host ports).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from ipaddress import IPv4Address, IPv4Network

from fabric_stack.errors import SpecError
from fabric_stack.spec.underlay import PRIVATE_ASN_LAST, UnderlaySettings
from fabric_stack.topology.build import FabricTopology, Link

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
    switches = assign_switches(topo, st)
    links = address_fabric_links(topo, st)
    blocks, hosts = address_hosts(topo, st)
    mtu = spec.networks.compute.mtu or 9000
    return UnderlayPlan(st, switches, links, blocks, hosts, mtu)


def assign_asns(topo: FabricTopology, base: int) -> dict[str, int]:
    """RFC 7938 ASNs: one per plane for cores, one per (plane, pod) for spines, one per leaf."""
    groups: dict[tuple[str, int, int], int] = {}
    out: dict[str, int] = {}
    nxt = base
    for role in ("core", "spine"):
        for d in topo.switches(role):
            key = (role, d.plane, d.pod if role == "spine" else 0)
            if key not in groups:
                groups[key] = nxt
                nxt += 1
            out[d.name] = groups[key]
    for d in topo.switches("leaf"):
        out[d.name] = nxt
        nxt += 1
    if nxt - 1 > PRIVATE_ASN_LAST:
        raise SpecError(
            "underlay.asn_base",
            f"{base} leaves too few private ASNs for {nxt - base} "
            f"(the range ends at {PRIVATE_ASN_LAST})",
            f"try {PRIVATE_ASN_LAST - (nxt - base) + 1} or lower",
        )
    return out


def assign_switches(topo: FabricTopology, st: UnderlaySettings) -> dict[str, SwitchUnderlay]:
    """Loopback (= router-id) and ASN of every leaf, spine and core."""
    fabric = [d for d in topo.switches("leaf", "spine", "core")]
    need = len(fabric)
    if need > st.loopbacks.num_addresses - 2:
        raise SpecError(
            "underlay.loopbacks",
            f"{st.loopbacks} holds {st.loopbacks.num_addresses - 2} "
            f"loopbacks but the fabric has {need} switches",
            f"use a larger pool, e.g. /{_prefix_for(need + 2)}",
        )
    asns = assign_asns(topo, st.asn_base)
    first = int(st.loopbacks.network_address) + 1
    out = {}
    for i, d in enumerate(fabric):
        addr = str(IPv4Address(first + i))
        out[d.name] = SwitchUnderlay(d.name, d.role, d.plane, asns[d.name], addr, addr)
    return out


def address_fabric_links(
    topo: FabricTopology, st: UnderlaySettings
) -> tuple[FabricLinkUnderlay, ...]:
    """Every switch-to-switch cable, unnumbered or with a /31 (upper tier even)."""
    links = list(topo.links_of(*FABRIC_ROLES))
    if st.fabric_links == "unnumbered":
        return tuple(_fabric(link, None, None) for link in links)
    if 2 * len(links) > st.p2p.num_addresses:
        raise SpecError(
            "underlay.p2p",
            f"{st.p2p} holds {st.p2p.num_addresses // 2} /31 pairs but the fabric "
            f"has {len(links)} switch links",
            f"use /{_prefix_for(2 * len(links))} or larger",
        )
    base = int(st.p2p.network_address)
    return tuple(
        _fabric(link, str(IPv4Address(base + 2 * i + 1)), str(IPv4Address(base + 2 * i)))
        for i, link in enumerate(links)
    )


def _fabric(link: Link, a: str | None, b: str | None) -> FabricLinkUnderlay:
    return FabricLinkUnderlay(link.id, link.a_device, link.a_port, link.b_device, link.b_port, a, b)


def _prefix_for(addresses: int) -> int:
    return 32 - max(0, math.ceil(math.log2(max(addresses, 1))))


def address_hosts(
    topo: FabricTopology, st: UnderlaySettings
) -> tuple[tuple[RailBlock, ...], tuple[HostPort, ...]]:
    """Cut each rail subnet into one block per leaf; address the leaf and its servers."""
    plan = topo.plan
    compute = next(n for n in topo.networks if n.name == "compute")
    per_leaf: dict[str, list[Link]] = defaultdict(list)
    for link in topo.links_of("node_leaf"):
        per_leaf[link.b_device].append(link)
    widest = max((len(v) for v in per_leaf.values()), default=1)
    # leaf-subnet: network, gateway, hosts and their pods' addresses, broadcast;
    # p2p31: one pair per host port (no room for pods by design).
    if st.host_addressing == "p2p31":
        size = 2 * widest
    else:
        size = widest * (1 + st.pod_addresses_per_port) + 3
    prefix = _prefix_for(size)
    nic_index = {n: i + 1 for i, n in enumerate(sorted({n.name for n in topo.nics}))}
    blocks: list[RailBlock] = []
    hosts: list[HostPort] = []
    cursor: dict[int, int] = defaultdict(int)
    for leaf in topo.switches("leaf"):
        idx = (leaf.plane - 1) * plan.rails + leaf.rail - 1 if leaf.plane else leaf.rail - 1
        rail_net = IPv4Network(compute.subnets[idx])
        block = _next_block(rail_net, prefix, cursor[idx])
        cursor[idx] += 1
        ports = sorted(per_leaf.get(leaf.name, []), key=lambda lk: lk.b_port_number)
        gw = str(block.network_address + (0 if st.host_addressing == "p2p31" else 1))
        blocks.append(RailBlock(leaf.name, leaf.rail, leaf.plane, leaf.su, str(block), gw))
        for k, link in enumerate(ports):
            hosts.append(_host_port(st, block, k, link, nic_index[link.a_port]))
    return tuple(blocks), tuple(hosts)


def _next_block(rail_net: IPv4Network, prefix: int, n: int) -> IPv4Network:
    if prefix < rail_net.prefixlen or (n + 1) << (32 - prefix) > rail_net.num_addresses:
        raise SpecError(
            "networks.compute.subnet",
            f"the rail subnet {rail_net} cannot hold {n + 1} leaf blocks of /{prefix}",
            "use a larger networks.compute.subnet",
        )
    return IPv4Network((int(rail_net.network_address) + (n << (32 - prefix)), prefix))


def _host_port(st: UnderlaySettings, block: IPv4Network, k: int, link: Link, nic: int) -> HostPort:
    base = int(block.network_address)
    if st.host_addressing == "p2p31":
        addr, plen, gw = base + 2 * k + 1, 31, base + 2 * k
    else:
        addr, plen, gw = base + 2 + k, block.prefixlen, base + 1
    return HostPort(
        link.a_device,
        link.a_port,
        link.rail,
        link.plane,
        link.b_device,
        link.b_port,
        str(IPv4Address(addr)),
        plen,
        str(IPv4Address(gw)),
        st.route_table_base + nic,
    )
