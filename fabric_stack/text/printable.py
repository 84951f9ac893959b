"""Control characters out of what is printed: names from servers and files are data.

A device name from NetBox, an ibnetdiscover node description or an LLDP system name can
hold terminal escape sequences (``ESC ] 52`` writes the clipboard, ``ESC ] 0`` the window
title, ``ESC [ 2 J`` clears the screen). :func:`escape_controls` shows every control
character as its ``\\xNN`` escape, so the name is still visible and nothing reaches the
terminal as a command. Linear in the length of the text (one character class, no
backtracking).
"""

from __future__ import annotations

import re

CONTROL_CHARS = r"\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f"
"""The control characters shown, as a regular-expression class body: C0 (but tab, newline,
carriage return), DEL and C1 controls."""

_CONTROL = re.compile(f"[{CONTROL_CHARS}]")

_OURS = re.compile(r"\x1b\[[0-9;?]{0,16}[mKABCDGhl]")
"""The sequences fabric-stack itself sends a terminal: colours (``m``), erase line (``K``),
cursor moves and show/hide (rich's progress display)."""

_OURS_PIPED = re.compile(r"\x1b\[[0-9;]{0,16}[mK]")
"""What it sends a stream it only treats as a terminal (colours, the progress line's
erase): no cursor moves."""


class CheckedText(str):
    """Text built only from fragments each checked to hold no control character, so the
    whole holds none (no ESC either): :func:`escape_controls` returns it as it is.

    An export of a million cables (#43) is assembled from a few thousand distinct
    fragments; checking those once costs nothing, a pass over the 255 MB text a second.
    Any operation on it (``+``, slicing) gives a plain ``str``: the mark stays with the
    text it was given to.
    """

    __slots__ = ()


def has_controls(text: str) -> bool:
    """Whether ``text`` holds a control character :func:`escape_controls` would show."""
    return _CONTROL.search(text) is not None


def _escape(m: re.Match[str]) -> str:
    return f"\\x{ord(m.group(0)):02x}"


def escape_controls(text: str, *, keep_styles: bool = False, terminal: bool = True) -> str:
    """``text`` with every control character shown as ``\\xNN``.

    ``keep_styles`` keeps fabric-stack's own sequences whole: on a ``terminal`` colour,
    erase-line and cursor sequences (:data:`_OURS`, rich and the progress lines), else
    colour and erase-line only (:data:`_OURS_PIPED`). Every other escape (window title,
    clipboard, hyperlinks, clear screen) is shown, not sent.

    A :class:`CheckedText`, or a text without a control character, is returned as it is.
    """
    if isinstance(text, CheckedText) or _CONTROL.search(text) is None:
        return text  # one search, not a split and a substitution (a 255 MB export, #43)
    if not keep_styles:
        return _CONTROL.sub(_escape, text)
    out: list[str] = []
    pos = 0
    for m in (_OURS if terminal else _OURS_PIPED).finditer(text):
        out.append(_CONTROL.sub(_escape, text[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_CONTROL.sub(_escape, text[pos:]))
    return "".join(out)


__all__ = ["CONTROL_CHARS", "CheckedText", "escape_controls", "has_controls"]
