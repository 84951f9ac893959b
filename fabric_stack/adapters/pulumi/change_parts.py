"""The part each changed cable is ordered as, so `plan` names cables as `bom` does.

The cable records keep the builder's class in ``cable_type`` (multimode / single-mode
fibre, RJ45): changing a record's inputs would show every existing stack's cables as
updates, so they stay. What `plan` prints instead comes from the topology of the
Fabric record's spec (the spec after the change; before it, for a removed cable), read
through :func:`fabric_stack.plant.order.link_parts` and counted by
:func:`fabric_stack.plant.order.count_cables`: the grouping `bom`'s order list uses.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from fabric_stack.adapters.pulumi.changes import ChangeSummary
from fabric_stack.errors import FabricStackError
from fabric_stack.plant.order import LinkPart, count_cables, link_parts
from fabric_stack.spec.model import FabricSpec


def _parts_of(spec: Mapping[str, Any]) -> dict[str, LinkPart] | None:
    """Each link's part in the topology of ``spec``; None without a spec that reads back."""
    if not spec:
        return None
    from fabric_stack.pipeline import run_pipeline

    try:
        return link_parts(run_pipeline(FabricSpec.model_validate(spec)).topology)
    except (ValidationError, FabricStackError):
        # A spec Pulumi redacted (a secret in it) is not the one recorded, and one this
        # code no longer sizes names no parts: say nothing rather than name parts of
        # another fabric; the records' class is shown.
        return None


def _tally(groups: Mapping[tuple[str, str], list[LinkPart]]) -> dict[str, dict[str, int]]:
    """key → op → cables of the legs grouped by (key, op)."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for (key, op), parts in sorted(groups.items()):
        out[key][op] = count_cables(parts)
    return dict(out)


def cable_parts_of(summary: ChangeSummary) -> tuple[dict[str, dict[str, int]], ...]:
    """(part → op → cables, role → op → cables) of the summary's cable changes, both {}
    when neither recorded spec reads back.

    A cable whose link the spec's topology lacks keeps its record's ``cable_type``; a
    two-link cable counts once, in the role of one of its legs (they share one).
    """
    after, before = _parts_of(summary.spec_after), _parts_of(summary.spec_before)
    if after is None and before is None:
        return {}, {}
    by_part: dict[tuple[str, str], list[LinkPart]] = defaultdict(list)
    by_role: dict[tuple[str, str], list[LinkPart]] = defaultdict(list)
    role_of: dict[tuple[str, str], str] = {}
    for c in summary.cables:
        side = (before if c.op == "remove" else after) or {}
        part = side.get(c.name) or LinkPart(c.cable_type, c.name, 1)
        by_part[(part.description, c.op)].append(part)
        role = role_of.setdefault((part.cable, c.op), c.role)
        by_role[(role, c.op)].append(part)
    return _tally(by_part), _tally(by_role)


def with_parts(summary: ChangeSummary) -> ChangeSummary:
    """The summary with its cables counted and named as `bom` orders them."""
    parts, roles = cable_parts_of(summary)
    return summary.model_copy(update={"cable_parts": parts, "cable_roles": roles})


__all__ = ["cable_parts_of", "with_parts"]
