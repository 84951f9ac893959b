"""adapters.pulumi.env: the version pin and the offline environment (no Pulumi CLI needed)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fabric_stack.adapters.pulumi.env import LOCAL_PASSPHRASE, PULUMI_VERSION, offline_env

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_pin_matches_engine_script_pyproject_and_wrapper_module() -> None:
    script = (REPO_ROOT / "scripts" / "pulumi-engine.sh").read_text()
    assert re.findall(r"^PULUMI_VERSION=(\S+)$", script, re.M) == [PULUMI_VERSION]

    pyproject = (REPO_ROOT / "pyproject.toml").read_text()
    assert re.findall(r'"pulumi==([^"]+)"', pyproject) == [PULUMI_VERSION]

    go_mod = (REPO_ROOT / "scripts" / "pulumi-wrapper" / "go.mod").read_text()
    pins = dict(re.findall(r"^\s*github\.com/pulumi/pulumi/(pkg|sdk)/v3 (\S+)$", go_mod, re.M))
    assert pins == {"pkg": f"v{PULUMI_VERSION}", "sdk": f"v{PULUMI_VERSION}"}


def test_defaults(tmp_path: Path) -> None:
    base = {"PATH": "/usr/bin:/bin", "HOME": "/home/x"}
    env = offline_env(tmp_path, base=base)

    venv = str(tmp_path.resolve() / ".venv" / "bin")
    assert env["PATH"].split(os.pathsep) == [venv, "/usr/bin", "/bin"]
    state = tmp_path.resolve() / ".state" / "pulumi"
    assert env["PULUMI_BACKEND_URL"] == f"file://{state}"
    assert state.is_dir()
    assert env["PULUMI_CONFIG_PASSPHRASE"] == LOCAL_PASSPHRASE
    assert env["PULUMI_SKIP_UPDATE_CHECK"] == "true"
    assert env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] == "true"
    assert "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK" not in env
    assert env["HOME"] == "/home/x"
    assert base == {"PATH": "/usr/bin:/bin", "HOME": "/home/x"}, "base must not change"


def test_keeps_the_users_backend_and_passphrase(tmp_path: Path) -> None:
    theirs = tmp_path / "their-state"
    base = {
        "PATH": "/bin",
        "PULUMI_BACKEND_URL": f"file://{theirs}",
        "PULUMI_CONFIG_PASSPHRASE": "s3cret",
    }
    env = offline_env(tmp_path, base=base)
    assert env["PULUMI_BACKEND_URL"] == f"file://{theirs}"
    assert theirs.is_dir()
    assert env["PULUMI_CONFIG_PASSPHRASE"] == "s3cret"
    assert not (tmp_path / ".state").exists()

    remote = offline_env(tmp_path, base={"PULUMI_BACKEND_URL": "postgres://db/state"})
    assert remote["PULUMI_BACKEND_URL"] == "postgres://db/state"

    with_file = offline_env(tmp_path, base={"PULUMI_CONFIG_PASSPHRASE_FILE": "/run/pass"})
    assert "PULUMI_CONFIG_PASSPHRASE" not in with_file


def test_state_dir_wins_and_venv_is_not_duplicated(tmp_path: Path) -> None:
    venv = str(tmp_path.resolve() / ".venv" / "bin")
    base = {"PATH": os.pathsep.join(["/bin", venv]), "PULUMI_BACKEND_URL": "file:///elsewhere"}
    env = offline_env(tmp_path, state_dir=tmp_path / "tests-state", base=base)
    assert env["PULUMI_BACKEND_URL"] == f"file://{(tmp_path / 'tests-state').resolve()}"
    assert env["PATH"].split(os.pathsep) == [venv, "/bin"]


def test_defaults_to_os_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_STACK_MARKER", "1")
    env = offline_env(tmp_path, state_dir=tmp_path / "s")
    assert env["FABRIC_STACK_MARKER"] == "1"
