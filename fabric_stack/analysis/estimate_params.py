"""The collective model's parameters, and the facts of a plan it reads them against.

:class:`ModelParams` holds every efficiency and latency of
:mod:`fabric_stack.analysis.estimate` with its source. The functions below decide, for one
plan, what the catalog says: the NICs' and each switch's latency (sourced, UNVERIFIED
marked), whether SHARP in-network reduction runs and whether adaptive routing is on. The
estimate and `fabric-stack compare` both read them, so the two cannot disagree.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.hardware.nic_latency import nic_latency
from fabric_stack.sizing.size import SizingPlan


class ModelParams(BaseModel):
    """Efficiencies and latencies of the model, with where each number comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    net_efficiency: float = Field(
        default=0.94,
        gt=0,
        le=1,
        description="Share of NIC line rate NCCL reaches (46-48 GB/s per 400G NIC and "
        "192 GB/s on 8×200G DGX A100, both quoted by NVIDIA engineers: docs/calibration.md).",
    )
    nvlink_efficiency: float = Field(
        default=0.80,
        gt=0,
        le=1,
        description="Share of per-direction NVLink a ring reaches (NCCL's own topology "
        "figure: 360 of 450 GB/s on H100, docs/calibration.md).",
    )
    nvls_efficiency: float = Field(
        default=0.60,
        gt=0,
        le=1,
        description="NVLS algbw as a share of per-direction NVLink (fitted to the 476 GB/s "
        "single-node H100 busbw NVIDIA calls expected).",
    )
    sharp_efficiency: float = Field(
        default=0.80,
        gt=0,
        le=1,
        description="Share of NIC rate in-network SHARP (CollNet) reduction reaches: "
        "sjeaugey (NVIDIA), NVIDIA/nccl#320: 'My rule of thumb is ~20 GB/s per NIC' on "
        "HDR 200G (25 GB/s), docs/calibration.md S1.",
    )
    sharp: bool | None = Field(
        default=None,
        description="Force SHARP in-network reduction on or off; None: the spec's "
        "infiniband.sharp. Applies only to InfiniBand switches that have it (SHARPv3 on "
        "Quantum-2).",
    )
    launch_us: float = Field(
        default=5.0, ge=0, description="Per-collective overhead, µs (assumed)."
    )
    nvlink_hop_us: float = Field(default=0.7, ge=0, description="NVLink step, µs (assumed).")
    net_hop_us: float = Field(
        default=1.9,
        ge=0,
        description="Host software per network step, µs, NICs and switches excluded "
        "(assumed: the former 2.5 µs step less the NICs' 0.6 µs).",
    )
    nic_us: float | None = Field(
        default=None,
        ge=0,
        description="Back-to-back NIC latency, µs; None: the profile's NIC "
        "(fabric_stack/hardware/nic_latency.py).",
    )
    switch_hop_us: float | None = Field(
        default=None,
        ge=0,
        description="Per switch traversed, µs; None: the switch model's port-to-port "
        "latency (fabric_stack/hardware/switches.py), or assumed_switch_us when it has none.",
    )
    assumed_switch_us: float = Field(
        default=0.2, ge=0, description="Per switch when the model has no figure (assumed)."
    )
    ecmp_efficiency: float = Field(
        default=0.60,
        gt=0,
        le=1,
        description="Share of cross-SU capacity hash-based ECMP delivers to all-to-all "
        "without adaptive routing on an Ethernet fabric: NVIDIA's Spectrum-X claim of ~60% "
        "effective bandwidth for standard Ethernet against ~95% with adaptive routing "
        "(NVIDIA Spectrum-X product page; not read here: UNVERIFIED).",
    )
    nvlink_gbs: float | None = Field(
        default=None, gt=0, description="Override the profile's bidirectional NVLink GB/s."
    )


def sharp_active(plan: SizingPlan, params: ModelParams) -> bool:
    """SHARP in-network reduction runs: an InfiniBand fabric, switches that have it, and
    SHARP asked (``params.sharp``, else the spec's ``infiniband.sharp``)."""
    spec = plan.spec
    asked = spec.infiniband.sharp if params.sharp is None else params.sharp
    return spec.fabric == "infiniband" and asked and bool(plan.switch_model.in_network_reduction)


def adaptive_routing_active(plan: SizingPlan) -> bool:
    """Per-packet adaptive routing is on: the switch has it and the plan turns it on (an
    ``ar_*`` OpenSM routing engine on InfiniBand; `render cumulus` on RoCE/Ethernet)."""
    if not plan.switch_model.adaptive_routing:
        return False
    if plan.spec.fabric == "infiniband":
        return plan.spec.infiniband.routing_engine.startswith("ar_")
    return True


def nic_seconds(plan: SizingPlan, params: ModelParams) -> float:
    """Back-to-back NIC latency of one network step, seconds."""
    if params.nic_us is not None:
        return params.nic_us * 1e-6
    return nic_latency(plan.spec.node_profile.nic_model).latency_ns * 1e-9


def switch_seconds(plan: SizingPlan, params: ModelParams) -> float:
    """One switch's port-to-port latency, seconds (given, catalog, else assumed)."""
    if params.switch_hop_us is not None:
        return params.switch_hop_us * 1e-6
    ns = plan.switch_model.port_latency_ns
    return ns * 1e-9 if ns is not None else params.assumed_switch_us * 1e-6


def latency_note(plan: SizingPlan, p: ModelParams) -> str:
    """Where the NIC and switch latencies come from, UNVERIFIED when not confirmed."""
    card = nic_latency(plan.spec.node_profile.nic_model)
    nic = (
        "NIC given"
        if p.nic_us is not None
        else card.nic_model + ("" if card.verified else " UNVERIFIED")
    )
    m = plan.switch_model
    if p.switch_hop_us is not None:
        sw = "switch given"
    elif m.port_latency_ns is None:
        sw = f"{m.name}: no figure, assumed — UNVERIFIED"
    else:
        sw = f"{m.name} {m.port_latency_ns} ns" + (
            " UNVERIFIED" if "UNVERIFIED" in m.latency_basis else ""
        )
    return f"{nic}; {sw}"
