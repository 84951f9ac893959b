"""A per-project cache of what the growth comparison renders, keyed by the spec (issue #27).

The Pulumi program digests every switch's configuration (``device_records``) and
``fabric-stack plan`` compares the configuration lines of the spec before and after
(``config_lines_of``). Both are pure functions of the spec and of this code, and at
4,096 RoCE GPUs rendering them costs more than the rest of the program, so each is
computed once per spec and kept here: the program that previews or applies a spec
writes them, a later preview of the same spec and ``plan`` (both sides: the recorded
spec was written by the ``up`` that recorded it) read them back.

The key is the SHA-256 of the kind, the spec's canonical JSON and the source of
``fabric_stack`` (a checkout that changes any renderer never reads another's entry),
so an entry never goes stale; it is a cache, not state: deleting the directory only
costs the next preview a render. Entries live in ``<project>/.state/cache/render/``
(gitignored with ``.state``), written atomically; the newest :data:`KEEP` are kept.
A cache that cannot be read or written is ignored (the value is computed).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zlib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import fabric_stack
from fabric_stack.spec.model import FabricSpec

T = TypeVar("T")

KEEP = 16
"""Entries kept per project (two kinds × a few specs; the rest are removed)."""

CACHE_DIR = Path(".state") / "cache" / "render"
"""Where the entries live, under the project directory."""


@lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 of every ``fabric_stack/**/*.py`` (path and bytes): ~10 ms, once a process."""
    root = Path(fabric_stack.__file__).parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        h.update(str(p.relative_to(root)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def cache_key(kind: str, spec: FabricSpec) -> str:
    """The entry name of ``kind`` for ``spec`` under this code (see module docstring)."""
    h = hashlib.sha256(f"{kind}\n{code_digest()}\n".encode())
    h.update(spec.model_dump_json().encode())
    return f"{kind}-{h.hexdigest()[:32]}"


def cached(project_dir: Path | None, kind: str, spec: FabricSpec, compute: Callable[[], T]) -> T:
    """``compute()``'s JSON value for ``spec``, read from the project's cache when there.

    ``project_dir`` None computes without the cache.
    """
    if project_dir is None:
        return compute()
    path = project_dir / CACHE_DIR / f"{cache_key(kind, spec)}.json.z"
    try:
        value: T = json.loads(zlib.decompress(path.read_bytes()))
        os.utime(path)  # recently used: pruned last
        return value
    except (OSError, ValueError, zlib.error):
        pass
    value = compute()
    _store(path, value)
    return value


def _store(path: Path, value: object) -> None:
    """Write atomically (temp file + rename) and prune; a failure leaves no entry."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 1)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(path.parent)
    except OSError:
        return


def _prune(directory: Path) -> None:
    entries = sorted(directory.glob("*.json.z"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)
