"""Build-outs: a phase cabled exactly as the final fabric places its cables.

Without a build-out, the spine count follows the leaves a plan has: growing 1,024 →
2,048 GPUs on QM9700s doubles the spines and re-spreads every leaf's uplinks over
them (the odd link slots move, :func:`fabric_stack.sizing.size.port_stride`): 512
leaf–spine cables move in a fabric that is in service.

With ``build_out_gpus`` the plan sizes the *final* fabric first and takes its upper
tiers as they are (:func:`upper_tiers`): spines per pod, links per leaf–spine pair,
the spine port stride, pods, core groups and their strides. Every wiring number of
:mod:`fabric_stack.topology.build` depends only on (SU, rail, leaf, uplink index)
and these figures, so the phase's link list is a subset of the final one and
growing to any size up to ``build_out_gpus`` only adds switches and cables. What
that costs now (spines and cores bought early, spine ports left free) is the
:class:`~fabric_stack.sizing.model.BuildOut` the card and the BOM show.

The SuperPOD RAs state the same principle for a partial SU ("the fabric should be
designed to support the full SU, including leaf switches and leaf-spine cables",
:data:`PARTIAL_SU_RULE`); a build-out extends it from the SU to the final fabric.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from fabric_stack.sizing.model import SizingPlan
from fabric_stack.spec.model import FabricSpec
from fabric_stack.text.numbers import fmt_num

PARTIAL_SU_RULE = (
    "https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300/"
    "latest/network-fabrics.html (NVIDIA DGX SuperPOD RA, DGX B300: 'Network Fabrics', first "
    "paragraph)"
)
"""Where the RA asks for a partial SU to be built with all its leaves and leaf-spine cables."""


@dataclass(frozen=True)
class UpperTiers:
    """The final fabric's upper-tier figures a phase takes over unchanged."""

    tiers: int
    pods: int
    per_pod: int
    spine_groups: int
    spine_down: int
    spine_up: int
    sp_per_pod: int
    core_groups: int
    cores_per_group: int
    spine_core_links: int
    core_stride: int
    leaf_spine_links: int
    stride: int


def final_spec(spec: FabricSpec) -> FabricSpec:
    """The spec of the final fabric: the same cluster at ``build_out_gpus``."""
    return spec.model_copy(update={"gpus": spec.build_out_gpus, "build_out_gpus": 0})


def upper_tiers(final: SizingPlan, sus: int) -> UpperTiers:
    """The final plan's upper tiers for a phase of ``sus`` SUs (its pods: the ones it fills)."""
    pods = math.ceil(sus / final.sus_per_pod) if final.tiers == 3 else 1
    return UpperTiers(
        tiers=final.tiers,
        pods=pods,
        per_pod=final.sus_per_pod,
        spine_groups=final.spine_groups,
        spine_down=final.spine_down,
        spine_up=final.spine_up,
        sp_per_pod=final.spines_per_pod,
        core_groups=final.core_groups,
        cores_per_group=final.cores_per_group,
        spine_core_links=final.spine_core_links,
        core_stride=final.core_stride,
        leaf_spine_links=final.leaf_spine_links,
        stride=final.spine_stride,
    )


def build_out_line(plan: SizingPlan) -> str:
    """The card's line: the final size, what this phase provisions for it and what it costs."""
    bo = plan.build_out
    if bo is None:
        return ""
    extra_sw = bo.extra_switches
    extra_opt = plan.transceivers.switch - bo.standalone_optics
    cost = (
        f"{fmt_num(extra_sw)} switch(es) and {fmt_num(extra_opt)} switch optic(s) more than "
        f"this size alone ({fmt_num(bo.standalone_spines)} spines"
        + (f", {fmt_num(bo.standalone_cores)} cores" if bo.standalone_cores or bo.cores else "")
        + ")"
        if extra_sw or extra_opt
        else "nothing more than this size alone"
    )
    cores = f" and {fmt_num(bo.cores)} cores" if bo.cores else ""
    return (
        f"phase of a {fmt_num(bo.final_gpus)}-GPU build-out ({bo.final_sus} SUs): "
        f"{fmt_num(bo.spines)} spines{cores} provisioned as the final fabric places them, "
        f"{fmt_num(bo.free_spine_ports)} spine ports left free for the leaves to come; "
        f"growing only adds switches and cables. Cost of building out now: {cost}"
    )


def moved_cables(before: Iterable[tuple[str, str]], after: Iterable[tuple[str, str]]) -> int:
    """Cables of ``before`` whose far end differs in ``after`` (by near end): re-patches."""
    far = dict(after)
    return sum(1 for near, end in before if near in far and far[near] != end)
