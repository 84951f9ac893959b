"""Asked vs built: the fabric managers take a server position (the DGX SuperPOD RA rule), so
512 GPUs asked builds 504; `size`, `plan`/`apply`, the stack outputs and the design report's
first page all say so, in the words of one function (issue 32)."""

from __future__ import annotations

import json

from fabric_stack.adapters.pulumi.changes import Step, summarize_changes
from fabric_stack.artifacts import report
from fabric_stack.intent.wire import record_text
from fabric_stack.pipeline import run_pipeline
from fabric_stack.sizing.managers import asked_vs_built, managers_took
from fabric_stack.spec.model import validate_spec
from fabric_stack.views.changes import changes_json, changes_markdown
from tests.golden_artifacts import context

SHORT = (
    "504 of the 512 GPUs asked are built: 1 server position(s) given to the fabric managers "
    "(NVIDIA DGX SuperPOD RA rule)"
)


def test_one_sentence_for_every_place() -> None:
    assert asked_vs_built(512, 504, 1) == SHORT
    assert asked_vs_built(512, 504, 1, su=1) == SHORT.replace(
        "position(s) ", "position(s) in SU 1 "
    )
    assert asked_vs_built(128, 128, 0) == "" and managers_took(0) == ""


def _fabric_step(op: str, gpus: int) -> Step:
    """The Fabric record of a real plan, as the engine reports its inputs."""
    summary = run_pipeline(validate_spec({"gpus": gpus})).intent.summary
    props = {"record": record_text(summary.model_dump(mode="json"))}
    return Step.from_props(op=op, kind="Fabric", name="gpu-cluster", old=props, new=props)


def test_plan_and_apply_headlines_say_what_is_built() -> None:
    plan = summarize_changes([_fabric_step("update", 512)], "demo", "preview")
    data = changes_json(plan)
    assert (data["gpus_requested"], data["gpus_built"], data["servers_removed"]) == (512, 504, 1)
    assert data["headline"] == f"Plan for stack demo: no switch or cable changes. {SHORT}."
    applied = summarize_changes([_fabric_step("create", 512)], "demo", "update")
    assert changes_markdown(applied).startswith(
        f"### Applied for stack demo: no switch or cable changes. {SHORT}.\n"
    )


def test_nothing_said_when_every_gpu_asked_is_built() -> None:
    data = changes_json(summarize_changes([_fabric_step("create", 128)], "demo"))
    assert (data["gpus_requested"], data["gpus_built"], data["servers_removed"]) == (128, 128, 0)
    assert data["headline"] == "Plan for stack demo: no switch or cable changes."
    # No Fabric record (a stack being destroyed): zeros, nothing said.
    empty = changes_json(summarize_changes([], "demo"))
    assert (empty["gpus_requested"], empty["headline"]) == (
        0,
        "Plan for stack demo: no switch or cable changes.",
    )


def test_the_report_first_page_says_it() -> None:
    html = report.render_html(context({"gpus": 512}), [])
    head = html.split("<nav>", 1)[0]  # the header and the lead paragraph: the first page
    assert "GPUs: <b>504 of 512 asked</b>" in head
    assert SHORT.replace("position(s) ", "position(s) in SU 1 ") + "." in head
    seed = report.render_html(context({}), []).split("<nav>", 1)[0]
    assert "GPUs: <b>128</b>" in seed and "asked" not in seed


def test_the_stack_outputs_say_it() -> None:
    from components.program import stack_outputs

    out = stack_outputs(run_pipeline(validate_spec({"gpus": 512})))
    assert (out["gpus"], out["gpus_requested"], out["gpus_built"]) == (512, 512, 504)
    assert out["servers_removed"] == {
        "count": 1,
        "reason": "1 server position(s) in SU 1 given to the fabric managers "
        "(NVIDIA DGX SuperPOD RA rule)",
    }
    seed = stack_outputs(run_pipeline(validate_spec({})))
    assert (seed["gpus"], seed["gpus_built"]) == (128, 128)
    assert seed["servers_removed"] == {"count": 0, "reason": ""}
    json.dumps(out)  # plain data: Pulumi exports it as is
