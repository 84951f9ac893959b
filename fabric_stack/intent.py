"""FabricIntent: the plan as plain records, one per Pulumi resource.

:func:`derive_intent` is the last pure stage. Its records are what the Pulumi
components turn into resources (their fields become resource properties) and
what the policy rules judge, so the same rule code runs in ``fabric-stack
check`` and inside the CrossGuard pack (which rebuilds these records from
resource properties with :func:`intent_from_resources`).

Records are pydantic models (their JSON schema documents the resource props),
built here with ``model_construct``: the values come from an already-validated
plan, and validating ~100k cable records would cost seconds.

On the wire (Pulumi resource inputs and state) a record travels as one
property, ``record``: its canonical JSON text; bundles list their members one
line each. That format is :mod:`fabric_stack.wire`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .compat.pydantic_internals import trusted_instance
from .rename import planned_names
from .spec import FabricSpec
from .topology import COMPUTE_ROLES, FabricTopology, NetworkPlan
from .wire import decode_cables, decode_nics


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
    gpus: list[int] = Field(description="GPU indices this NIC serves.")
    gpu_pcie_switches: list[str] = Field(description="PCIe switch of each served GPU.")
    gpu_numas: list[int] = Field(description="NUMA node of each served GPU.")
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
    subnet_managers: int = Field(default=0, description="InfiniBand subnet managers planned.")
    sm_location: str = Field(default="", description="Where the subnet managers run.")


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


def derive_intent(topo: FabricTopology) -> FabricIntent:
    """Turn a topology into resource records. Pure.

    The steps, in order (one record kind each):

    1. :func:`_switch_records` — every switch with its cabled ports, budgets, VLANs
       and lossless settings (:func:`_port_usage`, :func:`_carried_networks`,
       :func:`_subnet_manager_hosts`);
    2. :func:`_rail_records` — one record per (plane, rail);
    3. :func:`_vlan_records` — the compute rail VLANs (or IB partition) and one VLAN
       per access network;
    4. :func:`_nic_records` — every compute NIC port with its PCIe placement and leaf port;
    5. :func:`_cable_records` — one record per link;
    6. :func:`_summary` — the spec and the sizing headline;
    7. :func:`~fabric_stack.rename.planned_names` — the planned name of each renamed device.
    """
    leaves_by_rail: dict[tuple[int, int], list[str]] = {}
    for d in topo.switches("leaf"):
        leaves_by_rail.setdefault((d.plane, d.rail), []).append(d.name)
    return FabricIntent.model_construct(
        summary=_summary(topo),
        switches=_switch_records(topo),
        rails=_rail_records(topo, leaves_by_rail),
        vlans=_vlan_records(topo, leaves_by_rail),
        nics=_nic_records(topo),
        cables=_cable_records(topo),
        planned=planned_names(topo),
    )


class _PortUsage(NamedTuple):
    down: dict[str, int]
    """Cables whose upper (b) end is the device."""
    up: dict[str, int]
    """Cables whose lower (a) end is the device."""
    speed_down: dict[str, int]
    """Speed of the device's downward cables."""


def _port_usage(topo: FabricTopology) -> _PortUsage:
    """Cabled ports per device, counted from the link list."""
    usage = _PortUsage({}, {}, {})
    for link in topo.links:
        usage.up[link.a_device] = usage.up.get(link.a_device, 0) + 1
        usage.down[link.b_device] = usage.down.get(link.b_device, 0) + 1
        usage.speed_down[link.b_device] = link.speed_gbps
    return usage


def _carried_networks(topo: FabricTopology) -> tuple[dict[str, list[str]], dict[str, list[int]]]:
    """Per switch: the networks it carries and their VLAN ids."""
    carried: dict[str, list[str]] = {}
    vlans_on: dict[str, list[int]] = {}
    for net in topo.networks:
        for sw in net.carriers:
            carried.setdefault(sw, []).append(net.name)
            vlans_on.setdefault(sw, []).extend(net.vlans)
    return carried, vlans_on


def _subnet_manager_hosts(topo: FabricTopology) -> set[str]:
    """InfiniBand with switch-hosted subnet managers: the first spines run them."""
    spec = topo.plan.spec
    if spec.fabric != "infiniband" or spec.infiniband.sm_location != "switch":
        return set()
    spines = [d.name for d in topo.switches("spine")]
    return set(spines[: spec.infiniband.subnet_managers])


