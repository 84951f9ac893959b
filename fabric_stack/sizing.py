"""Sizing: how many leaves, spines and cores a rail-optimized fabric needs, and why.

This module holds the rules a network architect applies; :func:`size_fabric`
applies them in order and returns a :class:`SizingPlan`. The port-by-port
realisation of the plan is :mod:`fabric_stack.topology`; the counts here and
the link list there are checked against each other by the test-suite.

The rules, in the order they are applied
----------------------------------------
1. **Port speed and radix.** A GPU's NIC line rate is split over the planes;
   the switch radix is the number of *logical* ports at that speed (a QM9700
   has 32 twin-port cages: 64 ports at NDR 400G, 128 at NDR200).
2. **Leaf split.** A leaf's ports are divided down:up in the requested ratio,
   as many as fit: ``k = radix // (A + B)``, ``down = A·k``, ``up = B·k``
   (1:1 on 64 ports → 32 down, 32 up).
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
from functools import cache

from pydantic import BaseModel, ConfigDict, Field

from .catalog import Protocol, SwitchModel, lookup_switch, port_mode
from .errors import CapacityError, CatalogError, SpecError
from .spec import FabricSpec

# --------------------------------------------------------------------------- rules


@cache
def divisors(n: int) -> tuple[int, ...]:
    """All positive divisors of ``n`` in increasing order."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


def split_ports(radix: int, down: int, up: int) -> tuple[int, int]:
    """Leaf ports (down, up) for a reduced ratio ``down:up`` on a ``radix``-port switch."""
    k = radix // (down + up)
    return down * k, up * k


def spine_count(switches_below: int, uplinks_each: int, ports_per_spine: int) -> int | None:
    """The even-spreading rule: smallest divisor ``s`` of ``uplinks_each`` with enough ports.

    Each of ``switches_below`` switches sends ``uplinks_each / s`` links to each
    of ``s`` switches above, which takes ``switches_below × uplinks_each / s``
    ports on each of them. Returns ``None`` when even ``s = uplinks_each`` (one
    link to every switch above) does not fit: the tier is full.
    """
    need = switches_below * uplinks_each
    for s in divisors(uplinks_each):
        if s * ports_per_spine >= need:
            return s
    return None


def port_stride(ports: int, slots: int) -> int:
    """Port distance between consecutive link slots of one downstream switch.

    Links land on an upper switch slot-major: slot *t* of downstream switch *ℓ*
    uses port ``t × stride + ℓ + 1``. When the upper tier doubles (growth), the
    links in even slots keep both ends; those in odd slots move to spine
    ``s + S_old`` (port ``t' × stride + ℓ + 1``), and the new SU's leaves take
    the spine ports they vacate. Re-patching is one move per moved cable.
    """
    return ports // slots


def bisection_gbps(leaf_nodes: list[int], uplinks: int, link_gbps: int) -> int:
    """Full-duplex bisection of one plane, in Gb/s.

    The cut halves the NIC ports in (SU, rail, server) order, so whole leaves
    fall on each side (the worst case for an oversubscribed leaf layer). Traffic
    across it is limited by the ports that stay inside a split leaf plus the
    smaller side's usable uplinks (each leaf forwards at most min(its servers on
    that side, its uplinks)). ``fabric_stack.verify`` computes the same cut with
    networkx max-flow; the tests check the two agree.
    """
    half = sum(leaf_nodes) // 2
    seen = shared = src_up = snk_up = 0
    for n in leaf_nodes:
        s = min(n, max(0, half - seen))
        t = n - s
        seen += n
        here = min(s, t)
        shared += here
        src_up += min(s - here, uplinks)
        snk_up += min(t - here, uplinks)
    return 2 * (shared + min(src_up, snk_up)) * link_gbps


