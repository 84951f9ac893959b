"""`render frr`: ``frr/<switch>.conf`` for every leaf, spine and core of a RoCE/Ethernet plan.

Each file is a complete FRR integrated config (zebra + bgpd) for the routed
underlay of :func:`fabric_stack.underlay.plan.plan_underlay`: the loopback (= router-id),
eBGP with the plan's ASN, one neighbour per fabric port (``interface`` peers for
BGP unnumbered, or the peer's /31 address), ``bestpath as-path multipath-relax``
so paths through different spine ASNs are ECMP, ``maximum-paths``, and the
rail subnets the leaf originates. The twin runs these files unchanged except
for file paths (see :mod:`fabric_stack.twin.ops_frr`).

Leaf-subnet addressing puts the leaf's gateway on ``vlan<rail VLAN>``: a VLAN
local to that leaf bridging its host ports of that rail (the NOS creates the
bridge: NVUE ``nv set bridge``/SONiC ``VLAN_MEMBER``; FRR only addresses it).
The VLAN never leaves the leaf: routing starts at the gateway. Its MTU is the NOS's
too: FRR has no interface ``mtu`` command (FRR 8.4.4's ``vtysh --dryrun`` answers
``% Unknown command:  mtu 9000``; the zebra guide's "Interface Commands",
https://docs.frrouting.org/en/stable-8.4/zebra.html, lists none), so no file here sets
it but the NOS's own: NVUE ``link mtu`` on ``vlan<VID>`` (:mod:`.cumulus_underlay`),
SONiC's ``VLAN|Vlan<VID>`` ``mtu`` (:mod:`.sonic`), ``ip link set mtu`` in the twin.

Syntax: FRR 8.4 user guide, BGP (https://docs.frrouting.org/en/stable-8.4/bgp.html):
``neighbor PEER interface``, ``bgp bestpath as-path multipath-relax``,
``maximum-paths``, ``neighbor PEER bfd``; ``frr defaults datacenter`` (fast
timers, no eBGP policy requirement) from the same guide's "Basic commands".
"""

from __future__ import annotations

from fabric_stack.artifacts._base import GENERATED_BY, Artifact, RenderContext, TargetMismatchError
from fabric_stack.underlay.plan import RailBlock, SwitchUnderlay, UnderlayPlan

TARGET = "frr"
PEER_GROUP = "FABRIC"
"""The peer group every fabric neighbour belongs to."""


def require_routed(ctx: RenderContext) -> None:
    """A RoCE/Ethernet plan, else :class:`TargetMismatchError`."""
    if ctx.fabric == "infiniband":
        raise TargetMismatchError(
            TARGET, "an InfiniBand fabric has no IP underlay", "plan with --fabric roce"
        )


def switches(ctx: RenderContext) -> list[SwitchUnderlay]:
    """Leaves, spines and cores in plan order."""
    return list(ctx.underlay.switches.values())


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes, without rendering them."""
    require_routed(ctx)
    return [f"frr/{s.name}.conf" for s in switches(ctx)]


def render(ctx: RenderContext) -> list[Artifact]:
    """One ``frr/<switch>.conf`` per fabric switch."""
    require_routed(ctx)
    u = ctx.underlay
    return [Artifact(TARGET, f"frr/{s.name}.conf", render_switch(ctx, u, s)) for s in switches(ctx)]


def rail_interface(ctx: RenderContext, block: RailBlock) -> str:
    """The leaf-local VLAN interface that carries a rail's gateway."""
    return f"vlan{ctx.spec.rail_vlan(block.rail)}"


def _interfaces(ctx: RenderContext, u: UnderlayPlan, s: SwitchUnderlay) -> list[str]:
    out = ["interface lo", f" ip address {s.loopback}/32", "exit", "!"]
    for port, link in u.links_of(s.name):
        addr = link.a_address if link.a_device == s.name else link.b_address
        out.append(f"interface {port}")
        out.append(f" ip address {addr}/31" if addr else " ! unnumbered: IPv6 link-local only")
        out += ["exit", "!"]
    p31 = u.settings.host_addressing == "p2p31"
    for block in u.blocks_of(s.name):
        plen = block.subnet.split("/")[1]
        if p31:
            for h in (h for h in u.hosts_of(s.name) if h.rail == block.rail):
                out += [f"interface {h.leaf_port}", f" ip address {h.gateway}/31", "exit", "!"]
        else:
            out.append(f"interface {rail_interface(ctx, block)}")
            # No `mtu` line: FRR has no interface mtu command (vtysh rejects it); the
            # NOS sets the SVI's MTU (NVUE `link mtu`, SONiC VLAN `mtu`, the twin's `ip`).
            out += [
                f" description rail {block.rail} gateway",
                f" ip address {block.gateway}/{plen}",
                "exit",
                "!",
            ]
    return out


def _neighbours(u: UnderlayPlan, s: SwitchUnderlay) -> list[str]:
    out = [f" neighbor {PEER_GROUP} peer-group", f" neighbor {PEER_GROUP} remote-as external"]
    if u.settings.bfd:
        out.append(f" neighbor {PEER_GROUP} bfd")
    for port, link in u.links_of(s.name):
        peer_addr = link.b_address if link.a_device == s.name else link.a_address
        peer = link.b_device if link.a_device == s.name else link.a_device
        if peer_addr is None:
            out.append(f" neighbor {port} interface peer-group {PEER_GROUP}")
        else:
            out.append(f" neighbor {peer_addr} peer-group {PEER_GROUP}")
        out.append(f" neighbor {port if peer_addr is None else peer_addr} description {peer}")
    return out


def render_switch(ctx: RenderContext, u: UnderlayPlan, s: SwitchUnderlay) -> str:
    """The FRR config of one switch."""
    st = u.settings
    lines = [
        f"! FRR configuration: {s.name} ({s.role}, plane {s.plane}, AS {s.asn})",
        f"! {GENERATED_BY.format(target=TARGET)}",
        f"! Fabric links: {st.fabric_links}; host addressing: {st.host_addressing}.",
        "frr version 8.4",
        "frr defaults datacenter",
        f"hostname {s.name}",
        "service integrated-vtysh-config",
        "!",
    ]
    lines += _interfaces(ctx, u, s)
    lines += [
        f"router bgp {s.asn}",
        f" bgp router-id {s.router_id}",
        " bgp bestpath as-path multipath-relax",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
    ]
    lines += _neighbours(u, s)
    lines += [" !", " address-family ipv4 unicast", f"  network {s.loopback}/32"]
    blocks = u.blocks_of(s.name)
    if st.host_addressing == "p2p31" and blocks:
        lines.append("  redistribute connected")
        lines += [f"  aggregate-address {b.subnet} summary-only" for b in blocks]
    else:
        lines += [f"  network {b.subnet}" for b in blocks]
    lines += [f"  maximum-paths {st.maximum_paths}", " exit-address-family", "exit", "!"]
    return "\n".join(lines) + "\n"