def _switch_records(topo: FabricTopology) -> tuple[SwitchIntent, ...]:
    """One :class:`SwitchIntent` per switch, in device order."""
    plan = topo.plan
    spec = plan.spec
    fabric = spec.fabric
    usage = _port_usage(topo)
    carried, vlans_on = _carried_networks(topo)
    sm_hosts = _subnet_manager_hosts(topo)
    budgets = {
        "leaf": (plan.leaf_down, plan.leaf_up),
        "spine": (plan.spine_down, plan.spine_up),
        "core": (plan.radix, 0),
    }
    switches: list[SwitchIntent] = []
    for d in topo.switches():
        compute = d.role in budgets
        qos = spec.roce.for_role(d.role) if compute and fabric == "roce" else {}
        model = plan.switch_model if compute else None
        if compute and fabric == "infiniband":
            mtu = spec.infiniband.mtu
        else:
            mtu = qos.get("mtu", 9216) if compute else 9216
        db, ub = budgets.get(d.role, (d.radix, 0))
        switches.append(
            SwitchIntent.trusted(
                name=d.name,
                role=d.role,
                network=d.network,
                networks_carried=carried.get(d.name, [d.network]),
                vlans=sorted(set(vlans_on.get(d.name, []))),
                model=d.model,
                model_name=model.name if model else d.model,
                fabric=fabric if compute else "ethernet",
                radix=d.radix,
                port_gbps=plan.link_gbps if compute else usage.speed_down.get(d.name, 0),
                ports_down=usage.down.get(d.name, 0),
                ports_up=usage.up.get(d.name, 0),
                ports_down_budget=db,
                ports_up_budget=ub,
                plane=d.plane,
                su=d.su,
                pod=d.pod,
                rail=d.rail,
                rack=d.rack,
                position=d.position,
                mtu=mtu,
                pfc_priorities=qos.get("pfc_priorities", []),
                ecn=qos.get("ecn", False),
                dscp_trust=qos.get("dscp_trust", False),
                subnet_manager=d.name in sm_hosts,
            )
        )
    return tuple(switches)


def _compute_network(topo: FabricTopology) -> NetworkPlan:
    return next(n for n in topo.networks if n.name == "compute")


def _rail_records(
    topo: FabricTopology, leaves_by_rail: dict[tuple[int, int], list[str]]
) -> tuple[RailIntent, ...]:
    """One :class:`RailIntent` per (plane, rail), with its leaves, NIC count and subnet."""
    plan = topo.plan
    spec = plan.spec
    is_ib = spec.fabric == "infiniband"
    compute_net = _compute_network(topo)
    nic_count: dict[tuple[int, int], int] = {}
    for n in topo.nics:
        nic_count[(n.plane, n.rail)] = nic_count.get((n.plane, n.rail), 0) + 1
    return tuple(
        RailIntent.trusted(
            name=f"{f'p{p}-' if plan.planes > 1 else ''}rail-{r}",
            rail=r,
            plane=p,
            leaves=leaves_by_rail.get((p, r), []),
            nics=nic_count.get((p, r), 0),
            subnet=compute_net.subnets[(p - 1) * plan.rails + r - 1],
            vlan=0 if is_ib else spec.rail_vlan(r),
            pkey=spec.networks.compute.pkey if is_ib else "",
        )
        for p in range(1, plan.planes + 1)
        for r in range(1, plan.rails + 1)
    )


def _vlan_records(
    topo: FabricTopology, leaves_by_rail: dict[tuple[int, int], list[str]]
) -> tuple[VlanIntent, ...]:
    """The compute network's rail VLANs (IB: one partition), then one per access network."""
    vlans: list[VlanIntent] = []
    for net in topo.networks:
        if net.name == "compute":
            vlans.extend(_compute_vlans(topo, net, leaves_by_rail))
        else:
            vlans.append(
                VlanIntent.trusted(
                    name=f"{net.name}-vlan{net.vlans[0]}",
                    network=net.name,
                    vlan=net.vlans[0],
                    subnet=net.subnets[0],
                    attach=net.attach,
                    carriers=list(net.carriers),
                    mtu=net.mtu,
                )
            )
    return tuple(vlans)


