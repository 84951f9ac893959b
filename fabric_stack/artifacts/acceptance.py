"""Acceptance targets from the plan: what the Kubernetes job and the design document check.

* nccl-tests all-reduce bus bandwidth on the whole cluster: the plan's estimate
  (:func:`fabric_stack.analysis.estimate.estimate_collective`, nothing recomputed here);
* per-rail ``ib_write_bw``: the link rate times the estimate model's network
  efficiency (:class:`fabric_stack.analysis.estimate.ModelParams`, sourced there).

The pass share and floor are :mod:`fabric_stack.acceptance`'s, the same `fabric-stack
accept` judges the results with.
"""

from __future__ import annotations

from fabric_stack.acceptance.results import ACCEPTANCE_SHARE, pass_floor
from fabric_stack.analysis.estimate import ModelParams
from fabric_stack.artifacts._base import ACCEPTANCE_SIZE, RenderContext

NCCL_TESTS_PATH = "/opt/nccl-tests/build"
"""Where the acceptance image has nccl-tests (built with MPI=1)."""


def acceptance_busbw(ctx: RenderContext) -> float | None:
    """Expected all-reduce bus bandwidth (GB/s) at :data:`ACCEPTANCE_SIZE` on the whole
    cluster, from the plan's estimate; None when the cluster has fewer than 2 GPUs."""
    est = ctx.acceptance_estimate
    return est.points[-1].busbw_gbs if est is not None else None


def rail_write_bw_gbps(ctx: RenderContext) -> float:
    """Expected ``ib_write_bw`` per rail, Gb/s: link rate × the model's network efficiency."""
    return round(ctx.plan.link_gbps * ModelParams().net_efficiency, 1)


def acceptance_image(ctx: RenderContext) -> str:
    """The acceptance job's image: built by the operator team (see kubernetes/README.md)."""
    return f"{ctx.spec.name}/nccl-tests:{ctx.document.software.get('nccl-tests', 'latest')}"


__all__ = [
    "ACCEPTANCE_SHARE",
    "ACCEPTANCE_SIZE",
    "acceptance_busbw",
    "acceptance_image",
    "pass_floor",
    "rail_write_bw_gbps",
]
