"""`render cumulus`: the RoCE intent as NVIDIA Cumulus Linux NVUE commands, one file per switch.

``cumulus/<switch>.nvue.sh`` is a reviewable list of ``nv set`` commands ending in
``nv config apply -y`` and ``nv config save``, serialized from the switch's typed
:class:`~fabric_stack.intent.switch_config.SwitchConfig` (the values are the same as
``roce-qos/``'s, the addresses and ASNs the same as ``frr/``'s: nothing is recomputed):

* QoS: the RoCE lossless profile, then the plan's values made explicit (so a reader
  sees the thresholds without knowing the profile);
* ports: every compute port by the label the topology gave it (``swp1s0`` …) with its
  breakout, ``link state up`` (every used breakout child), description and MTU;
* the routed underlay (:func:`_underlay_groups`): the loopback, fabric-link /31s
  (``p2p31`` only), the rail gateway on the leaf-local ``vlan<VID>`` bridge
  (leaf-subnet) or a /31 per host port (``p2p31``); eBGP with one ``remote-as
  external`` neighbour per fabric port (interface neighbours for BGP unnumbered),
  AS-path multipath relax, ECMP width, the loopback and rail blocks originated;
* lossless extras: a PFC profile per port class carrying the class's cable length
  (the PFC headroom), PFC watchdog on every PFC port, adaptive routing on the fabric
  ports (Spectrum-2 and later).

Platform facts (the QoS profile, cable lengths, AR ASICs, NVUE's ECMP limit) and the
comment syntax are Cumulus's (:mod:`fabric_stack.nos.cumulus`). Command syntax is from
the NVUE reference and the Cumulus Linux 5.12 user guide (see :mod:`.sources`); each
group carries its source URL as a comment, and syntax that could not be confirmed
against NVIDIA's documentation is flagged ``UNVERIFIED`` in the file.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    TargetMismatchError,
    comment_block,
    require_roce,
    switch_title,
)
from fabric_stack.intent.model import SwitchIntent
from fabric_stack.intent.switch_config import PortConfig, QosConfig, RoutingConfig, SwitchConfig
from fabric_stack.naming.devices import cage_of
from fabric_stack.nos import for_family
from fabric_stack.nos.cumulus import CUMULUS, CUMULUS_DEFAULTS

TARGET = "cumulus"

Group = tuple[list[str], list[str]]
"""(comment lines, commands) of one step of a switch's NVUE file."""

_DESC_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")

PROFILE = CUMULUS_DEFAULTS.qos_profile
"""The NVUE QoS profile that applies to every port (the RoCE profile configures it)."""

VRF = "nv set vrf default router bgp"
"""The NVUE path of the default VRF's BGP settings."""

PORT_CLASSES = {"node_leaf": "hosts", "leaf_spine": "leaf-spine", "spine_core": "spine-core"}
"""Link role → PFC profile suffix (one cable-length class each)."""


def not_cumulus(ctx: RenderContext) -> str | None:
    """Why the plan's compute switches cannot take NVUE commands (None: they run Cumulus
    Linux; what the target's applicability and :func:`require_cumulus` check)."""
    model = ctx.plan.switch_model
    if for_family(model.os_family) is CUMULUS:
        return None
    return f"the compute switches ({model.name}) do not run Cumulus Linux"


def require_cumulus(ctx: RenderContext) -> None:
    """RoCE plan on switches that run Cumulus Linux, else :class:`TargetMismatchError`."""
    require_roce(ctx, TARGET)
    problem = not_cumulus(ctx)
    if problem is not None:
        raise TargetMismatchError(
            TARGET,
            problem,
            "plan with a Cumulus switch such as `--switch sn5600`, or use `render roce-qos` for "
            "vendor-neutral intent",
        )


def _comments(lines: Sequence[str]) -> str:
    """``lines`` as a reflowed comment block in Cumulus's comment syntax
    (:attr:`fabric_stack.nos.cumulus.Cumulus.comment`)."""
    return comment_block(lines, CUMULUS.comment_prefix)


def _description(peer: str) -> str:
    # NVUE descriptions are a single token here: no spaces, colons or quotes.
    return "to_" + _DESC_SAFE.sub("_", peer)


