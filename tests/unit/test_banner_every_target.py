"""Issue 35: ``render --allow-violations`` works on every target of every fabric.

Every file every target writes must carry the banner in its own syntax (a file
type without one was a ``BannerError`` traceback: ``partitions.conf.user_ext``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabric_stack.artifacts import TARGETS, RenderContext, applies, render_artifacts
from fabric_stack.artifacts.banner import with_banners
from fabric_stack.policy import Violation
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import build_topology
from tests.contract import run_checked

SPECS: dict[str, dict[str, Any]] = {
    "infiniband": {},
    "roce": {"fabric": "roce", "switch": "sn5600"},
    "ethernet": {"fabric": "ethernet", "switch": "sn5600"},
}

VIOLATION = Violation(
    rule="oversubscription-1-to-1",
    level="mandatory",
    kind="Fabric",
    resource="fabric",
    measured="2:1",
    allowed="1:1",
    message="fabric: leaf down:up 2:1, the rule allows 1:1 (set oversubscription: 1:1)",
    fix="oversubscription: 1:1",
)


def _context(fabric: str) -> RenderContext:
    return RenderContext.from_topology(build_topology(size_fabric(validate_spec(SPECS[fabric]))))


@pytest.mark.parametrize("fabric", list(SPECS))
@pytest.mark.parametrize("target", list(TARGETS))
def test_every_file_of_every_target_carries_the_banner(fabric: str, target: str) -> None:
    ctx = _context(fabric)
    if not applies(target, ctx):
        pytest.skip(f"{target} does not apply to {fabric}")
    arts = render_artifacts(target, ctx)
    assert arts
    for art in with_banners(arts, [VIOLATION]):
        assert "POLICY VIOLATIONS" in art.content[:4000], art.path
        if art.path.endswith(".json"):
            assert "_violations" in json.loads(art.content), art.path
        elif art.path.endswith((".yaml", ".yml")):
            list(yaml.safe_load_all(art.content))


def test_render_allow_violations_on_a_failing_infiniband_plan(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    args = ["render", "infiniband", "--oversubscription", "2:1", "--out-dir", out]
    run = run_checked([*args, "--allow-violations"], tmp_path)
    assert run.code == 0, run.stderr
    ext = tmp_path / "out" / "infiniband" / "partitions.conf.user_ext"
    assert ext.read_text().startswith("# POLICY VIOLATIONS")
