"""The routed underlay and the lossless extras of `render cumulus`, as NVUE command groups.

:mod:`.cumulus` renders the RoCE QoS; this module adds what a deployable RoCE
switch also needs, serialized from the switch's typed configuration
(:class:`~fabric_stack.intent.switch_config.SwitchConfig`, whose routing is the underlay
plan ``render frr`` writes too; nothing is recomputed here). It is half of the ``render
cumulus`` target (the other is :mod:`.cumulus`), not a render target of its own:

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

from collections.abc import Sequence

from fabric_stack.artifacts import sources
from fabric_stack.intent.switch_config import PortConfig, RoutingConfig, SwitchConfig
from fabric_stack.nos.cumulus import CABLE_LENGTH_M, CUMULUS_DEFAULTS

Group = tuple[list[str], list[str]]
"""(comment lines, commands) of one step of a switch's NVUE file."""

VRF = "nv set vrf default router bgp"
NVUE_MULTIPATH_MAX = CUMULUS_DEFAULTS.ebgp_multipath_max
"""NVUE reference: ``multipaths ebgp`` accepts 1-128 (the spec allows up to 256)."""

__all__ = [
    "AR_ASICS",
    "CABLE_LENGTH_M",
    "NVUE_MULTIPATH_MAX",
    "PORT_CLASSES",
    "SAVE",
    "VRF",
    "Group",
    "link_up_group",
    "underlay_groups",
]

PORT_CLASSES = {"node_leaf": "hosts", "leaf_spine": "leaf-spine", "spine_core": "spine-core"}
"""Link role → PFC profile suffix (one cable-length class each)."""

AR_ASICS = CUMULUS_DEFAULTS.adaptive_routing_asics
"""ASICs with adaptive routing in Cumulus Linux (5.6+: Spectrum-4; Spectrum-2/3 beta before)."""


def underlay_groups(cfg: SwitchConfig, asic: str) -> list[Group]:
    """The NVUE groups that follow the QoS ones, in apply order, for a switch with ``asic``.

    Interfaces first (BGP neighbours name them), then BGP, then the per-port
    lossless and load-balancing settings, which reference ports already up.
    """
    r = cfg.routing
    if r is None:
        return []
    groups = [_interfaces(cfg.name, r), _bgp(r)]
    if cfg.qos.pfc_priorities:
        groups += [_pfc_classes(cfg), _pfc_watchdog(cfg)]
    if asic in AR_ASICS:
        groups.append(_adaptive_routing(r))
    return groups


def _interfaces(name: str, r: RoutingConfig) -> Group:
    cmds = [f"nv set interface lo ip address {r.loopback}/32"]
    cmds += [
        f"nv set interface {i.name} ip address {i.address}/31" for i in r.interfaces if i.address
    ]
    for g in r.gateways:
        if r.p2p31_hosts:
            cmds += [f"nv set interface {h.port} ip address {h.gateway}/31" for h in g.hosts]
            continue
        vid = g.vlan
        cmds.append(f"nv set bridge domain br_default vlan {vid}")
        cmds += [
            f"nv set interface {h.port} bridge domain br_default access {vid}" for h in g.hosts
        ]
        cmds.append(f"nv set interface vlan{vid} ip address {g.gateway}/{g.prefixlen}")
        # The SVI's MTU is set here, by the NOS: frr.conf cannot (FRR has no `mtu`).
        cmds.append(f"nv set interface vlan{vid} link mtu {r.mtu}")
    return (
        [
            f"Underlay interfaces: loopback {r.loopback}/32 (= router-id); fabric links "
            f"{r.fabric_links}; hosts {r.host_addressing}"
            + (
                " (the rail gateway on a VLAN local to this leaf: it never leaves the leaf)."
                if r.host_addressing == "leaf-subnet" and r.gateways
                else "."
            ),
            "Same addresses as frr/" + name + ".conf (both read the underlay plan).",
            f"Source: {sources.CUMULUS_BGP} (interface lo ip address)",
            f"Source: {sources.CUMULUS_BRIDGE} (br_default vlan, access port, vlan<vid> SVI)",
            f"Source: {sources.NVUE_INTERFACE} (link mtu: the SVI carries the hosts' MTU)",
        ],
        cmds,
    )


