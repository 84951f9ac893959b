"""`plan` names and counts cables as `bom` orders them (issue #44): the part each cable is
ordered as (DAC, ACC, splitter, twin-port fibre), not the builder's class the cable records
keep (which stay as they are: see docs/known-limits.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from fabric_stack.adapters.pulumi.change_parts import changed_cables, with_parts
from fabric_stack.adapters.pulumi.changes import ChangeSummary, Step, summarize_changes
from fabric_stack.drift.plan import PlanIndex
from fabric_stack.intent.wire import encode_cables, record_text
from fabric_stack.pipeline import Pipeline, run_pipeline
from fabric_stack.plant import plant_of
from fabric_stack.plant.order import LinkPart
from fabric_stack.spec.model import validate_spec
from fabric_stack.views.bom import bill_of_materials
from fabric_stack.views.changes import changes_json, changes_markdown
from fabric_stack.views.exports import physical

SPECS = {
    "dgx-h100 IB": {"gpus": 1024, "node_profile": "dgx-h100"},
    "dgx-h100 RoCE sn5600": {
        "gpus": 1024,
        "node_profile": "dgx-h100",
        "fabric": "roce",
        "switch": "sn5600",
    },
}


@pytest.fixture(scope="module", params=sorted(SPECS))
def pipeline(request: pytest.FixtureRequest) -> Pipeline:
    """The whole pipeline of one spec (built once per module)."""
    return run_pipeline(validate_spec(SPECS[request.param]))


def _new_stack(p: Pipeline) -> ChangeSummary:
    """The summary of a new stack's preview, from the steps the engine reports: the Fabric
    record and one bundle per role with the cable records as they are (not the plant's)."""
    fabric = {"record": record_text(p.intent.summary.model_dump(mode="json"))}
    by_role: dict[str, list[dict[str, Any]]] = {}
    for c in p.intent.cables:
        by_role.setdefault(c.role, []).append(c.model_dump(mode="json"))
    steps = [Step.from_props("create", "Fabric", "gpu-cluster", None, fabric)]
    steps += [
        Step(op="create", kind="CableBundle", name=role, new=encode_cables(cables))
        for role, cables in by_role.items()
    ]
    return with_parts(summarize_changes(steps, "demo"))


def test_plan_cable_parts_and_roles_equal_the_bom_order_list(pipeline: Pipeline) -> None:
    bom = bill_of_materials(pipeline.topology)
    want_parts: Counter[str] = Counter()
    want_roles: Counter[str] = Counter()
    for line in bom.cables:
        want_parts[line.cable_type] += line.count
        want_roles[line.role] += line.count
    summary = _new_stack(pipeline)
    got_parts = {part: ops["add"] for part, ops in summary.cable_parts.items()}
    got_roles = {role: ops["add"] for role, ops in summary.cable_roles.items()}
    assert got_parts == dict(want_parts)
    assert got_roles == dict(want_roles)
    # The headline's total is the order list's, not the number of links.
    total = sum(want_parts.values())
    assert f"{total:,} cables to add".replace(",", "") in changes_json(summary)["headline"]
    # The records keep the builder's class: none of the order's part names is one.
    assert not set(summary.cable_types) & set(summary.cable_parts)
    md = changes_markdown(summary)
    assert "| Cables (part) |" in md
    assert all(f"| {part} | {n} |" in md for part, n in want_parts.items())


def test_a_splitter_is_one_cable_in_plan_as_in_bom(pipeline: Pipeline) -> None:
    # Why the test above can fail: these plans order 1:2 splitters for storage, so a plan
    # that counted cable records (one per link) or named the builder's class would differ.
    summary = _new_stack(pipeline)
    links = sum(ops["add"] for ops in summary.cable_counts.values())
    cables = sum(ops["add"] for ops in summary.cable_parts.values())
    assert cables < links
    assert summary.cable_roles["storage"]["add"] < summary.cable_counts["storage"]["add"]
    assert any(p.startswith("1:2 splitter") for p in summary.cable_parts)


def test_without_a_spec_that_reads_back_plan_shows_the_records_type() -> None:
    cable = {
        "name": "n1:mlx5_0",
        "role": "node_leaf",
        "cable_type": "MMF OM4",
        "a_device": "n1",
        "a_port": "mlx5_0",
        "b_device": "leaf",
        "b_port": "1/1/1",
    }
    summary = with_parts(summarize_changes([Step(op="create", kind="Cable", name="c", new=cable)]))
    assert summary.cable_parts == {} and summary.cable_roles == {}
    md = changes_markdown(summary)
    assert "| Cables (type) |" in md and "| MMF OM4 | 1 |" in md


def test_a_second_splitter_leg_on_a_cabled_splitter_adds_no_cable() -> None:
    leg = LinkPart("1:2 splitter", "leaf 1/1", 2)
    # The splitter's first leg is cabled already (two legs on the side after the change).
    assert changed_cables([leg], {"leaf 1/1": 2}) == 0
    # Both legs new: one cable; one leg of a new splitter: one cable.
    assert changed_cables([leg, leg], {"leaf 1/1": 2}) == 1
    assert changed_cables([leg], {"leaf 1/1": 1}) == 1
    # A one-link cable is always one; a leg the side does not know counts as its own.
    assert changed_cables([LinkPart("fibre", "n1:mlx5_0", 1)], {}) == 1


def test_drift_names_the_part_cabling_names(pipeline: Pipeline) -> None:
    # A drift fix ("connect A to B (400G, PART)") says what `cabling` says to fit.
    topo = pipeline.topology
    index = PlanIndex.from_topology(topo)
    runs = plant_of(topo, strict=False).runs
    assert all(
        index.part_of(k) == physical(k, run)[3] for k, run in zip(topo.links, runs, strict=True)
    )
