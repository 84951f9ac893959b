"""`render roce-qos`: per-switch lossless RoCEv2 QoS intent as structured YAML.

One file per compute-fabric switch (``roce-qos/<switch>.yaml``). The per-hop
values (PFC priorities, ECN on/off, DSCP trust, MTU) are the switch's own
:class:`~fabric_stack.intent.model.SwitchIntent` fields, so a per-tier override in the
spec shows up exactly on the switches it affects; the fabric-wide values (ECN
thresholds and probability, RoCE and CNP markings) come from the spec's
``roce`` settings, whose defaults are NVIDIA's published lossless profile.

The file is vendor-neutral intent: a serializer of the switch's typed
:class:`~fabric_stack.intent.switch_config.QosConfig`, which ``render cumulus`` and
``render sonic`` serialize too.
"""

from __future__ import annotations

from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    commented_yaml,
    require_roce,
    switch_title,
)
from fabric_stack.intent.model import SwitchIntent
from fabric_stack.intent.switch_config import QosConfig
from fabric_stack.text.numbers import whole_metres

TARGET = "roce-qos"


def render_switch(ctx: RenderContext, sw: SwitchIntent) -> str:
    """The YAML intent of one switch."""
    cfg = ctx.switch_config(sw, routed=False)
    q = cfg.qos
    ports = [
        {
            "port": p.name,
            "peer": p.peer,
            "speed_gbps": sw.port_gbps,
            "cable_length_m": whole_metres(p.cable_m),
        }
        for p in cfg.ports
    ]
    header = [
        f"Lossless RoCEv2 QoS intent: {switch_title(sw, ctx.plan.planes)}",
        GENERATED_BY.format(target=TARGET),
        "Per-hop values (PFC, ECN, trust, MTU) are this switch's intent; markings and ECN",
        "thresholds are the spec's `roce` settings. Every hop must carry the same values:",
        "one mismatched hop causes PFC storms or NCCL timeouts.",
    ]
    sections: list[tuple[list[str], dict[str, Any]]] = [
        _switch_section(sw),
        _mtu_section(q),
        _trust_section(q),
        _mapping_section(q),
        _pfc_section(q),
        _ecn_section(q),
        _ets_section(q),
        _ports_section(ports),
    ]
    return commented_yaml(header, sections)


def _switch_section(sw: SwitchIntent) -> tuple[list[str], dict[str, Any]]:
    """The switch, as planned."""
    return (
        ["The switch, as planned."],
        {
            "switch": {
                "name": sw.name,
                "role": sw.role,
                "model": sw.model,
                "model_name": sw.model_name,
                "plane": sw.plane,
                "su": sw.su,
                "pod": sw.pod,
                "rail": sw.rail,
            }
        },
    )


def _mtu_section(q: QosConfig) -> tuple[list[str], dict[str, Any]]:
    """Jumbo MTU, identical on every hop."""
    return (
        [
            "Jumbo MTU on every compute port, identical on every hop (hosts use 9000, leaving",
            "room for headers). NVUE `link mtu` accepts 552-9216, default 9216.",
            f"Source: {sources.NVUE_INTERFACE}",
        ],
        {"mtu": q.mtu},
    )


def _trust_section(q: QosConfig) -> tuple[list[str], dict[str, Any]]:
    """Classify on DSCP."""
    return (
        [
            "Classify on the DSCP the host (NCCL_IB_TC) sets, not on 802.1p: routed RoCEv2",
            "is untagged. Lossless profile default: port trust on.",
            f"Source: {sources.CUMULUS_ROCE} (Default RoCE Configuration)",
        ],
        {"trust": {"dscp": q.dscp_trust}},
    )


