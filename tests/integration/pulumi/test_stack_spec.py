"""A spec file becomes a stack and back, on the real Pulumi CLI (issue #48).

`stack init NAME --from spec.yaml` stores every key of the spec as ``fabric:`` config
(hypothesis over specs, a handful of examples: each makes a real stack), `stack export`
writes the same keys back, and `size --stack NAME` gives what `size --config spec.yaml`
gives, from the project and from a directory outside it. Bad input makes no stack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fabric_stack.cli import main
from fabric_stack.errors import SpecError
from fabric_stack.spec.model import validate_spec
from tests.pulumi_project import REPO_ROOT, make_project, pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

ASKS = st.builds(
    lambda base, pair: {**base, "fabric": pair[0], "switch": pair[1]},
    st.fixed_dictionaries(
        {"gpus": st.sampled_from([16, 64, 256])},
        optional={
            "name": st.sampled_from(["prod", "007"]),
            "oversubscription": st.sampled_from(["1:1", "2:1"]),
        },
    ),
    st.sampled_from([("infiniband", "qm9700"), ("roce", "sn5600")]),
)


@pytest.fixture
def project(tmp_path: Path, pulumi_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    proj = make_project(tmp_path / "p")
    (proj / ".venv").symlink_to(REPO_ROOT / ".venv")
    return proj, pulumi_env


def _fs(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def _stacks(proj: Path, env: dict[str, str]) -> list[str]:
    return [s["name"] for s in json.loads(pulumi(proj, env, "stack", "ls", "--json").stdout)]


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(asks=ASKS)
def test_init_export_round_trips_every_key(
    asks: dict[str, Any],
    project: tuple[Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proj, env = project
    try:
        spec = validate_spec(asks)
    except SpecError:
        assume(False)
    full = spec.model_dump(mode="json")  # every key a spec holds
    name = f"rt-{abs(hash(json.dumps(full, sort_keys=True))) % 10**8}"
    monkeypatch.chdir(proj)
    (proj / f"{name}.yaml").write_text(yaml.safe_dump({**full, "netbox_token": "tok-123"}))
    if name in _stacks(proj, env):
        pulumi(proj, env, "stack", "rm", name, "--yes", "-f")
    made = _fs(env, "stack", "init", name, "--from", f"{name}.yaml")
    assert made.exit_code == 0, made.output
    assert "tok-123" not in (proj / f"Pulumi.{name}.yaml").read_text()

    exported = _fs(env, "stack", "export", name)
    assert exported.exit_code == 0, exported.output
    assert yaml.safe_load(exported.stdout) == full
    assert exported.stderr == "note: fabric:netboxToken is a secret: not exported\n"

    by_stack = _fs(env, "size", "--stack", name, "--format", "json")
    by_file = _fs(env, "size", "--config", f"{name}.yaml", "--format", "json")
    assert by_stack.exit_code == 0 and by_file.exit_code == 0, by_stack.output + by_file.output
    assert by_stack.stdout == by_file.stdout


def test_stack_works_from_another_directory(
    project: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj, env = project
    monkeypatch.chdir(proj)
    (proj / "away.yaml").write_text("gpus: 64\nfabric: roce\nswitch: sn5600\n")
    assert _fs(env, "stack", "init", "away", "--from", "away.yaml").exit_code == 0
    here = _fs(env, "size", "--stack", "away", "--format", "json")

    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    monkeypatch.chdir(elsewhere / "deep")
    away = _fs(
        {**env, "FABRIC_STACK_PROJECT": str(proj)}, "size", "--stack", "away", "--format", "json"
    )
    assert away.exit_code == 0, away.output
    assert away.stdout == here.stdout and json.loads(away.stdout)["spec"]["gpus"] == 64
    # ... and below the project (no variable needed)
    (proj / "sub" / "dir").mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(proj / "sub" / "dir")
    below = _fs(env, "bom", "--stack", "away", "--format", "json")
    assert below.exit_code == 0, below.output


def test_bad_input_makes_no_stack(
    project: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    proj, env = project
    monkeypatch.chdir(proj)
    before = _stacks(proj, env)
    (proj / "unknown.yaml").write_text("gpus: 64\ngpus_per_nod: 8\n")
    (proj / "unbuildable.yaml").write_text("gpus: 64\ngpus_per_node: 7\n")
    for f in ("unknown.yaml", "unbuildable.yaml"):
        r = _fs(env, "stack", "init", "never", "--from", f)
        assert r.exit_code == 2, r.output
        assert r.stderr.startswith(f"error: {f}: ") and r.stderr.count("\n") == 1, r.stderr
    assert (
        "gpus_per_nod: not a spec or stack key"
        in _fs(env, "stack", "init", "never", "--from", "unknown.yaml").stderr
    )
    (proj / "ok.yaml").write_text("gpus: 64\n")
    assert _fs(env, "stack", "init", "twice", "--from", "ok.yaml").exit_code == 0
    again = _fs(env, "stack", "init", "twice", "--from", "ok.yaml")
    assert again.exit_code == 2 and "exists already" in again.stderr
    missing = _fs(env, "size", "--stack", "nevr")
    assert missing.exit_code == 2 and "no such stack" in missing.stderr
    assert _stacks(proj, env) == sorted({*before, "twice"})
    assert not (proj / "Pulumi.never.yaml").exists()
