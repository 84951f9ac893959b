"""Guidance an architect expects next to the numbers: fabric trade-offs, lossless
essentials, Kubernetes networking choices and practice cards.

All text is ours. :func:`guidance_for` picks what applies to a spec so the
card, the Markdown report and the design report say the same thing.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.sizing.managers import managers_took
from fabric_stack.sizing.size import SizingPlan


class FabricOption(BaseModel):
    """One row of the fabric comparison."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="infiniband, roce or ethernet.")
    title: str = Field(description="Display name.")
    rdma_latency: str = Field(
        description=(
            "RDMA latency in words; the figures (per-hop, sourced) come from the plan through "
            "`compare` and `estimate`, never from this table."
        )
    )
    lossless: str = Field(description="How the fabric avoids drops.")
    best_for: str = Field(description="Workloads it suits.")
    tradeoff: str = Field(description="What it costs you.")


FABRICS: tuple[FabricOption, ...] = (
    FabricOption(
        key="infiniband",
        title="InfiniBand",
        rdma_latency="Lowest: no PFC/ECN on the path (figures per plan: `fabric-stack compare`)",
        lossless="Built in: credit-based link-level flow control; a subnet manager programs routes",
        best_for="Large synchronous training where all-reduce time dominates the step",
        tradeoff="A second fabric with its own subnet manager, tools and skills; higher cost",
    ),
    FabricOption(
        key="roce",
        title="RoCEv2 (RDMA over Ethernet)",
        rdma_latency="Low; higher under congestion (PFC pauses, ECN marks) (figures per plan: `fabric-stack compare`)",
        lossless="Configured: PFC on one priority plus ECN/DCQCN, identical on every hop",
        best_for="Training on Ethernet, reusing existing Ethernet operations and tooling",
        tradeoff="Lossless tuning is unforgiving: one mismatched hop means PFC storms or stalls",
    ),
    FabricOption(
        key="ethernet",
        title="Standard Ethernet (TCP)",
        rdma_latency="Higher (kernel TCP stack)",
        lossless="Not needed: TCP retransmits",
        best_for="Inference, storage and north-south traffic",
        tradeoff="No RDMA: collective-heavy training is bottlenecked by the host stack",
    ),
)

ESSENTIALS: dict[str, tuple[str, ...]] = {
    "infiniband": (
        "Run a redundant subnet manager (master + standby) and verify link speed, width and topology after cabling (ibdiagnet against the planned .topo).",
        "Enable GPUDirect RDMA (nvidia-peermem / dma-buf); consider SHARP in-network reduction for all-reduce.",
        "Give training pods their HCAs with Multus + SR-IOV CNI (one VF or PF per rail).",
    ),
    "roce": (
        "Enable PFC on exactly one priority for RoCE and ECN (DCQCN) end to end; trust DSCP on every port.",
        "Match jumbo MTU on every hop (hosts 9000, switches 9216) and mark CNPs on their own priority.",
        "Enable GPUDirect RDMA and set NCCL_IB_GID_INDEX / NCCL_IB_TC for RoCEv2; attach the NICs via Multus + SR-IOV CNI.",
    ),
    "ethernet": (
        "TCP needs no lossless configuration, but size buffers for incast and keep jumbo MTU consistent.",
        "Collectives will run over sockets: set NCCL_SOCKET_IFNAME to the fabric interfaces.",
        "Prefer RoCEv2 or InfiniBand if this fabric will carry collective-heavy training.",
    ),
}

CNI: tuple[tuple[str, str], ...] = (
    ("Cilium (eBPF)", "Default pod networking, network policy and observability"),
    ("Calico", "Mature policy enforcement and BGP routing"),
    ("Multus", "Attaching a second (RDMA) interface to training pods"),
    ("SR-IOV CNI", "Handing NIC virtual functions to pods for GPUDirect RDMA"),
    ("OVN-Kubernetes", "OpenShift and overlay-heavy environments"),
)

