"""File output that never leaves a half-written file behind (see :mod:`fabric_stack.outputs`)."""

from __future__ import annotations

from pathlib import Path

from .outputs import write_file


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same directory and rename.

    A failure leaves the previous file (or none) in place and is one
    :class:`~fabric_stack.errors.OutputFileError` line naming the path and cause.
    """
    return write_file(path, data)