def _mapping_section(q: QosConfig) -> tuple[list[str], dict[str, Any]]:
    """DSCP → switch priority → traffic class for RoCE data and CNPs."""
    return (
        [
            f"RoCE data DSCP {q.roce_dscp} -> switch priority {q.roce_priority} "
            "-> traffic class "
            f"{q.roce_tc};",
            f"congestion notifications (CNP) DSCP {q.cnp_dscp} -> switch priority "
            f"{q.cnp_priority} "
            f"-> traffic class {q.cnp_tc}.",
            "NVIDIA lossless profile: SP3->TC3 (RoCE), SP6->TC6 (CNP), others -> TC0.",
            f"Source: {sources.CUMULUS_ROCE}",
        ],
        {
            "mappings": {
                "roce": {
                    "dscp": q.roce_dscp,
                    "switch_priority": q.roce_priority,
                    "traffic_class": q.roce_tc,
                },
                "cnp": {
                    "dscp": q.cnp_dscp,
                    "switch_priority": q.cnp_priority,
                    "traffic_class": q.cnp_tc,
                },
            }
        },
    )


def _pfc_section(q: QosConfig) -> tuple[list[str], dict[str, Any]]:
    """PFC on exactly the RoCE priority."""
    return (
        [
            "PFC on exactly one priority (the RoCE one), sent and honoured: pausing more",
            "priorities spreads head-of-line blocking to unrelated traffic.",
            "NVIDIA lossless profile: PFC on switch priority 3, RoCE in its own lossless",
            "buffer pool.",
            f"Source: {sources.CUMULUS_ROCE}",
        ],
        {
            "pfc": {
                "enabled": bool(q.pfc_priorities),
                "priorities": list(q.pfc_priorities),
                "rx": bool(q.pfc_priorities),
                "tx": bool(q.pfc_priorities),
            }
        },
    )


def _ecn_section(q: QosConfig) -> tuple[list[str], dict[str, Any]]:
    """ECN (DCQCN) marking thresholds on the RoCE traffic class."""
    return (
        [
            "ECN (DCQCN) marking on the RoCE traffic class so senders slow down before PFC",
            "has to pause. NVIDIA lossless profile: absolute thresholds 150 KB / 1,500 KB",
            "on TC3;",
            "marking probability between them (NVUE accepts 1-100).",
            f"Source: {sources.CUMULUS_ROCE} (Default RoCE Configuration)",
            f"Source: {sources.NVUE_QOS} (congestion-control)",
        ],
        {
            "ecn": {
                "enabled": q.ecn,
                "traffic_class": q.roce_tc,
                "min_threshold_bytes": q.ecn_min_bytes,
                "max_threshold_bytes": q.ecn_max_bytes,
                "probability_percent": q.ecn_probability,
            }
        },
    )


def _ets_section(q: QosConfig) -> tuple[list[str], dict[str, Any]]:
    """Scheduling: CNPs strict, RoCE and the rest 50/50."""
    return (
        [
            "Scheduling (ETS): CNPs strict priority so congestion feedback is never queued;",
            "RoCE and everything else share the rest 50/50 (NVIDIA lossless profile defaults).",
            f"Source: {sources.CUMULUS_ROCE} (Port ETS)",
        ],
        {
            "ets": [
                {"traffic_class": q.cnp_tc, "carries": "cnp", "mode": "strict"},
                {
                    "traffic_class": q.roce_tc,
                    "carries": "roce",
                    "mode": "dwrr",
                    "bandwidth_percent": 50,
                },
                {
                    "traffic_class": 0,
                    "carries": "other",
                    "mode": "dwrr",
                    "bandwidth_percent": 50,
                },
            ]
        },
    )


def _ports_section(ports: list[dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    """The compute ports these settings apply to."""
    return (
        [
            "Ports these settings apply to: every compute-fabric port of this switch, labelled",
            "as the switch OS names it, with the far end from the cabling plan and the planned",
            "length of its cable (whole metres, rounded up): what PFC headroom is sized from.",
        ],
        {"ports": ports},
    )


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes, without rendering them."""
    return [f"roce-qos/{sw.name}.yaml" for sw in ctx.compute_switches()]


def render(ctx: RenderContext) -> list[Artifact]:
    """One ``roce-qos/<switch>.yaml`` per compute switch of a RoCEv2 plan."""
    require_roce(ctx, TARGET)
    return [
        Artifact(TARGET, path, render_switch(ctx, sw))
        for path, sw in zip(files(ctx), ctx.compute_switches(), strict=True)
    ]
