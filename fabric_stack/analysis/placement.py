"""Where an N-GPU job should go: the best placement on the fabric vs the worst contiguous one.

The question a topology-aware scheduler answers (Slurm's tree and blocks, Kueue's topology
levels from ``render slurm`` / ``render k8s-topology``): which servers for a job of N GPUs.

* :func:`best_placement` — fewest SUs, then fewest pods: a job that fits one SU goes in the
  smallest SU it fits (best fit keeps the large SUs whole for large jobs); a larger job
  takes whole SUs, largest first, from the pod with the most servers, then the next pod.
* :func:`worst_contiguous_placement` — of every run of consecutive servers in plan order
  (SU, then index), the one crossing the most pods, then the most SUs, then with the most
  servers outside its biggest SU (the most traffic on the cut): what a scheduler that
  only knows host order (no topology) can hand out.

:func:`compare_placements` estimates a collective on both (the estimate stage, unchanged)
so the design report can show what the topology files are worth. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fabric_stack.analysis.estimate import Estimate, estimate_collective
from fabric_stack.analysis.whatif import FabricIndex
from fabric_stack.errors import SpecError
from fabric_stack.topology.model import Device, FabricTopology


@dataclass(frozen=True, slots=True)
class Placement:
    """A job's servers and what they span."""

    hosts: tuple[str, ...]
    sus: int
    pods: int


def _servers(topo: FabricTopology) -> list[Device]:
    return sorted((d for d in topo.devices if d.role == "server"), key=lambda d: (d.su, d.index))


def _pod(topo: FabricTopology, su: int) -> int:
    plan = topo.plan
    return (su - 1) // plan.sus_per_pod + 1 if plan.tiers == 3 and plan.sus_per_pod else 1


def _placement(topo: FabricTopology, hosts: Sequence[Device]) -> Placement:
    sus = {d.su for d in hosts}
    return Placement(tuple(d.name for d in hosts), len(sus), len({_pod(topo, s) for s in sus}))


def _nodes_for(topo: FabricTopology, gpus: int) -> int:
    gpn = topo.plan.spec.gpus_per_node
    servers = len(_servers(topo))
    if gpus <= 0 or gpus % gpn:
        raise SpecError("--job-gpus", f"{gpus} is not a positive multiple of {gpn} GPUs per node")
    if gpus // gpn > servers:
        raise SpecError(
            "--job-gpus", f"{gpus:,} GPUs need {gpus // gpn} servers", f"at most {servers * gpn}"
        )
    return gpus // gpn


def best_placement(topo: FabricTopology, gpus: int) -> Placement:
    """Fewest SUs, then fewest pods (module docstring)."""
    n = _nodes_for(topo, gpus)
    by_su: dict[int, list[Device]] = {}
    for d in _servers(topo):
        by_su.setdefault(d.su, []).append(d)
    fits = [su for su, members in by_su.items() if len(members) >= n]
    if fits:
        su = min(fits, key=lambda s: (len(by_su[s]), s))
        return _placement(topo, by_su[su][:n])
    by_pod: dict[int, list[int]] = {}
    for su in by_su:
        by_pod.setdefault(_pod(topo, su), []).append(su)
    pods = sorted(by_pod, key=lambda p: (-sum(len(by_su[s]) for s in by_pod[p]), p))
    chosen: list[Device] = []
    for pod in pods:
        for su in sorted(by_pod[pod], key=lambda s: (-len(by_su[s]), s)):
            chosen.extend(by_su[su][: n - len(chosen)])
            if len(chosen) == n:
                return _placement(topo, chosen)
    return _placement(topo, chosen)  # unreachable: _nodes_for checked the count


def worst_contiguous_placement(topo: FabricTopology, gpus: int) -> Placement:
    """The run of consecutive servers crossing the most pods, then SUs (module docstring)."""
    n = _nodes_for(topo, gpus)
    servers = _servers(topo)
    # SUs (and pods) are consecutive in plan order and none is empty, so a window spans
    # last - first + 1 of each, and only its first and last SU can be partial: one pass,
    # not a set per window (16k servers at scale).
    su = [d.su for d in servers]
    pod = [_pod(topo, s) for s in su]
    first: dict[int, int] = {}
    for i, s in enumerate(su):
        first.setdefault(s, i)
    size = {s: su.count(s) for s in first}
    best_key, best_start = (-1, -1, -1), 0
    for start in range(len(servers) - n + 1):
        end = start + n - 1
        head = min(end, first[su[start]] + size[su[start]] - 1) - start + 1
        tail = end - max(start, first[su[end]]) + 1
        inner = [size[s] for s in range(su[start] + 1, su[end]) if s in size]
        # then the most servers outside the job's biggest SU: the most traffic on the cut
        key = (pod[end] - pod[start], su[end] - su[start], n - max([head, tail, *inner]))
        if key > best_key:
            best_key, best_start = key, start
    return _placement(topo, servers[best_start : best_start + n])


@dataclass(frozen=True, slots=True)
class PlacementComparison:
    """A collective on the best and on the worst contiguous placement of the same job."""

    gpus: int
    collective: str
    best: Placement
    worst: Placement
    best_estimate: Estimate
    worst_estimate: Estimate


def compare_placements(
    topo: FabricTopology,
    gpus: int,
    collective: str,
    sizes: Sequence[int],
    index: FabricIndex | None = None,
) -> PlacementComparison:
    """Estimate ``collective`` on both placements of an N-GPU job."""
    index = index or FabricIndex(topo)
    best = best_placement(topo, gpus)
    worst = worst_contiguous_placement(topo, gpus)
    return PlacementComparison(
        gpus,
        collective,
        best,
        worst,
        estimate_collective(topo, collective, sizes, job_hosts=best.hosts, index=index),
        estimate_collective(topo, collective, sizes, job_hosts=worst.hosts, index=index),
    )


__all__ = [
    "Placement",
    "PlacementComparison",
    "best_placement",
    "compare_placements",
    "worst_contiguous_placement",
]
