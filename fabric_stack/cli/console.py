"""What a command prints reaches any terminal safely (issue #49).

Around every command (:meth:`fabric_stack.cli.LazyGroup.invoke`), :func:`sane_output`

* shows control characters in printed text as ``\\xNN`` (device names from servers and
  files can carry terminal escapes; see :mod:`fabric_stack.text.printable`), keeping only
  the colour and progress sequences fabric-stack itself sends (cursor moves only to a
  terminal); a colour sequence inside a name passes too (it can only recolour);
* makes a stream that cannot encode a character (``PYTHONIOENCODING=ascii``, a C locale)
  print ``?`` for it instead of ending in a ``UnicodeEncodeError`` traceback;
* bounds ``COLUMNS`` and ``LINES``: a width of 10**12 made rich pad lines until
  ``MemoryError``; a value that is not a whole number from 20 to 1,000 (rows: 5 to 1,000)
  is ignored, as if unset.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from fabric_stack.text.printable import escape_controls

SIZE_BOUNDS = {"COLUMNS": (20, 1000), "LINES": (5, 1000)}
"""The terminal sizes taken from the environment; others are dropped for the command."""


class _Printable:
    """A text stream whose ``write`` escapes control characters; all else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._tty = _isatty(stream)

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text, keep_styles=True, terminal=self._tty))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _tolerant(stream: TextIO) -> None:
    """Unencodable characters become ``?`` (a stream that is not UTF-8)."""
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
    if encoding != "utf8" and isinstance(stream, io.TextIOWrapper):
        with contextlib.suppress(ValueError, io.UnsupportedOperation):
            stream.reconfigure(errors="replace")


def bounded_sizes(environ: dict[str, str] | os._Environ[str]) -> dict[str, str | None]:
    """The ``COLUMNS``/``LINES`` values to drop (name -> old value) because they are absurd."""
    dropped: dict[str, str | None] = {}
    for name, (low, high) in SIZE_BOUNDS.items():
        raw = environ.get(name)
        if raw is None:
            continue
        text = raw.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 5 and low <= int(text) <= high):
            dropped[name] = raw
    return dropped


@contextlib.contextmanager
def sane_output() -> Iterator[None]:
    """Install the printable streams and the bounded sizes for the block; restore after."""
    dropped = bounded_sizes(os.environ)
    for name in dropped:
        del os.environ[name]
    out, err = sys.stdout, sys.stderr
    for stream in (out, err):
        _tolerant(stream)
    sys.stdout = _Printable(out)
    sys.stderr = _Printable(err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
        for name, value in dropped.items():
            if value is not None:
                os.environ[name] = value


__all__ = ["SIZE_BOUNDS", "bounded_sizes", "sane_output"]
