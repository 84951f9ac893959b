"""The routed underlay and the lossless extras of `render cumulus`, as NVUE command groups.

:mod:`.cumulus` renders the RoCE QoS; this module adds what a deployable RoCE
switch also needs, read from the underlay plan (:func:`fabric_stack.underlay.plan.plan_underlay`,
the same plan ``render frr`` writes; nothing is recomputed here):

* interfaces: the loopback, fabric-link /31s (``p2p31`` only), the rail gateway on
  the leaf-local ``vlan<VID>`` bridge (leaf-subnet) or a /31 per host port (``p2p31``);
* eBGP: ASN, router-id, one ``remote-as external`` neighbour per fabric port
  (interface neighbours for BGP unnumbered), AS-path multipath relax, ECMP width,
  the loopback and rail blocks originated;
* PFC watchdog on every PFC port, a PFC profile per port class carrying the
  class's cable length (the PFC headroom), adaptive routing on the fabric ports
  (Spectrum-2 and later), and ``link state up`` on every used breakout child.

Each group cites the page its syntax comes from. Syntax that could not be
confirmed against NVIDIA's documentation is flagged ``UNVERIFIED`` in the file.
"""

from __future__ import annotations

from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.artifacts.frr import rail_interface
from fabric_stack.intent.model import SwitchIntent
from fabric_stack.underlay.plan import SwitchUnderlay, UnderlayPlan

Group = tuple[list[str], list[str]]
"""(comment lines, commands) of one step of a switch's NVUE file."""

VRF = "nv set vrf default router bgp"
NVUE_MULTIPATH_MAX = 128
"""NVUE reference: ``multipaths ebgp`` accepts 1-128 (the spec allows up to 256)."""

CABLE_LENGTH_M = {"copper": 5, "mmf": 50, "smf": 500}
"""PFC headroom cable length per medium, metres: the longest run of the optic class the
plan picks (DAC/copper a few metres, SR multimode 50 m, DR single-mode 500 m). Longer
than the real run only costs buffer; shorter drops lossless traffic (the QoS page's
warning). Reach figures: NVIDIA LinkX product class reaches, UNVERIFIED here."""

PORT_CLASSES = {"node_leaf": "hosts", "leaf_spine": "leaf-spine", "spine_core": "spine-core"}
"""Link role → PFC profile suffix (one cable-length class each)."""

AR_ASICS = ("Spectrum-2", "Spectrum-3", "Spectrum-4")
"""ASICs with adaptive routing in Cumulus Linux (5.6+: Spectrum-4; Spectrum-2/3 beta before)."""


def underlay_groups(ctx: RenderContext, sw: SwitchIntent, q: dict[str, Any]) -> list[Group]:
    """The NVUE groups that follow the QoS ones, in apply order.

    Interfaces first (BGP neighbours name them), then BGP, then the per-port
    lossless and load-balancing settings, which reference ports already up.
    """
    u = ctx.underlay
    s = u.switches.get(sw.name)
    if s is None:
        return []
    groups = [_interfaces(ctx, u, s), _bgp(u, s)]
    if q["pfc_priorities"]:
        groups += [_pfc_classes(ctx, sw, q), _pfc_watchdog(ctx, sw)]
    if ctx.plan.switch_model.asic in AR_ASICS:
        groups.append(_adaptive_routing(u, s))
    return groups


