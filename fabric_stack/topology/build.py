"""Port-level fabric topology: every server, switch, NIC and cable of a SizingPlan.

:func:`build_topology` realises a :class:`~fabric_stack.sizing.size.SizingPlan`
port by port. Its link list is the single source of every count downstream
(cabling exports, BOM, Pulumi resources, drift); the networkx graph built from
it (:attr:`FabricTopology.graph`) answers reachability and min-cut questions.

Wiring rules (see :mod:`fabric_stack.sizing.size` for why):

* **Rail-optimized.** Server *j* of an SU uses downlink port *j* of every rail
  leaf of that SU; NIC ``mlx5_(r-1)`` goes to the rail-*r* leaf. An SU larger than
  one leaf has several leaves per rail: server *j* lands on leaf
  ``(j - 1) div per_leaf + 1`` of each rail at port ``(j - 1) mod per_leaf + 1``
  (:mod:`fabric_stack.sizing.rail_groups`).
* **Rail-grouped spines.** With ``spine_grouping: rail`` each rail has its own spine
  group (``r3-spine-05``); a rail-*r* leaf reaches only group *r*, and ℓ below counts
  the leaves of that rail only.
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

The records it returns (:class:`Device`, :class:`Nic`, :class:`Link`,
:class:`NetworkPlan`, :class:`FabricTopology`) are defined in
:mod:`fabric_stack.topology.model` and re-exported here.
"""

from __future__ import annotations

from itertools import repeat

from fabric_stack.naming.devices import core_name, leaf_name, nic_name, node_name, spine_name
from fabric_stack.sizing.managers import manager_name, manager_slot
from fabric_stack.sizing.rail_groups import leaf_of_server
from fabric_stack.sizing.size import SizingPlan
from fabric_stack.spec.networks import NETWORK_TITLES, attach_carriers, rail_subnets
from fabric_stack.topology.build_access import add_access_networks
from fabric_stack.topology.build_parts import Build as _Build
from fabric_stack.topology.build_parts import cable_type as _cable
from fabric_stack.topology.build_parts import new_device, new_link, new_nic
from fabric_stack.topology.build_parts import optic as _optic
from fabric_stack.topology.build_parts import rack_slot as _rack
from fabric_stack.topology.model import (
    COMPUTE_ROLES,
    FABRIC_ROLES,
    HOST_ROLES,
    MANAGER_ROLE,
    SERVERS_PER_RACK,
    Device,
    FabricTopology,
    Link,
    LinkRole,
    NetworkPlan,
    Nic,
)
from fabric_stack.topology.racking import fit_network_racks
from fabric_stack.topology.rename import rename_topology

__all__ = [
    "COMPUTE_ROLES",
    "FABRIC_ROLES",
    "HOST_ROLES",
    "MANAGER_ROLE",
    "SERVERS_PER_RACK",
    "Device",
    "FabricTopology",
    "Link",
    "LinkRole",
    "NetworkPlan",
    "Nic",
    "build_topology",
]

# The shared build state and its small lookups (optics, cable types, racks) are in
# build_parts; the steps below are the wiring rules.


def build_topology(plan: SizingPlan) -> FabricTopology:
    """Realise ``plan`` port by port (see the module docstring for the wiring rules).

    The steps, in order (each appends to the shared device, NIC and link lists, so
    the order of the lists, and with it every name and port number, is fixed):

    1. :func:`_place_servers` — servers in their racks, their RDMA NICs and PCIe placement;
    2. :func:`_wire_rails` — one leaf per (plane, SU, rail), server-to-leaf cables;
       :func:`_wire_managers` — the fabric-manager hosts and their leaf cables;
    3. :func:`_wire_plane` — per plane: :func:`_add_spines` and :func:`_wire_spines`
       (even spreading) per pod, then :func:`_wire_cores` and :func:`_add_cores` when
       the fabric has three tiers;
    4. :func:`~fabric_stack.topology.build_access.add_access_networks` — storage, in-band and
       OOB access switches per SU and their cables;
    5. :func:`_plan_networks` — VLANs, subnets and carrier switches of the four networks;
    6. :func:`~fabric_stack.topology.rename.rename_topology` — the site's names (``naming:``
       templates, names file), last so that every rule above works on positions.

    The spec checks a build relies on (attach chains, access switch models, the compute
    subnet) run in :func:`~fabric_stack.spec.model.validate_spec`.
    """
    b = _Build(plan)
    _place_servers(b)
    _wire_rails(b)
    _wire_managers(b)
    for p in range(1, plan.planes + 1):
        _wire_plane(b, p)
    add_access_networks(b)
    fit_network_racks(plan, b.devices)  # more network racks where one cannot hold them
    networks = _plan_networks(b)
    topo = FabricTopology(plan, tuple(b.devices), tuple(b.nics), tuple(b.links), networks)
    return rename_topology(topo)