PRACTICES: tuple[tuple[str, str], ...] = (
    (
        "Rail-optimized topology",
        "Each GPU gets its own NIC and rail, so all-reduce traffic spreads over independent leaves instead of colliding on one uplink.",
    ),
    (
        "GPUDirect RDMA",
        "NICs read and write GPU memory directly; keep each GPU and its NIC under the same PCIe switch so traffic never crosses the CPU.",
    ),
    (
        "Separate networks",
        "Compute, storage, in-band and out-of-band management on distinct switches or VLANs, so no one can starve another.",
    ),
    (
        "Lossless config (RoCE)",
        "PFC and ECN tuned end to end with one MTU; a single misconfigured hop causes pauses and NCCL timeouts.",
    ),
    (
        "NCCL / RCCL tuning",
        "Point NCCL at the right interfaces and HCAs, give it topology hints, and validate with all-reduce micro-benchmarks.",
    ),
    (
        "Non-blocking bisection",
        "Synchronous training waits for the slowest flow: size the fabric 1:1 so collectives never queue behind oversubscription.",
    ),
)


class Guidance(BaseModel):
    """Guidance selected for one plan."""

    model_config = ConfigDict(frozen=True)

    fabric: FabricOption = Field(description="The chosen fabric's row.")
    recommendation: str = Field(description="One-paragraph recommendation.")
    essentials: tuple[str, ...] = Field(description="Lossless-config essentials of the fabric.")
    warnings: tuple[str, ...] = Field(description="Things in this spec worth a second look.")


def guidance_for(plan: SizingPlan, recommendation: str | None = None) -> Guidance:
    """Select and phrase guidance for ``plan``.

    ``recommendation`` is the paragraph :func:`fabric_stack.views.options.compare_fabrics`
    derives from weighted, sourced figures (`guide` and `size --explain` pass it); without
    it the paragraph is the fabric's fixed trade-off sentence.
    """
    spec = plan.spec
    fab = next(f for f in FABRICS if f.key == spec.fabric)
    ratio = plan.oversubscription
    if recommendation:
        rec = recommendation
    elif spec.fabric == "infiniband":
        rec = (
            "InfiniBand suits this cluster when collective performance dominates: credit-based "
            "flow control is lossless without tuning. Budget for the subnet manager and the "
            "separate operational toolchain."
        )
    elif spec.fabric == "roce":
        rec = (
            "RoCEv2 keeps the fabric on Ethernet; it performs close to InfiniBand only when PFC, "
            "ECN and MTU are identical on every hop. Treat the QoS policy as code and verify it."
        )
    else:
        rec = (
            "Plain Ethernet/TCP is fine for inference and storage, but collective-heavy training "
            "will be host-stack bound; choose RoCEv2 or InfiniBand for training clusters."
        )
    warns: list[str] = []
    if ratio != "1:1":
        warns.append(
            f"Leaves are {ratio} oversubscribed: synchronous collectives will queue; 1:1 is "
            "recommended for training."
        )
    if plan.servers_removed:
        warns.append(
            f"{managers_took(plan.servers_removed, plan.manager_su)}: {plan.nodes:,} servers, "
            f"{plan.gpus:,} of the {spec.gpus:,} GPUs asked."
        )
    taken = plan.manager_positions if plan.manager_su == plan.sus else 0
    if plan.last_su_nodes + taken < plan.su_nodes:
        warns.append(
            f"The last SU holds {plan.last_su_nodes} of {plan.su_nodes} servers; its leaves and "
            "uplinks are built in full so it can fill up without re-cabling the spines."
        )
    if spec.fabric == "infiniband" and spec.infiniband.subnet_managers < 2:
        warns.append("Only one subnet manager: a failure stops fabric reconfiguration. Plan two.")
    return Guidance(
        fabric=fab, recommendation=rec, essentials=ESSENTIALS[spec.fabric], warnings=tuple(warns)
    )