def _compute_vlans(
    topo: FabricTopology, net: NetworkPlan, leaves_by_rail: dict[tuple[int, int], list[str]]
) -> list[VlanIntent]:
    """InfiniBand: the compute partition; Ethernet: one VLAN per rail on its leaves."""
    plan = topo.plan
    spec = plan.spec
    if spec.fabric == "infiniband":
        return [
            VlanIntent.trusted(
                name="compute-pkey",
                network="compute",
                vlan=0,
                subnet=str(spec.networks.compute.subnet),
                attach="dedicated",
                carriers=list(net.carriers),
                mtu=net.mtu,
            )
        ]
    vlans: list[VlanIntent] = []
    for r in range(1, plan.rails + 1):
        vid = spec.rail_vlan(r)
        rail_leaves = [x for p in range(1, plan.planes + 1) for x in leaves_by_rail.get((p, r), [])]
        vlans.append(
            VlanIntent.trusted(
                name=f"compute-rail{r}-vlan{vid}",
                network="compute",
                vlan=vid,
                subnet=net.subnets[r - 1],
                attach="dedicated",
                carriers=rail_leaves,
                mtu=net.mtu,
            )
        )
    return vlans


def _nic_records(topo: FabricTopology) -> tuple[RdmaNicIntent, ...]:
    """One :class:`RdmaNicIntent` per compute NIC port, with the leaf port it is cabled to."""
    nic_link = {link.id: link for link in topo.links_of("node_leaf")}
    nics: list[RdmaNicIntent] = []
    for n in topo.nics:
        key = f"{n.node}:{n.name}"
        link = nic_link[key]
        nics.append(
            RdmaNicIntent.trusted(
                name=key,
                node=n.node,
                nic=n.name,
                rail=n.rail,
                plane=n.plane,
                su=link.su,
                pcie_switch=n.pcie_switch,
                numa=n.numa,
                gpus=list(n.gpus),
                gpu_pcie_switches=list(n.gpu_pcie_switches),
                gpu_numas=list(n.gpu_numas),
                leaf=link.b_device,
                leaf_port=link.b_port,
                speed_gbps=link.speed_gbps,
                network="compute",
            )
        )
    return tuple(nics)


def _cable_records(topo: FabricTopology) -> tuple[CableIntent, ...]:
    """One :class:`CableIntent` per link, in link order."""
    return tuple(
        CableIntent.trusted(
            name=link.id,
            role=link.role,
            network=link.network,
            a_device=link.a_device,
            a_port=link.a_port,
            b_device=link.b_device,
            b_port=link.b_port,
            a_speed_gbps=link.speed_gbps,
            b_speed_gbps=link.speed_gbps,
            rail=link.rail,
            plane=link.plane,
            su=link.su,
            pod=link.pod,
            medium=link.medium,
            a_optic=link.a_optic,
            b_optic=link.b_optic,
            cable_type=link.cable_type,
        )
        for link in topo.links
    )


def _summary(topo: FabricTopology) -> FabricSummary:
    """The cluster-wide record: the spec and the sizing headline, counted from the links."""
    plan = topo.plan
    spec = plan.spec
    is_ib = spec.fabric == "infiniband"
    counts = topo.count_links()
    return FabricSummary.trusted(
        name=spec.name,
        fabric=spec.fabric,
        spec=spec.model_dump(mode="json"),
        tiers=plan.tiers,
        gpus=spec.gpus,
        link_gbps=plan.link_gbps,
        bisection_tbps=plan.bandwidth.bisection_tbps,
        injection_tbps=plan.bandwidth.injection_tbps,
        oversubscription=plan.oversubscription,
        switches={r: sum(1 for _ in topo.switches(r)) for r in ("leaf", "spine", "core")},
        cables={r: counts.get(r, 0) for r in (*COMPUTE_ROLES, "storage", "inband", "oob")},
        subnet_managers=spec.infiniband.subnet_managers if is_ib else 0,
        sm_location=spec.infiniband.sm_location if is_ib else "",
    )


R = TypeVar("R", bound=_Record)

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
