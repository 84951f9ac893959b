"""Sizing: how many leaves, spines and cores a rail-optimized fabric needs, and why.

This module holds the rules a network architect applies; :func:`size_fabric`
applies them in order and returns a :class:`SizingPlan`. The port-by-port
realisation of the plan is :mod:`fabric_stack.topology.build`; the counts here and
the link list there are checked against each other by the test-suite.

The rules, in the order they are applied
----------------------------------------
1. **Port speed and radix.** A GPU's NIC line rate is split over the planes;
   the switch radix is the number of *logical* ports at that speed (a QM9700
   has 32 twin-port cages: 64 ports at NDR 400G, 128 at NDR200).
2. **Leaf split.** A leaf's ports are divided down:up in the requested ratio,
   as many as fit: ``k = radix // (A + B)``, ``down = A·k``, ``up = B·k``
   (1:1 on 64 ports → 32 down, 32 up). Per-tier models and ``uplink_gbps``
   (:mod:`fabric_stack.sizing.tiers`): spines and cores count their own model's ports at
   the uplink speed, and a leaf whose uplinks run faster splits its *cages* in capacity
   (SN5600, 400G down / 800G up at 1:1 → 64 × 400G down, 32 × 800G up).
3. **Scalable unit (SU).** An SU holds ``su_nodes`` servers (default: one per
   leaf downlink) and one leaf per rail per plane; NIC *i* of every server
   lands on the rail-*i* leaf. A partial last SU still gets all its leaves and
   all their uplinks, so it fills up later without touching the spine layer.
4. **Spine count (even spreading).** Every leaf sends the same number of links
   to every spine, so the spine count must divide a leaf's uplink count, and
   the spines' ports must cover all leaf uplinks. The spine count is the
   *smallest divisor of the leaf uplink count* whose ports cover them
   (:func:`spine_count`), not the bare ``ceil(uplinks / radix)``.
5. **Tiers.** Two tiers while some spine count satisfies rule 4 (at most
   ``radix`` leaves: ``radix × down`` endpoints, radix²/2 at 1:1). Beyond that,
   a third tier: SUs are grouped into pods whose spines give half their ports
   to the pod's leaves and half to the cores (1:1 at the spine tier); spine *j*
   of every pod connects to core group *j*, and the cores per group follow
   rule 4 again. Every pod gets the full spine set so pods stay identical.
6. **Bandwidth.** Per GPU = NIC line rate; per node = that × rails; bisection
   (full duplex, as the card counts it) is the capacity across the cut that
   puts half the NIC ports, whole leaves first, on each side
   (:func:`bisection_gbps`): GPUs × line rate when non-blocking, less when the
   leaves are oversubscribed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fabric_stack.errors import CapacityError, CatalogError, SpecError
from fabric_stack.hardware.switches import (
    CATALOG,
    Protocol,
    SwitchModel,
    lookup_switch,
    port_mode,
    radix_at,
)
from fabric_stack.sizing.build_out import final_spec, upper_tiers
from fabric_stack.sizing.managers import ManagerShape, manager_ports_on_rail, place_managers
from fabric_stack.sizing.model import (
    Bandwidth,
    BuildOut,
    CableCounts,
    SizingPlan,
    SwitchCounts,
    TierPlan,
    Transceivers,
)
from fabric_stack.sizing.rail_groups import (
    leaves_per_rail,
    rail_needs_core,
    servers_on_leaves,
    servers_per_leaf,
)
from fabric_stack.sizing.rules import (
    bisection_gbps,
    cages_used,
    divisors,
    port_stride,
    spine_count,
    split_ports,
)
from fabric_stack.sizing.tiers import Tiers, resolve_tiers, split_leaf_cages
from fabric_stack.spec.model import FabricSpec

__all__ = [
    "Bandwidth",
    "CableCounts",
    "SizingPlan",
    "SwitchCounts",
    "TierPlan",
    "Transceivers",
    "bisection_gbps",
    "cages_used",
    "divisors",
    "port_stride",
    "size_fabric",
    "spine_count",
    "split_ports",
]

# --------------------------------------------------------------------------- the stage


def _check_switch(spec: FabricSpec) -> SwitchModel:
    proto: Protocol = "infiniband" if spec.fabric == "infiniband" else "ethernet"
    model = lookup_switch(spec.switch, proto)
    if model.protocol != proto:
        fit = [
            k for k, v in _catalog_items() if v.protocol == proto and spec.link_gbps in v.speeds()
        ]
        raise CatalogError(
            "switch",
            f"{model.name} is an {model.protocol} switch but the fabric is {spec.fabric}",
            f"for {spec.fabric} at {spec.link_gbps}G use "
            + " or ".join([*fit, f"generic-<radix>x{spec.link_gbps}"]),
        )
    port_mode(model, spec.link_gbps)  # raises when the speed cannot be served
    return model


def binding_su_nodes(
    spec: FabricSpec, nodes: int, su_nodes: int, down: int, max_sus: int
) -> CapacityError | None:
    """The capacity error naming ``su_nodes`` when a small SU, not the GPU count, binds.

    Three tiers carry at most ``max_sus`` scalable units; when the leaf's full
    downlink count would fit the cluster, the SU size the user chose is the cause.
    """
    if not spec.su_nodes or su_nodes >= down or math.ceil(nodes / down) > max_sus:
        return None
    need = math.ceil(nodes / max_sus)
    return CapacityError(
        "su_nodes",
        f"{su_nodes} servers per SU make {math.ceil(nodes / su_nodes):,} SUs but three "
        f"tiers carry at most {max_sus:,}",
        f"use su_nodes {need if need == down else f'{need}-{down}'}, or leave it unset ({down})",
    )


def larger_switch_hint(current: SwitchModel, link_gbps: int) -> str:
    """Suggest larger-radix switches of the same protocol and speed, never the one in use."""
    here = [
        (k, v)
        for k, v in _catalog_items()
        if k != current.key
        and v.protocol == current.protocol
        and link_gbps in v.speeds()
        and radix_at(v, link_gbps) > radix_at(current, link_gbps)
    ]
    best = sorted(here, key=lambda kv: -radix_at(kv[1], link_gbps))[:2]
    names = [f"{k} ({radix_at(v, link_gbps)} ports at {link_gbps}G)" for k, v in best]
    return (
        "use a larger-radix switch (e.g. "
        + (" or ".join(names) if names else f"generic-<radix>x{link_gbps}")
        + "), more planes, or fewer GPUs"
    )


def _catalog_items() -> list[tuple[str, SwitchModel]]:
    return sorted(CATALOG.items())


@dataclass
class _Shape:
    """The numbers the sizing steps decide, filled in step by step (see size_fabric)."""

    spec: FabricSpec
    model: SwitchModel
    radix: int
    ports_per_cage: int
    down: int
    up: int
    tiers_of: Tiers
    """Each tier's model and port layout (:mod:`fabric_stack.sizing.tiers`)."""
    su_nodes: int = 0
    sus: int = 0
    last: int = 0
    sizes: list[int] = field(default_factory=list)
    """Servers per SU once the fabric managers have their leaf ports."""
    nodes: int = 0
    mgr: ManagerShape = field(default_factory=lambda: ManagerShape(0, 1, 0, 0, 0))
    leaves: int = 0
    """Leaves per plane."""
    two_max: int = 0
    three_max: int = 0
    tiers: int = 2
    pods: int = 1
    per_pod: int = 0
    spine_downlinks: int = 0
    """Ports of a spine that face the leaves."""
    spine_uplinks: int = 0
    """Ports of a spine that face the cores (0 in a two-tier fabric)."""
    sp_per_pod: int = 0
    spine_total: int = 0
    groups: int = 0
    cores_per_group: int = 0
    spine_core_links: int = 0
    """Links from one spine to each core of its group."""
    core_stride: int = 0
    leaf_spine_links: int = 0
    """Links from one leaf to each spine of its pod."""
    stride: int = 0
    lpr: int = 1
    """Leaves of each rail in one SU (fabric_stack.sizing.rail_groups)."""
    per_leaf: int = 0
    """Server positions of each rail leaf."""
    spine_groups: int = 1
    """Spine groups per plane and pod: 1, or the rails when rail-grouped."""
    build_out: BuildOut | None = None

    @property
    def spine_radix(self) -> int:
        """Logical ports of a spine at the uplink speed."""
        return self.tiers_of.spine.radix

    @property
    def core_radix(self) -> int:
        """Logical ports of a core at the uplink speed."""
        return self.tiers_of.core.radix

    @property
    def up_capacity(self) -> int:
        """A leaf's uplink capacity in host links (an 800G uplink over 400G links is two)."""
        t = self.tiers_of.leaf
        return self.up * t.up_gbps // t.down_gbps

    @property
    def cores_per_plane(self) -> int:
        """Core switches per plane (0 in two tiers)."""
        return self.groups * self.cores_per_group

    @property
    def per_su(self) -> int:
        """Leaves of one SU in one plane."""
        return self.spec.rails * self.lpr

    def leaf_servers(self, su: int) -> list[int]:
        """Servers on each leaf of one rail of SU ``su`` (1-based), leaf by leaf."""
        return servers_on_leaves(self.sizes[su - 1], self.per_leaf, self.lpr)


