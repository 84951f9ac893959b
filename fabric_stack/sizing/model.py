"""The result of sizing: a :class:`SizingPlan` with its counts, bandwidth and tier budgets.

:func:`fabric_stack.sizing.size.size_fabric` builds it (import it from
:mod:`fabric_stack.sizing.size`, which re-exports these models); the topology, the card
and the intent read it.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from fabric_stack.hardware.switches import SwitchModel
from fabric_stack.spec.model import FabricSpec


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SwitchCounts(_Frozen):
    """Compute-fabric switches by tier, all planes together."""

    leaf: int = Field(description="Leaf switches.")
    spine: int = Field(description="Spine switches.")
    core: int = Field(description="Core (super-spine) switches; 0 in two tiers.")
    total: int = Field(description="All compute-fabric switches.")


class CableCounts(_Frozen):
    """Compute-fabric cables by tier, all planes together (one cable = one link)."""

    node_leaf: int = Field(description="Server NIC to rail leaf.")
    leaf_spine: int = Field(description="Leaf to spine.")
    spine_core: int = Field(description="Spine to core; 0 in two tiers.")
    manager_leaf: int = Field(
        default=0, description="InfiniBand fabric-manager host (UFM/OpenSM) to leaf."
    )
    total: int = Field(description="All compute-fabric cables.")


class Transceivers(_Frozen):
    """Pluggable optics for the compute fabric (all links optical)."""

    nic: int = Field(description="Single-port modules in server NICs (one per NIC link).")
    switch: int = Field(description="Switch modules: one per cage with at least one used port.")
    total: int = Field(description="All modules.")


class Bandwidth(_Frozen):
    """Headline bandwidth figures."""

    link_gbps: int = Field(description="Speed of one fabric link (NIC line rate / planes).")
    per_gpu_gbps: int = Field(description="Network bandwidth per GPU (its NIC line rate).")
    per_node_gbps: int = Field(description="Per server: per-GPU NIC rate × rails.")
    injection_tbps: float = Field(description="All NIC links together, Tb/s.")
    bisection_tbps: float = Field(
        description="Full-duplex bisection, Tb/s: GPUs × line rate when non-blocking."
    )


class TierPlan(_Frozen):
    """One tier of the compute fabric: count and per-switch port budget."""

    role: str = Field(description="leaf, spine or core.")
    count: int = Field(description="Switches in this tier, all planes.")
    per_plane: int = Field(description="Switches in this tier per plane.")
    ports_down: int = Field(description="Ports budgeted toward the tier below (or the servers).")
    ports_up: int = Field(description="Ports budgeted toward the tier above.")
    ports_used_max: int = Field(description="Most ports in use on any switch of this tier.")
    radix: int = Field(description="Logical ports per switch at the fabric speed.")
    oversubscription: str = Field(description="down:up capacity ratio of this tier.")
    model: str = Field(default="", description="Catalog key of this tier's switch model.")
    down_gbps: int = Field(default=0, description="Speed of the ports toward the tier below.")
    up_gbps: int = Field(
        default=0, description="Speed of the ports toward the tier above (0: none)."
    )

    @property
    def capacity_down_gbps(self) -> int:
        """Budgeted downward capacity of one switch, Gb/s."""
        return self.ports_down * self.down_gbps

    @property
    def capacity_up_gbps(self) -> int:
        """Budgeted upward capacity of one switch, Gb/s."""
        return self.ports_up * self.up_gbps


TIER_FIELDS = ("model", "down_gbps", "up_gbps")
"""TierPlan fields a plan without per-tier keys leaves out of its dump (goldens unchanged)."""

PLAN_TIER_FIELDS = (
    "uplink_gbps",
    "spine_model",
    "core_model",
    "spine_radix",
    "core_radix",
    "leaf_up_ports_per_cage",
    "spine_ports_per_cage",
    "core_ports_per_cage",
)
"""SizingPlan fields of the per-tier models and speeds (dumped only when the spec sets one)."""


class BuildOut(_Frozen):
    """What planning this phase as part of a larger build-out costs now (all planes)."""

    final_gpus: int = Field(description="GPUs of the final fabric (the spec's build_out_gpus).")
    final_sus: int = Field(description="Scalable units of the final fabric.")
    spines: int = Field(description="Spines this phase provisions (the final fabric's, per pod).")
    cores: int = Field(description="Cores this phase provisions (all of the final fabric's).")
    standalone_spines: int = Field(description="Spines a plan of this size alone would need.")
    standalone_cores: int = Field(description="Cores a plan of this size alone would need.")
    free_spine_ports: int = Field(
        description="Spine ports toward leaves left uncabled for the leaves still to come."
    )
    standalone_optics: int = Field(description="Switch optics a plan of this size alone needs.")

    @property
    def extra_switches(self) -> int:
        """Switches bought now only so that growing never moves a cable."""
        return self.spines + self.cores - self.standalone_spines - self.standalone_cores


class SizingPlan(_Frozen):
    """Everything the sizing rules decided for one spec."""

    spec: FabricSpec = Field(description="The spec this plan was sized from.")
    switch_model: SwitchModel = Field(description="Catalog entry of the fabric switch.")
    link_gbps: int = Field(description="Logical port / link speed, Gb/s.")
    radix: int = Field(description="Logical ports per switch at link_gbps.")
    ports_per_cage: int = Field(description="Logical ports per cage at link_gbps.")
    nodes: int = Field(description="Servers.")
    rails: int = Field(description="Rails (compute NICs per server).")
    planes: int = Field(description="Fabric planes.")
    su_nodes: int = Field(description="Servers per full scalable unit.")
    sus: int = Field(description="Scalable units (the last may be partial).")
    last_su_nodes: int = Field(description="Servers in the last SU.")
    su_sizes: tuple[int, ...] = Field(
        default=(), description="Servers in each SU, first to last (sums to nodes)."
    )
    managers: int = Field(
        default=0, description="Fabric-manager hosts cabled per plane (0: on switches / none)."
    )
    manager_links: int = Field(default=1, description="Cables from each manager into each plane.")
    manager_su: int = Field(default=0, description="SU whose rail leaves take the managers.")
    manager_positions: int = Field(
        default=0, description="Server positions of that SU given to the managers."
    )
    servers_removed: int = Field(
        default=0,
        description="Servers the spec asked for that the managers' ports displaced (RA rule).",
    )
    tiers: int = Field(description="2 (leaf/spine) or 3 (leaf/spine/core).")
    leaf_down: int = Field(description="Leaf ports budgeted for servers.")
    leaf_up: int = Field(description="Leaf ports budgeted for spines.")
    spine_down: int = Field(description="Spine ports budgeted for leaves.")
    spine_up: int = Field(description="Spine ports budgeted for cores (0 in two tiers).")
    pods: int = Field(description="Pods (three tiers) or 1.")
    sus_per_pod: int = Field(description="SUs per full pod (three tiers) or sus.")
    spines_per_pod: int = Field(description="Spines per pod per plane (two tiers: all spines).")
    leaf_spine_links: int = Field(description="Links between one leaf and one of its spines.")
    spine_stride: int = Field(
        description="Spine port distance between link slots (see port_stride)."
    )
    core_groups: int = Field(
        description="Core groups per plane (= spines per pod); 0 in two tiers."
    )
    cores_per_group: int = Field(description="Cores in each group; 0 in two tiers.")
    spine_core_links: int = Field(description="Links between one spine and one core of its group.")
    core_stride: int = Field(description="Core port distance between link slots.")
    two_tier_max_gpus: int = Field(description="Largest cluster two tiers of this switch carry.")
    three_tier_max_gpus: int = Field(description="Largest cluster three tiers carry.")
    switches: SwitchCounts = Field(description="Switch counts by tier.")
    cables: CableCounts = Field(description="Cable counts by tier.")
    transceivers: Transceivers = Field(description="Optics counts.")
    bandwidth: Bandwidth = Field(description="Bandwidth figures.")
    oversubscription: str = Field(description="Requested leaf oversubscription, e.g. '1:1'.")
    tier_plans: tuple[TierPlan, ...] = Field(description="Per-tier detail, leaf first.")
    uplink_gbps: int = Field(description="Leaf-spine and spine-core link speed, Gb/s.")
    spine_model: SwitchModel = Field(description="Catalog entry of the spine switch.")
    core_model: SwitchModel = Field(description="Catalog entry of the core switch.")
    spine_radix: int = Field(description="Logical ports per spine at uplink_gbps.")
    core_radix: int = Field(description="Logical ports per core at uplink_gbps.")
    leaf_up_ports_per_cage: int = Field(
        description="Logical ports per leaf cage at uplink_gbps (a mixed leaf's uplink cages)."
    )
    spine_ports_per_cage: int = Field(description="Logical ports per spine cage.")
    core_ports_per_cage: int = Field(description="Logical ports per core cage.")

    leaves_per_rail: int = Field(
        default=1, description="Leaves of each rail in one SU (su_nodes over a leaf's downlinks)."
    )
    servers_per_leaf: int = Field(
        default=0, description="Server positions of each rail leaf (0: su_nodes, one leaf)."
    )
    spine_grouping: str = Field(default="full", description="'full' or 'rail' (see the spec).")
    spine_groups: int = Field(
        default=1, description="Spine groups per plane and pod: 1, or the rails when rail-grouped."
    )
    build_out: BuildOut | None = Field(
        default=None, description="The build-out this phase belongs to, and its cost now."
    )

    @model_serializer(mode="wrap")
    def _omit_defaults(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A plan without per-tier keys or #43 shape keys dumps as before (card JSON,
        # goldens); with per-tier keys, the tiers' models dump as their catalog keys.
        data = handler(self)
        if not isinstance(data, dict):
            return data
        if not self.spec.per_tier:
            for key in PLAN_TIER_FIELDS:
                data.pop(key, None)
            for tier in data.get("tier_plans", ()):
                for key in TIER_FIELDS:
                    tier.pop(key, None)
        else:
            data["spine_model"] = self.spine_model.key
            data["core_model"] = self.core_model.key
        if self.leaves_per_rail == 1:
            data.pop("leaves_per_rail", None)
            data.pop("servers_per_leaf", None)
        if self.spine_grouping == "full":
            data.pop("spine_grouping", None)
            data.pop("spine_groups", None)
        if self.build_out is None:
            data.pop("build_out", None)
        return data

    @property
    def mixed_leaf(self) -> bool:
        """True when the leaf's uplinks run at another speed than its downlinks."""
        return self.uplink_gbps != self.link_gbps

    def tier_model(self, role: str) -> SwitchModel:
        """The switch model of tier ``role`` (leaf, spine or core)."""
        return {"spine": self.spine_model, "core": self.core_model}.get(role, self.switch_model)

    def tier_ports_per_cage(self, role: str) -> int:
        """Logical ports per cage of tier ``role`` (a leaf: at the host link speed)."""
        return {"spine": self.spine_ports_per_cage, "core": self.core_ports_per_cage}.get(
            role, self.ports_per_cage
        )

    def tier_speed(self, role: str) -> int:
        """Port speed of tier ``role`` toward the tier below (a leaf: the host link speed)."""
        return self.link_gbps if role == "leaf" else self.uplink_gbps

    @property
    def leaves_per_su(self) -> int:
        """Leaves of one SU in one plane: rails × leaves per rail."""
        return self.rails * self.leaves_per_rail

    @property
    def per_leaf(self) -> int:
        """Server positions of each rail leaf."""
        return self.servers_per_leaf or self.su_nodes

    @property
    def non_blocking(self) -> bool:
        """True when every tier has at least as much up as down capacity."""
        return self.oversubscription == "1:1"

    @property
    def gpus(self) -> int:
        """GPUs the plan cables: the spec's, less any server positions given to managers."""
        return self.nodes * self.spec.gpus_per_node

    def nodes_in_su(self, su: int) -> int:
        """Servers in SU ``su`` (1-based)."""
        if self.su_sizes:
            return self.su_sizes[su - 1]
        return self.last_su_nodes if su == self.sus else self.su_nodes

    def sus_in_pod(self, pod: int) -> int:
        """SUs in pod ``pod`` (1-based)."""
        if self.tiers == 2:
            return self.sus
        return min(self.sus_per_pod, self.sus - (pod - 1) * self.sus_per_pod)
