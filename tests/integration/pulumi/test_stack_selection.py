"""`plan` / `apply` / `recover` run on the stack the user chose, on the real Pulumi CLI.

With stack `big` selected and set to 256 GPUs, `fabric-stack plan` plans `big`; `--stack`
and `$PULUMI_STACK` win over the selection; nothing creates a stack or changes which one is
selected; no stack, or one that does not exist, is one line and exit 2 (issues 32 and 35).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from tests.pulumi_project import REPO_ROOT, make_project, pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]


@pytest.fixture
def project(tmp_path: Path, pulumi_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    proj = make_project(tmp_path)
    (proj / ".venv").symlink_to(REPO_ROOT / ".venv")
    for key in ("PULUMI_BACKEND_URL", "PULUMI_HOME", "PULUMI_CONFIG_PASSPHRASE"):
        monkeypatch.setenv(key, pulumi_env[key])
    monkeypatch.delenv("PULUMI_STACK", raising=False)
    monkeypatch.chdir(proj)
    return proj


def _stacks(proj: Path, env: dict[str, str]) -> list[tuple[str, bool]]:
    rows = json.loads(pulumi(proj, env, "stack", "ls", "--json").stdout)
    return [(s["name"], s["current"]) for s in rows]


def _fs(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args), env=env)


def test_no_stack_at_all_is_one_line_and_creates_none(
    project: Path, pulumi_env: dict[str, str]
) -> None:
    for args in (["plan"], ["apply", "--yes"], ["recover"], ["plan", "--stack", "dev"]):
        r = _fs(*args)
        assert r.exit_code == 2, (args, r.output)
        assert len(r.stderr.splitlines()) == 1 and "pulumi stack init" in r.stderr, r.stderr
    assert _stacks(project, pulumi_env) == []
    assert sorted(p.name for p in project.glob("Pulumi.*.yaml")) == []


def test_the_selected_stack_and_never_another(project: Path, pulumi_env: dict[str, str]) -> None:
    env = pulumi_env
    pulumi(project, env, "stack", "init", "small", "--no-select")
    pulumi(project, env, "config", "set", "fabric:gpus", "16", "--stack", "small")
    pulumi(project, env, "stack", "init", "big", "--no-select")
    pulumi(project, env, "config", "set", "fabric:gpus", "32", "--stack", "big")

    # Two stacks, none selected: say how to pick one.
    r = _fs("plan", "--no-policy")
    assert r.exit_code == 2
    assert r.stderr == (
        "error: no Pulumi stack selected (stacks: big, small): pass --stack NAME, set "
        "PULUMI_STACK, or run `pulumi stack select NAME`\n"
    )

    pulumi(project, env, "stack", "select", "big")
    r = _fs("plan", "--no-policy", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["stack"] == "big"

    # --stack and $PULUMI_STACK win over the selection, and leave it where it was.
    r = _fs("plan", "--no-policy", "--stack", "small", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["stack"] == "small"
    r = _fs("plan", "--no-policy", "--format", "json", env={"PULUMI_STACK": "small"})
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["stack"] == "small"
    assert _stacks(project, env) == [("big", True), ("small", False)]

    # A typo is an error naming the stacks that exist, for every command; nothing created.
    for args in (
        ["plan", "--stack", "smal"],
        ["apply", "--stack", "smal", "--yes"],
        ["recover", "--stack", "smal"],
    ):
        r = _fs(*args)
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.startswith("error: --stack smal: no such stack in file://"), r.stderr
        assert "(stacks: big, small)" in r.stderr
    r = _fs("plan", env={"PULUMI_STACK": "smal"})
    assert r.exit_code == 2 and r.stderr.startswith("error: PULUMI_STACK=smal: no such stack")
    assert _stacks(project, env) == [("big", True), ("small", False)]
    assert sorted(p.name for p in project.glob("Pulumi.*.yaml")) == [
        "Pulumi.big.yaml",
        "Pulumi.small.yaml",
    ]
