"""`render roce-qos`: per-switch lossless RoCEv2 QoS intent as structured YAML.

One file per compute-fabric switch (``roce-qos/<switch>.yaml``). The per-hop
values (PFC priorities, ECN on/off, DSCP trust, MTU) are the switch's own
:class:`~fabric_stack.intent.model.SwitchIntent` fields, so a per-tier override in the
spec shows up exactly on the switches it affects; the fabric-wide values (ECN
thresholds and probability, RoCE and CNP markings) come from the spec's
``roce`` settings, whose defaults are NVIDIA's published lossless profile.

The file is vendor-neutral intent; :mod:`.cumulus` turns the same values into
NVUE commands.
"""

from __future__ import annotations

from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    TargetMismatchError,
    commented_yaml,
    switch_title,
)
from fabric_stack.intent.model import SwitchIntent

TARGET = "roce-qos"


def require_roce(ctx: RenderContext, target: str) -> None:
    """Raise :class:`TargetMismatchError` unless the plan's compute fabric is RoCEv2."""
    if ctx.fabric != "roce":
        valid = (
            "use `render infiniband` for subnet-manager settings"
            if ctx.fabric == "infiniband"
            else "lossless QoS only applies to `--fabric roce`"
        )
        raise TargetMismatchError(target, f"the plan's fabric is {ctx.fabric}, not RoCEv2", valid)


def qos_values(ctx: RenderContext, sw: SwitchIntent) -> dict[str, Any]:
    """The QoS settings of one switch, shared by the YAML intent and the NVUE rendering.

    Per-hop fields come from the switch intent; markings and thresholds from the
    spec. The RoCE data priority is the spec's first PFC priority: the DSCP→priority
    mapping must not move when one tier's PFC is (mis)configured differently, or the
    mismatch the roce-lossless-consistency policy reports would be hidden.
    """
    roce = ctx.spec.roce
    roce_prio = roce.pfc_priorities[0] if roce.pfc_priorities else 3
    return {
        "mtu": sw.mtu,
        "dscp_trust": sw.dscp_trust,
        "pfc_priorities": list(sw.pfc_priorities),
        "ecn": sw.ecn,
        "roce_dscp": roce.roce_dscp,
        "roce_priority": roce_prio,
        # Cumulus maps switch priority N to traffic class N by default; the RoCE
        # profile keeps that for SP3 (RoCE) and SP6 (CNP) and sends the rest to TC0.
        "roce_tc": roce_prio,
        "cnp_dscp": roce.cnp_dscp,
        "cnp_priority": roce.cnp_priority,
        "cnp_tc": roce.cnp_priority,
        # NVIDIA states the thresholds in KB = 1,000 bytes (150 KB → 150000 B, which
        # `nv show qos roce` prints as 146.48 KiB).
        "ecn_min_bytes": roce.ecn_min_kb * 1000,
        "ecn_max_bytes": roce.ecn_max_kb * 1000,
        "ecn_probability": roce.ecn_probability,
    }


def render_switch(ctx: RenderContext, sw: SwitchIntent) -> str:
    """The YAML intent of one switch."""
    q = qos_values(ctx, sw)
    ports = [
        {"port": label, "peer": peer, "speed_gbps": sw.port_gbps}
        for _, label, peer in ctx.compute_ports.get(sw.name, [])
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


def _mtu_section(q: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Jumbo MTU, identical on every hop."""
    return (
        [
            "Jumbo MTU on every compute port, identical on every hop (hosts use 9000, leaving",
            "room for headers). NVUE `link mtu` accepts 552-9216, default 9216.",
            f"Source: {sources.NVUE_INTERFACE}",
        ],
        {"mtu": q["mtu"]},
    )


def _trust_section(q: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Classify on DSCP."""
    return (
        [
            "Classify on the DSCP the host (NCCL_IB_TC) sets, not on 802.1p: routed RoCEv2",
            "is untagged. Lossless profile default: port trust on.",
            f"Source: {sources.CUMULUS_ROCE} (Default RoCE Configuration)",
        ],
        {"trust": {"dscp": q["dscp_trust"]}},
    )


def _mapping_section(q: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """DSCP → switch priority → traffic class for RoCE data and CNPs."""
    return (
        [
            f"RoCE data DSCP {q['roce_dscp']} -> switch priority {q['roce_priority']} "
            "-> traffic class "
            f"{q['roce_tc']};",
            f"congestion notifications (CNP) DSCP {q['cnp_dscp']} -> switch priority "
            f"{q['cnp_priority']} "
            f"-> traffic class {q['cnp_tc']}.",
            "NVIDIA lossless profile: SP3->TC3 (RoCE), SP6->TC6 (CNP), others -> TC0.",
            f"Source: {sources.CUMULUS_ROCE}",
        ],
        {
            "mappings": {
                "roce": {
                    "dscp": q["roce_dscp"],
                    "switch_priority": q["roce_priority"],
                    "traffic_class": q["roce_tc"],
                },
                "cnp": {
                    "dscp": q["cnp_dscp"],
                    "switch_priority": q["cnp_priority"],
                    "traffic_class": q["cnp_tc"],
                },
            }
        },
    )


def _pfc_section(q: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
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
                "enabled": bool(q["pfc_priorities"]),
                "priorities": q["pfc_priorities"],
                "rx": bool(q["pfc_priorities"]),
                "tx": bool(q["pfc_priorities"]),
            }
        },
    )


def _ecn_section(q: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
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
                "enabled": q["ecn"],
                "traffic_class": q["roce_tc"],
                "min_threshold_bytes": q["ecn_min_bytes"],
                "max_threshold_bytes": q["ecn_max_bytes"],
                "probability_percent": q["ecn_probability"],
            }
        },
    )


def _ets_section(q: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Scheduling: CNPs strict, RoCE and the rest 50/50."""
    return (
        [
            "Scheduling (ETS): CNPs strict priority so congestion feedback is never queued;",
            "RoCE and everything else share the rest 50/50 (NVIDIA lossless profile defaults).",
            f"Source: {sources.CUMULUS_ROCE} (Port ETS)",
        ],
        {
            "ets": [
                {"traffic_class": q["cnp_tc"], "carries": "cnp", "mode": "strict"},
                {
                    "traffic_class": q["roce_tc"],
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
            "as the switch OS names it, with the far end from the cabling plan.",
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
