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
property, ``record``: its canonical JSON text (:func:`record_text`,
:func:`record_of`). See the note above :data:`RECORD_KEY` for why.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .spec import FabricSpec
from .topology import COMPUTE_ROLES, FabricTopology


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    @classmethod
    def trusted(cls, **values: Any) -> Any:
        """Build from values already known to be valid, without validation.

        Like ``model_construct`` but ~10× cheaper (it matters for ~100k cables):
        defaults are filled from a per-class cache and the fields-set is shared.
        """
        cache = _DEFAULTS.get(cls)
        if cache is None:
            defaults = {
                name: f.get_default(call_default_factory=True)
                for name, f in cls.model_fields.items()
                if not f.is_required()
            }
            cache = _DEFAULTS[cls] = (defaults, set(cls.model_fields))
        defaults, fields = cache
        obj = cls.__new__(cls)
        data = {**defaults, **values} if len(values) < len(fields) else values
        object.__setattr__(obj, "__dict__", data)
        object.__setattr__(obj, "__pydantic_fields_set__", fields)
        object.__setattr__(obj, "__pydantic_extra__", None)
        object.__setattr__(obj, "__pydantic_private__", None)
        return obj

    def props(self) -> dict[str, Any]:
        """Resource properties (JSON-compatible)."""
        return self.model_dump(mode="json")


_DEFAULTS: dict[type, tuple[dict[str, Any], set[str]]] = {}


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

    @property
    def spec(self) -> FabricSpec:
        """The spec this intent was derived from."""
        return FabricSpec.model_validate(self.summary.spec)