def _interfaces(ctx: RenderContext, u: UnderlayPlan, s: SwitchUnderlay) -> Group:
    cmds = [f"nv set interface lo ip address {s.loopback}/32"]
    for port, link in u.links_of(s.name):
        addr = link.a_address if link.a_device == s.name else link.b_address
        if addr:
            cmds.append(f"nv set interface {port} ip address {addr}/31")
    for block in u.blocks_of(s.name):
        hosts = [h for h in u.hosts_of(s.name) if h.rail == block.rail]
        if u.settings.host_addressing == "p2p31":
            cmds += [f"nv set interface {h.leaf_port} ip address {h.gateway}/31" for h in hosts]
            continue
        vid = rail_interface(ctx, block).removeprefix("vlan")
        cmds.append(f"nv set bridge domain br_default vlan {vid}")
        cmds += [
            f"nv set interface {h.leaf_port} bridge domain br_default access {vid}" for h in hosts
        ]
        plen = block.subnet.split("/")[1]
        cmds.append(f"nv set interface vlan{vid} ip address {block.gateway}/{plen}")
        # The SVI's MTU is set here, by the NOS: frr.conf cannot (FRR has no `mtu`).
        cmds.append(f"nv set interface vlan{vid} link mtu {u.mtu}")
    return (
        [
            f"Underlay interfaces: loopback {s.loopback}/32 (= router-id); fabric links "
            f"{u.settings.fabric_links}; hosts {u.settings.host_addressing}"
            + (
                " (the rail gateway on a VLAN local to this leaf: it never leaves the leaf)."
                if u.settings.host_addressing == "leaf-subnet" and u.blocks_of(s.name)
                else "."
            ),
            "Same addresses as frr/" + s.name + ".conf (both read the underlay plan).",
            f"Source: {sources.CUMULUS_BGP} (interface lo ip address)",
            f"Source: {sources.CUMULUS_BRIDGE} (br_default vlan, access port, vlan<vid> SVI)",
            f"Source: {sources.NVUE_INTERFACE} (link mtu: the SVI carries the hosts' MTU)",
        ],
        cmds,
    )


def _bgp(u: UnderlayPlan, s: SwitchUnderlay) -> Group:
    st = u.settings
    paths = min(st.maximum_paths, NVUE_MULTIPATH_MAX)
    cmds = [
        f"nv set router bgp autonomous-system {s.asn}",
        f"nv set router bgp router-id {s.router_id}",
    ]
    for port, link in u.links_of(s.name):
        peer = link.b_address if link.a_device == s.name else link.a_address
        nb = port if peer is None else peer
        cmds.append(f"{VRF} neighbor {nb} remote-as external")
        cmds.append(f"{VRF} neighbor {nb} type {'unnumbered' if peer is None else 'numbered'}")
        if st.bfd:
            cmds.append(f"{VRF} neighbor {nb} bfd enable on")
    cmds.append(f"{VRF} path-selection multipath aspath-ignore on")
    cmds.append(f"{VRF} address-family ipv4-unicast multipaths ebgp {paths}")
    cmds.append(f"{VRF} address-family ipv4-unicast network {s.loopback}/32")
    blocks = u.blocks_of(s.name)
    if st.host_addressing == "p2p31" and blocks:
        cmds.append(f"{VRF} address-family ipv4-unicast redistribute connected enable on")
        cmds += [
            f"{VRF} address-family ipv4-unicast aggregate-route {b.subnet} summary-only on"
            for b in blocks
        ]
    else:
        cmds += [f"{VRF} address-family ipv4-unicast network {b.subnet}" for b in blocks]
    notes = [
        f"eBGP underlay: AS {s.asn} ({s.role}; RFC 7938 plan), one external neighbour per "
        "fabric port, ECMP across spine ASNs (as-path multipath relax), "
        f"{paths} eBGP paths"
        + (
            f" (the spec's {st.maximum_paths} exceeds NVUE's 128)"
            if paths < st.maximum_paths
            else ""
        )
        + ".",
        f"Source: {sources.CUMULUS_BGP} (neighbor swp51 remote-as external, network)",
        f"Source: {sources.NVUE_BGP} (neighbor type, multipath aspath-ignore,",
        "  multipaths ebgp 1-128, redistribute connected enable, aggregate-route)",
    ]
    if st.host_addressing == "p2p31" and blocks:
        notes.append("aggregate-route ... summary-only on: UNVERIFIED (the NVUE reference lists")
        notes.append("  aggregate-route; the summary-only leaf was seen only in NVIDIA examples).")
    if st.bfd:
        notes.append("neighbor ... bfd enable on: UNVERIFIED (the reference documents bfd enable")
        notes.append("  on peer groups; the per-neighbour form is assumed to match).")
    return notes, cmds


