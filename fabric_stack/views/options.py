"""InfiniBand or RoCEv2: the same cluster planned on each candidate fabric, side by side.

:func:`compare_fabrics` plans one :class:`~fabric_stack.spec.model.FabricSpec` on each
:class:`Candidate` (a fabric and the switch it runs on) with the whole pipeline — size,
build, the bill of materials, the collective estimate — and reads every figure from those
results: tiers and switches from the plan and the BOM, cables and optics by part from the
BOM's parts list, power from the BOM totals, latency of the longest path from the catalog's
per-switch and per-NIC figures (:mod:`fabric_stack.analysis.estimate` uses the same ones),
all-reduce and all-to-all at ``estimate``'s default sizes. Nothing is recounted here.

The recommendation is computed, not written (:mod:`fabric_stack.views.options_decision`):
each criterion scores a candidate against the best one (1.0 = best; higher-is-better
figures as value ÷ best, lower-is-better ones as best ÷ value), the weighted sum decides,
and the reasons quote the figures that did. A view, not an analysis: it reads the BOM
(:mod:`fabric_stack.views.bom`) and prices it (:mod:`fabric_stack.views.costs`).

* **performance** — mean of all-reduce and all-to-all busbw at the largest size and the
  inverse of the end-to-end latency;
* **cost** — the priced BOM total (lower is better); left out, and said so, when no
  prices are given or a candidate has unpriced parts (a partial total would mislead);
* **operations** — how many things must be run or kept identical: control-plane services
  plus the settings every hop and every host must agree on (lower is better);
* **headroom** — the largest cluster two tiers of the switch carry (growth without a
  third tier).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabric_stack.analysis.estimate import (
    DEFAULT_SIZES,
    Estimate,
    estimate_collective,
    parse_sizes,
)
from fabric_stack.analysis.estimate_params import (
    ModelParams,
    adaptive_routing_active,
    nic_seconds,
    sharp_active,
    switch_seconds,
)
from fabric_stack.analysis.whatif import FabricIndex
from fabric_stack.errors import SpecError
from fabric_stack.files.prices import PriceList
from fabric_stack.hardware.nic_latency import nic_latency
from fabric_stack.hardware.switches import (
    FABRIC_KINDS,
    FabricKind,
    Protocol,
    default_switch_for,
    lookup_switch,
)
from fabric_stack.sizing.size import SizingPlan, size_fabric
from fabric_stack.spec.model import FabricSpec, validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology
from fabric_stack.views.bom import Bom, bill_of_materials
from fabric_stack.views.options_decision import recommend
from fabric_stack.views.options_model import (
    CRITERIA,
    DEFAULT_WEIGHTS,
    FABRIC_TITLES,
    Candidate,
    CandidateResult,
    Comparison,
    Latency,
    Operations,
    Recommendation,
    Weights,
)

# --------------------------------------------------------------------------- inputs


def parse_candidates(text: str, spec: FabricSpec) -> list[Candidate]:
    """``"infiniband:qm9700,roce:sn5600"`` → candidates; a bare fabric takes its default
    switch at the spec's link speed; a switch of the wrong protocol is refused."""
    out: list[Candidate] = []
    for raw in text.split(",", 16)[:16]:
        fabric, _, switch = raw.strip().lower().partition(":")
        if fabric not in FABRIC_KINDS:
            raise SpecError(
                "--candidates",
                f"{raw.strip()[:40]!r} is not a candidate",
                "FABRIC[:SWITCH] with FABRIC one of " + ", ".join(FABRIC_KINDS),
            )
        out.append(_candidate(fabric, switch, spec))
    if len({c.label for c in out}) != len(out):
        raise SpecError("--candidates", f"{text[:60]!r} names a candidate twice")
    return out


def _candidate(fabric: FabricKind, switch: str, spec: FabricSpec) -> Candidate:
    proto: Protocol = "infiniband" if fabric == "infiniband" else "ethernet"
    if not switch:
        return Candidate(fabric=fabric, switch=default_switch_for(fabric, spec.link_gbps).key)
    model = lookup_switch(switch, proto)
    if model.protocol != proto:
        raise SpecError(
            "--candidates",
            f"{model.name} is an {model.protocol} switch, not one for {fabric}",
            f"e.g. {fabric}:{default_switch_for(fabric, spec.link_gbps).key}",
        )
    return Candidate(fabric=fabric, switch=model.key)


