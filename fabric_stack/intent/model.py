"""FabricIntent: the plan as plain records, one per Pulumi resource.

:func:`~fabric_stack.intent.derive.derive_intent` is the last pure stage. Its
records are what the Pulumi components turn into resources (their fields become
resource properties) and what the policy rules judge, so the same rule code runs in ``fabric-stack
check`` and inside the CrossGuard pack (which rebuilds these records from
resource properties with :func:`intent_from_resources`).

Records are pydantic models (their JSON schema documents the resource props),
built without validation (:mod:`fabric_stack.compat.pydantic_internals`): the values
come from an already-validated plan, and validating ~1M cable records would cost
seconds.

On the wire (Pulumi resource inputs and state) a record travels as one
property, ``record``: its canonical JSON text; bundles list their members one
line each. That format is :mod:`fabric_stack.intent.wire`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from fabric_stack.compat.pydantic_internals import trusted_instance
from fabric_stack.intent.wire import decode_cables, decode_nics
from fabric_stack.spec.model import FabricSpec


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    @classmethod
    def trusted(cls, **values: Any) -> Self:
        """Build from values already known to be valid, without validation.

        Like ``model_construct`` but ~10× cheaper (it matters for ~100k cables); see
        :mod:`fabric_stack.compat.pydantic_internals`.
        """
        return trusted_instance(cls, values)

    def props(self) -> dict[str, Any]:
        """Resource properties (JSON-compatible)."""
        return self.model_dump(mode="json")


class SwitchIntent(_Record):
    """A switch of any network, with the port budget and settings the policies judge."""

    name: str = Field(description="Device name, e.g. 'su1-r3-leaf'.")
    role: str = Field(description="leaf, spine, core, storage, inband or oob.")
    network: str = Field(description="Network whose switch this is: compute, storage, inband, oob.")
    networks_carried: list[str] = Field(
        description="Every network with a VLAN/port on this switch."
    )
    vlans: list[int] = Field(default_factory=list, description="VLAN ids configured.")
    model: str = Field(description="Catalog key of the switch model.")
    model_name: str = Field(default="", description="Switch model name.")
    fabric: str = Field(description="infiniband, roce or ethernet (compute) / ethernet.")
    radix: int = Field(description="Logical ports at port_gbps.")
    port_gbps: int = Field(description="Logical port speed, Gb/s.")
    ports_down: int = Field(description="Ports cabled toward servers or the tier below.")
    ports_up: int = Field(description="Ports cabled toward the tier above.")
    ports_down_budget: int = Field(default=0, description="Ports the plan budgets downward.")
    ports_up_budget: int = Field(default=0, description="Ports the plan budgets upward.")
    plane: int = Field(default=0, description="Fabric plane (0 outside the compute fabric).")
    su: int = Field(default=0, description="Scalable unit (leaves and access switches).")
    pod: int = Field(default=0, description="Pod (three-tier fabrics).")
    rail: int = Field(default=0, description="Rail of a leaf (0 for other roles).")
    rack: str = Field(default="", description="Rack name.")
    position: int = Field(default=0, description="Lowest rack unit.")
    mtu: int = Field(default=0, description="Port MTU on this switch.")
    pfc_priorities: list[int] = Field(default_factory=list, description="RoCE: PFC priorities.")
    ecn: bool = Field(default=False, description="RoCE: ECN marking enabled.")
    dscp_trust: bool = Field(default=False, description="RoCE: DSCP trust enabled.")
    subnet_manager: bool = Field(default=False, description="InfiniBand: runs a subnet manager.")
    up_gbps: int = Field(
        default=0,
        description="Speed of the ports toward the tier above, Gb/s, when it differs from "
        "port_gbps (a leaf with faster uplinks); 0: port_gbps.",
    )
    up_port_lanes: int = Field(
        default=0,
        description="Logical ports at port_gbps one uplink takes (an unsplit 800G cage of a "
        "leaf split 2 × 400G takes 2); 0: 1.",
    )

    @model_serializer(mode="wrap")
    def _omit_same_speed(self, handler: SerializerFunctionWrapHandler) -> Any:
        # A switch whose ports all run at one speed keeps its record (and stack state).
        data = handler(self)
        if isinstance(data, dict):
            for key in ("up_gbps", "up_port_lanes"):
                if not data.get(key):
                    data.pop(key, None)
        return data

    @property
    def uplink_gbps(self) -> int:
        """Speed of the ports toward the tier above, Gb/s."""
        return self.up_gbps or self.port_gbps


class RailIntent(_Record):
    """A rail: the leaves and NICs that carry one GPU index's traffic."""

    name: str = Field(description="'rail-3' (or 'p2-rail-3').")
    rail: int = Field(description="Rail number, 1-based.")
    plane: int = Field(description="Plane.")
    leaves: list[str] = Field(description="Leaves of this rail, one per SU.")
    nics: int = Field(description="NIC ports on this rail.")
    subnet: str = Field(description="IPv4 subnet of the rail.")
    vlan: int = Field(default=0, description="VLAN id (RoCE/Ethernet), 0 on InfiniBand.")
    pkey: str = Field(default="", description="InfiniBand partition key.")


