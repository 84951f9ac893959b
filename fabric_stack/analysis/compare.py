"""InfiniBand or RoCEv2: the same cluster planned on each candidate fabric, side by side.

:func:`compare_fabrics` plans one :class:`~fabric_stack.spec.model.FabricSpec` on each
:class:`Candidate` (a fabric and the switch it runs on) with the whole pipeline — size,
build, the bill of materials, the collective estimate — and reads every figure from those
results: tiers and switches from the plan and the BOM, cables and optics by part from the
BOM's parts list, power from the BOM totals, latency of the longest path from the catalog's
per-switch and per-NIC figures (:mod:`fabric_stack.analysis.estimate` uses the same ones),
all-reduce and all-to-all at ``estimate``'s default sizes. Nothing is recounted here.

The recommendation is computed, not written: each criterion scores a candidate against
the best one (1.0 = best; higher-is-better figures as value ÷ best, lower-is-better ones as
best ÷ value), the weighted sum decides, and the reasons quote the figures that did.

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

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.analysis.estimate import (
    DEFAULT_SIZES,
    Estimate,
    ModelParams,
    adaptive_routing_active,
    estimate_collective,
    nic_seconds,
    parse_sizes,
    sharp_active,
    switch_seconds,
)
from fabric_stack.analysis.whatif import FabricIndex
from fabric_stack.errors import SpecError
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
    power_w: int = Field(description="Power of the BOM (switches, and optics where counted), W.")
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


Pricer = Callable[[Bom], Cost]
"""Prices one BOM (the CLI builds it from `--prices`)."""


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


def candidate_spec(spec: FabricSpec, cand: Candidate, sharp: bool) -> FabricSpec:
    """The spec with the candidate's fabric and switch (and SHARP asked on InfiniBand)."""
    data = spec.model_dump(mode="json")
    data["fabric"] = cand.fabric
    data["switch"] = cand.switch
    if sharp and cand.fabric == "infiniband":
        data.setdefault("infiniband", {})["sharp"] = True
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
    sharp: bool = False,
    pricer: Pricer | None = None,
) -> CandidateResult:
    """Plan ``spec`` on ``cand`` (size → build → BOM → estimates) and read the figures."""
    cspec = candidate_spec(spec, cand, sharp)
    plan = size_fabric(cspec)
    topo = build_topology(plan)
    bom = bill_of_materials(topo)
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
        cost=pricer(bom) if pricer else None,
    )


def _estimates(topo: FabricTopology, sizes: Sequence[int]) -> tuple[Estimate, Estimate]:
    index = FabricIndex(topo)
    return (
        estimate_collective(topo, "all_reduce", sizes, index=index),
        estimate_collective(topo, "alltoall", sizes, index=index),
    )


def order_parts(bom: Bom) -> list[tuple[str, int]]:
    """(part number, count) of the fabric order a price file prices: switches by catalog
    key, cables and optics by part number (servers are the same on every candidate)."""
    return (
        [(line.model, line.count) for line in bom.switches]
        + [(c.part_number, c.count) for c in bom.parts.cables]
        + [(o.part_number, o.count) for o in bom.parts.optics]
    )


def _power(bom: Bom) -> tuple[int, str]:
    """(W, what it includes): the BOM's total when it counts optics, else its switches."""
    total = getattr(bom.totals, "power_w", None)
    if isinstance(total, int):
        return total, "switches + optics (BOM totals.power_w)"
    return bom.totals.switch_power_w, "switches only (BOM totals.switch_power_w; optics excluded)"


# --------------------------------------------------------------------------- deciding


def _ratio(values: Sequence[float], higher_better: bool) -> list[float]:
    """Each value against the best: value/best (higher better) or best/value."""
    if higher_better:
        best = max(values)
        return [v / best if best > 0 else 1.0 for v in values]
    best = min(values)
    return [best / v if v > 0 else 1.0 for v in values]


def score_criteria(cands: Sequence[CandidateResult]) -> dict[str, list[float] | None]:
    """Per criterion, a score per candidate (1 = best); None when it cannot be scored."""
    perf_parts = [
        _ratio([c.allreduce_busbw_gbs for c in cands], True),
        _ratio([c.alltoall_busbw_gbs for c in cands], True),
        _ratio([c.latency_us for c in cands], False),
    ]
    costs = [c.cost.total if c.cost and not c.cost.unpriced else None for c in cands]
    priced = all(t is not None and t > 0 for t in costs)
    return {
        "performance": [sum(p[i] for p in perf_parts) / 3 for i in range(len(cands))],
        "cost": _ratio([t or 0.0 for t in costs], False) if priced else None,
        "operations": _ratio([float(c.operations.burden) for c in cands], False),
        "headroom": _ratio([float(c.two_tier_max_gpus) for c in cands], True),
    }


