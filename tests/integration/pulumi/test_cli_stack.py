"""`fabric-stack plan` / `apply` through click's runner: Automation API, real CLI, policy pack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fabric_stack.adapters.inventory import open_store
from fabric_stack.cli import main
from tests.pulumi_project import REPO_ROOT, make_project, pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]


@pytest.fixture
def project(tmp_path: Path, pulumi_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    proj = make_project(tmp_path)
    # The project's pack and venv, as in a checkout (PulumiPolicy.yaml uses ../.venv).
    (proj / "policies").symlink_to(REPO_ROOT / "policies")
    (proj / ".venv").symlink_to(REPO_ROOT / ".venv")
    for key in ("PULUMI_BACKEND_URL", "PULUMI_HOME", "PULUMI_CONFIG_PASSPHRASE"):
        monkeypatch.setenv(key, pulumi_env[key])
    monkeypatch.chdir(proj)
    # fabric-stack creates no stack (tests/integration/pulumi/test_stack_selection.py)
    pulumi(proj, pulumi_env, "stack", "init", "t", "--no-select")
    return proj


def _config(proj: Path, stack: str, **values: object) -> None:
    path = proj / f"Pulumi.{stack}.yaml"
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    data = data or {}
    data.setdefault("config", {}).update({f"fabric:{k}": v for k, v in values.items()})
    path.write_text(yaml.safe_dump(data))


def test_plan_apply_and_refused_plan(project: Path, tmp_path: Path) -> None:
    db = tmp_path / "inv.db"
    _config(project, "t", inventory=f"sqlite:///{db}")
    runner = CliRunner()

    r = runner.invoke(main, ["plan", "--stack", "t", "--format", "json"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)
    # Cables as `bom` orders them (#44): 450 links, a 1:2 storage splitter counted once.
    assert plan["headline"] == "Plan for stack t: 16 switches to add, 427 cables to add."
    assert plan["switches_by_model"]["create"] == {"qm9700": 12, "sn2201": 1, "sn5600": 3}
    assert plan["cable_counts"]["leaf_spine"] == {"add": 256}
    assert not db.exists() or open_store(f"sqlite:///{db}").counts() == {}  # preview wrote nothing

    r = runner.invoke(main, ["apply", "--stack", "t", "--yes", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert (
        open_store(f"sqlite:///{db}").counts("t")["Cable"] == 450
    )  # 448 + the two UFM-to-leaf cables

    _config(project, "t", oversubscription="2:1", gpus=512)
    r = runner.invoke(main, ["plan", "--stack", "t", "--format", "markdown"])
    assert r.exit_code == 1
    assert "oversubscription-1-to-1" in r.stdout and "mandatory" in r.stdout
    assert r.stderr.startswith("error: ")

    r = runner.invoke(main, ["apply", "--stack", "t"], input="")
    assert r.exit_code == 2 and "pass --yes" in r.stderr