def default_candidates(spec: FabricSpec) -> list[Candidate]:
    """InfiniBand on the NVIDIA Quantum switch for the link speed, RoCEv2 on Spectrum."""
    return [
        Candidate(fabric=f, switch=default_switch_for(f, spec.link_gbps).key)
        for f in ("infiniband", "roce")
    ]


def parse_weights(text: str) -> Weights:
    """``"performance=0.4,cost=0.3"`` → normalised :class:`Weights` (unnamed criteria 0)."""
    values = dict.fromkeys(CRITERIA, 0.0)
    for raw in text.split(",", 8)[:8]:
        key, sep, num = raw.strip().partition("=")
        try:
            value = float(num)
        except ValueError:
            value = -1.0
        if key.strip() not in values or not sep or not 0 <= value < 1e9:
            raise SpecError(
                "--weights",
                f"{raw.strip()[:40]!r} is not CRITERION=WEIGHT",
                "criteria " + ", ".join(CRITERIA) + "; weights ≥ 0, e.g. " + DEFAULT_WEIGHTS,
            )
        values[key.strip()] = value
    total = sum(values.values())
    if total <= 0:
        raise SpecError("--weights", "the weights sum to 0", "give one criterion a weight > 0")
    return Weights(**{k: v / total for k, v in values.items()})


# --------------------------------------------------------------------------- one candidate


def candidate_spec(spec: FabricSpec, cand: Candidate, sharp: bool | None) -> FabricSpec:
    """The spec with the candidate's fabric and switch, and SHARP as asked on InfiniBand
    (None: the spec's own ``infiniband.sharp``)."""
    data = spec.model_dump(mode="json")
    data["fabric"] = cand.fabric
    data["switch"] = cand.switch
    if sharp is not None and cand.fabric == "infiniband":
        data.setdefault("infiniband", {})["sharp"] = sharp
    return validate_spec(data)


def path_latency(plan: SizingPlan, params: ModelParams | None = None) -> Latency:
    """End-to-end latency of the longest path (the figures the estimate uses)."""
    p = params or ModelParams()
    hops = 3 if plan.tiers == 2 else 5
    nic_s, sw_s = nic_seconds(plan, p), switch_seconds(plan, p)
    card = nic_latency(plan.spec.node_profile.nic_model)
    model = plan.switch_model
    sw_source = (
        f"{model.name}: {model.latency_basis}"
        if model.port_latency_ns is not None
        else f"{model.name}: {model.latency_basis}; {p.assumed_switch_us:g} µs assumed"
    )
    sources = [f"{card.nic_model}: {card.basis}", sw_source]
    return Latency(
        switch_hops=hops,
        nic_ns=round(nic_s * 1e9),
        switch_ns=round(sw_s * 1e9),
        total_us=round((nic_s + hops * sw_s) * 1e6, 3),
        sources=sources,
        verified=not any("UNVERIFIED" in s for s in sources),
    )


def operations_of(plan: SizingPlan) -> Operations:
    """What the plan's fabric needs to run, from its own settings."""
    spec = plan.spec
    switches, hosts = plan.switches.total, plan.nodes
    if spec.fabric == "infiniband":
        ib = spec.infiniband
        control = [
            f"subnet manager: {ib.subnet_managers} per plane ({ib.sm_location}, "
            f"{ib.routing_engine} routing)"
        ]
        if ib.sharp:
            control.append("SHARP Aggregation Manager")
        return Operations(
            control_plane=control,
            every_hop=[],
            every_host=[],
            tooling=["UFM or OpenSM", "ibdiagnet against the planned .topo", "ibnetdiscover"],
            switches=switches,
            hosts=hosts,
        )
    q = spec.roce
    hop = [f"MTU {q.mtu}", "BGP underlay session per uplink"]
    host = ["MTU 9000"]
    if spec.fabric == "roce":
        prio = ",".join(str(p) for p in q.pfc_priorities)
        hop = [
            f"PFC on priority {prio} (+ watchdog)",
            f"ECN {q.ecn_min_kb}-{q.ecn_max_kb} KB",
            f"DSCP trust (RoCE {q.roce_dscp}, CNP {q.cnp_dscp})",
            *hop,
        ]
        host = [
            "DCQCN on the NIC",
            f"traffic class DSCP {q.roce_dscp} (NCCL_IB_TC)",
            "RoCEv2 GID index (NCCL_IB_GID_INDEX)",
            *host,
        ]
    return Operations(
        control_plane=["BGP underlay (one ASN per switch)"],
        every_hop=hop,
        every_host=host,
        tooling=["NVUE or SONiC config as code", "PFC pause / ECN mark telemetry", "LLDP"],
        switches=switches,
        hosts=hosts,
    )