def cages_used(port_ranges: list[tuple[int, int]], ports_per_cage: int) -> int:
    """Distinct cages touched by inclusive 1-based port ranges (one optic per cage)."""
    spans = sorted(
        ((lo - 1) // ports_per_cage, (hi - 1) // ports_per_cage)
        for lo, hi in port_ranges
        if hi >= lo
    )
    total, cur_lo, cur_hi = 0, -1, -2
    for lo, hi in spans:
        if lo > cur_hi:
            total += cur_hi - cur_lo + 1 if cur_hi >= cur_lo else 0
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    total += cur_hi - cur_lo + 1 if cur_hi >= cur_lo else 0
    return total


# --------------------------------------------------------------------------- results


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

    @property
    def non_blocking(self) -> bool:
        """True when every tier has at least as much up as down capacity."""
        return self.oversubscription == "1:1"

    @property
    def leaves_per_plane(self) -> int:
        """Leaf switches in one plane: one per rail per SU."""
        return self.sus * self.rails

    def nodes_in_su(self, su: int) -> int:
        """Servers in SU ``su`` (1-based)."""
        return self.last_su_nodes if su == self.sus else self.su_nodes

    def sus_in_pod(self, pod: int) -> int:
        """SUs in pod ``pod`` (1-based)."""
        if self.tiers == 2:
            return self.sus
        return min(self.sus_per_pod, self.sus - (pod - 1) * self.sus_per_pod)


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
    from .catalog import radix_at

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
    from .catalog import CATALOG

    return sorted(CATALOG.items())


def size_fabric(spec: FabricSpec) -> SizingPlan:
    """Apply the sizing rules (module docstring) to ``spec``. Pure; raises SpecError."""
    model = _check_switch(spec)
    mode = port_mode(model, spec.link_gbps)
    radix = model.cages * mode.ports_per_cage
    a, b = spec.ratio
    if a + b > radix:
        raise SpecError(
            "oversubscription",
            f"{spec.oversubscription} does not fit a {radix}-port leaf",
            f"A:B with A ≥ B ≥ 1 and A + B ≤ {radix}, e.g. 1:1, 2:1 or 3:1",
        )
    down, up = split_ports(radix, a, b)

    su_nodes = spec.su_nodes or down
    if su_nodes > down:
        raise SpecError(
            "su_nodes",
            f"{su_nodes} servers per SU need {su_nodes} downlinks on each rail leaf, "
            f"but a {model.key.upper()} leaf at {spec.oversubscription} has {down}",
            f"use at most {down}",
        )
    nodes, rails = spec.nodes, spec.rails
    sus = math.ceil(nodes / su_nodes)
    last = nodes - (sus - 1) * su_nodes
    leaves = sus * rails  # per plane

    two_tier_sus = radix // rails if spine_count(radix // rails * rails, up, radix) else 0
    spine_ds = radix // 2
    spine_us = radix - spine_ds
    sus_per_pod = spine_ds // rails
    two_max = two_tier_sus * su_nodes * spec.gpus_per_node
    three_max = radix * sus_per_pod * su_nodes * spec.gpus_per_node

    spines = spine_count(leaves, up, radix)
    ppc = mode.ports_per_cage
    if spines is not None:
        tiers, pods, per_pod, spd, spu = 2, 1, sus, radix, 0
        sp_per_pod = spines
        groups = cores_per_group = sc_links = core_stride = 0
        spine_total = spines
    else:
        if sus_per_pod < 1:
            raise CapacityError(
                "rails",
                f"{rails} rails need {rails} leaves per pod but a spine has {spine_ds} "
                "ports toward leaves",
                "use fewer rails or a larger-radix switch",
            )
        tiers, per_pod, spd, spu = 3, sus_per_pod, spine_ds, spine_us
        pods = math.ceil(sus / sus_per_pod)
        sp = spine_count(sus_per_pod * rails, up, spine_ds)
        assert sp is not None  # sus_per_pod was chosen so one pod always fits
        sp_per_pod = sp
        cpg = spine_count(pods, spine_us, radix)
        if cpg is None:
            binding = binding_su_nodes(spec, nodes, su_nodes, down, radix * sus_per_pod)
            if binding is not None:
                raise binding
            raise CapacityError(
                "gpus",
                f"{spec.gpus:,} GPUs need {pods} pods but three tiers of {radix}-port "
                f"{model.key.upper()} switches at {spec.link_gbps}G carry {radix} pods "
                f"({three_max:,} GPUs per plane)",
                larger_switch_hint(model, spec.link_gbps),
            )
        groups, cores_per_group = sp_per_pod, cpg
        sc_links = spine_us // cpg
        core_stride = port_stride(radix, sc_links)
        spine_total = pods * sp_per_pod

    ls_links = up // sp_per_pod
    stride = port_stride(spd, ls_links)
    cores_pp = groups * cores_per_group
    p = spec.planes

    cables = CableCounts(
        node_leaf=nodes * rails * p,
        leaf_spine=leaves * up * p,
        spine_core=spine_total * spu * p,
        total=(nodes * rails + leaves * up + spine_total * spu) * p,
    )
    switches = SwitchCounts(
        leaf=leaves * p,
        spine=spine_total * p,
        core=cores_pp * p,
        total=(leaves + spine_total + cores_pp) * p,
    )

    # Optics: count the cages each switch actually lights, with the same slot-major
    # port layout the topology uses (ports of a partially filled spine are not contiguous).
    sw_optics = 0
    for su in range(1, sus + 1):
        n = last if su == sus else su_nodes
        sw_optics += rails * cages_used([(1, n), (down + 1, down + up)], ppc)
    for pod in range(1, pods + 1):
        lp = (min(per_pod, sus - (pod - 1) * per_pod)) * rails
        ranges = [(t * stride + 1, t * stride + lp) for t in range(ls_links)]
        if tiers == 3:
            ranges.append((spd + 1, spd + spu))
        sw_optics += sp_per_pod * cages_used(ranges, ppc)
    if tiers == 3:
        core_ranges = [(t * core_stride + 1, t * core_stride + pods) for t in range(sc_links)]
        sw_optics += cores_pp * cages_used(core_ranges, ppc)
    transceivers = Transceivers(
        nic=cables.node_leaf, switch=sw_optics * p, total=cables.node_leaf + sw_optics * p
    )

    link = spec.link_gbps
    bis = bisection_gbps(
        [last if su == sus else su_nodes for su in range(1, sus + 1) for _ in range(rails)],
        up,
        link,
    )
    if (a, b) == (1, 1):
        bis = nodes * rails * link  # non-blocking: every GPU at line rate, whatever the parity
    bandwidth = Bandwidth(
        link_gbps=link,
        per_gpu_gbps=spec.nic_gbps * rails // spec.gpus_per_node,
        per_node_gbps=spec.nic_gbps * rails,
        injection_tbps=nodes * rails * spec.nic_gbps / 1000,
        bisection_tbps=bis * p / 1000,
    )

    leaf_used = max(min(su_nodes, nodes) + up, 0)
    tier_plans = [
        TierPlan(
            role="leaf",
            count=leaves * p,
            per_plane=leaves,
            ports_down=down,
            ports_up=up,
            ports_used_max=leaf_used,
            radix=radix,
            oversubscription=f"{a}:{b}",
        ),
        TierPlan(
            role="spine",
            count=spine_total * p,
            per_plane=spine_total,
            ports_down=spd,
            ports_up=spu,
            ports_used_max=min(per_pod, sus) * rails * ls_links + spu,
            radix=radix,
            oversubscription="1:1" if tiers == 3 else "-",
        ),
    ]
    if tiers == 3:
        tier_plans.append(
            TierPlan(
                role="core",
                count=cores_pp * p,
                per_plane=cores_pp,
                ports_down=radix,
                ports_up=0,
                ports_used_max=pods * sc_links,
                radix=radix,
                oversubscription="-",
            )
        )

    return SizingPlan(
        spec=spec,
        switch_model=model,
        link_gbps=link,
        radix=radix,
        ports_per_cage=ppc,
        nodes=nodes,
        rails=rails,
        planes=p,
        su_nodes=su_nodes,
        sus=sus,
        last_su_nodes=last,
        tiers=tiers,
        leaf_down=down,
        leaf_up=up,
        spine_down=spd,
        spine_up=spu,
        pods=pods,
        sus_per_pod=per_pod,
        spines_per_pod=sp_per_pod,
        leaf_spine_links=ls_links,
        spine_stride=stride,
        core_groups=groups,
        cores_per_group=cores_per_group,
        spine_core_links=sc_links,
        core_stride=core_stride,
        two_tier_max_gpus=two_max,
        three_tier_max_gpus=three_max,
        switches=switches,
        cables=cables,
        transceivers=transceivers,
        bandwidth=bandwidth,
        oversubscription=f"{a}:{b}",
        tier_plans=tuple(tier_plans),
    )