def _place_servers(b: _Build) -> None:
    """Servers of every SU, racked ``layout.servers_per_rack`` to a rack (four by default),
    and their NICs (PCIe from the profile)."""
    plan = b.plan
    prof = plan.spec.node_profile
    rails = plan.rails
    gpu_sw = {g: prof.switch_of_gpu(g) for g in range(prof.gpus)}
    nic_gpus = {
        n: tuple(g for g in range(prof.gpus) if prof.nic_for_gpu(g) == n) for n in range(rails)
    }
    # Every server has the same NICs: their fields but the server's name, once.
    per_server = []
    for p in range(1, plan.planes + 1):
        for r in range(1, rails + 1):
            nsw = prof.switch_of_nic(r - 1)
            gs = nic_gpus[r - 1]
            per_server.append(
                (
                    prof.rdma_name(r, p),
                    r,
                    p,
                    nsw.name,
                    nsw.numa,
                    gs,
                    tuple(gpu_sw[g].name for g in gs),
                    tuple(gpu_sw[g].numa for g in gs),
                )
            )
    # Those fields as columns, so that map builds a server's NICs with no generator frame or
    # argument unpacking per NIC (~500k NICs at 131k GPUs, #43).
    columns, count = list(zip(*per_server, strict=True)), len(per_server)
    per_rack, units = plan.spec.layout.servers_per_rack, prof.rack_units
    for su in range(1, plan.sus + 1):
        names = [node_name(su, j, plan.su_nodes) for j in range(1, plan.nodes_in_su(su) + 1)]
        for j, name in enumerate(names, 1):
            rack, slot = _rack(su, j, per_rack)
            # Every field of Device in order: name, role, model, network, plane, su, pod,
            # rail, index, radix, rack, position, planned.
            b.devices.append(
                new_device(
                    name,
                    "server",
                    prof.name,
                    "compute",
                    0,
                    su,
                    0,
                    0,
                    j,
                    0,
                    rack,
                    1 + slot * units,
                    "",
                )
            )
            b.nics.extend(map(new_nic, repeat(name, count), *columns))
        b.node_names.append(names)


