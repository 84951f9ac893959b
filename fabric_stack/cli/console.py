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
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

import click

from fabric_stack.text.printable import CheckedText, escape_controls

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


_LINES_PER_WRITE = 4096
"""Lines joined for one write by :func:`echo_checked`: a few hundred kB, not the whole."""


def echo_checked(lines: Sequence[str]) -> None:
    """Print the text of ``lines``, every fragment of which was checked to hold no control
    character: what ``click.echo("".join(lines), nl=False)`` prints.

    Such a text holds no escape, so click's stripping of colour codes (off a terminal) and
    the escaping of the printable stream would leave it as it is; at 131k GPUs each is a
    pass over 255 MB, and the text whole is another 255 MB copy and its encoding a third
    (#43). So it goes out in pieces of :data:`_LINES_PER_WRITE` lines, each marked
    :class:`CheckedText` (not escaped) and written with ``color=True`` (not stripped).
    """
    for start in range(0, len(lines), _LINES_PER_WRITE):
        piece = CheckedText("".join(lines[start : start + _LINES_PER_WRITE]))
        click.echo(piece, nl=False, color=True)


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


__all__ = ["SIZE_BOUNDS", "bounded_sizes", "echo_checked", "sane_output"]