def size_fabric(spec: FabricSpec) -> SizingPlan:
    """Apply the sizing rules (module docstring) to ``spec``. Pure; raises SpecError.

    The steps, in the order of the rules:

    1. :func:`_check_switch` — the switch model serves the fabric and the port speed;
    2. :func:`_split_leaf_ports` — radix at that speed, leaf ports down:up;
    3. :func:`_form_sus` — servers per SU, SUs, leaves per plane, tier capacities;
    4. :func:`_place_spines` — two tiers when a spine count spreads evenly, otherwise
       :func:`_form_pods` (three tiers: pods, spines per pod, core groups);
    5. :func:`_spread_links` — links per leaf-spine pair and the spine port stride;
    6. :func:`_plan_of` — counts (:func:`_count_cables`, :func:`_count_switches`,
       :func:`_count_optics`), :func:`_bandwidth` and :func:`_tier_plans`.
    """
    model = _check_switch(spec) if spec.leaf_switch is None else None
    tiers = resolve_tiers(spec)
    shape = _split_leaf_ports(spec, model or tiers.leaf.model, tiers)
    _form_sus(shape)
    _place_spines(shape)
    _spread_links(shape)
    if spec.build_out_gpus:
        _reserve_build_out(shape)
    return _plan_of(shape)


def _split_leaf_ports(spec: FabricSpec, model: SwitchModel, tiers: Tiers) -> _Shape:
    """Rules 1–2: the radix at the link speed and the leaf's down:up port split (in
    capacity, over cages, when the uplinks run faster: :func:`split_leaf_cages`)."""
    mode = port_mode(model, spec.link_gbps)
    radix = radix_at(model, spec.link_gbps)
    a, b = spec.ratio
    if tiers.leaf.mixed:
        down, up = split_leaf_cages(tiers.leaf, a, b)
    else:
        down, up = split_ports(radix, a, b) if a + b <= radix else (0, 0)
    if not up:
        raise SpecError(
            "oversubscription",
            f"{spec.oversubscription} does not fit a {radix}-port leaf",
            f"A:B with A ≥ B ≥ 1 and A + B ≤ {radix}, e.g. 1:1, 2:1 or 3:1",
        )
    return _Shape(spec, model, radix, mode.ports_per_cage, down, up, tiers)