class VlanIntent(_Record):
    """A network's VLAN (or IB partition) and the switches that carry it."""

    name: str = Field(description="'storage-vlan200', 'compute-rail3-vlan103', 'compute-pkey'.")
    network: str = Field(description="compute, storage, inband or oob.")
    vlan: int = Field(description="VLAN id; 0 for an InfiniBand partition.")
    subnet: str = Field(description="IPv4 subnet.")
    attach: str = Field(description="'dedicated' or the network whose switches carry it.")
    carriers: list[str] = Field(description="Switches that carry this VLAN.")
    mtu: int = Field(description="Host MTU.")


class RdmaNicIntent(_Record):
    """A compute RDMA NIC port of a server with its PCIe placement and leaf port."""

    name: str = Field(description="'su1-node07:mlx5_3'.")
    node: str = Field(description="Server name.")
    nic: str = Field(description="RDMA device name (mlx5_N).")
    rail: int = Field(description="Rail, 1-based.")
    plane: int = Field(description="Plane.")
    su: int = Field(description="Scalable unit.")
    pcie_switch: str = Field(description="PCIe switch the NIC hangs off.")
    numa: int = Field(description="NUMA node of the NIC.")
    # Tuples, not lists: the JSON (schema, props, wire) is the same, and a derived record
    # shares the topology's own immutable tuples (every server's NIC has the same ones)
    # instead of copying three lists per NIC (~500k NICs at 131k GPUs, #43).
    gpus: tuple[int, ...] = Field(description="GPU indices this NIC serves.")
    gpu_pcie_switches: tuple[str, ...] = Field(description="PCIe switch of each served GPU.")
    gpu_numas: tuple[int, ...] = Field(description="NUMA node of each served GPU.")
    leaf: str = Field(description="Switch the NIC is cabled to.")
    leaf_port: str = Field(description="Port on that switch.")
    speed_gbps: int = Field(description="Link speed.")
    network: str = Field(default="compute", description="Network of this port.")


class CableIntent(_Record):
    """One cable, with both ends and their speeds."""

    name: str = Field(description="Stable id: the a-end, 'device:port'.")
    role: str = Field(description="node_leaf, leaf_spine, spine_core, storage, inband, oob.")
    network: str = Field(description="Network the cable belongs to.")
    a_device: str = Field(description="Lower-tier end device.")
    a_port: str = Field(description="Lower-tier end port.")
    b_device: str = Field(description="Upper-tier end device.")
    b_port: str = Field(description="Upper-tier end port.")
    a_speed_gbps: int = Field(description="Speed the a-end runs at.")
    b_speed_gbps: int = Field(description="Speed the b-end runs at.")
    rail: int = Field(default=0, description="Rail (compute cables).")
    plane: int = Field(default=0, description="Plane (compute cables).")
    su: int = Field(default=0, description="SU.")
    pod: int = Field(default=0, description="Pod.")
    medium: str = Field(default="", description="mmf, smf or copper.")
    a_optic: str = Field(default="", description="Optic at the a-end.")
    b_optic: str = Field(default="", description="Optic at the b-end.")
    cable_type: str = Field(default="", description="Fiber or copper type.")


