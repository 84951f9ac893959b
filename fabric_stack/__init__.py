"""fabric-stack: size, wire, check and manage GPU-cluster fabrics as code.

The pipeline is four pure stages, each in the folder named after it::

    FabricSpec --size_fabric--> SizingPlan --build_topology--> FabricTopology
               --derive_intent--> FabricIntent

``spec/`` validates, ``sizing/`` sizes, ``topology/`` builds and ``intent/`` derives;
``underlay/`` and ``analysis/`` are pure stages over a built topology. Everything else
(Pulumi components, policies, drift, renderers, the twin, the CLI) adapts those results;
``docs/architecture.md`` has the whole layer table. This module re-exports every public
stage function (``tests/unit/test_public_api.py`` keeps the list complete).

The re-exports are imported on first use (PEP 562), not when the package is: every
``fabric_stack.*`` import runs this module first, and ``import fabric_stack.errors`` or
``fabric-stack --version`` must not pay for the pipeline and networkx
(``tests/unit/test_light_import.py``). Type checkers read the imports below instead.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES: dict[str, str] = {
    "estimate_collective": "fabric_stack.analysis.estimate",
    "compare_placements": "fabric_stack.analysis.placement",
    "analyze_failures": "fabric_stack.analysis.whatif",
    "FabricStackError": "fabric_stack.errors",
    "InputFileError": "fabric_stack.errors",
    "SpecError": "fabric_stack.errors",
    "derive_intent": "fabric_stack.intent.derive",
    "FabricIntent": "fabric_stack.intent.model",
    "Pipeline": "fabric_stack.pipeline",
    "run_pipeline": "fabric_stack.pipeline",
    "SizingPlan": "fabric_stack.sizing.size",
    "size_fabric": "fabric_stack.sizing.size",
    "FabricSpec": "fabric_stack.spec.model",
    "validate_spec": "fabric_stack.spec.model",
    "FabricTopology": "fabric_stack.topology.build",
    "build_topology": "fabric_stack.topology.build",
    "scheduler_view": "fabric_stack.topology.scheduler",
    "verify_topology": "fabric_stack.topology.verify",
    "UnderlayPlan": "fabric_stack.underlay.plan",
    "plan_underlay": "fabric_stack.underlay.plan",
}
"""Each re-exported name and the module it is imported from on first use (the imports
under ``TYPE_CHECKING`` above, as data)."""

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


# Hidden from type checkers: with a module-level __getattr__ in sight, mypy would accept
# any attribute of the package (a typo included) as Any; without it, it sees only the
# names imported above.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        """Import a re-exported name on first use and keep it (PEP 562)."""
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    """The package's names, the not-yet-imported re-exports included (PEP 562)."""
    return sorted(set(globals()) | set(__all__))
