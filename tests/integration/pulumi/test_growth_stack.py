"""`fabric-stack plan` on a live stack grown 256 → 1,024 GPUs (RoCE): config and address changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from tests.integration.pulumi.test_cli_stack import _config, project  # noqa: F401

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]


def test_growth_plan_shows_config_changes_and_no_address_change(
    project: Path,  # noqa: F811
    tmp_path: Path,
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
