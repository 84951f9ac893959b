"""The part each changed cable is ordered as, so `plan` names cables as `bom` does.

The cable records keep the builder's class in ``cable_type`` (multimode / single-mode
fibre, RJ45): changing a record's inputs would show every existing stack's cables as
updates, so they stay. What `plan` prints instead comes from the topology of the
Fabric record's spec (the spec after the change; before it, for a removed cable), read
through :func:`fabric_stack.plant.order.link_parts` and counted by
:func:`fabric_stack.plant.order.count_cables`: the grouping `bom`'s order list uses.
"""

from __future__ import annotations

from collections import Counter, defaultdict
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


def changed_cables(parts: list[LinkPart], legs_on_side: Mapping[str, int]) -> int:
    """Cables that adding (or removing) these legs adds (removes): per cable, the cables
    it takes with all its legs on that side minus those it takes without these legs, so
    the second leg of a splitter whose first leg is already cabled adds no cable."""
    changed = Counter(p.cable for p in parts)
    per = {p.cable: (p.links_per_cable, p.cables_per_link) for p in parts}
    total = 0
    for cable, n in changed.items():
        legs = max(legs_on_side.get(cable, 0), n)
        links, each = per[cable]
        total += (-(-legs // links) - -(-(legs - n) // links)) * each
    return total


def _legs(parts: Mapping[str, LinkPart] | None) -> Counter[str]:
    """Legs of each cable in one side's topology."""
    return Counter(p.cable for p in (parts or {}).values())


def _tally(
    groups: Mapping[tuple[str, str], list[LinkPart]], sides: Mapping[str, Counter[str]]
) -> dict[str, dict[str, int]]:
    """key → op → cables of the legs grouped by (key, op): added and removed cables as
    :func:`changed_cables` counts them, re-patched ones as the order list does."""
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for (key, op), parts in sorted(groups.items()):
        side = sides.get(op)
        out[key][op] = count_cables(parts) if side is None else changed_cables(parts, side)
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
    sides = {"add": _legs(after), "remove": _legs(before)}
    return _tally(by_part, sides), _tally(by_role, sides)


def with_parts(summary: ChangeSummary) -> ChangeSummary:
    """The summary with its cables counted and named as `bom` orders them."""
    parts, roles = cable_parts_of(summary)
    return summary.model_copy(update={"cable_parts": parts, "cable_roles": roles})


__all__ = ["cable_parts_of", "changed_cables", "with_parts"]
