"""fabric-stack: size, wire, check and manage GPU-cluster fabrics as code.

The pipeline is four pure stages::

    FabricSpec --size_fabric--> SizingPlan --build_topology--> FabricTopology
               --derive_intent--> FabricIntent

Everything else (Pulumi components, policies, drift, renderers, CLI) adapts
those results.
"""

from __future__ import annotations

from .errors import FabricStackError, InputFileError, SpecError
from .intent import FabricIntent, derive_intent
from .sizing import SizingPlan, size_fabric
from .spec import FabricSpec, validate_spec
from .topology import FabricTopology, build_topology

__version__ = "0.1.0"

__all__ = [
    "FabricIntent",
    "FabricSpec",
    "FabricStackError",
    "FabricTopology",
    "InputFileError",
    "SizingPlan",
    "SpecError",
    "__version__",
    "build_topology",
    "derive_intent",
    "size_fabric",
    "validate_spec",
]
