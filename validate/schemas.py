"""Where the upstream schemas live: ``../shared/schemas/`` (issue #26 item 5: one source).

The folder sits next to the main checkout (``/work/main`` → ``/work/shared``); a git
worktree may be nested deeper, so every ancestor of the repository is tried.
``SHARED_SCHEMAS`` overrides. Its ``SOURCES.md`` gives each file's repository and commit.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def shared_schemas() -> Path:
    """The ``shared/schemas`` folder (``SHARED_SCHEMAS``, else the nearest ancestor's
    ``shared/schemas``); the expected ``../shared/schemas`` path when none exists."""
    env = os.environ.get("SHARED_SCHEMAS")
    if env:
        return Path(env)
    for parent in REPO.parents:
        if (parent / "shared" / "schemas").is_dir():
            return parent / "shared" / "schemas"
    return REPO.parent / "shared" / "schemas"


def shared_crds() -> Path:
    """``shared/schemas/crds``: the upstream CustomResourceDefinitions."""
    return shared_schemas() / "crds"