def _figures(criterion: str, cands: Sequence[CandidateResult], size: str) -> str:
    """The figures behind a criterion, one per candidate."""

    def each(fmt: Callable[[CandidateResult], str]) -> str:
        return "; ".join(f"{c.label} {fmt(c)}" for c in cands)

    if criterion == "performance":
        return (
            f"all-reduce busbw at {size}: "
            + each(lambda c: f"{c.allreduce_busbw_gbs:,.1f} GB/s" + (" (SHARP)" if c.sharp else ""))
            + f"; all-to-all at {size}: "
            + each(lambda c: f"{c.alltoall_busbw_gbs:,.1f} GB/s")
            + "; longest-path latency: "
            + each(lambda c: f"{c.latency_us:.2f} µs")
        )
    if criterion == "cost":
        return "priced BOM: " + each(
            lambda c: f"{c.cost.total:,.2f} {c.cost.currency}" if c.cost else "—"
        )
    if criterion == "operations":
        return "things to run or keep identical: " + each(
            lambda c: (
                f"{c.operations.burden} ({len(c.operations.every_hop)} per switch × "
                f"{c.operations.switches:,}, {len(c.operations.every_host)} per host × "
                f"{c.operations.hosts:,})"
            )
        )
    return "two-tier ceiling: " + each(lambda c: f"{c.two_tier_max_gpus:,} GPUs")


def recommend(
    cands: Sequence[CandidateResult], weights: Weights, size_label: str
) -> Recommendation:
    """Weighted sum of the criteria scores; the reasons quote the deciding figures."""
    scores = score_criteria(cands)
    w = weights.model_dump()
    used = {k: w[k] for k in CRITERIA if scores[k] is not None and w[k] > 0}
    norm = sum(used.values()) or 1.0
    totals = [sum(used[k] / norm * (scores[k] or [])[i] for k in used) for i in range(len(cands))]
    best = max(range(len(cands)), key=lambda i: (totals[i], -i))
    win = cands[best]
    ranked = sorted(
        used,
        key=lambda k: -used[k] * (max(scores[k] or [0]) - min(scores[k] or [0])),
    )
    reasons = [
        f"{k} (weight {used[k] / norm:.2f}): {_figures(k, cands, size_label)} — best "
        f"{cands[max(range(len(cands)), key=lambda i: (scores[k] or [])[i])].label}"
        for k in ranked
    ]
    if scores["cost"] is None and w["cost"] > 0:
        reasons.append(
            f"cost (weight {w['cost']:.2f}) not scored: "
            + (
                "no --prices given"
                if all(c.cost is None for c in cands)
                else "unpriced parts: "
                + "; ".join(
                    f"{c.label} {', '.join(c.cost.unpriced[:4])}"
                    for c in cands
                    if c.cost and c.cost.unpriced
                )
            )
            + "; the other weights were rescaled"
        )
    reasons.append(
        "weighted score: "
        + "; ".join(f"{c.label} {t:.3f}" for c, t in zip(cands, totals, strict=True))
    )
    table = {
        c.label: {k: round((scores[k] or [0.0] * len(cands))[i], 4) for k in CRITERIA if scores[k]}
        | {"total": round(totals[i], 4)}
        for i, c in enumerate(cands)
    }
    return Recommendation(
        fabric=win.fabric,
        switch=win.switch,
        scores=table,
        reasons=reasons,
        paragraph=_paragraph(win, cands, totals, ranked, used, norm),
    )


def _paragraph(
    win: CandidateResult,
    cands: Sequence[CandidateResult],
    totals: Sequence[float],
    ranked: Sequence[str],
    used: dict[str, float],
    norm: float,
) -> str:
    """The recommendation as one paragraph for `guide` and the design report."""
    others = ", ".join(
        f"{c.title} {t:.2f}" for c, t in zip(cands, totals, strict=True) if c is not win
    )
    top = ", ".join(f"{k} ({used[k] / norm:.2f})" for k in ranked[:2])
    win_total = totals[list(cands).index(win)]
    return (
        f"{win.title} scores {win_total:.2f} against {others} on the weighted criteria; "
        f"{top} decided most. It gives {win.allreduce_busbw_gbs:,.1f} GB/s all-reduce busbw, "
        f"{win.latency_us:.2f} µs on the longest path and {win.two_tier_max_gpus:,} GPUs in "
        f"two tiers, and needs {', '.join(win.operations.control_plane)}"
        + (
            f" plus {len(win.operations.every_hop)} settings on every hop"
            if win.operations.every_hop
            else ""
        )
        + ". `fabric-stack compare` shows the figures side by side."
    )


def compare_fabrics(
    spec: FabricSpec,
    candidates: Sequence[Candidate] | None = None,
    *,
    sharp: bool = False,
    weights: Weights | None = None,
    sizes: Sequence[int] | None = None,
    pricer: Pricer | None = None,
) -> Comparison:
    """Plan ``spec`` on each candidate and recommend one (module docstring)."""
    cands = list(candidates or default_candidates(spec))
    byte_sizes = list(sizes or parse_sizes(DEFAULT_SIZES))
    results = [plan_candidate(spec, c, byte_sizes, sharp=sharp, pricer=pricer) for c in cands]
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
    "Candidate",
    "CandidateResult",
    "Comparison",
    "Cost",
    "Recommendation",
    "Weights",
    "compare_fabrics",
    "default_candidates",
    "order_parts",
    "parse_candidates",
    "parse_weights",
    "path_latency",
    "plan_candidate",
    "recommend",
]