def render_switch(ctx: RenderContext, sw: SwitchIntent) -> str:
    """The NVUE command file of one switch.

    A header, then one command group per step: :func:`_roce_mode`,
    :func:`_classification`, :func:`_pfc`, :func:`_ecn`, :func:`_breakout` and
    ``link state up`` (split cages only), :func:`_compute_ports`, the underlay and
    lossless extras (:func:`_underlay_groups`), and ``nv config apply`` + ``save``.
    """
    cfg = ctx.switch_config(sw)
    q, ports = cfg.qos, cfg.ports
    lines: list[str] = ["#!/usr/bin/env bash\n"]
    lines.append(
        _comments(
            [
                f"NVUE configuration: {switch_title(sw, ctx.plan.planes)}",
                GENERATED_BY.format(target=TARGET),
                f"Same values as roce-qos/{sw.name}.yaml. Review with `nv config diff` before the",
                "final `nv config apply`. RoCE configuration is ASIC-specific: this file targets",
                f"{sw.model_name} (Cumulus Linux 5.x, NVUE).",
            ]
        )
    )
    lines.append("set -euo pipefail\n")
    groups = [
        _roce_mode(q),
        _classification(q),
        _pfc(q),
        _ecn(q),
        *_breakout_groups(cfg),
        _compute_ports(ports, q),
        *_underlay_groups(cfg, ctx.plan.tier_model(sw.role).asic),
        _SAVE,
    ]
    for title, cmds in groups:
        lines.append("\n" + _comments(title) + "".join(c + "\n" for c in cmds))
    return "".join(lines)


def _roce_mode(q: QosConfig) -> Group:
    """The RoCE QoS profile: lossless when the intent has PFC, else lossy."""
    pfc = q.pfc_priorities
    mode = "lossless" if pfc else "lossy"
    return (
        [
            f"RoCE {mode} profile: trust, SP3->TC3 / SP6->TC6, ETS (TC6 strict,",
            "TC3/TC0 DWRR 50/50),",
            "ECN on TC3, "
            + (
                "PFC on SP3 and a lossless buffer pool."
                if pfc
                else "no PFC (this switch's intent has PFC off: lossy RoCE)."
            ),
            f"Source: {sources.CUMULUS_ROCE}",
        ],
        [f"nv set qos roce mode {mode}"],
    )


def _classification(q: QosConfig) -> Group:
    """Trust (DSCP or 802.1p) and the DSCP → switch priority → traffic class maps."""
    p = PROFILE
    eqm = f"nv set qos egress-queue-mapping {p}"
    return (
        [
            "Classification: "
            + (
                "trust DSCP (l3)"
                if q.dscp_trust
                else "trust 802.1p (l2): DSCP trust is off in the intent"
            )
            + f"; RoCE DSCP {q.roce_dscp} -> SP{q.roce_priority}, "
            f"CNP DSCP {q.cnp_dscp} -> "
            f"SP{q.cnp_priority}; SP -> TC (egress queue) one to one.",
            f"Source: {sources.NVUE_QOS} (mapping, egress-queue-mapping)",
            f"Source: {sources.CUMULUS_QOS} (Trust DSCP)",
        ],
        [
            f"nv set qos mapping {p} trust {'l3' if q.dscp_trust else 'l2'}",
            f"nv set qos mapping {p} dscp {q.roce_dscp} switch-priority {q.roce_priority}",
            f"nv set qos mapping {p} dscp {q.cnp_dscp} switch-priority {q.cnp_priority}",
            f"{eqm} switch-priority {q.roce_priority} traffic-class {q.roce_tc}",
            f"{eqm} switch-priority {q.cnp_priority} traffic-class {q.cnp_tc}",
        ],
    )


def _pfc(q: QosConfig) -> Group:
    """PFC on the intent's priority only (or a note that it is off)."""
    p = PROFILE
    pfc = q.pfc_priorities
    if pfc:
        return (
            [
                f"PFC on priority {','.join(map(str, pfc))} only, sent and honoured.",
                f"Source: {sources.NVUE_QOS} (pfc)",
                f"Source: {sources.CUMULUS_ROCE} (Change RoCE Configuration)",
            ],
            [
                f"nv set qos pfc {p} switch-priority {','.join(map(str, pfc))}",
                f"nv set qos pfc {p} tx enable",
                f"nv set qos pfc {p} rx enable",
            ],
        )
    else:
        return (
            ["PFC: off in this switch's intent (the roce-lossless-consistency policy flags it)."],
            [],
        )


def _ecn(q: QosConfig) -> Group:
    """ECN marking thresholds on the RoCE traffic class."""
    cc = f"nv set qos congestion-control {PROFILE} traffic-class {q.roce_tc}"
    return (
        [
            f"ECN on the RoCE traffic class: mark between {q.ecn_min_bytes:,} and "
            f"{q.ecn_max_bytes:,} bytes",
            f"of queue with probability {q.ecn_probability} % (NVIDIA default 150 KB / 1,500 KB).",
            f"Source: {sources.NVUE_QOS} (congestion-control)",
            f"Source: {sources.CUMULUS_ROCE} (Default RoCE Configuration)",
        ],
        [
            f"{cc} ecn {'enable' if q.ecn else 'disable'}",
            f"{cc} min-threshold {q.ecn_min_bytes}",
            f"{cc} max-threshold {q.ecn_max_bytes}",
            f"{cc} probability {q.ecn_probability}",
        ],
    )


