"""Backend helpers: kinds, masking, lock holders, and `fabric-stack env` (fast, no CLI)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.pulumi.backends import (
    backend_kind,
    env_file_text,
    live_lock_holder,
    lock_holders,
    mask_secrets,
)
from fabric_stack.cli import main

LOCK_DIR = ".pulumi/locks/organization/p/it"


def test_kinds_and_masking() -> None:
    assert backend_kind("file:///x") == "file"
    assert backend_kind("postgres://u@h/db") == "postgres"
    assert backend_kind("postgresql://u@h/db") == "other"  # Pulumi registers postgres:// only
    url = "postgres://fab:s3cr3t@db:5432/state?sslmode=require"
    text = f'unable to open state database "{url}": pq: password s3cr3t rejected'
    masked = mask_secrets(text, url)
    assert "s3cr3t" not in masked and "fab:***@db" in masked


def _lock(root: Path, name: str, pid: int, host: str) -> None:
    d = root / LOCK_DIR
    d.mkdir(parents=True, exist_ok=True)
    body = {"pid": pid, "username": "u", "hostname": host, "timestamp": "2026-11-30T10:00:00Z"}
    (d / name).write_text(json.dumps(body))


def test_live_lock_holder_is_a_running_process_on_this_host(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    _lock(tmp_path, "a.json", dead.pid, socket.gethostname())  # died
    _lock(tmp_path, "b.json", os.getpid(), "another-host")  # elsewhere: can't tell
    (tmp_path / LOCK_DIR / "c.json").write_text("")  # torn: ignored
    holders = lock_holders(f"file://{tmp_path}", "p", "it")
    assert sorted(h.pid for h in holders) == sorted([dead.pid, os.getpid()])
    assert live_lock_holder(holders) is None
    _lock(tmp_path, "d.json", os.getpid(), socket.gethostname())  # this test: alive
    live = live_lock_holder(lock_holders(f"file://{tmp_path}", "p", "it"))
    assert live is not None and live.pid == os.getpid()


def test_no_lock_dir_no_holders(tmp_path: Path) -> None:
    assert lock_holders(f"file://{tmp_path}", "p", "it") == []
    assert lock_holders("https://api.pulumi.com", "p", "it") == []


def test_env_file_exports_what_offline_env_decides(tmp_path: Path) -> None:
    env = {
        "PULUMI_BACKEND_URL": "postgres://fab@db/state",
        "PULUMI_CONFIG_PASSPHRASE": "x",
        "PULUMI_CONFIG_PASSPHRASE_FILE": "/etc/team pass",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "OTHER": "not exported",
    }
    text = env_file_text(env, tmp_path)
    out = subprocess.run(
        ["bash", "-c", f"{text}\nenv"],
        env={"PATH": "/usr/bin:/bin", "PULUMI_CONFIG_PASSPHRASE": "old"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert f"PATH={tmp_path.resolve()}/.venv/bin:/usr/bin:/bin" in out
    assert "PULUMI_BACKEND_URL=postgres://fab@db/state" in out
    assert "PULUMI_CONFIG_PASSPHRASE_FILE=/etc/team pass" in out
    assert not any(x.startswith("PULUMI_CONFIG_PASSPHRASE=") for x in out)  # the file wins
    assert not any(x.startswith("OTHER=") for x in out)


def test_env_command_writes_a_private_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE", raising=False)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    r = CliRunner().invoke(main, ["env", "--out", ".state/env.sh"])
    assert r.exit_code == 0, r.output
    f = tmp_path / ".state" / "env.sh"
    assert f.stat().st_mode & 0o777 == 0o600
    assert f"export PULUMI_BACKEND_URL=file://{tmp_path.resolve()}/.state/pulumi" in f.read_text()
    r = CliRunner().invoke(main, ["env", "--format", "json"])
    assert json.loads(r.output) == {
        "backend": f"file://{tmp_path.resolve()}/.state/pulumi",
        "kind": "file",
        "passphrase": "the public local default 'fabric-stack-local' (not for real secrets)",
    }
