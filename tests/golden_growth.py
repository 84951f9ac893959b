"""Golden files of the growth comparison (issue #27): what 256 → 1,024 GPUs changes.

``growth/roce-256-to-1024.{md,json}`` on SN5600 and ``growth/infiniband-256-to-1024.{md,json}``
on QM9700: the "Config changes" and "Address changes" sections `fabric-stack plan`
adds to a preview, and their JSON (lines per device left out, as in the plan).
"""

from __future__ import annotations

import json
from typing import Any

from fabric_stack.artifacts.growth import compare_specs
from fabric_stack.spec.model import FabricSpec
from fabric_stack.views.changes import growth_markdown

CASES: dict[str, dict[str, Any]] = {
    "roce-256-to-1024": {"fabric": "roce", "switch": "sn5600"},
    "infiniband-256-to-1024": {"fabric": "infiniband", "switch": "qm9700"},
}
"""Case name → spec (without gpus): each grows from 256 to 1,024 GPUs."""


def generate() -> dict[str, str]:
    """``<case>.md`` and ``<case>.json`` per case."""
    out: dict[str, str] = {}
    for name, spec in CASES.items():
        before = FabricSpec.model_validate({**spec, "gpus": 256})
        after = FabricSpec.model_validate({**spec, "gpus": 1024})
        diff = compare_specs(before, after)
        md = growth_markdown(diff.config_changes, diff.address_changes, 10**6)
        out[f"{name}.md"] = "\n".join(md)
        out[f"{name}.json"] = json.dumps(diff.model_dump(mode="json"), indent=2) + "\n"
    return out
