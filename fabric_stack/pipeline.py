"""The whole pipeline in one call, for adapters that need every stage.

The stages allocate around a million long-lived objects at 32k GPUs and create
no reference cycles; the cyclic garbage collector would rescan them over and
over (about 40 % of the run time), so it is paused while they are built.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from fabric_stack.intent.derive import derive_intent
from fabric_stack.intent.model import FabricIntent
from fabric_stack.sizing.size import SizingPlan, size_fabric
from fabric_stack.spec.model import FabricSpec
from fabric_stack.topology.build import FabricTopology, build_topology


class Pipeline(NamedTuple):
    """Every stage's result for one spec."""

    plan: SizingPlan
    topology: FabricTopology
    intent: FabricIntent


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic collector (restoring its previous state afterwards)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def run_pipeline(spec: FabricSpec) -> Pipeline:
    """size → build → derive for ``spec``, with the collector paused."""
    with paused_gc():
        plan = size_fabric(spec)
        topo = build_topology(plan)
        _LAST[:] = [(spec, topo)]
        return Pipeline(plan, topo, derive_intent(topo))


_LAST: list[tuple[FabricSpec, FabricTopology]] = []
"""The last spec :func:`run_pipeline` built and its topology (one slot): a policy rule that
needs the topology again (``underlay-consistency`` re-plans the underlay from the intent's
spec) reuses it instead of building ~1M links a second time (#43)."""


def topology_of(spec: FabricSpec) -> FabricTopology:
    """``build_topology(size_fabric(spec))``, reusing the last pipeline's topology when its
    spec equals ``spec`` (specs are frozen and building is pure, so the result is the same)."""
    if _LAST and _LAST[0][0] == spec:
        return _LAST[0][1]
    with paused_gc():
        return build_topology(size_fabric(spec))
