"""Shared fixtures: the offline Pulumi environment and a throw-away PostgreSQL server."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from fabric_stack.stack.env import offline_env, venv_bin

# CI runs property tests derandomized, so a landing is never blocked by a new random
# example nobody saw locally; local runs keep exploring (failures are saved in .hypothesis/).
# No per-example deadline in CI either: on a loaded machine it fails on timing, and speed
# is measured in bench/, not asserted in tests.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO_ROOT = Path(__file__).resolve().parents[1]
POSTGRES_SH = REPO_ROOT / "scripts" / "postgres.sh"
NETBOX_SH = REPO_ROOT / "scripts" / "netbox.sh"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The fabric-stack checkout (holds .venv, scripts/ and pyproject.toml)."""
    return REPO_ROOT


@pytest.fixture
def pulumi_env(tmp_path: Path) -> dict[str, str]:
    """Environment for the real Pulumi CLI: the pinned engine from .venv/bin, a file:// backend
    and a PULUMI_HOME of the test's own under tmp_path, no network look-ups."""
    pulumi = venv_bin(REPO_ROOT) / "pulumi"
    if not pulumi.exists():
        pytest.fail(f"{pulumi} is missing: run `make setup` (it builds or finds the Pulumi engine)")
    env = offline_env(REPO_ROOT, state_dir=tmp_path / "pulumi-state")
    env["PULUMI_HOME"] = str(tmp_path / "pulumi-home")
    return env


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a throw-away PostgreSQL server on a free loopback port, for the whole session.

    Started and stopped with scripts/postgres.sh. Fails (does not skip) when the server
    binaries are missing: `make test` installs them first (`make postgres`).
    """
    state = tmp_path_factory.mktemp("postgres")
    started = subprocess.run(
        ["bash", str(POSTGRES_SH), "start", str(state)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if started.returncode != 0:
        pytest.fail(
            f"scripts/postgres.sh start failed (exit {started.returncode}); "
            f"`make postgres` installs the server binaries.\n{started.stderr}",
            pytrace=False,
        )
    url = started.stdout.strip().splitlines()[-1]
    try:
        yield url
    finally:
        subprocess.run(
            ["bash", str(POSTGRES_SH), "stop", str(state)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="session")
def netbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(URL, API token) of a throw-away NetBox on loopback, for the whole session.

    Started and stopped with scripts/netbox.sh. Fails (does not skip) when NetBox is not
    installed: `make test-netbox` installs it first (`make netbox`).
    """
    state = tmp_path_factory.mktemp("netbox")
    started = subprocess.run(
        ["bash", str(NETBOX_SH), "start", str(state)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    try:
        if started.returncode != 0:
            pytest.fail(
                f"scripts/netbox.sh start failed (exit {started.returncode}); "
                f"`make netbox` installs it.\n{started.stderr}",
                pytrace=False,
            )
        url = started.stdout.strip().splitlines()[-1]
        yield url, (state / "token").read_text().strip()
    finally:
        subprocess.run(
            ["bash", str(NETBOX_SH), "stop", str(state)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
