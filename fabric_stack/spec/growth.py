"""The spec keys that shape how a fabric grows: spine grouping and the build-out size.

Kept apart from :mod:`fabric_stack.spec.model` so the checks of these keys are in one
place; the sizing rules that read them are :mod:`fabric_stack.sizing.rail_groups` and
:mod:`fabric_stack.sizing.build_out`.
"""

from __future__ import annotations

from typing import Literal

SpineGrouping = Literal["full", "rail"]
"""``full``: every leaf reaches every spine of its pod; ``rail``: one spine group per rail."""


def check_build_out(gpus: int, gpus_per_node: int, build_out_gpus: int) -> str:
    """The one-line problem with ``build_out_gpus`` (prefixed with the key), or ''."""
    if not build_out_gpus:
        return ""
    if build_out_gpus < gpus:
        return (
            f"build_out_gpus: {build_out_gpus:,} is below gpus {gpus:,} (the build-out is the "
            f"final size: use 0 for none, or at least {gpus:,})"
        )
    if build_out_gpus % gpus_per_node:
        below = build_out_gpus - build_out_gpus % gpus_per_node
        return (
            f"build_out_gpus: {build_out_gpus:,} is not a multiple of gpus_per_node "
            f"{gpus_per_node} (try {max(below, gpus):,} or {below + gpus_per_node:,})"
        )
    return ""
