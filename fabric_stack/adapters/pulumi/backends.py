"""Where Pulumi keeps the stacks: the ``file://`` default or a team's ``postgres://`` server.

The backend is chosen by ``PULUMI_BACKEND_URL`` alone (the Makefile, the Automation API
and the file ``make setup`` writes all export it), so ``pulumi``, ``make`` and
``fabric-stack`` see the same stacks. Pulumi 3.260.0's DIY backends store state as
blobs: ``file://`` in files, ``postgres://`` as rows of one table (``pulumi_state``,
or ``?table=``), each blob written by a single ``INSERT … ON CONFLICT`` statement,
so a killed writer leaves the old row or the new one, never half of one
(``pkg/backend/diy/postgres/bucket.go``). Both lock a stack the same way: a lock blob
``.pulumi/locks/organization/<project>/<stack>/<id>.json`` is written, then the
directory is listed, and any other lock refuses the update (``backend/diy/lock.go``).

This module reads those lock blobs (so ``recover`` never breaks the lock of an update
that is still running) and writes the shell environment for plain ``pulumi``.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from fabric_stack.text.redact import mask_url

__all__ = [
    "ENV_KEYS",
    "LockHolder",
    "backend_kind",
    "env_file_text",
    "live_lock_holder",
    "lock_holders",
    "mask_secrets",
]

ENV_KEYS = (
    "PATH",
    "PULUMI_BACKEND_URL",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "PULUMI_SKIP_UPDATE_CHECK",
    "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION",
    "PULUMI_DIY_BACKEND_PARALLEL",
)
"""What ``fabric-stack env`` exports: everything :func:`offline_env` decides for Pulumi."""


def backend_kind(url: str) -> str:
    """``file``, ``postgres`` or ``other`` (Pulumi Cloud, s3://, …) for a backend URL."""
    if url.startswith("file://"):
        return "file"
    if url.startswith("postgres://"):  # the scheme Pulumi registers (not postgresql://)
        return "postgres"
    return "other"


def mask_secrets(text: str, url: str) -> str:
    """``text`` with the backend URL's password replaced by ``***`` wherever it appears."""
    password = urlsplit(url).password if "://" in url else None
    text = text.replace(url, mask_url(url))
    return text.replace(password, "***") if password else text


@dataclass(frozen=True)
class LockHolder:
    """Who holds a stack's update lock (from the lock blob Pulumi writes)."""

    pid: int
    username: str
    hostname: str
    timestamp: str


def _lock_prefix(project: str, stack: str) -> str:
    return f".pulumi/locks/organization/{project}/{stack}/"


def _holder(blob: bytes) -> LockHolder | None:
    try:
        data = json.loads(blob)
        return LockHolder(
            int(data["pid"]), str(data["username"]), str(data["hostname"]), str(data["timestamp"])
        )
    except (ValueError, KeyError, TypeError):
        return None  # torn or foreign: not a lock we can reason about


def lock_holders(url: str, project: str, stack: str) -> list[LockHolder]:
    """The holders of ``stack``'s update lock on a ``file://`` or ``postgres://`` backend.

    Other backends (and an unreachable server) report none: the caller then relies on
    ``pulumi cancel`` alone.
    """
    kind = backend_kind(url)
    blobs: list[bytes] = []
    if kind == "file":
        root = Path(url.removeprefix("file://").split("?", 1)[0]).expanduser()
        lock_dir = root / _lock_prefix(project, stack)
        blobs = [p.read_bytes() for p in sorted(lock_dir.glob("*.json")) if p.is_file()]
    elif kind == "postgres":
        # The URL's path (the database name) prefixes every key (diy/backend.go).
        sub = urlsplit(url).path.strip("/")
        blobs = _postgres_blobs(url, (f"{sub}/" if sub else "") + _lock_prefix(project, stack))
    return [h for h in map(_holder, blobs) if h is not None]


def _postgres_blobs(url: str, prefix: str) -> list[bytes]:
    """Blobs under ``prefix`` in a ``postgres://`` backend's table (``?table=``, default
    ``pulumi_state``): each row's ``data`` is ``{"data": base64}``."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    table = query.pop("table", "pulumi_state")
    dsn = urlunsplit(parts._replace(scheme="postgresql", query=urlencode(query)))
    try:
        with psycopg.connect(dsn, connect_timeout=10) as conn:
            rows = conn.execute(
                sql.SQL("SELECT data::text FROM {} WHERE key LIKE %s").format(
                    sql.Identifier(table)
                ),
                (prefix.replace("_", r"\_") + "%",),
            ).fetchall()
    except psycopg.Error:
        return []
    out = []
    for (data,) in rows:
        try:
            out.append(base64.b64decode(json.loads(data)["data"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def live_lock_holder(holders: list[LockHolder]) -> LockHolder | None:
    """The first holder that is a process still running on this host, if any."""
    here = socket.gethostname()
    for h in holders:
        if h.hostname != here:
            continue
        try:
            os.kill(h.pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            return h  # alive, another user's
        return h
    return None


def env_file_text(env: Mapping[str, str], project_dir: Path) -> str:
    """A file to ``source`` that gives plain ``pulumi`` the environment fabric-stack uses.

    ``PATH`` gets the project's ``.venv/bin`` in front of the caller's own PATH (not a
    copy of it), so the file stays valid in another shell.
    """
    bin_dir = project_dir.resolve() / ".venv" / "bin"
    lines = [
        "# The environment fabric-stack runs Pulumi with (written by `make setup`;",
        "# regenerate with `fabric-stack env --out .state/env.sh`). Use: . .state/env.sh",
        f'export PATH={shlex.quote(str(bin_dir))}:"$PATH"',
    ]
    has_file = "PULUMI_CONFIG_PASSPHRASE_FILE" in env
    for key in ENV_KEYS[1:]:
        if key in env and not (has_file and key == "PULUMI_CONFIG_PASSPHRASE"):
            lines.append(f"export {key}={shlex.quote(env[key])}")
    if has_file:  # a passphrase in the environment would win over the file
        lines.append("unset PULUMI_CONFIG_PASSPHRASE")
    return "\n".join(lines) + "\n"


def _passphrase_source(env: Mapping[str, str]) -> str:
    from fabric_stack.adapters.pulumi.env import LOCAL_PASSPHRASE

    if "PULUMI_CONFIG_PASSPHRASE_FILE" in env:
        return f"file {env['PULUMI_CONFIG_PASSPHRASE_FILE']}"
    if env.get("PULUMI_CONFIG_PASSPHRASE") == LOCAL_PASSPHRASE:
        return f"the public local default {LOCAL_PASSPHRASE!r} (not for real secrets)"
    return "PULUMI_CONFIG_PASSPHRASE (your own)"


def describe(env: Mapping[str, str]) -> dict[str, Any]:
    """The backend and secrets settings of ``env``, passwords masked (for ``env --format json``)."""
    url = env.get("PULUMI_BACKEND_URL", "")
    return {
        "backend": mask_url(url),
        "kind": backend_kind(url),
        "passphrase": _passphrase_source(env),
    }
