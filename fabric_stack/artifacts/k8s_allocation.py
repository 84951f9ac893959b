"""Simulated whereabouts allocation over every pod network: a collision is a render error.

For each network of :func:`fabric_stack.artifacts.k8s_ipam.pod_networks`, allocate as
whereabouts does for the largest pod count the plan allows on it (servers attaching the
network × VFs per rail NIC: each VF can back one pod's interface on that rail), then prove
that no address equals the network's gateway, a host's address, another pod's, or lies
outside the range.

Whereabouts' order (k8snetworkplumbingwg/whereabouts ``pkg/allocate/allocate.go``,
``IterateForAssignment``, at 3a262bd0cd87, 2026-06-02): from the range's first usable
address (network + 1, or ``range_start``) up to its last (broadcast − 1, or
``range_end``; ``pkg/iphelpers/iphelpers.go`` ``GetIPRange``), the lowest address that is
neither reserved nor inside an ``exclude`` entry (a CIDR, or a bare IP taken as /32), is
given to the next pod. When none is left it refuses the pod (``AssignmentError``): that is
exhaustion, not a collision, and is reported as such (``refused``).
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from typing import Any

from fabric_stack.artifacts.k8s_ipam import PodNetwork
from fabric_stack.errors import FabricStackError


class PodAddressCollisionError(FabricStackError):
    """A pod network would hand a pod an address that is a gateway's, a host's or another
    pod's (or outside its range): names the network, the address and whose it is."""

    def __init__(self, network: str, address: str, owner: str) -> None:
        self.network = network
        self.address = address
        self.owner = owner
        super().__init__(
            f"kubernetes: pod network {network}: whereabouts would give a pod {address}, "
            f"which is {owner} (exclude it from the range)"
        )


@dataclass(frozen=True, slots=True)
class Allocation:
    """What the simulated allocator handed out on one network, and how many pods it refused."""

    network: str
    addresses: tuple[str, ...]
    refused: int


def _excluded(entries: list[str]) -> list[IPv4Network]:
    # A bare IP is a /32 (parseExcludedRange); strict=False as whereabouts' net.ParseCIDR
    # accepts host bits set.
    return [IPv4Network(e if "/" in e else f"{e}/32", strict=False) for e in entries]


def _bounds(ipam: dict[str, Any]) -> tuple[int, int]:
    net = IPv4Network(ipam["range"], strict=False)
    first = int(net.network_address) + 1
    last = int(net.broadcast_address) - 1
    # range_start / range_end narrow the range only when inside it (GetIPRange).
    if (start := ipam.get("range_start")) and first <= int(IPv4Address(start)) <= last:
        first = int(IPv4Address(start))
    if (end := ipam.get("range_end")) and first <= int(IPv4Address(end)) <= last:
        last = int(IPv4Address(end))
    return first, last


def allocate(name: str, ipam: dict[str, Any], pods: int) -> Allocation:
    """Allocate ``pods`` addresses on ``ipam`` in whereabouts' order (lowest free first)."""
    first, last = _bounds(ipam)
    excluded = _excluded(list(ipam.get("exclude", [])))
    out: list[str] = []
    ip = first
    while len(out) < pods and ip <= last:
        hit = next((x for x in excluded if IPv4Address(ip) in x), None)
        if hit is not None:  # jump past the excluded subnet (skipExcludedSubnets)
            ip = int(hit.broadcast_address) + 1
            continue
        out.append(str(IPv4Address(ip)))
        ip += 1
    return Allocation(name, tuple(out), pods - len(out))


def prove_no_collision(
    alloc: Allocation, ipam: dict[str, Any], hosts: tuple[str, ...], gateway: str | None
) -> None:
    """Raise :class:`PodAddressCollisionError` if any allocated address is the gateway, a
    host's, another pod's or outside the range; return quietly otherwise."""
    net = IPv4Network(ipam["range"], strict=False)
    owners = {h: f"a host's own rail address ({h})" for h in hosts}
    if gateway:
        owners[gateway] = f"the leaf gateway ({gateway})"
    seen: set[str] = set()
    for a in alloc.addresses:
        if a in owners:
            raise PodAddressCollisionError(alloc.network, a, owners[a])
        if a in seen:
            raise PodAddressCollisionError(alloc.network, a, "another pod's")
        if IPv4Address(a) not in net or a in (str(net.network_address), str(net.broadcast_address)):
            raise PodAddressCollisionError(alloc.network, a, f"not a usable address of {net}")
        seen.add(a)


def check_networks(networks: list[PodNetwork], pods_per_server: int) -> list[Allocation]:
    """Allocate ``servers × pods_per_server`` pods on every network and prove each clean.

    Raises :class:`PodAddressCollisionError` on the first collision (a render error).
    """
    out = []
    for net in networks:
        alloc = allocate(net.name, net.ipam, net.servers * pods_per_server)
        prove_no_collision(alloc, net.ipam, net.hosts, net.gateway)
        out.append(alloc)
    return out
