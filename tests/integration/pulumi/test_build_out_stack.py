"""`pulumi preview` from phase 1 to phase 2 of a build-out (#43): creates only, no cable moves.

Phase 1 is 256 GPUs of a 512-GPU InfiniBand build-out (QM9700): it gets the final
fabric's 8 spines, one link from each leaf to each. Growing to 512 GPUs adds SU 2's
leaves, servers and cables; no existing cable is re-patched, replaced or removed and no
switch is replaced or removed (without the build-out, the same growth doubles the spines
and moves half of every leaf's uplinks: tests/unit/test_rail_groups.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from tests.integration.pulumi.test_cli_stack import _config, project  # noqa: F401

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]


def test_build_out_phase_2_preview_only_creates(project: Path, tmp_path: Path) -> None:  # noqa: F811
    _config(project, "t", inventory=f"sqlite:///{tmp_path / 'inv.db'}", gpus=256,
            buildOutGpus=512)  # fmt: skip
    runner = CliRunner()
    r = runner.invoke(main, ["apply", "--stack", "t", "--yes", "--no-policy", "--format", "json"])
    assert r.exit_code == 0, r.output
    applied = json.loads(r.stdout)
    assert applied["switches_by_model"]["create"]["qm9700"] == 8 + 8  # 8 leaves, 8 spines

    _config(project, "t", gpus=512)
    r = runner.invoke(main, ["plan", "--stack", "t", "--no-policy", "--format", "json"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)
    ops = {op for counts in plan["cable_counts"].values() for op in counts}
    assert ops == {"add"}, plan["cable_counts"]
    assert plan["cable_counts"]["leaf_spine"] == {"add": 256}  # SU 2's 8 leaves × 32
    assert set(plan["switches_by_model"]) <= {"create", "update"}
    assert plan["switches_by_model"]["create"]["qm9700"] == 8  # SU 2's leaves, no spine
    assert "re-patch" not in plan["headline"] and "remove" not in plan["headline"]
