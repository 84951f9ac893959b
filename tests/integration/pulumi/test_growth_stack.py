"""`fabric-stack plan` on a live stack grown 256 → 1,024 GPUs (RoCE): config and address changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from fabric_stack.intent.wire import record_text
from tests.integration.pulumi.test_cli_stack import _config, project  # noqa: F401
from tests.pulumi_project import pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]


def test_growth_plan_shows_config_changes_and_no_address_change(
    project: Path,  # noqa: F811
    tmp_path: Path,
    pulumi_env: dict[str, str],
) -> None:
    _config(
        project,
        "t",
        inventory=f"sqlite:///{tmp_path / 'inv.db'}",
        fabric="roce",
        switch="sn5600",
        gpus=256,
    )
    runner = CliRunner()
    r = runner.invoke(main, ["apply", "--stack", "t", "--yes", "--no-policy", "--format", "json"])
    assert r.exit_code == 0, r.output
    _config(project, "t", gpus=1024)
    r = runner.invoke(main, ["plan", "--stack", "t", "--no-policy", "--format", "json"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)
    assert plan["compared"] and plan["address_changes"] == []
    changed = {c["device"] for c in plan["config_changes"] if not c["new"]}
    assert "spine-01" in changed and "su1-r1-leaf" in changed
    assert {"device", "added", "removed"} <= set(plan["config_changes"][0])
    # The Switch record carries the config digest: an existing spine's update says so.
    spine = next(s for s in plan["switches"] if s["name"] == "spine-01")
    assert spine["op"] == "update" and "config_digest" in spine["changed"]
    assert "allocations" not in spine["changed"]  # its router-id and ASN stay

    # The same stack as one recorded before stable allocations holds it: its switch
    # records without allocations or digests (state exported, edited, imported). plan
    # must name what moves against that record, not against this code's re-derivation.
    state = tmp_path / "state.json"
    pulumi(project, pulumi_env, "stack", "export", "--stack", "t", "--file", str(state))
    data = json.loads(state.read_text())
    for res in data["deployment"]["resources"]:
        if not res["type"].endswith(":Switch"):
            continue
        for side in ("inputs", "outputs"):
            rec = json.loads(res[side]["record"])
            for key in ("allocations", "config_digest", "config_lines"):
                rec.pop(key, None)
            res[side]["record"] = record_text(rec)
    state.write_text(json.dumps(data))
    pulumi(project, pulumi_env, "stack", "import", "--stack", "t", "--file", str(state))
    r = runner.invoke(main, ["plan", "--stack", "t", "--no-policy", "--format", "json"])
    assert r.exit_code == 0, r.output
    moved = {a["object"]: a for a in json.loads(r.stdout)["address_changes"]}
    assert moved["spine-01 router-id"]["reason"] == (
        "recorded before stable allocations: router-id 10.255.0.9 → 10.255.0.1"
    )
    assert all(a["reason"].startswith("recorded before stable allocations") for a in moved.values())