def _breakout_groups(cfg: SwitchConfig) -> list[Group]:
    """Breakout and ``link state up`` of the split cages, per port speed: a mixed leaf's
    uplink cages split as the uplink speed asks (a whole 800G cage: no breakout)."""
    by_speed: dict[int, tuple[int, list[PortConfig]]] = {}
    for p in cfg.ports:
        _, ppc, speed = cfg.port_layout(p)
        by_speed.setdefault(speed, (ppc, []))[1].append(p)
    split = [(s, ppc, ps) for s, (ppc, ps) in by_speed.items() if ppc > 1]
    groups = [_breakout(s, ps, ppc, cfg) for s, ppc, ps in split]
    return [*groups, _link_up([p for _, _, ps in split for p in ps])] if split else []


def _breakout(speed: int, ports: Sequence[PortConfig], ppc: int, cfg: SwitchConfig) -> Group:
    """Split cages: each used cage as ``ppc`` logical ports at ``speed``."""
    cages = sorted({cage_of(cfg.port_layout(p)[0], ppc)[0] for p in ports})
    return (
        [
            f"Breakout: each used cage runs {ppc} x {speed}G (ports swpNs0..swpNs{ppc - 1}).",
            f"Source: {sources.CUMULUS_PORTS} (Breakout Ports)",
            f"Source: {sources.NVUE_INTERFACE} (link breakout)",
        ],
        [f"nv set interface swp{c} link breakout {ppc}x" for c in cages],
    )


def _compute_ports(ports: Sequence[PortConfig], q: QosConfig) -> Group:
    """Per compute port: its description (the far end) and the jumbo MTU."""
    port_cmds: list[str] = []
    for p in ports:
        port_cmds.append(f"nv set interface {p.name} description {_description(p.peer)}")
        port_cmds.append(f"nv set interface {p.name} link mtu {q.mtu}")
    return (
        [
            f"Compute ports ({len(ports)}): description = far end from the cabling plan;",
            f"jumbo MTU {q.mtu} on every hop.",
            f"Source: {sources.NVUE_INTERFACE} (description, link mtu)",
        ],
        port_cmds,
    )


def _underlay_groups(cfg: SwitchConfig, asic: str) -> list[Group]:
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
    if asic in CUMULUS_DEFAULTS.adaptive_routing_asics:
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
        vid, svi = g.vlan, g.interface
        cmds.append(f"nv set bridge domain br_default vlan {vid}")
        cmds += [
            f"nv set interface {h.port} bridge domain br_default access {vid}" for h in g.hosts
        ]
        cmds.append(f"nv set interface {svi} ip address {g.gateway}/{g.prefixlen}")
        # The SVI's MTU is set here, by the NOS: frr.conf cannot (FRR has no `mtu`).
        cmds.append(f"nv set interface {svi} link mtu {r.mtu}")
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
    paths = min(r.maximum_paths, CUMULUS_DEFAULTS.ebgp_multipath_max)
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


def _link_up(ports: Sequence[PortConfig]) -> Group:
    """``link state up`` on every used breakout child (a new child port is admin down)."""
    return (
        [
            "Bring every used breakout child up administratively (a port NVUE has not yet",
            "configured stays down).",
            f"Source: {sources.CUMULUS_INTERFACES} (Bring an Interface Up or Down)",
        ],
        [f"nv set interface {p.name} link state up" for p in ports],
    )


_SAVE: Group = (
    [
        "Apply atomically (NVUE reloads switchd for QoS changes itself), then save: `apply`",
        "alone does not survive a reboot.",
        f"Source: {sources.NVUE_CLI} (nv config apply, nv config save)",
    ],
    ["nv config apply -y", "nv config save"],
)
"""The last group of every NVUE file."""


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes, without rendering them."""
    return [f"cumulus/{sw.name}.nvue.sh" for sw in ctx.compute_switches()]


def render(ctx: RenderContext) -> list[Artifact]:
    """One ``cumulus/<switch>.nvue.sh`` per compute switch."""
    require_cumulus(ctx)
    return [
        Artifact(TARGET, path, render_switch(ctx, sw))
        for path, sw in zip(files(ctx), ctx.compute_switches(), strict=True)
    ]
