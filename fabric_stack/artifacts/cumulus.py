"""`render cumulus`: the RoCE intent as NVIDIA Cumulus Linux NVUE commands, one file per switch.

``cumulus/<switch>.nvue.sh`` is a reviewable list of ``nv set`` commands ending in
``nv config apply -y`` and ``nv config save``: the RoCE lossless profile, then the
plan's values made explicit (so a reader sees the thresholds without knowing the
profile), then every compute port by the label the topology gave it (``swp1s0`` …)
with its breakout, ``link state up``, description and MTU, then the routed
underlay (BGP), PFC headroom per port class, PFC watchdog and adaptive routing
(:mod:`.cumulus_underlay`). The values are the same as ``roce-qos/``: both serialize
the switch's typed :class:`~fabric_stack.intent.switch_config.SwitchConfig`.

Command syntax is from the NVUE reference and the Cumulus Linux 5.12 user guide
(see :mod:`.sources`); each group carries its source URL as a comment.
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
from fabric_stack.artifacts.cumulus_underlay import SAVE, link_up_group, underlay_groups
from fabric_stack.intent.model import SwitchIntent
from fabric_stack.intent.switch_config import PortConfig, QosConfig
from fabric_stack.naming.devices import cage_of
from fabric_stack.nos import for_family
from fabric_stack.nos.cumulus import CUMULUS, CUMULUS_DEFAULTS

TARGET = "cumulus"

_DESC_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")

PROFILE = CUMULUS_DEFAULTS.qos_profile
"""The NVUE QoS profile that applies to every port (the RoCE profile configures it)."""


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


def _description(peer: str) -> str:
    # NVUE descriptions are a single token here: no spaces, colons or quotes.
    return "to_" + _DESC_SAFE.sub("_", peer)


def render_switch(ctx: RenderContext, sw: SwitchIntent) -> str:
    """The NVUE command file of one switch.

    A header, then one command group per step: :func:`_roce_mode`,
    :func:`_classification`, :func:`_pfc`, :func:`_ecn`, :func:`_breakout` and
    ``link state up`` (split cages only), :func:`_compute_ports`, the underlay and
    lossless extras of :mod:`.cumulus_underlay`, and ``nv config apply`` + ``save``.
    """
    cfg = ctx.switch_config(sw)
    q, ports, ppc = cfg.qos, cfg.ports, cfg.ports_per_cage
    lines: list[str] = ["#!/usr/bin/env bash\n"]
    lines.append(
        comment_block(
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
        *([_breakout(sw, ports, ppc), link_up_group(ports)] if ppc > 1 else []),
        _compute_ports(ports, q),
        *underlay_groups(cfg, ctx.plan.switch_model.asic),
        SAVE,
    ]
    for title, cmds in groups:
        lines.append("\n" + comment_block(title) + "".join(c + "\n" for c in cmds))
    return "".join(lines)


def _roce_mode(q: QosConfig) -> tuple[list[str], list[str]]:
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


def _classification(q: QosConfig) -> tuple[list[str], list[str]]:
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


def _pfc(q: QosConfig) -> tuple[list[str], list[str]]:
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


def _ecn(q: QosConfig) -> tuple[list[str], list[str]]:
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


def _breakout(
    sw: SwitchIntent, ports: Sequence[PortConfig], ppc: int
) -> tuple[list[str], list[str]]:
    """Split cages: each used cage as ``ppc`` logical ports."""
    cages = sorted({cage_of(p.number, ppc)[0] for p in ports})
    return (
        [
            f"Breakout: each used cage runs {ppc} x {sw.port_gbps}G "
            f"(ports swpNs0..swpNs{ppc - 1}).",
            f"Source: {sources.CUMULUS_PORTS} (Breakout Ports)",
            f"Source: {sources.NVUE_INTERFACE} (link breakout)",
        ],
        [f"nv set interface swp{c} link breakout {ppc}x" for c in cages],
    )


def _compute_ports(ports: Sequence[PortConfig], q: QosConfig) -> tuple[list[str], list[str]]:
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
