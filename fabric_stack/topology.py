"""Port-level fabric topology: every server, switch, NIC and cable of a SizingPlan.

:func:`build_topology` realises a :class:`~fabric_stack.sizing.SizingPlan`
port by port. Its link list is the single source of every count downstream
(cabling exports, BOM, Pulumi resources, drift); the networkx graph built from
it (:attr:`FabricTopology.graph`) answers reachability and min-cut questions.

Wiring rules (see :mod:`fabric_stack.sizing` for why):

* **Rail-optimized.** Server *j* of an SU uses downlink port *j* of every rail
  leaf of that SU; NIC ``mlx5_(r-1)`` goes to the rail-*r* leaf.
* **Even spreading.** Leaf uplink *u* (0-based, port ``down + 1 + u``) goes to
  spine ``u mod S`` in link slot ``u div S``; on the spine it lands on port
  ``slot × stride + ℓ + 1`` where ℓ is the leaf's index in its pod. Spines
  reach cores the same way (spine *j* of each pod → core group *j*).
* **Deterministic.** Numbers depend only on (SU, rail, server index, uplink
  index), so adding an SU adds links and never renumbers an existing one while
  the spine count is unchanged. When the spine count doubles, exactly the
  uplinks in odd link slots move to the new spines (``s + S_old``), the new
  SU's leaves take the spine ports they vacate, and every other cable keeps
  both ends.

Records are slotted frozen dataclasses rather than pydantic models: a
131,072-GPU plan has ~460k links, and validating each would cost seconds for
no gain (they are built here from already-validated data).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Literal

from .catalog import SwitchModel, lookup_switch, port_mode
from .errors import CatalogError, SpecError
from .naming import (
    access_switch_name,
    core_name,
    leaf_name,
    nic_name,
    node_name,
    spine_name,
    switch_port_label,
)
from .networks import NETWORK_TITLES
from .sizing import SizingPlan

if TYPE_CHECKING:
    import networkx as nx

LinkRole = Literal["node_leaf", "leaf_spine", "spine_core", "storage", "inband", "oob"]
"""What a cable connects. The first three are the compute fabric."""

COMPUTE_ROLES: tuple[str, ...] = ("node_leaf", "leaf_spine", "spine_core")
"""Link roles that belong to the compute fabric."""

SERVERS_PER_RACK = 4
"""Servers per rack: four 8-GPU servers (~40 kW) is the common air-cooled density."""


@dataclass(frozen=True, slots=True)
class Device:
    """A switch or server. ``role`` is leaf/spine/core, server, or storage/inband/oob."""

    name: str
    role: str
    model: str
    network: str
    plane: int = 0
    su: int = 0
    pod: int = 0
    rail: int = 0
    index: int = 0
    radix: int = 0
    rack: str = ""
    position: int = 0


@dataclass(frozen=True, slots=True)
class Nic:
    """A compute RDMA NIC port of a server and its PCIe placement."""

    node: str
    name: str
    rail: int
    plane: int
    pcie_switch: str
    numa: int
    gpus: tuple[int, ...]
    gpu_pcie_switches: tuple[str, ...]
    gpu_numas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Link:
    """One cable. The a-end is the lower tier (server, leaf, spine); ``id`` is its a-end."""

    id: str
    role: str
    network: str
    a_device: str
    a_port: str
    a_port_number: int
    b_device: str
    b_port: str
    b_port_number: int
    speed_gbps: int
    plane: int = 0
    rail: int = 0
    su: int = 0
    pod: int = 0
    medium: str = ""
    a_optic: str = ""
    b_optic: str = ""
    cable_type: str = ""

    def key(self) -> frozenset[tuple[str, str]]:
        """Identity of the cable regardless of direction: its two (device, port) ends."""
        return frozenset(((self.a_device, self.a_port), (self.b_device, self.b_port)))


@dataclass(frozen=True, slots=True)
class NetworkPlan:
    """One of the four networks: VLAN(s), subnet(s) and the switches that carry it."""

    name: str
    title: str
    attach: str
    vlans: tuple[int, ...]
    subnets: tuple[str, ...]
    carriers: tuple[str, ...]
    mtu: int


@dataclass(frozen=True)
class FabricTopology:
    """The port-level plan: devices, NICs, links and network plans (immutable)."""

    plan: SizingPlan
    devices: tuple[Device, ...]
    nics: tuple[Nic, ...]
    links: tuple[Link, ...]
    networks: tuple[NetworkPlan, ...]
    _by_name: dict[str, Device] = field(default_factory=dict, repr=False, compare=False)

    def device(self, name: str) -> Device:
        """Device by name."""
        if not self._by_name:
            self._by_name.update((d.name, d) for d in self.devices)
        return self._by_name[name]

    def switches(self, *roles: str) -> Iterator[Device]:
        """Switches, optionally only those of the given roles."""
        for d in self.devices:
            if d.role != "server" and (not roles or d.role in roles):
                yield d

    def links_of(self, *roles: str) -> Iterator[Link]:
        """Links of the given roles (all when none given)."""
        for link in self.links:
            if not roles or link.role in roles:
                yield link

    def count_links(self) -> dict[str, int]:
        """Cables per role, counted from the link list."""
        out: dict[str, int] = {}
        for link in self.links:
            out[link.role] = out.get(link.role, 0) + 1
        return out

    def count_switches(self) -> dict[str, int]:
        """Switches per role, counted from the device list."""
        out: dict[str, int] = {}
        for d in self.devices:
            if d.role != "server":
                out[d.role] = out.get(d.role, 0) + 1
        return out

    @cached_property
    def graph(self) -> nx.MultiGraph:
        """networkx MultiGraph: devices, GPUs, NICs and PCIe switches; one edge per cable.

        Built on first use (it is the expensive part at large scale). Cable edges
        carry ``key=link.id`` and the link's attributes; PCIe attachments carry
        ``role='pcie'``.
        """
        import networkx as nx

        g: nx.MultiGraph = nx.MultiGraph()
        for d in self.devices:
            g.add_node(d.name, kind=d.role, model=d.model, plane=d.plane, su=d.su, rail=d.rail)
        for n in self.nics:
            nic = f"{n.node}/{n.name}"
            sw = f"{n.node}/{n.pcie_switch}"
            g.add_node(nic, kind="nic", rail=n.rail, plane=n.plane, numa=n.numa)
            g.add_node(sw, kind="pcie_switch", numa=n.numa)
            g.add_edge(n.node, sw, role="pcie")
            g.add_edge(sw, nic, role="pcie")
            for gpu, gsw in zip(n.gpus, n.gpu_pcie_switches, strict=True):
                gname = f"{n.node}/gpu{gpu}"
                if gname not in g:
                    g.add_node(gname, kind="gpu")
                    g.add_edge(gname, f"{n.node}/{gsw}", role="pcie")
        for link in self.links:
            a = f"{link.a_device}/{link.a_port}" if link.role == "node_leaf" else link.a_device
            g.add_edge(a, link.b_device, key=link.id, role=link.role, speed_gbps=link.speed_gbps)
        return g


# --------------------------------------------------------------------------- optics


def _optic(speed: int, per_cage: int, reach: str, twin: bool) -> str:
    if speed <= 1:
        return "RJ45 (no optic)"
    if twin and per_cage == 4:
        # Four logical ports per cage are a twin-port 2×(2·speed) module on 1:2 splitter fibres.
        return f"OSFP 2×{2 * speed}G {reach} twin-port (1:2 split)"
    if twin and per_cage > 1:
        return f"OSFP {per_cage}×{speed}G {reach} twin-port"
    return f"OSFP {speed}G {reach}"


def _cable(medium: str) -> str:
    return {
        "mmf": "MPO-12/APC OM4 multimode fiber",
        "smf": "MPO-12/APC OS2 single-mode fiber",
        "copper": "Cat6 RJ45 patch cord",
    }[medium]


# --------------------------------------------------------------------------- builder


def _rack(su: int, idx: int) -> tuple[str, int]:
    r, slot = divmod(idx - 1, SERVERS_PER_RACK)
    return f"su{su}-rack{r + 1:02d}", slot


def _access_model(name: str, speed: int, net: str) -> tuple[SwitchModel, int, int]:
    try:
        model = lookup_switch(name, "ethernet")
        mode = port_mode(model, speed)
    except CatalogError as exc:
        raise SpecError(f"networks.{net}.switch", exc.problem, exc.valid) from None
    radix = model.cages * mode.ports_per_cage
    # Dedicated access switches keep half their ports for uplinks (non-blocking),
    # except 1G OOB switches whose uplinks are separate 100G ports.
    down = radix if speed <= 1 else radix // 2
    return model, down, mode.ports_per_cage


def build_topology(plan: SizingPlan) -> FabricTopology:
    """Realise ``plan`` port by port (see the module docstring for the wiring rules)."""
    spec = plan.spec
    prof = spec.node_profile
    sw = plan.switch_model
    os_fam = sw.os_family
    ppc = plan.ports_per_cage
    planes, rails = plan.planes, plan.rails
    speed = plan.link_gbps
    devices: list[Device] = []
    nics: list[Nic] = []
    links: list[Link] = []
    net_compute = "compute"

    leaf_opt_down = _optic(speed, ppc, "SR", True)
    nic_opt = _optic(speed, 1, "SR", False)
    sw_opt_mmf = _optic(speed, ppc, "SR", True)
    sw_opt_smf = _optic(speed, ppc, "DR", True)
    mmf, smf = _cable("mmf"), _cable("smf")

    def label(n: int) -> str:
        return switch_port_label(os_fam, n, ppc)

    # ---- servers, NICs (PCIe placement from the node profile)
    gpu_sw = {g: prof.switch_of_gpu(g) for g in range(prof.gpus)}
    nic_gpus = {
        n: tuple(g for g in range(prof.gpus) if prof.nic_for_gpu(g) == n) for n in range(rails)
    }
    node_names: list[list[str]] = []
    for su in range(1, plan.sus + 1):
        names = []
        for j in range(1, plan.nodes_in_su(su) + 1):
            name = node_name(su, j, plan.su_nodes)
            rack, slot = _rack(su, j)
            devices.append(
                Device(
                    name,
                    "server",
                    prof.name,
                    "compute",
                    su=su,
                    index=j,
                    rack=rack,
                    position=1 + slot * prof.rack_units,
                )
            )
            names.append(name)
            for p in range(1, planes + 1):
                for r in range(1, rails + 1):
                    nsw = prof.switch_of_nic(r - 1)
                    gs = nic_gpus[r - 1]
                    nics.append(
                        Nic(
                            name,
                            nic_name(r, p, rails),
                            r,
                            p,
                            nsw.name,
                            nsw.numa,
                            gs,
                            tuple(gpu_sw[g].name for g in gs),
                            tuple(gpu_sw[g].numa for g in gs),
                        )
                    )
        node_names.append(names)

    # ---- leaves and server-to-leaf cables
    down, up = plan.leaf_down, plan.leaf_up
    leaf_names: dict[tuple[int, int, int], str] = {}
    for p in range(1, planes + 1):
        for su in range(1, plan.sus + 1):
            pod = (su - 1) // plan.sus_per_pod + 1 if plan.tiers == 3 else 0
            for r in range(1, rails + 1):
                lname = leaf_name(su, r, p, planes)
                leaf_names[(p, su, r)] = lname
                devices.append(
                    Device(
                        lname,
                        "leaf",
                        sw.key,
                        net_compute,
                        plane=p,
                        su=su,
                        pod=pod,
                        rail=r,
                        index=r,
                        radix=plan.radix,
                        rack=f"su{su}-net",
                        position=1 + ((p - 1) * rails + r - 1) * sw.rack_units,
                    )
                )
                nic = nic_name(r, p, rails)
                for j, node in enumerate(node_names[su - 1], start=1):
                    links.append(
                        Link(
                            f"{node}:{nic}",
                            "node_leaf",
                            net_compute,
                            node,
                            nic,
                            1,
                            lname,
                            label(j),
                            j,
                            speed,
                            p,
                            r,
                            su,
                            pod,
                            "mmf",
                            nic_opt,
                            leaf_opt_down,
                            mmf,
                        )
                    )

    # ---- spines (and cores) with even spreading
    S = plan.spines_per_pod
    stride = plan.spine_stride
    for p in range(1, planes + 1):
        for pod in range(1, plan.pods + 1):
            pod_tag = pod if plan.tiers == 3 else 0
            spines = [spine_name(s + 1, S, pod_tag, p, planes) for s in range(S)]
            for s, sname in enumerate(spines):
                idx = (pod - 1) * S + s
                devices.append(
                    Device(
                        sname,
                        "spine",
                        sw.key,
                        net_compute,
                        plane=p,
                        pod=pod_tag,
                        index=s + 1,
                        radix=plan.radix,
                        rack=f"{f'p{p}-' if planes > 1 else ''}spine-rack{idx // 16 + 1:02d}",
                        position=1 + (idx % 16) * sw.rack_units,
                    )
                )
            first_su = (pod - 1) * plan.sus_per_pod + 1
            for su in range(first_su, first_su + plan.sus_in_pod(pod)):
                for r in range(1, rails + 1):
                    lname = leaf_names[(p, su, r)]
                    ell = (su - first_su) * rails + (r - 1)
                    for u in range(up):
                        s, t = u % S, u // S
                        lp = down + 1 + u
                        sp = t * stride + ell + 1
                        links.append(
                            Link(
                                f"{lname}:{label(lp)}",
                                "leaf_spine",
                                net_compute,
                                lname,
                                label(lp),
                                lp,
                                spines[s],
                                label(sp),
                                sp,
                                speed,
                                p,
                                r,
                                su,
                                pod_tag,
                                "mmf",
                                sw_opt_mmf,
                                sw_opt_mmf,
                                mmf,
                            )
                        )
            if plan.tiers == 3:
                G, cstride = plan.cores_per_group, plan.core_stride
                for s, sname in enumerate(spines):
                    for u in range(plan.spine_up):
                        m, t = u % G, u // G
                        spp = plan.spine_down + 1 + u
                        cp = t * cstride + pod
                        cname = core_name(s + 1, m + 1, plan.core_groups, G, p, planes)
                        links.append(
                            Link(
                                f"{sname}:{label(spp)}",
                                "spine_core",
                                net_compute,
                                sname,
                                label(spp),
                                spp,
                                cname,
                                label(cp),
                                cp,
                                speed,
                                p,
                                0,
                                0,
                                pod,
                                "smf",
                                sw_opt_smf,
                                sw_opt_smf,
                                smf,
                            )
                        )
        if plan.tiers == 3:
            for g in range(1, plan.core_groups + 1):
                for m in range(1, plan.cores_per_group + 1):
                    idx = (g - 1) * plan.cores_per_group + m - 1
                    devices.append(
                        Device(
                            core_name(g, m, plan.core_groups, plan.cores_per_group, p, planes),
                            "core",
                            sw.key,
                            net_compute,
                            plane=p,
                            index=idx + 1,
                            radix=plan.radix,
                            rack=f"{f'p{p}-' if planes > 1 else ''}core-rack{idx // 16 + 1:02d}",
                            position=1 + (idx % 16) * sw.rack_units,
                        )
                    )

    # ---- separate networks: storage, in-band, OOB access switches per SU
    nets = spec.networks
    access = nets.access()
    port_spec = {
        "storage": (prof.storage_ports, prof.storage_gbps, "stor"),
        "inband": (prof.inband_ports, prof.inband_gbps, "mgmt"),
        "oob": (prof.oob_ports, prof.oob_gbps, "bmc"),
    }
    carriers: dict[str, list[str]] = {n: [] for n in ("compute", *access)}
    carriers["compute"] = [d.name for d in devices if d.role in ("leaf", "spine", "core")]
    # Which network's switches carry each network (following attach chains once).
    carrier_of: dict[str, str] = {}
    for name, net in access.items():
        target = net.attach if net.attach != "dedicated" else name
        if target != name and target != "compute" and access[target].attach != "dedicated":
            raise SpecError(
                f"networks.{name}.attach",
                f"{target!r} is itself carried by {access[target].attach!r}",
                f"attach {name} to a network with dedicated switches",
            )
        carrier_of[name] = target
    for carrier in access:
        riders = [n for n in access if carrier_of[n] == carrier]
        if not riders:
            continue
        cnet = access[carrier]
        # One switch side per port of the carrier network (A/B redundancy), sized per SU.
        sides = max(port_spec[n][0] for n in riders) or 1
        spd = port_spec[carrier][1]
        model, cdown, cppc = _access_model(cnet.switch, spd, carrier)
        side_letters = "abcdefgh"
        # Ports each node puts on each side (port k of a rider goes to side k mod sides).
        per_node_side = [
            sum(1 for n in riders for k in range(port_spec[n][0]) if k % sides == s)
            for s in range(sides)
        ]
        for su in range(1, plan.sus + 1):
            n_nodes = plan.nodes_in_su(su)
            per_side = max(1, -(-(n_nodes * max(per_node_side)) // cdown))
            for side in range(sides):
                for i in range(1, per_side + 1):
                    swn = access_switch_name(su, carrier, side_letters[side], i)
                    devices.append(
                        Device(
                            swn,
                            carrier,
                            model.key,
                            carrier,
                            su=su,
                            index=i,
                            radix=model.cages * cppc,
                            rack=f"su{su}-net",
                            position=40 - (side * per_side + i) * model.rack_units,
                        )
                    )
                    carriers[carrier].append(swn)
            used = [0] * sides
            for rider in riders:
                nports, rspeed, pname = port_spec[rider]
                medium = "copper" if rspeed <= 1 else "mmf"
                a_opt, b_opt = _optic(rspeed, 1, "SR", False), _optic(rspeed, cppc, "SR", True)
                for node in node_names[su - 1]:
                    for k in range(nports):
                        side = k % sides
                        i, port = divmod(used[side], cdown)
                        used[side] += 1
                        swn = access_switch_name(su, carrier, side_letters[side], i + 1)
                        plabel = switch_port_label(model.os_family, port + 1, cppc)
                        links.append(
                            Link(
                                f"{node}:{pname}{k + 1}",
                                rider,
                                rider,
                                node,
                                f"{pname}{k + 1}",
                                k + 1,
                                swn,
                                plabel,
                                port + 1,
                                rspeed,
                                0,
                                0,
                                su,
                                0,
                                medium,
                                a_opt,
                                b_opt,
                                _cable(medium),
                            )
                        )

    # ---- network plans (VLANs, subnets, carriers)
    plans: list[NetworkPlan] = []
    c = nets.compute
    rail_nets = _split(c.subnet, rails * planes, "networks.compute.subnet")
    is_ib = spec.fabric == "infiniband"
    plans.append(
        NetworkPlan(
            "compute",
            NETWORK_TITLES["compute"],
            "dedicated",
            () if is_ib else tuple(spec.rail_vlan(r) for r in range(1, rails + 1)),
            tuple(str(n) for n in rail_nets),
            tuple(carriers["compute"]),
            c.mtu or (spec.infiniband.mtu if is_ib else 9000),
        )
    )
    for name, net in access.items():
        tgt = carrier_of[name]
        plans.append(
            NetworkPlan(
                name,
                NETWORK_TITLES[name],
                net.attach,
                (net.vlan,),
                (str(net.subnet),),
                tuple(carriers["compute"] if tgt == "compute" else carriers[tgt]),
                net.mtu,
            )
        )
    return FabricTopology(plan, tuple(devices), tuple(nics), tuple(links), tuple(plans))


def _split(net: IPv4Network, parts: int, field_name: str) -> list[IPv4Network]:
    bits = max(0, (parts - 1).bit_length())
    if net.prefixlen + bits > 30:
        raise SpecError(
            field_name,
            f"{net} is too small to split into {parts} rail subnets",
            "use a larger supernet, e.g. a /12",
        )
    return list(net.subnets(prefixlen_diff=bits))[:parts]