def _pfc_classes(ctx: RenderContext, sw: SwitchIntent, q: dict[str, Any]) -> Group:
    """A PFC profile per port class (hosts, leaf-spine, spine-core) with its cable length."""
    prio = ",".join(map(str, q["pfc_priorities"]))
    by_class: dict[str, tuple[int, list[str]]] = {}
    for link, port, _ in ctx.compute_links.get(sw.name, []):
        if link.role not in PORT_CLASSES:
            continue
        name = f"pfc-{PORT_CLASSES[link.role]}"
        length = CABLE_LENGTH_M.get(link.medium, 50)
        by_class.setdefault(name, (length, []))[1].append(port)
    cmds: list[str] = []
    for name, (length, ports) in sorted(by_class.items()):
        cmds += [
            f"nv set qos pfc {name} switch-priority {prio}",
            f"nv set qos pfc {name} tx enable",
            f"nv set qos pfc {name} rx enable",
            f"nv set qos pfc {name} cable-length {length}",
        ]
        cmds += [f"nv set interface {p} qos pfc profile {name}" for p in ports]
    lengths = ", ".join(f"{n} {ln} m" for n, (ln, _) in sorted(by_class.items()))
    return (
        [
            "PFC headroom per port class: the buffer reserved for in-flight data after a pause",
            f"grows with the cable, so each class gets its own profile ({lengths}; the optic",
            "class's longest run: conservative, edit down to your measured runs). Cable",
            "lengths by optic class UNVERIFIED (NVIDIA LinkX reach classes, not checked here).",
            f"Source: {sources.CUMULUS_QOS} (Port Groups: PFC; cable-length, default 10 m)",
        ],
        cmds,
    )


def _pfc_watchdog(ctx: RenderContext, sw: SwitchIntent) -> Group:
    ports = [label for _, label, _ in ctx.compute_ports.get(sw.name, [])]
    return (
        [
            "PFC watchdog on every PFC port: a stuck lossless queue (pause storm from a",
            "broken NIC or a PFC deadlock) is drained instead of freezing the fabric.",
            "Default polling 100 ms x 3 intervals.",
            f"Source: {sources.CUMULUS_QOS} (PFC Watchdog)",
            "The page version the syntax was read from could not be pinned to 5.12: UNVERIFIED",
            "for 5.12 (present in the current user guide).",
        ],
        [f"nv set interface {p} qos pfc-watchdog" for p in ports],
    )


def _adaptive_routing(u: UnderlayPlan, s: SwitchUnderlay) -> Group:
    ports = [port for port, _ in u.links_of(s.name)]
    return (
        [
            "Adaptive routing (Spectrum-X): per-packet choice among the ECMP uplinks by queue",
            "occupancy, on every fabric port; needs the RoCE lossless mode. Cumulus 5.14 and",
            "earlier spell it `enable on` (later: `state enabled`). NVUE restarts switchd.",
            f"Source: {sources.NVUE_AR}",
        ],
        ["nv set router adaptive-routing enable on"]
        + [f"nv set interface {p} router adaptive-routing enable on" for p in ports],
    )


def link_up_group(ports: list[tuple[int, str, str]]) -> Group:
    """``link state up`` on every used breakout child (a new child port is admin down)."""
    return (
        [
            "Bring every used breakout child up administratively (a port NVUE has not yet",
            "configured stays down).",
            f"Source: {sources.CUMULUS_INTERFACES} (Bring an Interface Up or Down)",
        ],
        [f"nv set interface {label} link state up" for _, label, _ in ports],
    )


SAVE: Group = (
    [
        "Apply atomically (NVUE reloads switchd for QoS changes itself), then save: `apply`",
        "alone does not survive a reboot.",
        f"Source: {sources.NVUE_CLI} (nv config apply, nv config save)",
    ],
    ["nv config apply -y", "nv config save"],
)
"""The last group of every NVUE file."""
