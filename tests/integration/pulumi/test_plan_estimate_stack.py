"""`fabric-stack plan --estimate` on a real Pulumi stack's capacity change.

The pure half is in ``tests/unit/test_plan_estimate.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from tests.integration.pulumi.test_cli_stack import _config, project  # noqa: F401  (fixture)


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