def _wire_rails(b: _Build) -> None:
    """Leaves per (plane, SU, rail); server *j* of the SU on downlink port *j* of each
    (on its leaf of the rail, when an SU has several)."""
    plan = b.plan
    planes, rails, speed = plan.planes, plan.rails, plan.link_gbps
    lpr, per_leaf = plan.leaves_per_rail, plan.per_leaf
    prof = plan.spec.node_profile
    leaf_opt = b.compute_optic("SR")
    mmf = _cable("mmf")
    # Server j's leaf of the rail and leaf port (and its label): the same in every plane,
    # SU and rail, so worked out once per server index, not once per cable (#43).
    most = max((len(names) for names in b.node_names), default=0)
    slots = []
    for j in range(1, most + 1):
        k, port = leaf_of_server(j, per_leaf)
        slots.append((k - 1, port, b.label(port)))
    for p in range(1, planes + 1):
        for su in range(1, plan.sus + 1):
            pod = (su - 1) // plan.sus_per_pod + 1 if plan.tiers == 3 else 0
            for r in range(1, rails + 1):
                leaves = []
                for k in range(1, lpr + 1):
                    lname = leaf_name(su, r, p, planes, k if lpr > 1 else 0)
                    b.leaf_names[(p, su, r, k)] = lname
                    leaves.append(lname)
                    slot = ((p - 1) * rails + r - 1) * lpr + k - 1
                    b.devices.append(
                        Device(
                            name=lname,
                            role="leaf",
                            model=plan.switch_model.key,
                            network="compute",
                            plane=p,
                            su=su,
                            pod=pod,
                            rail=r,
                            index=(r - 1) * lpr + k,  # the rail itself with one leaf per rail
                            radix=plan.radix,
                            rack=f"su{su}-net",
                            position=1 + slot * plan.switch_model.rack_units,
                        )
                    )
                nic = prof.rdma_name(r, p)
                # A twin-port server cage (DGX OSFP) takes one 2-port module for its two rails.
                per_cage = prof.ports_per_cage(nic)
                nic_opt = _optic(speed, per_cage, "SR", per_cage > 1)
                # A last SU may hold fewer servers than the largest: zip stops at its last.
                # Every field of Link, positionally (new_link): ~500k cables (#43).
                suffix = f":{nic}"
                b.links.extend(
                    new_link(
                        node + suffix,
                        "node_leaf",
                        "compute",
                        node,
                        nic,
                        1,
                        leaves[k],
                        port_label,
                        port,
                        speed,
                        p,
                        r,
                        su,
                        pod,
                        "mmf",
                        nic_opt,
                        leaf_opt,
                        mmf,
                    )
                    for node, (k, port, port_label) in zip(
                        b.node_names[su - 1], slots, strict=False
                    )
                )


def _wire_managers(b: _Build) -> None:
    """Fabric-manager hosts (UFM / OpenSM) and their cables to the attach SU's rail leaves.

    Manager *i* (1-based; 1 is the master) has ``manager_links`` HCA ports per plane,
    named like a server's RDMA devices (:func:`~fabric_stack.naming.devices.nic_name`);
    slot ``(i - 1) × links + k`` lands where :func:`~fabric_stack.sizing.managers.manager_slot`
    says: the top free downlinks, master and standby on different rail leaves.
    """
    plan = b.plan
    if not plan.managers:
        return
    spec, su, links = plan.spec, plan.manager_su, plan.manager_links
    pod = (su - 1) // plan.sus_per_pod + 1 if plan.tiers == 3 else 0
    nic_opt, leaf_opt = _optic(plan.link_gbps, 1, "SR", False), b.compute_optic("SR")
    kind = "UFM appliance" if spec.infiniband.sm_location == "ufm" else "OpenSM host"
    for i in range(1, plan.managers + 1):
        name = manager_name(spec, i)
        b.devices.append(
            Device(
                name,
                "manager",
                kind,
                "compute",
                su=su,
                index=i,
                rack="mgmt-rack01",
                position=1 + (i - 1) * 2,
            )
        )
        for p in range(1, plan.planes + 1):
            for k in range(links):
                rail, port = manager_slot((i - 1) * links + k, plan.rails, plan.leaf_down)
                hca = nic_name(k + 1, p, links)
                b.links.append(
                    Link(
                        id=f"{name}:{hca}",
                        role=MANAGER_ROLE,
                        network="compute",
                        a_device=name,
                        a_port=hca,
                        a_port_number=1,
                        b_device=b.leaf_names[(p, su, rail, plan.leaves_per_rail)],
                        b_port=b.label(port),
                        b_port_number=port,
                        speed_gbps=plan.link_gbps,
                        plane=p,
                        rail=rail,
                        su=su,
                        pod=pod,
                        medium="mmf",
                        a_optic=nic_opt,
                        b_optic=leaf_opt,
                        cable_type=_cable("mmf"),
                    )
                )


def _wire_plane(b: _Build, p: int) -> None:
    """The upper tiers of plane ``p``: each pod's spines (per rail group when rail-grouped)
    and their cables, then the cores (never rail-grouped: a rail group has two tiers)."""
    plan = b.plan
    for pod in range(1, plan.pods + 1):
        for group in range(1, plan.spine_groups + 1):
            spines = _add_spines(b, p, pod, group)
            _wire_spines(b, p, pod, group, spines)
        if plan.tiers == 3:
            _wire_cores(b, p, pod, spines)
    if plan.tiers == 3:
        _add_cores(b, p)


