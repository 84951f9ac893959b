"""The environment for every Pulumi CLI invocation: pinned engine, local state, no network.

fabric-stack runs the Pulumi engine that ``make setup`` links into ``<project>/.venv/bin``
(see ``scripts/pulumi-engine.sh``) against a ``file://`` state backend, so nothing needs a
Pulumi Cloud account or a network connection. :func:`offline_env` builds that environment
once, for the CLI wrapper, the Automation API and the tests alike.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["LOCAL_PASSPHRASE", "PULUMI_VERSION", "offline_env", "venv_bin"]

PULUMI_VERSION = "3.260.0"
"""The Pulumi release the project is pinned to.

It must equal ``PULUMI_VERSION=`` in ``scripts/pulumi-engine.sh`` (the CLI that ``make setup``
builds) and the ``pulumi==`` pin in ``pyproject.toml``; ``tests/unit/test_pulumi_env.py``
checks that.
"""

LOCAL_PASSPHRASE = "fabric-stack-local"
"""Default ``PULUMI_CONFIG_PASSPHRASE`` for local stacks.

It is public, so it keeps secrets in the local state file out of casual view but protects
nothing. Set ``PULUMI_CONFIG_PASSPHRASE`` (or ``PULUMI_CONFIG_PASSPHRASE_FILE``) to your own
before storing real secrets; it must then stay the same for the life of the stack.
"""


def venv_bin(project_dir: Path) -> Path:
    """Return ``<project_dir>/.venv/bin``, where ``make setup`` links the Pulumi engine."""
    return project_dir.resolve() / ".venv" / "bin"


def offline_env(
    project_dir: Path,
    state_dir: Path | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Return the environment for running the Pulumi CLI (or Automation API) offline.

    Starts from ``base`` (default: ``os.environ``) and sets:

    * ``PATH`` with ``<project_dir>/.venv/bin`` first, so ``pulumi``, its Python language host
      and the dynamic-provider host are the pinned engine linked by ``make setup``;
    * ``PULUMI_BACKEND_URL``: ``file://<state_dir>`` when ``state_dir`` is given; else the
      value already in ``base``; else ``file://<project_dir>/.state/pulumi``. A ``file://``
      state directory is created;
    * ``PULUMI_CONFIG_PASSPHRASE`` = :data:`LOCAL_PASSPHRASE` unless ``base`` already sets it
      or ``PULUMI_CONFIG_PASSPHRASE_FILE``;
    * ``PULUMI_SKIP_UPDATE_CHECK`` and ``PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION`` to
      ``true``: no network look-ups for CLI updates or plugins;
    * on a ``postgres://`` backend, ``PULUMI_DIY_BACKEND_PARALLEL=1`` unless set (a
      connection-pool deadlock in Pulumi 3.260, see the code).

    ``PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK`` is not set: the engine built by
    ``scripts/pulumi-engine.sh`` reports its version, so the Automation API's check passes.

    Args:
        project_dir: the fabric-stack checkout (the directory holding ``.venv``).
        state_dir: a directory for a ``file://`` backend of its own (tests use a tmp dir).
        base: the environment to start from; ``os.environ`` when ``None``.

    Returns:
        A new dictionary; ``base`` is not modified.
    """
    env = dict(os.environ if base is None else base)

    bin_dir = str(venv_bin(project_dir))
    rest = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != bin_dir]
    env["PATH"] = os.pathsep.join([bin_dir, *rest])

    if state_dir is not None:
        env["PULUMI_BACKEND_URL"] = _file_backend(state_dir)
    elif not env.get("PULUMI_BACKEND_URL"):
        env["PULUMI_BACKEND_URL"] = _file_backend(project_dir.resolve() / ".state" / "pulumi")
    elif env["PULUMI_BACKEND_URL"].startswith("file://"):
        Path(env["PULUMI_BACKEND_URL"].removeprefix("file://")).expanduser().mkdir(
            parents=True, exist_ok=True
        )

    if "PULUMI_CONFIG_PASSPHRASE" not in env and "PULUMI_CONFIG_PASSPHRASE_FILE" not in env:
        env["PULUMI_CONFIG_PASSPHRASE"] = LOCAL_PASSPHRASE

    env["PULUMI_SKIP_UPDATE_CHECK"] = "true"
    env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] = "true"
    if env["PULUMI_BACKEND_URL"].startswith("postgres://"):
        # Pulumi 3.260's postgres:// backend runs a second query while iterating a listing
        # and caps its pool at 2 x GOMAXPROCS connections; with the default 10 parallel
        # stack reads, `pulumi stack ls` over many stacks deadlocks on a 2-CPU machine
        # (seen with 20 stacks). One at a time never holds more than two connections.
        env.setdefault("PULUMI_DIY_BACKEND_PARALLEL", "1")
    return env


def _file_backend(directory: Path) -> str:
    """Create ``directory`` and return its ``file://`` backend URL."""
    directory = directory.expanduser().resolve()
    directory.mkdir(parents=True, exist_ok=True)
    return f"file://{directory}"
