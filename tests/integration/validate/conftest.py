"""Planted-defect tests of `make validate`: each family's real tool must reject a planted
defect with its own message (and accept the file as rendered)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from validate.core import FileProblem, Validator
from validate.matrix import render_scenario, scenario_named


def require(v: Validator) -> None:
    """Skip when ``v``'s tool is missing on a developer machine; fail on CI (``CI`` set),
    where scripts/validate-deps.sh has installed every tool before the suite runs."""
    why = v.missing()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{v.tool} missing on CI: {why}")
    pytest.skip(f"{v.tool} not installed: {why}")


def rendered(tmp_path: Path, scenario: str) -> Path:
    """``scenario`` of the matrix rendered under ``tmp_path`` (its root)."""
    root = tmp_path / scenario
    render_scenario(scenario_named(scenario), root)
    return root


def judge(v: Validator, root: Path, *rel: str) -> list[FileProblem]:
    """``v`` over the files ``rel`` (relative to ``root``), or over all it selects."""
    files = [root / r for r in rel] if rel else v.select(root)
    return v.check(root, files)