def _tier_rack(plane: int, planes: int, tier: str, idx: int) -> str:
    # Sixteen spines (or cores) to a rack; dual-plane racks carry the plane in their name.
    return f"{f'p{plane}-' if planes > 1 else ''}{tier}-rack{idx // 16 + 1:02d}"


def _add_spines(b: _Build, p: int, pod: int, group: int = 1) -> list[str]:
    """The spines of ``pod`` in plane ``p`` (pod 0 in their names on a two-tier fabric);
    of rail ``group``'s spine group when the spines are rail-grouped."""
    plan = b.plan
    S = plan.spines_per_pod
    pod_tag = pod if plan.tiers == 3 else 0
    rail = group if plan.spine_groups > 1 else 0
    spines = [spine_name(s + 1, S, pod_tag, p, plan.planes, rail) for s in range(S)]
    for s, sname in enumerate(spines):
        idx = ((pod - 1) * plan.spine_groups + group - 1) * S + s
        b.devices.append(
            Device(
                name=sname,
                role="spine",
                model=plan.spine_model.key,
                network="compute",
                plane=p,
                pod=pod_tag,
                rail=rail,
                index=s + 1,
                radix=plan.spine_radix,
                rack=_tier_rack(p, plan.planes, "spine", idx),
                position=1 + (idx % 16) * plan.spine_model.rack_units,
            )
        )
    return spines


def _wire_spines(b: _Build, p: int, pod: int, group: int, spines: list[str]) -> None:
    """Leaf-to-spine cables of ``pod`` with even spreading (module docstring, rule 2): every
    leaf of the pod, or only rail ``group``'s leaves when the spines are rail-grouped."""
    plan = b.plan
    lpr = plan.leaves_per_rail
    rails = range(1, plan.rails + 1) if plan.spine_groups == 1 else range(group, group + 1)
    per_su = len(rails) * lpr
    pod_tag = pod if plan.tiers == 3 else 0
    first_su = (pod - 1) * plan.sus_per_pod + 1
    pattern = _leaf_up_pattern(b, spines)
    last = max((base for *_, base in pattern), default=0) + plan.sus_in_pod(pod) * per_su - 1
    labels = b.tier_labels_to("spine", last)
    for su in range(first_su, first_su + plan.sus_in_pod(pod)):
        for ri, r in enumerate(rails):
            for k in range(1, lpr + 1):
                lname = b.leaf_names[(p, su, r, k)]
                ell = (su - first_su) * per_su + ri * lpr + k - 1
                _wire_leaf_up(b, p, su, r, pod_tag, lname, ell, pattern, labels)


