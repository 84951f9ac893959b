"""Planted-defect tests of `make validate`: each family's real tool must reject a planted
defect with its own message.

That every rendered file is *accepted* is `make validate`'s job: it runs each real validator
once over the whole matrix (`.ci/run` runs it before `make test`), so no test here judges a
whole rendered scenario again. A planted test judges the one file it plants, and each
scenario is rendered once per test process (:func:`rendered` copies it).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import cache
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


@cache
def _rendered_once(scenario: str) -> Path:
    """``scenario`` rendered into a directory of this process's, removed at exit."""
    top = Path(tempfile.mkdtemp(prefix=f"validate-{scenario}-"))
    atexit.register(shutil.rmtree, top, True)
    render_scenario(scenario_named(scenario), top / scenario)
    return top / scenario


def rendered(tmp_path: Path, scenario: str) -> Path:
    """A copy of ``scenario`` of the matrix under ``tmp_path`` (its root), which the test may
    plant defects in: the scenario itself is rendered once per process."""
    root = tmp_path / scenario
    shutil.copytree(_rendered_once(scenario), root)
    return root


def judge(v: Validator, root: Path, *rel: str) -> list[FileProblem]:
    """``v`` over the files ``rel`` (relative to ``root``), or over all it selects."""
    files = [root / r for r in rel] if rel else v.select(root)
    return v.check(root, files)
