"""The fabric options' data: candidates, weights, per-candidate figures, the decision.

Filled by :func:`fabric_stack.views.options.compare_fabrics` (planning) and
:func:`fabric_stack.views.options_decision.recommend` (deciding); read by the views in
:mod:`fabric_stack.views.compare` and the design report.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.analysis.estimate import Estimate
from fabric_stack.hardware.switches import FabricKind
from fabric_stack.views.costs import Cost

CRITERIA: tuple[str, ...] = ("performance", "cost", "operations", "headroom")
"""The criteria a recommendation weighs, in the order they are printed."""

DEFAULT_WEIGHTS = "performance=0.4,cost=0.3,operations=0.2,headroom=0.1"
"""Weights when none are given."""

FABRIC_TITLES: dict[str, str] = {
    "infiniband": "InfiniBand",
    "roce": "RoCEv2",
    "ethernet": "Ethernet (TCP)",
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Candidate(_Model):
    """A fabric and the switch it is planned on."""

    fabric: FabricKind = Field(description="infiniband, roce or ethernet.")
    switch: str = Field(description="Switch catalog key (or generic-<radix>x<speed>).")

    @property
    def label(self) -> str:
        """``fabric:switch``, as ``--candidates`` spells it."""
        return f"{self.fabric}:{self.switch}"


class Weights(_Model):
    """Weight of each criterion, normalised to sum to 1."""

    performance: float = Field(ge=0, description="Collective bandwidth and latency.")
    cost: float = Field(ge=0, description="Priced bill of materials.")
    operations: float = Field(ge=0, description="What must be run and kept identical.")
    headroom: float = Field(ge=0, description="Two-tier ceiling: growth without a third tier.")


class Latency(_Model):
    """End-to-end latency of the longest path: NICs plus every switch on it."""

    switch_hops: int = Field(
        description="Switches on the longest path (3 in two tiers, 5 in three)."
    )
    nic_ns: int = Field(description="Back-to-back latency of the two NICs, ns.")
    switch_ns: int = Field(description="Port-to-port latency of one switch, ns.")
    total_us: float = Field(description="NICs + switches, µs (cable propagation excluded).")
    sources: list[str] = Field(description="Where each figure comes from (UNVERIFIED marked).")
    verified: bool = Field(description="False when any figure is UNVERIFIED.")


class Operations(_Model):
    """What a candidate needs to run: services, per-hop and per-host settings, tooling."""

    control_plane: list[str] = Field(description="Services the fabric needs running.")
    every_hop: list[str] = Field(description="Settings identical on every fabric switch.")
    every_host: list[str] = Field(description="Settings identical on every server.")
    tooling: list[str] = Field(description="The tools it implies.")
    switches: int = Field(description="Compute switches the per-hop settings go on.")
    hosts: int = Field(description="Servers the per-host settings go on.")

    @property
    def burden(self) -> int:
        """Things to run or keep identical: services + per-hop + per-host settings."""
        return len(self.control_plane) + len(self.every_hop) + len(self.every_host)


class CandidateResult(_Model):
    """One candidate planned with the whole pipeline."""

    fabric: FabricKind = Field(description="infiniband, roce or ethernet.")
    switch: str = Field(description="Switch catalog key.")
    switch_name: str = Field(description="Switch model name.")
    gpus: int = Field(description="GPUs the plan carries.")
    tiers: int = Field(description="2 or 3.")
    switches_by_tier: dict[str, int] = Field(description="Compute switches per tier.")
    switches: dict[str, int] = Field(description="All switches by model (BOM).")
    two_tier_max_gpus: int = Field(description="Largest cluster two tiers of this switch carry.")
    cables: dict[str, int] = Field(description="Cables to order by part number (BOM).")
    optics: dict[str, int] = Field(description="Optics to order by part number (BOM).")
    power_w: int = Field(description="Power of the BOM: switches + optics, W.")
    power_basis: str = Field(description="What power_w includes.")
    latency_us: float = Field(description="End-to-end latency of the longest path, µs.")
    latency: Latency = Field(description="How latency_us is made up, with sources.")
    sharp: bool = Field(description="SHARP in-network reduction in the all-reduce estimate.")
    adaptive_routing: bool = Field(description="Adaptive routing on in the plan.")
    allreduce_busbw_gbs: float = Field(description="All-reduce busbw at the largest size.")
    alltoall_busbw_gbs: float = Field(description="All-to-all busbw at the largest size.")
    allreduce: Estimate = Field(description="The all-reduce estimate, every size.")
    alltoall: Estimate = Field(description="The all-to-all estimate, every size.")
    operations: Operations = Field(description="What it needs to operate.")
    cost: Cost | None = Field(description="Priced BOM; None without --prices.")

    @property
    def label(self) -> str:
        """``fabric:switch``."""
        return f"{self.fabric}:{self.switch}"

    @property
    def title(self) -> str:
        """``InfiniBand on NVIDIA Quantum-2 QM9700``."""
        return f"{FABRIC_TITLES[self.fabric]} on {self.switch_name}"


class Recommendation(_Model):
    """The candidate the weights pick, with the figures that decided it."""

    fabric: str = Field(description="The recommended fabric.")
    switch: str = Field(description="Its switch.")
    scores: dict[str, dict[str, float]] = Field(
        description="Per candidate label: per criterion score (1 = best) and 'total'."
    )
    reasons: list[str] = Field(description="Sentences quoting the deciding figures.")
    paragraph: str = Field(description="The reasons as one paragraph (guide, report).")


class Comparison(_Model):
    """Everything `fabric-stack compare` reports."""

    name: str = Field(description="Cluster name.")
    gpus: int = Field(description="GPUs asked.")
    sizes: list[int] = Field(description="Message sizes of the estimates, bytes.")
    candidates: list[CandidateResult] = Field(description="One per candidate, in order.")
    weights: Weights = Field(description="Normalised weights.")
    recommendation: Recommendation = Field(description="What the weights pick, and why.")
