"""Shared fixtures (the offline Pulumi environment, throw-away PostgreSQL and NetBox servers),
and the markers every test gets from the folder it lives in.

Tests are laid out by kind: ``unit/`` (pure, fast), ``golden/`` (generated files compared
with the committed ones), ``integration/<part>/`` (a real part: the Pulumi CLI, a
PostgreSQL server, NetBox, the twin's daemons). The folder sets the marker, so
``make test-fast`` is a path (``tests/unit tests/golden``) and ``-m "not twin"`` works
without every module remembering its ``pytestmark``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from fabric_stack.adapters.pulumi.env import offline_env, venv_bin

# CI runs property tests derandomized, so a landing is never blocked by a new random
# example nobody saw locally; local runs keep exploring (failures are saved in .hypothesis/).
# No per-example deadline in CI either: on a loaded machine it fails on timing, and speed
# is measured in bench/, not asserted in tests.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO_ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent

FOLDER_MARKERS: dict[str, str] = {
    "integration/pulumi": "pulumi",
    "integration/postgres": "postgres",
    "integration/netbox": "netbox",
    "integration/twin": "twin",
    "integration/slurm": "slurm",
    "integration/validate": "validate",
}
"""The marker every test under a folder gets (the folder names the real part it needs)."""

REAL_PART_FIXTURES: dict[str, str] = {
    "pulumi_env": "pulumi",
    "pg_url": "postgres",
    "netbox": "netbox",
}
"""Fixtures that start or need a real part, and the marker a test using one must carry."""


def serial_scope(nodeid: str) -> str:
    """The pytest-xdist work unit of the test ``nodeid``: its real part's folder under
    ``tests/integration/`` (every test of that part runs on one worker, in order), else the
    test itself (unit and golden tests are spread over the workers).

    One worker per real part: a session's NetBox or PostgreSQL server is started once, by
    the worker that runs its tests; twin namespaces, the throw-away slurmctld and the Pulumi
    engine's plugins never meet a second copy of themselves."""
    parts = nodeid.split("/")
    if len(parts) > 3 and parts[:2] == ["tests", "integration"]:
        return "/".join(parts[:3])
    return nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test` runs two pytest-xdist workers (``-n 2``) scheduled by :func:`serial_scope`.

    Not ``--dist loadgroup``: pytest-xdist 3.8 marks a group by rewriting ``item._nodeid``,
    which pytest 9.2's nodes no longer read, so its groups are silently ignored."""
    from xdist.scheduler import LoadScopeScheduling

    class RealPartScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return serial_scope(nodeid)

    return RealPartScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test by its folder; a fast-folder test that needs a real part is an error."""
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(TESTS).as_posix()
        for folder, marker in FOLDER_MARKERS.items():
            if rel.startswith(folder + "/"):
                item.add_marker(getattr(pytest.mark, marker))
        if rel.startswith(("unit/", "golden/")):
            needs = set(getattr(item, "fixturenames", ())) & set(REAL_PART_FIXTURES)
            if needs:
                raise pytest.UsageError(
                    f"{item.nodeid} uses {sorted(needs)}: it needs a real part, so it belongs "
                    f"under tests/integration/{REAL_PART_FIXTURES[sorted(needs)[0]]}/"
                )


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


def netbox_server(
    tmp_path_factory: pytest.TempPathFactory, branching: bool = False
) -> Iterator[tuple[str, str]]:
    """(URL, API token) of a throw-away NetBox on loopback until the generator ends; with
    ``branching``, the netbox-branching plugin enabled (the users' default; without it, the
    plain NetBox).

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
        env={**os.environ, "FABRIC_STACK_NETBOX_BRANCHING": "1" if branching else "0"},
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


@pytest.fixture(scope="session")
def netbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(URL, API token) of a throw-away NetBox on loopback, for the whole session, with the
    netbox-branching plugin enabled as `scripts/netbox.sh start` enables it for users (a
    whole-stack destroy on main met a NetBox 500 only with it: docs/netbox.md)."""
    yield from netbox_server(tmp_path_factory, branching=True)