class FabricSummary(_Record):
    """Cluster-wide facts: the spec and the sizing headline (one per stack)."""

    name: str = Field(description="Cluster name.")
    fabric: str = Field(description="Compute fabric technology.")
    spec: dict[str, Any] = Field(description="The FabricSpec as JSON.")
    tiers: int = Field(description="Fabric tiers.")
    gpus: int = Field(description="GPUs.")
    link_gbps: int = Field(description="Link speed.")
    bisection_tbps: float = Field(description="Full-duplex bisection, Tb/s.")
    injection_tbps: float = Field(description="All NIC links, Tb/s.")
    oversubscription: str = Field(description="Leaf oversubscription.")
    switches: dict[str, int] = Field(description="Compute switches per tier.")
    cables: dict[str, int] = Field(description="Cables per role (from the link list).")
    subnet_managers: int = Field(
        default=0, description="InfiniBand subnet managers planned per plane."
    )
    sm_location: str = Field(default="", description="Where the subnet managers run.")
    planes: int = Field(default=1, description="Fabric planes (one subnet, one SM set each).")
    managers: list[str] = Field(
        default_factory=list,
        description="Fabric-manager hosts cabled into the fabric (ufm-1 …), master first.",
    )
    servers_removed: int = Field(
        default=0, description="Server positions given to the fabric managers (RA rule)."
    )


class FabricIntent(BaseModel):
    """All records of one fabric: what Pulumi creates and what the policies judge."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    summary: FabricSummary = Field(description="Cluster-wide facts.")
    switches: tuple[SwitchIntent, ...] = Field(description="All switches.")
    rails: tuple[RailIntent, ...] = Field(description="Compute rails.")
    vlans: tuple[VlanIntent, ...] = Field(description="VLANs / partitions.")
    nics: tuple[RdmaNicIntent, ...] = Field(description="Compute RDMA NIC ports.")
    cables: tuple[CableIntent, ...] = Field(description="All cables.")
    planned: dict[str, str] = Field(
        default_factory=dict,
        description="Site name → planned name of every device the site renamed (Pulumi "
        "aliases: a rename previews as a rename, not a delete and a create).",
    )

    @property
    def spec(self) -> FabricSpec:
        """The spec this intent was derived from."""
        return FabricSpec.model_validate(self.summary.spec)


RESOURCE_KINDS: dict[str, type[_Record]] = {
    "Fabric": FabricSummary,
    "Switch": SwitchIntent,
    "Rail": RailIntent,
    "Vlan": VlanIntent,
    "RdmaNic": RdmaNicIntent,
    "Cable": CableIntent,
}
"""Pulumi resource kind (the type token's last part) → intent record class."""


def intent_from_resources(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> FabricIntent:
    """Rebuild a FabricIntent from (kind, props) pairs, e.g. the resources a policy sees.

    Cable resources may group cables (``cables`` list in props); both shapes are accepted.
    """
    buckets: dict[str, list[Any]] = {k: [] for k in RESOURCE_KINDS}
    for kind, props in resources:
        if kind == "CableBundle" or (kind == "Cable" and "cables" in props):
            buckets["Cable"].extend(CableIntent.model_validate(c) for c in decode_cables(props))
            continue
        if kind == "RdmaNicGroup":
            buckets["RdmaNic"].extend(RdmaNicIntent.model_validate(n) for n in decode_nics(props))
            continue
        cls = RESOURCE_KINDS.get(kind)
        if cls is not None:
            buckets[kind].append(cls.model_validate(dict(props)))
    summaries = buckets["Fabric"]
    if not summaries:
        raise ValueError("no fabric:Fabric resource among the resources")
    return FabricIntent.model_construct(
        summary=summaries[0],
        switches=tuple(buckets["Switch"]),
        rails=tuple(buckets["Rail"]),
        vlans=tuple(buckets["Vlan"]),
        nics=tuple(buckets["RdmaNic"]),
        cables=tuple(buckets["Cable"]),
    )
