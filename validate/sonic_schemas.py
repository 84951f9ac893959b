"""Where SONiC's own files live for the sonic-yang and sonic-defaults families.

Both read ``../shared/schemas/sonic/`` (sonic-net/sonic-buildimage@086b03bd70f9, see its
``SOURCES.md``) in place; nothing from there is copied into the repo. ``FABRIC_STACK_SCHEMAS``
points elsewhere; otherwise the first ``shared/schemas`` beside the repo or an ancestor
of it (a git worktree sits deeper than the main checkout).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SONIC_COMMIT = "sonic-net/sonic-buildimage@086b03bd70f9"
"""The upstream commit of every SONiC file read here (../shared/schemas/SOURCES.md)."""


def schemas_root() -> Path | None:
    """The shared schemas folder, or None when there is none."""
    env = os.environ.get("FABRIC_STACK_SCHEMAS")
    if env:
        return Path(env) if Path(env).is_dir() else None
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "schemas"
        if candidate.is_dir():
            return candidate
    return None


def sonic_dir() -> Path | None:
    """``<schemas>/sonic``, or None."""
    root = schemas_root()
    return root / "sonic" if root is not None and (root / "sonic").is_dir() else None


def config_dbs(root: Path) -> list[Path]:
    """Every ``sonic/<switch>/config_db.json`` under a scenario's render root."""
    return sorted(root.glob("sonic/*/config_db.json"))


def load_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path`` (a config_db or tables.json)."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: not a JSON object")
    return data