def _bgp(r: RoutingConfig) -> Group:
    paths = min(r.maximum_paths, NVUE_MULTIPATH_MAX)
    cmds = [
        f"nv set router bgp autonomous-system {r.asn}",
        f"nv set router bgp router-id {r.router_id}",
    ]
    for i in r.interfaces:
        nb = i.neighbour
        kind = "unnumbered" if i.peer_address is None else "numbered"
        cmds.append(f"{VRF} neighbor {nb} remote-as external")
        cmds.append(f"{VRF} neighbor {nb} type {kind}")
        if r.bfd:
            cmds.append(f"{VRF} neighbor {nb} bfd enable on")
    cmds.append(f"{VRF} path-selection multipath aspath-ignore on")
    cmds.append(f"{VRF} address-family ipv4-unicast multipaths ebgp {paths}")
    cmds.append(f"{VRF} address-family ipv4-unicast network {r.loopback}/32")
    blocks = r.gateways
    if r.p2p31_hosts and blocks:
        cmds.append(f"{VRF} address-family ipv4-unicast redistribute connected enable on")
        cmds += [
            f"{VRF} address-family ipv4-unicast aggregate-route {b.subnet} summary-only on"
            for b in blocks
        ]
    else:
        cmds += [f"{VRF} address-family ipv4-unicast network {b.subnet}" for b in blocks]
    notes = [
        f"eBGP underlay: AS {r.asn} ({r.role}; RFC 7938 plan), one external neighbour per "
        "fabric port, ECMP across spine ASNs (as-path multipath relax), "
        f"{paths} eBGP paths"
        + (f" (the spec's {r.maximum_paths} exceeds NVUE's 128)" if paths < r.maximum_paths else "")
        + ".",
        f"Source: {sources.CUMULUS_BGP} (neighbor swp51 remote-as external, network)",
        f"Source: {sources.NVUE_BGP} (neighbor type, multipath aspath-ignore,",
        "  multipaths ebgp 1-128, redistribute connected enable, aggregate-route)",
    ]
    if r.p2p31_hosts and blocks:
        notes.append("aggregate-route ... summary-only on: UNVERIFIED (the NVUE reference lists")
        notes.append("  aggregate-route; the summary-only leaf was seen only in NVIDIA examples).")
    if r.bfd:
        notes.append("neighbor ... bfd enable on: UNVERIFIED (the reference documents bfd enable")
        notes.append("  on peer groups; the per-neighbour form is assumed to match).")
    return notes, cmds


def _pfc_classes(cfg: SwitchConfig) -> Group:
    """A PFC profile per port class (hosts, leaf-spine, spine-core) with its cable length."""
    prio = ",".join(map(str, cfg.qos.pfc_priorities))
    by_class: dict[str, tuple[int, list[str]]] = {}
    for p in cfg.ports:
        if p.role not in PORT_CLASSES:
            continue
        name = f"pfc-{PORT_CLASSES[p.role]}"
        length = CUMULUS_DEFAULTS.cable_length(p.medium)
        by_class.setdefault(name, (length, []))[1].append(p.name)
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


def _pfc_watchdog(cfg: SwitchConfig) -> Group:
    ports = [p.name for p in cfg.ports]
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


def _adaptive_routing(r: RoutingConfig) -> Group:
    ports = [i.name for i in r.interfaces]
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


def link_up_group(ports: Sequence[PortConfig]) -> Group:
    """``link state up`` on every used breakout child (a new child port is admin down)."""
    return (
        [
            "Bring every used breakout child up administratively (a port NVUE has not yet",
            "configured stays down).",
            f"Source: {sources.CUMULUS_INTERFACES} (Bring an Interface Up or Down)",
        ],
        [f"nv set interface {p.name} link state up" for p in ports],
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
