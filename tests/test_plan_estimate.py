"""`fabric-stack plan --estimate`: the full-cluster all-reduce before and after a change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from fabric_stack.cli.plan_estimate import estimate_change
from fabric_stack.spec import validate_spec
from fabric_stack.stack.changes import Step, summarize_changes
from tests.test_cli_stack import _config, project  # noqa: F401  (fixture)


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


@pytest.mark.pulumi
@pytest.mark.slow
def test_plan_estimate_on_a_real_capacity_change(project: Path, tmp_path: Path) -> None:  # noqa: F811
    _config(project, "t", inventory=f"sqlite:///{tmp_path / 'inv.db'}")
    runner = CliRunner()
    r = runner.invoke(main, ["apply", "--stack", "t", "--yes", "--format", "json"])
    assert r.exit_code == 0, r.output
    _config(project, "t", gpus=512)
    r = runner.invoke(main, ["plan", "--stack", "t", "--estimate", "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    # 16 → 63 servers (SU 1 keeps a position for the UFMs, whose cables do not move)
    assert data["cable_counts"]["node_leaf"] == {"add": 376}
    assert "manager_leaf" not in data["cable_counts"]
    est = data["estimate"]
    assert est["before"]["job"]["gpus"] == 128 and est["after"]["job"]["gpus"] == 504
    assert est["after"]["job"]["sus"] == 2
    r = runner.invoke(main, ["plan", "--stack", "t", "--estimate"])
    assert r.exit_code == 0 and "Full-cluster all-reduce estimate" in r.stdout
