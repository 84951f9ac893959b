"""fabric-stack: size, wire, check and manage GPU-cluster fabrics as code.

The pipeline is four pure stages, each in the folder named after it::

    FabricSpec --size_fabric--> SizingPlan --build_topology--> FabricTopology
               --derive_intent--> FabricIntent

``spec/`` validates, ``sizing/`` sizes, ``topology/`` builds and ``intent/`` derives;
``underlay/`` and ``analysis/`` are pure stages over a built topology. Everything else
(Pulumi components, policies, drift, renderers, the twin, the CLI) adapts those results;
``docs/architecture.md`` has the whole layer table. This module re-exports every public
stage function (``tests/unit/test_public_api.py`` keeps the list complete).
"""

from __future__ import annotations

from fabric_stack.analysis.estimate import estimate_collective
from fabric_stack.analysis.placement import compare_placements
from fabric_stack.analysis.whatif import analyze_failures
from fabric_stack.errors import FabricStackError, InputFileError, SpecError
from fabric_stack.intent.derive import derive_intent
from fabric_stack.intent.model import FabricIntent
from fabric_stack.pipeline import Pipeline, run_pipeline
from fabric_stack.sizing.size import SizingPlan, size_fabric
from fabric_stack.spec.model import FabricSpec, validate_spec
from fabric_stack.topology.build import FabricTopology, build_topology
from fabric_stack.topology.scheduler import scheduler_view
from fabric_stack.topology.verify import verify_topology
from fabric_stack.underlay.plan import UnderlayPlan, plan_underlay

__version__ = "0.1.0"

__all__ = [
    "FabricIntent",
    "FabricSpec",
    "FabricStackError",
    "FabricTopology",
    "InputFileError",
    "Pipeline",
    "SizingPlan",
    "SpecError",
    "UnderlayPlan",
    "__version__",
    "analyze_failures",
    "build_topology",
    "compare_placements",
    "derive_intent",
    "estimate_collective",
    "plan_underlay",
    "run_pipeline",
    "scheduler_view",
    "size_fabric",
    "validate_spec",
    "verify_topology",
]
