"""Collective-performance estimate: what the fabric means for NCCL bus bandwidth.

:func:`estimate_collective` places a job on the fabric (contiguous servers in
SU order, or the given hosts) and estimates, per message size, the time,
algorithm bandwidth and bus bandwidth of one collective the way nccl-tests
reports them (``doc/PERFORMANCE.md``: ``busbw = algbw × 2(n−1)/n`` for
all-reduce, ``× (n−1)/n`` for all-gather, reduce-scatter and all-to-all,
``× 1`` for broadcast).

The model, in the order it decides the figure:

1. **Bottlenecks.** Each algorithm moves a known number of bytes per message
   byte over each resource: a GPU's NVLink (per direction, from
   :mod:`fabric_stack.hardware.nvlink`), a server's live NIC cables (the slowest
   server of the job bounds a ring), the live uplinks of each SU's rail leaves
   and of each pod's spines (what crosses SUs and pods). Time for bandwidth is
   the largest bytes ÷ (bandwidth × efficiency) over the resources.
2. **Algorithms** as NCCL has them: Ring; Tree (double binary tree across
   servers, chain inside); NVLS (NVLink SHARP) inside one server and NVLSTree
   across servers when the GPU has it; CollNet (in-network SHARP) when the spec
   enables SHARP on InfiniBand. Like NCCL's tuner, the fastest per size wins
   unless ``algorithms`` forces some (``NCCL_ALGO``). On two servers a tree
   sends half the bytes a ring does, so its busbw can exceed the NIC rate (a
   known nccl-tests effect, see docs/calibration.md).
3. **Latency** per step: NVLink hop; network step = host software (assumed) +
   the NICs' back-to-back latency (:mod:`fabric_stack.hardware.nic_latency`) +
   each switch's port-to-port latency from the catalog (1 switch inside an SU, 3
   across SUs, 5 across pods); a launch overhead. The figures carry their source
   and say UNVERIFIED where not confirmed; they shape small messages only.
5. **Routing.** Hash ECMP on an Ethernet fabric without adaptive routing delivers
   ``ecmp_efficiency`` of the cross-SU capacity to all-to-all; InfiniBand's
   destination routes and adaptive routing (Spectrum-X, OpenSM ``ar_*``) do not
   pay it. **SHARP** (CollNet) runs only on InfiniBand switches that have it.
4. **Failures** remove cables: a server that lost a NIC cable (or whose leaf
   lost every uplink, for a job that leaves its SU) runs at its remaining rails
   (NCCL re-routes that rail's share through PXN), and the SU/pod cuts shrink.

NCCL keeps rails aligned (PXN), so a job inside one SU never touches a spine;
rings and trees send little across SUs, so spine oversubscription costs them
nothing while all-to-all pays it in full. The job is assumed alone on the fabric.
Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.analysis.estimate_params import (
    ModelParams,
    adaptive_routing_active,
    latency_note,
    nic_seconds,
    sharp_active,
    switch_seconds,
)
from fabric_stack.analysis.whatif import FabricIndex, Failure, leaf_vectors_after
from fabric_stack.errors import SpecError
from fabric_stack.hardware.nvlink import nvlink_for
from fabric_stack.topology.build import Device, FabricTopology

Collective = Literal["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"]
COLLECTIVES: tuple[str, ...] = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
)
ALGORITHMS: tuple[str, ...] = ("ring", "tree", "nvls", "nvls_tree", "collnet", "p2p")
DEFAULT_SIZES = "8K,64K,1M,16M,256M,1G,8G,16G"
"""Message sizes when none are given (binary units, as nccl-tests' -b/-e)."""


class JobInfo(BaseModel):
    """Where the job runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpus: int = Field(description="GPUs (ranks).")
    nodes: int = Field(description="Servers.")
    sus: int = Field(description="Scalable units it spans.")
    pods: int = Field(default=1, description="Pods it spans (1 in two tiers).")


class Point(BaseModel):
    """One message size, as nccl-tests prints it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bytes: int = Field(description="Message size in bytes (nccl-tests 'size').")
    algbw_gbs: float = Field(description="Algorithm bandwidth, GB/s = bytes / time.")
    busbw_gbs: float = Field(description="Bus bandwidth, GB/s (nccl-tests' factor).")
    time_s: float | None = Field(
        description="Estimated time, seconds (null: no live path, the job cannot run)."
    )
    algorithm: str = Field(description="Algorithm that wins at this size.")


class Estimate(BaseModel):
    """Everything `fabric-stack estimate` reports for one scenario."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    collective: str = Field(description="The collective.")
    job: JobInfo = Field(description="Where the job runs.")
    points: list[Point] = Field(description="One per message size.")
    assumptions: list[str] = Field(description="What the figures rest on, sources included.")
    limits_gbs: dict[str, float] = Field(
        description="Raw bandwidths of the job's bottlenecks, GB/s (before efficiencies)."
    )


# --------------------------------------------------------------------------- inputs


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


MAX_SIZE_BYTES = 1 << 40
"""Largest message size accepted (1T: nccl-tests sweeps stop far below)."""

MAX_SIZES = 64
"""Most message sizes in one ``--sizes`` (a sweep from 1 byte to 1T in powers of two is 41)."""

_SIZE = re.compile(r"([0-9]{1,16})([KMGT]?)", re.ASCII)


def parse_sizes(text: str) -> list[int]:
    """``"1M,16M,1G"`` → bytes (binary units, as nccl-tests' ``-b``/``-e``).

    ASCII digits only (``str.isdigit`` accepts ``²``, which ``int`` then refuses) and
    bounded before converting: at most 16 digits, :data:`MAX_SIZE_BYTES` and
    :data:`MAX_SIZES` sizes, so 5,000 digits is one line, not a traceback.
    """
    items = text.split(",", MAX_SIZES)
    if len(items) > MAX_SIZES:
        raise SpecError("--sizes", f"more than {MAX_SIZES} sizes", "e.g. 1M,16M,256M,1G")
    out = []
    for raw in items:
        item = raw.strip().upper().removesuffix("B")
        m = _SIZE.fullmatch(item)
        if m is None or int(m.group(1)) <= 0:
            shown = raw.strip()[:40] + ("…" if len(raw.strip()) > 40 else "")
            raise SpecError("--sizes", f"{shown!r} is not a size", "e.g. 1M,16M,256M,1G")
        size = int(m.group(1)) * _UNITS[m.group(2)]
        if size > MAX_SIZE_BYTES:
            raise SpecError("--sizes", f"{raw.strip()[:40]!r} is larger than 1T", "e.g. 1G,16G")
        out.append(size)
    return sorted(set(out))


def place_job(
    topo: FabricTopology,
    gpus: int | None = None,
    hosts: Sequence[str] | None = None,
    avoid: frozenset[str] = frozenset(),
) -> list[Device]:
    """The job's servers: ``hosts`` as given, or the first ``gpus`` worth of servers in
    (SU, index) order, skipping servers in ``avoid`` (failed or drained)."""
    gpn = topo.plan.spec.gpus_per_node
    if hosts:
        out = []
        for h in hosts:
            try:
                d = topo.device(h)
            except KeyError:
                raise SpecError(
                    "--job-hosts", f"{h!r} is not a server of the plan", "names like su1-node01"
                ) from None
            if d.role != "server":
                raise SpecError("--job-hosts", f"{h!r} is a {d.role}, not a server")
            out.append(d)
        return out
    servers = [d for d in topo.devices if d.role == "server" and d.name not in avoid]
    want = topo.plan.gpus if gpus is None else gpus
    if want <= 0 or want % gpn:
        raise SpecError("--job-gpus", f"{want} is not a positive multiple of {gpn} GPUs per node")
    if want // gpn > len(servers):
        raise SpecError(
            "--job-gpus",
            f"{want:,} GPUs need {want // gpn} servers but {len(servers)} are in service",
            f"at most {len(servers) * gpn}",
        )
    return sorted(servers, key=lambda d: (d.su, d.index))[: want // gpn]


@dataclass(frozen=True, slots=True)
class Resources:
    """Raw bandwidths (GB/s, one way) of the job's bottlenecks after failures."""

    gpus: int
    nodes: int
    gpn: int
    sus: int
    pods: int
    node_min: float
    node_healthy: float
    nvlink: float
    nvls: bool
    sharp: bool
    su_cut: float
    su_out_share: float
    pod_cut: float
    pod_out_share: float
    switch_hops: int
    nic_s: float
    switch_s: float
    adaptive_routing: bool
    routing_efficiency: float


def measure_job_resources(
    index: FabricIndex, nodes: Sequence[Device], dead: frozenset[int], params: ModelParams
) -> Resources:
    """Bottleneck bandwidths of a job on ``nodes`` with the ``dead`` cables out."""
    topo = index.topo
    plan = topo.plan
    spec = plan.spec
    sus = sorted({d.su for d in nodes})
    pod_of = {su: (su - 1) // plan.sus_per_pod + 1 if plan.tiers == 3 else 1 for su in sus}
    pods = sorted(set(pod_of.values()))
    vectors = leaf_vectors_after(index, dead)
    leaf_up = {leaf: sum(v) * plan.uplink_gbps for leaf, v in vectors.items()}
    node_gbps = []
    for d in nodes:
        live = 0
        for i in index.by_device.get(d.name, []):
            link = index.links[i]
            if link.role != "node_leaf" or i in dead:
                continue
            if len(sus) > 1 and leaf_up.get(link.b_device, 0) == 0:
                continue  # its leaf reaches no spine: that rail cannot leave the SU
            live += link.speed_gbps
        node_gbps.append(live)
    n = len(nodes) * spec.gpus_per_node
    gpus_in_su: dict[int, int] = defaultdict(int)
    for d in nodes:
        gpus_in_su[d.su] += spec.gpus_per_node
    su_cap: dict[int, float] = defaultdict(float)
    for leaf in topo.switches("leaf"):
        if leaf.su in gpus_in_su:
            su_cap[leaf.su] += leaf_up[leaf.name] / 8
    su_share = (
        max((g * (n - g) / n / su_cap[s] if su_cap[s] else math.inf) for s, g in gpus_in_su.items())
        if len(sus) > 1
        else 0.0
    )
    pod_share, pod_cut = 0.0, math.inf
    if len(pods) > 1:
        pod_share, pod_cut = _pod_cut(index, dead, gpus_in_su, pod_of, n)
    fig = nvlink_for(spec.node_profile)
    nvl = (params.nvlink_gbs or fig.bidirectional_gbs) / 2
    return Resources(
        gpus=n,
        nodes=len(nodes),
        gpn=spec.gpus_per_node,
        sus=len(sus),
        pods=len(pods),
        node_min=min(node_gbps) / 8 if node_gbps else 0.0,
        node_healthy=plan.rails * plan.planes * plan.link_gbps / 8,
        nvlink=nvl,
        nvls=fig.nvls and params.nvlink_gbs is None,
        sharp=sharp_active(plan, params),
        su_cut=min(su_cap.values()) if su_cap else math.inf,
        su_out_share=su_share,
        pod_cut=pod_cut,
        pod_out_share=pod_share,
        switch_hops=1 if len(sus) == 1 else (3 if len(pods) == 1 else 5),
        nic_s=nic_seconds(plan, params),
        switch_s=switch_seconds(plan, params),
        adaptive_routing=adaptive_routing_active(plan),
        routing_efficiency=(
            1.0
            if spec.fabric == "infiniband" or adaptive_routing_active(plan)
            else params.ecmp_efficiency
        ),
    )


def _pod_cut(
    index: FabricIndex,
    dead: frozenset[int],
    gpus_in_su: dict[int, int],
    pod_of: dict[int, int],
    n: int,
) -> tuple[float, float]:
    """(worst seconds-per-GB share across a pod's spine→core uplinks, smallest pod cut GB/s)."""
    cap: dict[int, float] = defaultdict(float)
    for i, link in enumerate(index.links):
        if link.role == "spine_core" and i not in dead:
            cap[link.pod] += link.speed_gbps / 8
    gpus_in_pod: dict[int, int] = defaultdict(int)
    for su, g in gpus_in_su.items():
        gpus_in_pod[pod_of[su]] += g
    share = max(
        (g * (n - g) / n / cap[p] if cap.get(p) else math.inf) for p, g in gpus_in_pod.items()
    )
    return share, min(cap.get(p, 0.0) for p in gpus_in_pod)


# --------------------------------------------------------------------------- the model


def _hop_latencies(r: Resources, p: ModelParams) -> tuple[float, float]:
    """(NVLink step, network step) in seconds."""
    return p.nvlink_hop_us * 1e-6, p.net_hop_us * 1e-6 + r.nic_s + r.switch_hops * r.switch_s


def cost_algorithms(
    collective: str, r: Resources, p: ModelParams
) -> dict[str, tuple[float, float]]:
    """Per algorithm NCCL could use: (seconds per message byte, latency seconds)."""
    n, big_n, g = r.gpus, r.nodes, r.gpn
    bn = p.net_efficiency * r.node_min * 1e9
    bv = p.nvlink_efficiency * r.nvlink * 1e9
    bs = p.nvls_efficiency * r.nvlink * 1e9
    a_nv, a_net = _hop_latencies(r, p)
    multi = big_n > 1
    if multi and bn <= 0:
        return {}
    # Across servers, a ring's NVLink share per GPU is (g−1)/g of its traffic (one hop
    # in g leaves the server through a NIC), so NVLink bounds it at bv·g/(g−1).
    per_ring_byte = max(1 / bn, (g - 1) / g / bv) if multi else 1 / bv
    ring_steps = (n - big_n) * a_nv + big_n * a_net if multi else (n - 1) * a_nv
    depth = math.ceil(math.log2(big_n)) if multi else 0
    k = 1 if big_n == 2 else 2  # a 2-server tree sends half the bytes (docs/calibration.md)
    out: dict[str, tuple[float, float]] = {}
    if collective == "all_reduce":
        out["ring"] = (2 * (n - 1) / n * per_ring_byte, 2 * ring_steps)
        if multi:
            out["tree"] = (max(k / bn, 2 / bv), 2 * (depth * a_net + (g - 1) * a_nv))
        if r.nvls and not multi:
            out["nvls"] = (1 / bs, 2 * a_nv)
        if r.nvls and multi:
            out["nvls_tree"] = (max(k / bn, 1 / bs), 2 * (depth * a_net + a_nv))
        if r.sharp and multi:
            bsharp = p.sharp_efficiency * r.node_min * 1e9
            intra = 1 / bs if r.nvls else 2 / bv
            out["collnet"] = (max(1 / bsharp, intra), 2 * (a_net + a_nv))
    elif collective in ("all_gather", "reduce_scatter"):
        out["ring"] = ((n - 1) / n * per_ring_byte, ring_steps)
    elif collective == "broadcast":
        out["ring"] = (per_ring_byte, ring_steps)
    else:  # alltoall: point-to-point, rail-aligned through PXN
        nvl = ((g - 1) / n + (g - 1) / g * (n - g) / n) / bv
        terms = [nvl]
        if multi:
            terms.append(g * (n - g) / n / bn)
            # Cross-SU and cross-pod traffic rides the uplinks: hash ECMP without adaptive
            # routing loses a share of them to flow collisions (routing_efficiency).
            eff = p.net_efficiency * r.routing_efficiency * 1e9
            terms.append(r.su_out_share / eff)
            terms.append(r.pod_out_share / eff)
        out["p2p"] = (max(terms), a_net + math.log2(max(n, 2)) * a_nv)
    return out


def busbw_factor(collective: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md)."""
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective == "broadcast":
        return 1.0
    return (n - 1) / n


def _rail_line(grouping: str) -> str:
    """How traffic between rails travels: PXN keeps rails aligned; rail-grouped spines
    leave it no other way (no network path joins two rails)."""
    if grouping == "rail":
        return (
            "rails kept aligned by NCCL's PXN, which rail-grouped spines require: no network "
            "path joins two rails, every cross-rail byte crosses NVLink first "
            "(NCCL_PXN_DISABLE must stay 0)"
        )
    return "rails kept aligned by NCCL's PXN"


def _assumptions(r: Resources, p: ModelParams, topo: FabricTopology, failed: int) -> list[str]:
    fig = nvlink_for(topo.plan.spec.node_profile)
    nvl = (
        f"NVLink {p.nvlink_gbs:g} GB/s per GPU (bidirectional, given)"
        if p.nvlink_gbs
        else f"NVLink {fig.bidirectional_gbs:g} GB/s per GPU ({fig.gpu}, {fig.generation}; "
        f"{fig.source}){'' if fig.verified else ' — unverified'}"
    )
    return [
        nvl + f"; {r.nvlink:g} GB/s per direction",
        f"NIC: {r.node_min:g} GB/s per server on the slowest server of the job "
        f"(healthy {r.node_healthy:g}); efficiency {p.net_efficiency:g} of line rate "
        "(calibrated, docs/calibration.md)",
        f"ring NVLink efficiency {p.nvlink_efficiency:g}, NVLS {p.nvls_efficiency:g} "
        f"(calibrated); SHARP "
        + (
            f"enabled ({topo.plan.switch_model.in_network_reduction}), efficiency "
            f"{p.sharp_efficiency:g} (NVIDIA/nccl#320, docs/calibration.md S1)"
            if r.sharp
            else "not enabled"
        ),
        "NVLink SHARP (NVLS/NVLSTree) "
        + ("available on this GPU" if r.nvls else "not available (or not known) on this GPU"),
        _rail_line(topo.plan.spine_grouping) + "; the job alone on the fabric; "
        "NCCL picks the fastest algorithm per size unless one is forced",
        f"latency: launch {p.launch_us:g} µs, NVLink step {p.nvlink_hop_us:g} µs, "
        f"network step {p.net_hop_us:g} µs host software (assumed) + NICs "
        f"{r.nic_s * 1e6:.2f} µs + {r.switch_s * 1e6:.3g} µs per switch × {r.switch_hops} "
        f"on the longest path ({latency_note(topo.plan, p)})",
        "routing: "
        + (
            "adaptive routing on"
            if r.adaptive_routing
            else (
                "static destination routes (OpenSM), no adaptive routing"
                if topo.plan.spec.fabric == "infiniband"
                else f"hash ECMP without adaptive routing: {p.ecmp_efficiency:g} of the "
                "cross-SU capacity for all-to-all (UNVERIFIED)"
            )
        ),
        f"{failed} compute cable(s) out of service" if failed else "healthy fabric",
    ] + (
        ["a server of the job has no live rail out of its SU: the collective cannot run"]
        if r.nodes > 1 and r.node_min <= 0
        else []
    )


def estimate_collective(
    topo: FabricTopology,
    collective: str,
    sizes: Sequence[int],
    *,
    job_gpus: int | None = None,
    job_hosts: Sequence[str] | None = None,
    failures: Sequence[Failure] = (),
    params: ModelParams | None = None,
    algorithms: Sequence[str] | None = None,
    index: FabricIndex | None = None,
) -> Estimate:
    """Estimate ``collective`` per message size for a job on ``topo`` (module docstring)."""
    if collective not in COLLECTIVES:
        raise SpecError("--collective", f"{collective!r} is not known", " | ".join(COLLECTIVES))
    for a in algorithms or ():
        if a not in ALGORITHMS:
            raise SpecError("--algorithm", f"{a!r} is not known", " | ".join(ALGORITHMS))
    p = params or ModelParams()
    index = index or FabricIndex(topo)
    dead = index.resolve(failures)
    avoid = frozenset(f.device for f in failures if not f.port)
    nodes = place_job(topo, job_gpus, job_hosts, avoid)
    r = measure_job_resources(index, nodes, dead, p)
    if r.gpus < 2:
        raise SpecError("--job-gpus", "a collective needs at least 2 GPUs")
    costs = cost_algorithms(collective, r, p)
    if algorithms:
        costs = {k: v for k, v in costs.items() if k in algorithms}
        if not costs:
            raise SpecError(
                "--algorithm",
                f"none of {', '.join(algorithms)} applies to {collective} on this job",
            )
    factor = busbw_factor(collective, r.gpus)
    points = []
    for size in sizes:
        best, name = math.inf, "none"
        for alg, (per_byte, lat) in costs.items():
            t = p.launch_us * 1e-6 + lat + size * per_byte
            if t < best:
                best, name = t, alg
        alg_bw = size / best / 1e9 if math.isfinite(best) else 0.0
        points.append(
            Point(
                bytes=size,
                algbw_gbs=round(alg_bw, 3),
                busbw_gbs=round(alg_bw * factor, 3),
                time_s=float(f"{best:.6g}") if math.isfinite(best) else None,
                algorithm=name,
            )
        )
    limits = {"nvlink_per_direction": r.nvlink, "node_nic": r.node_min}
    if r.sus > 1:
        limits["su_uplinks_min"] = r.su_cut
    if r.pods > 1:
        limits["pod_uplinks_min"] = r.pod_cut
    return Estimate(
        collective=collective,
        job=JobInfo(gpus=r.gpus, nodes=r.nodes, sus=r.sus, pods=r.pods),
        points=points,
        assumptions=_assumptions(r, p, topo, len(dead)),
        limits_gbs={k: round(v, 3) for k, v in limits.items()},
    )


def worst_single_failure(
    topo: FabricTopology,
    collective: str = "all_reduce",
    size: int = 1 << 30,
    job_gpus: int | None = None,
    index: FabricIndex | None = None,
) -> tuple[Failure | None, Estimate]:
    """The single failure (one of each kind: leaf, spine, core, server cable, uplink) that
    lowers the job's busbw at ``size`` most, and the estimate after it.

    One representative per kind is enough: a fabric's switches (and cables) of
    one kind are interchangeable for a job placed from the first SU, and the
    first of each kind sits under that job.
    """
    index = index or FabricIndex(topo)
    reps: list[Failure] = []
    for role in ("leaf", "spine", "core"):
        first = next(topo.switches(role), None)
        if first is not None:
            reps.append(Failure(device=first.name))
    for role in ("node_leaf", "leaf_spine", "spine_core"):
        link = next(topo.links_of(role), None)
        if link is not None:
            reps.append(Failure(device=link.a_device, port=link.a_port))
    best: tuple[Failure | None, Estimate] = (
        None,
        estimate_collective(topo, collective, [size], job_gpus=job_gpus, index=index),
    )
    for f in reps:
        est = estimate_collective(
            topo, collective, [size], job_gpus=job_gpus, failures=[f], index=index
        )
        if best[0] is None or est.points[0].busbw_gbs < best[1].points[0].busbw_gbs:
            best = (f, est)
    return best


__all__ = [
    "ALGORITHMS",
    "COLLECTIVES",
    "DEFAULT_SIZES",
    "Estimate",
    "ModelParams",
    "Point",
    "estimate_collective",
    "parse_sizes",
    "place_job",
    "worst_single_failure",
]
