"""`fabric-stack plan --estimate`: the full-cluster all-reduce before and after a change."""

from __future__ import annotations

from fabric_stack.adapters.pulumi.changes import Step, summarize_changes
from fabric_stack.cli.plan_estimate import estimate_change
from fabric_stack.spec.model import validate_spec


def _fabric_step(op: str, old_gpus: int | None, new_gpus: int | None) -> Step:
    def rec(g: int | None) -> dict[str, object]:
        return {"spec": validate_spec({"gpus": g}).model_dump(mode="json")} if g else {}

    return Step(op=op, kind="Fabric", name="gpu-cluster", old=rec(old_gpus), new=rec(new_gpus))


def test_summary_keeps_both_specs_out_of_its_json() -> None:
    s = summarize_changes([_fabric_step("update", 128, 256)])
    assert (s.spec_before["gpus"], s.spec_after["gpus"]) == (128, 256)
    assert "spec_before" not in s.model_dump()
    created = summarize_changes([_fabric_step("create", None, 128)])
    assert created.spec_before == {} and created.spec_after["gpus"] == 128


def test_estimate_change_grows_with_the_cluster() -> None:
    data = estimate_change(summarize_changes([_fabric_step("update", 128, 1024)]))
    assert data["before"]["job"] == {"gpus": 128, "nodes": 16, "sus": 1, "pods": 1}
    # 4 full SUs: one server position of SU 1 goes to the UFMs (the RA rule)
    assert data["after"]["job"]["gpus"] == 1016 and data["after"]["job"]["sus"] == 4
    first = estimate_change(summarize_changes([_fabric_step("create", None, 128)]))
    assert first["before"] is None and first["after"]["job"]["gpus"] == 128