def derive_intent(topo: FabricTopology) -> FabricIntent:
    """Turn a topology into resource records. Pure."""
    plan = topo.plan
    spec = plan.spec
    fabric = spec.fabric
    is_ib = fabric == "infiniband"
    sw_model = plan.switch_model

    down: dict[str, int] = {}
    up: dict[str, int] = {}
    speed_down: dict[str, int] = {}
    for link in topo.links:
        up[link.a_device] = up.get(link.a_device, 0) + 1
        down[link.b_device] = down.get(link.b_device, 0) + 1
        speed_down[link.b_device] = link.speed_gbps

    carried: dict[str, list[str]] = {}
    vlans_on: dict[str, list[int]] = {}
    for net in topo.networks:
        for sw in net.carriers:
            carried.setdefault(sw, []).append(net.name)
            vlans_on.setdefault(sw, []).extend(net.vlans)

    sm_hosts: set[str] = set()
    if is_ib and spec.infiniband.sm_location == "switch":
        spines = [d.name for d in topo.switches("spine")]
        sm_hosts = set(spines[: spec.infiniband.subnet_managers])

    budgets = {
        "leaf": (plan.leaf_down, plan.leaf_up),
        "spine": (plan.spine_down, plan.spine_up),
        "core": (plan.radix, 0),
    }
    switches: list[SwitchIntent] = []
    for d in topo.switches():
        compute = d.role in budgets
        qos = spec.roce.for_role(d.role) if compute and fabric == "roce" else {}
        model = sw_model if compute else None
        mtu = (
            spec.infiniband.mtu
            if (compute and is_ib)
            else qos.get("mtu", 9216)
            if compute
            else 9216
        )
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
                port_gbps=plan.link_gbps if compute else speed_down.get(d.name, 0),
                ports_down=down.get(d.name, 0),
                ports_up=up.get(d.name, 0),
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

    compute_net = next(n for n in topo.networks if n.name == "compute")
    rails: list[RailIntent] = []
    leaves_by_rail: dict[tuple[int, int], list[str]] = {}
    for d in topo.switches("leaf"):
        leaves_by_rail.setdefault((d.plane, d.rail), []).append(d.name)
    nic_count: dict[tuple[int, int], int] = {}
    for n in topo.nics:
        nic_count[(n.plane, n.rail)] = nic_count.get((n.plane, n.rail), 0) + 1
    for p in range(1, plan.planes + 1):
        for r in range(1, plan.rails + 1):
            rails.append(
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
            )

    vlans: list[VlanIntent] = []
    for net in topo.networks:
        if net.name == "compute":
            if is_ib:
                vlans.append(
                    VlanIntent.trusted(
                        name="compute-pkey",
                        network="compute",
                        vlan=0,
                        subnet=str(spec.networks.compute.subnet),
                        attach="dedicated",
                        carriers=list(net.carriers),
                        mtu=net.mtu,
                    )
                )
            else:
                for r in range(1, plan.rails + 1):
                    vid = spec.rail_vlan(r)
                    rail_leaves = [
                        x for p in range(1, plan.planes + 1) for x in leaves_by_rail.get((p, r), [])
                    ]
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

    cables = [
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
    ]
    counts = topo.count_links()
    summary = FabricSummary.trusted(
        name=spec.name,
        fabric=fabric,
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
    return FabricIntent.model_construct(
        summary=summary,
        switches=tuple(switches),
        rails=tuple(rails),
        vlans=tuple(vlans),
        nics=tuple(nics),
        cables=tuple(cables),
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


# --------------------------------------------------------------------------- bundles
#
# A CableBundle / RdmaNicGroup resource carries many records. Every value of a
# resource's props goes through the SDK's recursive (per-value) serializer
# several times per preview, so bundles list each member as one line and keep
# the fields shared by all members once. Lines read well in `pulumi preview
# --diff` ("su1-r1-leaf 1/19/1 -> spine-05 1/1/1"). A member whose shared fields
# differ (e.g. an inventory edit) is kept as a full dict instead.

CABLE_SHARED: tuple[str, ...] = (
    "role",
    "network",
    "a_speed_gbps",
    "b_speed_gbps",
    "rail",
    "plane",
    "su",
    "pod",
    "medium",
    "a_optic",
    "b_optic",
    "cable_type",
)
"""CableIntent fields a bundle states once."""

NIC_SHARED: tuple[str, ...] = ("node", "su", "speed_gbps", "network")
"""RdmaNicIntent fields a NIC group states once."""


def cable_line(c: Mapping[str, Any]) -> str:
    """``"a_device a_port -> b_device b_port"``: one cable of a bundle."""
    return f"{c['a_device']} {c['a_port']} -> {c['b_device']} {c['b_port']}"


def encode_cables(cables: list[dict[str, Any]]) -> dict[str, Any]:
    """Bundle props for ``cables`` (CableIntent props): ``shared`` + one line per cable."""
    shared = {k: cables[0][k] for k in CABLE_SHARED} if cables else {}
    items: list[Any] = []
    for c in cables:
        same = all(c[k] == shared[k] for k in CABLE_SHARED)
        items.append(cable_line(c) if same else dict(c))
    return {"shared": shared, "cables": items}


def decode_cables(props: Mapping[str, Any]) -> list[dict[str, Any]]:
    """CableIntent props of every cable in bundle ``props`` (compact or full items)."""
    shared = dict(props.get("shared") or {})
    out: list[dict[str, Any]] = []
    for item in props.get("cables") or []:
        if isinstance(item, str):
            left, _, right = item.partition(" -> ")
            a_dev, _, a_port = left.partition(" ")
            b_dev, _, b_port = right.partition(" ")
            if not (a_port and b_port):
                raise ValueError(f"cable line {item!r} is not 'a_device a_port -> b_device b_port'")
            out.append(
                {
                    **shared,
                    "name": f"{a_dev}:{a_port}",
                    "a_device": a_dev,
                    "a_port": a_port,
                    "b_device": b_dev,
                    "b_port": b_port,
                }
            )
        else:
            out.append({**shared, **dict(item)})
    return out


def nic_line(n: Mapping[str, Any]) -> str:
    """``"mlx5_3 r4 p1 pcie1/0 gpu 3@pcie1/0 -> su1-r4-leaf 1/7/1"``: one NIC of a group.

    NIC, rail, plane, its PCIe switch/NUMA node, each served GPU with its PCIe
    switch/NUMA node, and the leaf port it is cabled to.
    """
    gpus = ",".join(
        f"{g}@{s}/{u}"
        for g, s, u in zip(n["gpus"], n["gpu_pcie_switches"], n["gpu_numas"], strict=True)
    )
    return (
        f"{n['nic']} r{n['rail']} p{n['plane']} {n['pcie_switch']}/{n['numa']} "
        f"gpu {gpus or '-'} -> {n['leaf']} {n['leaf_port']}"
    )


def encode_nics(nics: list[dict[str, Any]]) -> dict[str, Any]:
    """NIC-group props for ``nics`` (RdmaNicIntent props): ``shared`` + one line per NIC."""
    shared = {k: nics[0][k] for k in NIC_SHARED} if nics else {}
    items: list[Any] = []
    for n in nics:
        same = all(n[k] == shared[k] for k in NIC_SHARED) and n["name"] == f"{n['node']}:{n['nic']}"
        items.append(nic_line(n) if same else dict(n))
    return {"shared": shared, "nics": items}


def decode_nics(props: Mapping[str, Any]) -> list[dict[str, Any]]:
    """RdmaNicIntent props of every NIC in group ``props`` (compact or full items)."""
    shared = dict(props.get("shared") or {})
    out: list[dict[str, Any]] = []
    for item in props.get("nics") or []:
        if not isinstance(item, str):
            out.append({**shared, **dict(item)})
            continue
        try:
            left, _, right = item.partition(" -> ")
            nic, rail, plane, pcie, _gpu, gpus = left.split(" ")
            sw, _, numa = pcie.rpartition("/")
            leaf, _, leaf_port = right.partition(" ")
            triples = [] if gpus == "-" else [g.split("@") for g in gpus.split(",")]
            out.append(
                {
                    **shared,
                    "name": f"{shared.get('node')}:{nic}",
                    "nic": nic,
                    "rail": int(rail[1:]),
                    "plane": int(plane[1:]),
                    "pcie_switch": sw,
                    "numa": int(numa),
                    "gpus": [int(g) for g, _ in triples],
                    "gpu_pcie_switches": [loc.rpartition("/")[0] for _, loc in triples],
                    "gpu_numas": [int(loc.rpartition("/")[2]) for _, loc in triples],
                    "leaf": leaf,
                    "leaf_port": leaf_port,
                }
            )
        except ValueError as exc:
            raise ValueError(f"NIC line {item!r} is malformed ({exc})") from None
    return out


# --------------------------------------------------------------------------- wire format
#
# Why one JSON text property per record and not one property per field: the
# Python SDK turns every top-level input into an Output it tracks until the
# program ends (and waits on all of them, repeatedly), and the engine marshals,
# copies and logs every value of every resource several times per preview. A
# 1,226-resource preview (1,024 -> 4,096 GPUs) took 12-15 s with flat records
# and 2x the time of the same number of one-property resources; see
# bench/README.md. A string is one value for both. Pulumi's diff display
# decodes JSON text, so `pulumi preview --diff` still shows the record field by
# field ("~ record: (json) { ~ ports_up: 16 => 32 }").

RECORD_KEY = "record"
"""Resource input holding the record's JSON text."""


def record_text(fields: Mapping[str, Any]) -> str:
    """Canonical JSON of a record's fields (sorted keys, compact): equal records, equal text.

    Canonical so that a record read back from the inventory (``pulumi refresh``)
    is the same text the program sent, and the state does not churn.
    """
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_of(props: Mapping[str, Any]) -> dict[str, Any]:
    """The record fields of resource ``props`` (the inverse of :func:`record_text`).

    Props without a ``record`` key are taken to be the fields themselves.
    Raises ValueError when ``record`` is not the JSON text of an object.
    """
    raw = props.get(RECORD_KEY)
    if raw is None:
        return dict(props)
    if not isinstance(raw, str):
        raise ValueError(f"{RECORD_KEY}: expected JSON text, got {type(raw).__name__}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{RECORD_KEY}: not JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{RECORD_KEY}: expected a JSON object, got {type(value).__name__}")
    return value