def _leaf_up_pattern(b: _Build, spines: list[str]) -> list[tuple[str, str, int, str, int]]:
    """Per leaf uplink *u*: (id suffix, port label, port number, spine ``u mod S``, spine port
    less ℓ: ``(u div S) × stride + 1``), the same for every leaf of the pod."""
    plan = b.plan
    S, stride = plan.spines_per_pod, plan.spine_stride
    ups = b.leaf_uplinks()
    return [
        (f":{ups[u][1]}", ups[u][1], ups[u][0], spines[u % S], (u // S) * stride + 1)
        for u in range(plan.leaf_up)
    ]


def _wire_leaf_up(
    b: _Build,
    p: int,
    su: int,
    r: int,
    pod_tag: int,
    lname: str,
    ell: int,
    pattern: list[tuple[str, str, int, str, int]],
    labels: list[str],
) -> None:
    """The uplinks of one leaf (index ``ell`` among its spines' leaves): uplink *u* to spine
    ``u mod S``, port ``(u div S) × stride + ℓ + 1`` (``pattern``: :func:`_leaf_up_pattern`;
    ``labels``: the spine's port labels by number)."""
    plan = b.plan
    a_optic, optic = b.leaf_uplink_optic("SR"), b.compute_optic("SR", "spine")
    mmf, speed = _cable("mmf"), plan.uplink_gbps
    # Every field of Link, positionally (new_link): ~130k cables at 131k GPUs (#43).
    b.links.extend(
        new_link(
            lname + suffix,
            "leaf_spine",
            "compute",
            lname,
            a_port,
            lp,
            spine,
            labels[base + ell],
            base + ell,
            speed,
            p,
            r,
            su,
            pod_tag,
            "mmf",
            a_optic,
            optic,
            mmf,
        )
        for suffix, a_port, lp, spine, base in pattern
    )


def _wire_cores(b: _Build, p: int, pod: int, spines: list[str]) -> None:
    """Spine-to-core cables of ``pod``: spine *j* of every pod reaches core group *j*."""
    plan = b.plan
    G, cstride = plan.cores_per_group, plan.core_stride
    optic, core_optic = b.compute_optic("DR", "spine"), b.compute_optic("DR", "core")
    smf, speed = _cable("smf"), plan.uplink_gbps
    cores = b.core_names(p)
    # Uplink u's ports (spine_down + 1 + u up, (u div G) × stride + pod on core u mod G) are
    # the same for every spine of the pod: worked out once, not per cable (#43).
    pattern = []
    for u in range(plan.spine_up):
        spp, cp = plan.spine_down + 1 + u, (u // G) * cstride + pod
        a_port = b.tier_label("spine", spp)
        pattern.append((f":{a_port}", a_port, spp, u % G, b.tier_label("core", cp), cp))
    for s, sname in enumerate(spines):
        group = cores[s]
        # Every field of Link, positionally (new_link): ~130k cables at 131k GPUs.
        b.links.extend(
            new_link(
                sname + suffix,
                "spine_core",
                "compute",
                sname,
                a_port,
                spp,
                group[m],
                core_port,
                cp,
                speed,
                p,
                0,
                0,
                pod,
                "smf",
                optic,
                core_optic,
                smf,
            )
            for suffix, a_port, spp, m, core_port, cp in pattern
        )


def _add_cores(b: _Build, p: int) -> None:
    """The core switches of plane ``p``, group by group."""
    plan = b.plan
    for g in range(1, plan.core_groups + 1):
        for m in range(1, plan.cores_per_group + 1):
            idx = (g - 1) * plan.cores_per_group + m - 1
            b.devices.append(
                Device(
                    name=core_name(g, m, plan.core_groups, plan.cores_per_group, p, plan.planes),
                    role="core",
                    model=plan.core_model.key,
                    network="compute",
                    plane=p,
                    index=idx + 1,
                    radix=plan.core_radix,
                    rack=_tier_rack(p, plan.planes, "core", idx),
                    position=1 + (idx % 16) * plan.core_model.rack_units,
                )
            )


def _plan_networks(b: _Build) -> tuple[NetworkPlan, ...]:
    """VLANs, subnets and carrier switches of the compute network and the access networks."""
    spec = b.plan.spec
    rails, planes = b.plan.rails, b.plan.planes
    c = spec.networks.compute
    is_ib = spec.fabric == "infiniband"
    plans = [
        NetworkPlan(
            name="compute",
            title=NETWORK_TITLES["compute"],
            attach="dedicated",
            vlans=() if is_ib else tuple(spec.rail_vlan(r) for r in range(1, rails + 1)),
            subnets=tuple(str(n) for n in rail_subnets(c.subnet, rails * planes)),
            carriers=tuple(b.carriers["compute"]),
            mtu=c.mtu or (spec.infiniband.mtu if is_ib else 9000),
        )
    ]
    access = spec.networks.access()
    carrier_of = attach_carriers(access)
    for name, net in access.items():
        plans.append(
            NetworkPlan(
                name=name,
                title=NETWORK_TITLES[name],
                attach=net.attach,
                vlans=(net.vlan,),
                subnets=(str(net.subnet),),
                carriers=tuple(b.carriers[carrier_of[name]]),
                mtu=net.mtu,
            )
        )
    return tuple(plans)