def _busbw_at_largest(est: Estimate) -> float:
    return est.points[-1].busbw_gbs if est.points else 0.0


def plan_candidate(
    spec: FabricSpec,
    cand: Candidate,
    sizes: Sequence[int],
    *,
    sharp: bool | None = None,
    prices: PriceList | None = None,
) -> CandidateResult:
    """Plan ``spec`` on ``cand`` (size → build → BOM → estimates) and read the figures."""
    cspec = candidate_spec(spec, cand, sharp)
    plan = size_fabric(cspec)
    topo = build_topology(plan)
    bom = bill_of_materials(topo, prices)
    ar, a2a = _estimates(topo, sizes)
    return CandidateResult(
        fabric=cand.fabric,
        switch=plan.switch_model.key,
        switch_name=plan.switch_model.name,
        gpus=plan.gpus,
        tiers=plan.tiers,
        switches_by_tier={
            "leaf": plan.switches.leaf,
            "spine": plan.switches.spine,
            "core": plan.switches.core,
        },
        switches={line.model: line.count for line in bom.switches},
        two_tier_max_gpus=plan.two_tier_max_gpus,
        cables={c.part_number: c.count for c in bom.parts.cables},
        optics={o.part_number: o.count for o in bom.parts.optics},
        power_w=_power(bom)[0],
        power_basis=_power(bom)[1],
        latency_us=path_latency(plan).total_us,
        latency=path_latency(plan),
        sharp=sharp_active(plan, ModelParams()),
        adaptive_routing=adaptive_routing_active(plan),
        allreduce_busbw_gbs=_busbw_at_largest(ar),
        alltoall_busbw_gbs=_busbw_at_largest(a2a),
        allreduce=ar,
        alltoall=a2a,
        operations=operations_of(plan),
        cost=bom.cost,
    )


def _estimates(topo: FabricTopology, sizes: Sequence[int]) -> tuple[Estimate, Estimate]:
    index = FabricIndex(topo)
    return (
        estimate_collective(topo, "all_reduce", sizes, index=index),
        estimate_collective(topo, "alltoall", sizes, index=index),
    )


def _power(bom: Bom) -> tuple[int, str]:
    """(W, what it includes): the BOM's switches plus optics."""
    return round(bom.totals.power_w), "switches + optics (BOM totals.power_w)"


def compare_fabrics(
    spec: FabricSpec,
    candidates: Sequence[Candidate] | None = None,
    *,
    sharp: bool | None = None,
    weights: Weights | None = None,
    sizes: Sequence[int] | None = None,
    prices: PriceList | None = None,
) -> Comparison:
    """Plan ``spec`` on each candidate and recommend one (module docstring)."""
    cands = list(candidates or default_candidates(spec))
    byte_sizes = list(sizes or parse_sizes(DEFAULT_SIZES))
    results = [plan_candidate(spec, c, byte_sizes, sharp=sharp, prices=prices) for c in cands]
    w = weights or parse_weights(DEFAULT_WEIGHTS)
    return Comparison(
        name=spec.name,
        gpus=spec.gpus,
        sizes=byte_sizes,
        candidates=results,
        weights=w,
        recommendation=recommend(results, w, size_label(byte_sizes[-1])),
    )


def size_label(size: int) -> str:
    """``17179869184`` → ``16G`` (binary units, as ``--sizes``)."""
    for unit, factor in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


__all__ = [
    "CRITERIA",
    "DEFAULT_WEIGHTS",
    "FABRIC_TITLES",
    "Candidate",
    "CandidateResult",
    "Comparison",
    "Latency",
    "Operations",
    "Recommendation",
    "Weights",
    "compare_fabrics",
    "default_candidates",
    "parse_candidates",
    "parse_weights",
    "path_latency",
    "plan_candidate",
    "recommend",
]