def _form_sus(s: _Shape) -> None:
    """Rule 3: servers per SU, leaves per rail (several past a leaf's downlinks), SUs,
    leaves; tier capacities."""
    spec, down, radix = s.spec, s.down, s.spine_radix
    s.su_nodes = spec.su_nodes or down
    s.lpr = leaves_per_rail(s.su_nodes, down)
    s.per_leaf = servers_per_leaf(s.su_nodes, s.lpr) if s.lpr > 1 else s.su_nodes
    rails = s.per_su
    s.sus = math.ceil(spec.nodes / s.su_nodes)
    s.last = spec.nodes - (s.sus - 1) * s.su_nodes
    # The fabric managers take leaf ports of one SU (fabric_stack.sizing.managers, the RA's rule).
    sizes = [s.su_nodes] * (s.sus - 1) + [s.last]
    # The managers take the top ports of each rail's last leaf: the SU's room is the
    # positions of its other leaves plus that leaf's downlinks.
    room = (s.lpr - 1) * s.per_leaf + down
    s.sizes, s.mgr = place_managers(spec, sizes, s.su_nodes, room)
    s.last, s.nodes = s.sizes[-1], sum(s.sizes)
    s.leaves = s.sus * rails
    two_tier_sus = radix // rails if spine_count(radix // rails * rails, s.up, radix) else 0
    s.two_max = two_tier_sus * s.su_nodes * spec.gpus_per_node
    s.three_max = s.core_radix * (radix // 2 // rails) * s.su_nodes * spec.gpus_per_node


def _place_spines(s: _Shape) -> None:
    """Rules 4–5: two tiers when some spine count spreads every leaf evenly, else pods."""
    if s.spec.spine_grouping == "rail":
        _place_rail_spines(s)
        return
    spines = spine_count(s.leaves, s.up, s.spine_radix)
    if spines is None:
        _form_pods(s)
        return
    s.tiers, s.pods, s.per_pod, s.spine_downlinks, s.spine_uplinks = 2, 1, s.sus, s.spine_radix, 0
    s.sp_per_pod = s.spine_total = spines


def _place_rail_spines(s: _Shape) -> None:
    """Rail grouping: each rail's leaves and their own spine group, two tiers per rail."""
    rail_leaves = s.sus * s.lpr
    spines = spine_count(rail_leaves, s.up, s.spine_radix)
    gpus_max = s.spine_radix // s.lpr * s.su_nodes * s.spec.gpus_per_node
    if spines is None:
        raise rail_needs_core(rail_leaves, s.spine_radix, gpus_max)
    s.tiers, s.pods, s.per_pod, s.spine_downlinks, s.spine_uplinks = 2, 1, s.sus, s.spine_radix, 0
    s.spine_groups = s.spec.rails
    s.sp_per_pod = spines
    s.spine_total = spines * s.spine_groups
    s.two_max = gpus_max


def _reserve_build_out(s: _Shape) -> None:
    """Build-out: the upper tiers of the final fabric, so this phase's cables never move."""
    final = size_fabric(final_spec(s.spec))
    p = s.spec.planes
    alone = (s.spine_total * p, s.cores_per_plane * p, _count_optics(s, 0).switch)
    t = upper_tiers(final, s.sus)
    s.tiers, s.pods, s.per_pod, s.spine_groups = t.tiers, t.pods, t.per_pod, t.spine_groups
    s.spine_downlinks, s.spine_uplinks, s.sp_per_pod = t.spine_down, t.spine_up, t.sp_per_pod
    s.groups, s.cores_per_group = t.core_groups, t.cores_per_group
    s.spine_core_links, s.core_stride = t.spine_core_links, t.core_stride
    s.leaf_spine_links, s.stride = t.leaf_spine_links, t.stride
    s.spine_total = s.pods * s.sp_per_pod * s.spine_groups
    s.build_out = BuildOut(
        final_gpus=s.spec.build_out_gpus,
        final_sus=final.sus,
        spines=s.spine_total * p,
        cores=s.cores_per_plane * p,
        standalone_spines=alone[0],
        standalone_cores=alone[1],
        free_spine_ports=(s.spine_total * s.spine_downlinks - s.leaves * s.up) * p,
        standalone_optics=alone[2],
    )


def _form_pods(s: _Shape) -> None:
    """Rule 5, three tiers: pods of SUs, spines half down/half up, core groups per spine."""
    spec, radix, rails = s.spec, s.spine_radix, s.per_su
    spine_ds = radix // 2
    spine_us = radix - spine_ds
    sus_per_pod = spine_ds // rails
    if sus_per_pod < 1:
        raise CapacityError(
            "rails",
            f"{rails} rails need {rails} leaves per pod but a spine has {spine_ds} "
            "ports toward leaves",
            "use fewer rails or a larger-radix switch",
        )
    s.tiers, s.per_pod, s.spine_downlinks, s.spine_uplinks = 3, sus_per_pod, spine_ds, spine_us
    s.pods = math.ceil(s.sus / sus_per_pod)
    sp = spine_count(sus_per_pod * rails, s.up, spine_ds)
    assert sp is not None  # sus_per_pod was chosen so one pod always fits
    s.sp_per_pod = sp
    cpg = spine_count(s.pods, spine_us, s.core_radix)
    if cpg is None:
        binding = binding_su_nodes(spec, spec.nodes, s.su_nodes, s.down, s.core_radix * sus_per_pod)
        if binding is not None:
            raise binding
        raise CapacityError(
            "gpus",
            f"{spec.gpus:,} GPUs need {s.pods} pods but three tiers of {s.core_radix}-port "
            f"{s.tiers_of.core.model.key.upper()} switches at {spec.uplink_speed}G carry "
            f"{s.core_radix} pods ({s.three_max:,} GPUs per plane)",
            larger_switch_hint(s.tiers_of.core.model, spec.uplink_speed),
        )
    s.groups, s.cores_per_group = sp, cpg
    s.spine_core_links = spine_us // cpg
    s.core_stride = port_stride(s.core_radix, s.spine_core_links)
    s.spine_total = s.pods * sp


def _spread_links(s: _Shape) -> None:
    """Rule 4: links between a leaf and each spine, and the spine port stride between slots."""
    s.leaf_spine_links = s.up // s.sp_per_pod
    s.stride = port_stride(s.spine_downlinks, s.leaf_spine_links)


def _count_cables(s: _Shape) -> CableCounts:
    """Compute-fabric cables per tier, all planes."""
    nodes, rails, p = s.nodes, s.spec.rails, s.spec.planes
    mgr = s.mgr.ports_per_plane
    return CableCounts(
        node_leaf=nodes * rails * p,
        leaf_spine=s.leaves * s.up * p,
        spine_core=s.spine_total * s.spine_uplinks * p,
        manager_leaf=mgr * p,
        total=(nodes * rails + s.leaves * s.up + s.spine_total * s.spine_uplinks + mgr) * p,
    )


def _count_switches(s: _Shape) -> SwitchCounts:
    """Compute-fabric switches per tier, all planes."""
    p = s.spec.planes
    return SwitchCounts(
        leaf=s.leaves * p,
        spine=s.spine_total * p,
        core=s.cores_per_plane * p,
        total=(s.leaves + s.spine_total + s.cores_per_plane) * p,
    )


def _count_optics(s: _Shape, nic_modules: int) -> Transceivers:
    """Optics: the cages each switch lights, with the topology's slot-major port layout.

    Ports of a partially filled spine are not contiguous, so cages are counted from
    the port ranges in use rather than from a port total.
    """
    rails, ppc, t = s.spec.rails, s.ports_per_cage, s.tiers_of
    # A mixed leaf's uplinks fill cages of their own (tiers.leaf_uplink_port).
    up_cages = -(-s.up // t.leaf.up_ports_per_cage) if t.leaf.mixed else 0
    leaf_up = [] if t.leaf.mixed else [(s.down + 1, s.down + s.up)]
    sw_optics = 0
    for su in range(1, s.sus + 1):
        on_leaves = s.leaf_servers(su)
        for rail in range(1, rails + 1):
            mgr = manager_ports_on_rail(s.mgr, rail, rails, s.down) if su == s.mgr.attach_su else []
            for k, n in enumerate(on_leaves, start=1):
                ranges = [(1, n), *leaf_up]
                if k == s.lpr:  # the managers take the top ports of each rail's last leaf
                    ranges += [(q, q) for q in mgr]
                sw_optics += cages_used(ranges, ppc) + up_cages
    for pod in range(1, s.pods + 1):
        lp = (min(s.per_pod, s.sus - (pod - 1) * s.per_pod)) * s.per_su // s.spine_groups
        ranges = [(t * s.stride + 1, t * s.stride + lp) for t in range(s.leaf_spine_links)]
        if s.tiers == 3:
            ranges.append((s.spine_downlinks + 1, s.spine_downlinks + s.spine_uplinks))
        sw_optics += s.sp_per_pod * s.spine_groups * cages_used(ranges, t.spine.ports_per_cage)
    if s.tiers == 3:
        core_ranges = [
            (t * s.core_stride + 1, t * s.core_stride + s.pods) for t in range(s.spine_core_links)
        ]
        sw_optics += s.cores_per_plane * cages_used(core_ranges, t.core.ports_per_cage)
    p = s.spec.planes
    nic_modules += s.mgr.ports_per_plane * p  # one module in each manager HCA port
    return Transceivers(nic=nic_modules, switch=sw_optics * p, total=nic_modules + sw_optics * p)


def _bandwidth(s: _Shape) -> Bandwidth:
    """Rule 6: per-GPU, per-node, injection and bisection bandwidth."""
    spec, rails, link = s.spec, s.spec.rails, s.spec.link_gbps
    bis = bisection_gbps(
        [n for su in range(1, s.sus + 1) for _ in range(rails) for n in s.leaf_servers(su)],
        s.up_capacity,
        link,
    )
    if spec.ratio == (1, 1):
        bis = s.nodes * rails * link  # non-blocking: every GPU at line rate, whatever the parity
    return Bandwidth(
        link_gbps=link,
        per_gpu_gbps=spec.nic_gbps * rails // spec.gpus_per_node,
        per_node_gbps=spec.nic_gbps * rails,
        injection_tbps=s.nodes * rails * spec.nic_gbps / 1000,
        bisection_tbps=bis * spec.planes / 1000,
    )


def _leaf_ports_used_max(s: _Shape) -> int:
    """Most ports cabled on one leaf: servers and uplinks, plus the managers on their SU."""
    most = max(max(s.leaf_servers(su)) for su in range(1, s.sus + 1)) + s.up
    if s.mgr.hosts:
        most = max(most, s.leaf_servers(s.mgr.attach_su)[-1] + s.up + s.mgr.positions)
    return most


def _tier_plans(s: _Shape) -> tuple[TierPlan, ...]:
    """Per-tier port budgets, leaf first."""
    a, b = s.spec.ratio
    p, t = s.spec.planes, s.tiers_of
    tier_plans = [
        TierPlan(
            role="leaf",
            count=s.leaves * p,
            per_plane=s.leaves,
            ports_down=s.down,
            ports_up=s.up,
            ports_used_max=_leaf_ports_used_max(s),
            radix=s.radix,
            oversubscription=f"{a}:{b}",
            model=t.leaf.model.key,
            down_gbps=t.leaf.down_gbps,
            up_gbps=t.leaf.up_gbps,
        ),
        TierPlan(
            role="spine",
            count=s.spine_total * p,
            per_plane=s.spine_total,
            ports_down=s.spine_downlinks,
            ports_up=s.spine_uplinks,
            ports_used_max=min(s.per_pod, s.sus) * s.per_su // s.spine_groups * s.leaf_spine_links
            + s.spine_uplinks,
            radix=s.spine_radix,
            oversubscription="1:1" if s.tiers == 3 else "-",
            model=t.spine.model.key,
            down_gbps=t.spine.down_gbps,
            up_gbps=t.spine.up_gbps if s.tiers == 3 else 0,
        ),
    ]
    if s.tiers == 3:
        tier_plans.append(
            TierPlan(
                role="core",
                count=s.cores_per_plane * p,
                per_plane=s.cores_per_plane,
                ports_down=s.core_radix,
                ports_up=0,
                ports_used_max=s.pods * s.spine_core_links,
                radix=s.core_radix,
                oversubscription="-",
                model=t.core.model.key,
                down_gbps=t.core.down_gbps,
                up_gbps=0,
            )
        )
    return tuple(tier_plans)


def _plan_of(s: _Shape) -> SizingPlan:
    """The :class:`SizingPlan` of a fully decided shape, with its counts and figures."""
    spec = s.spec
    a, b = spec.ratio
    cables = _count_cables(s)
    return SizingPlan(
        spec=spec,
        switch_model=s.model,
        link_gbps=spec.link_gbps,
        radix=s.radix,
        ports_per_cage=s.ports_per_cage,
        nodes=s.nodes,
        rails=spec.rails,
        planes=spec.planes,
        su_nodes=s.su_nodes,
        sus=s.sus,
        last_su_nodes=s.last,
        su_sizes=tuple(s.sizes),
        managers=s.mgr.hosts,
        manager_links=s.mgr.links,
        manager_su=s.mgr.attach_su,
        manager_positions=s.mgr.positions,
        servers_removed=s.mgr.removed,
        tiers=s.tiers,
        leaf_down=s.down,
        leaf_up=s.up,
        spine_down=s.spine_downlinks,
        spine_up=s.spine_uplinks,
        pods=s.pods,
        sus_per_pod=s.per_pod,
        spines_per_pod=s.sp_per_pod,
        leaf_spine_links=s.leaf_spine_links,
        spine_stride=s.stride,
        core_groups=s.groups,
        cores_per_group=s.cores_per_group,
        spine_core_links=s.spine_core_links,
        core_stride=s.core_stride,
        two_tier_max_gpus=s.two_max,
        three_tier_max_gpus=s.three_max,
        switches=_count_switches(s),
        cables=cables,
        # Server side: one module per cage (a DGX twin-port OSFP serves two rails).
        transceivers=_count_optics(s, s.nodes * s.spec.node_profile.compute_cages(s.spec.planes)),
        bandwidth=_bandwidth(s),
        oversubscription=f"{a}:{b}",
        tier_plans=_tier_plans(s),
        leaves_per_rail=s.lpr,
        servers_per_leaf=s.per_leaf if s.lpr > 1 else 0,
        spine_grouping=spec.spine_grouping,
        spine_groups=s.spine_groups,
        build_out=s.build_out,
        uplink_gbps=spec.uplink_speed,
        spine_model=s.tiers_of.spine.model,
        core_model=s.tiers_of.core.model,
        spine_radix=s.spine_radix,
        core_radix=s.core_radix,
        leaf_up_ports_per_cage=s.tiers_of.leaf.up_ports_per_cage,
        spine_ports_per_cage=s.tiers_of.spine.ports_per_cage,
        core_ports_per_cage=s.tiers_of.core.ports_per_cage,
    )
