"""Asked vs built on the real engine: `apply`'s summary and the stack outputs (issue 32).

A 16-port switch gives 8-server SUs, so 64 GPUs fill SU 1 and the two UFMs take a server
position: 56 GPUs are cabled. The pure side is tests/unit/test_asked_vs_built.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from tests.integration.pulumi.test_cli_stack import _config, project  # noqa: F401  (fixture)
from tests.pulumi_project import pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

WHY = "1 server position(s) given to the fabric managers (NVIDIA DGX SuperPOD RA rule)"


def test_apply_and_the_outputs_say_what_was_built(
    project: Path,  # noqa: F811
    tmp_path: Path,
    pulumi_env: dict[str, str],
) -> None:
    _config(project, "t", gpus=64, switch="generic-16x400", inventory=f"sqlite:///{tmp_path}/i.db")
    r = CliRunner().invoke(
        main, ["apply", "--stack", "t", "--yes", "--no-policy", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    applied = json.loads(r.stdout)
    assert applied["headline"].endswith(f". 56 of the 64 GPUs asked are built: {WHY}.")
    assert (applied["gpus_requested"], applied["gpus_built"], applied["servers_removed"]) == (
        64,
        56,
        1,
    )
    out = json.loads(
        pulumi(project, pulumi_env, "stack", "output", "--json", "--stack", "t").stdout
    )
    assert (out["gpus"], out["gpus_requested"], out["gpus_built"]) == (64, 64, 56)
    assert out["servers_removed"] == {"count": 1, "reason": WHY.replace("(s) ", "(s) in SU 1 ")}
