"""Progress and a time bound for long CLI work (`whatif --n-minus-1`, `render`).

One ``step(done, total, doing)`` callback, given to the pure stage that loops: it
rewrites one status line on a terminal's stderr (at most once per
:data:`PROGRESS_EVERY_S`, so a pipe or a log gets nothing and a terminal no flood) and
raises :class:`~fabric_stack.errors.BudgetError` once ``--max-seconds`` has passed with
work left; the stage itself stays free of clocks and I/O.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import click

from fabric_stack.cli.params import FiniteFloat
from fabric_stack.errors import BudgetError

PROGRESS_EVERY_S = 1.0
"""Seconds between two progress updates on a terminal."""

Step = Callable[[int, int, str], None]
"""``step(done, total, doing)``: ``done`` of ``total`` units finished, ``doing`` next."""


F = TypeVar("F", bound=Callable[..., Any])

MAX_SECONDS_HELP = (
    "Stop after this long: exit 2, one line saying how far it got, nothing written or "
    "printed; progress is shown on a terminal's stderr."
)
"""`--max-seconds`, the same words on every command that has it."""


def max_seconds_option(default: float) -> Callable[[F], F]:
    """``--max-seconds S`` (> 0, ``default``) for a command whose work can run away."""
    return click.option(
        "--max-seconds",
        type=FiniteFloat(min=0, min_open=True, max=1e7),
        default=default,
        show_default=True,
        help=MAX_SECONDS_HELP,
    )


def on_terminal() -> bool:
    """Whether stderr is a terminal (progress is only ever shown there)."""
    return sys.stderr.isatty()


def bounded(what: str, max_seconds: float, unit: str, hint: str) -> Step:
    """A :data:`Step` showing ``what: done/total unit (doing), N s`` on a terminal and
    raising BudgetError past ``max_seconds``: ``what: stopped at --max-seconds S after
    done of total unit (hint)``. The clock starts now (the caller's work so far counts)."""
    start = time.monotonic()
    shown = [start]
    tty = on_terminal()

    def step(done: int, total: int, doing: str = "") -> None:
        now = time.monotonic()
        over = now - start > max_seconds and done < total
        if tty and done < total and not over and now - shown[0] >= PROGRESS_EVERY_S:
            shown[0] = now
            now_doing = f" ({doing})" if doing else ""
            line = f"\r\x1b[K{what}: {done:,}/{total:,} {unit}{now_doing}, {now - start:.0f} s"
            click.echo(line, err=True, nl=False, color=True)
        if tty and shown[0] > start and (over or done == total):
            click.echo("\r\x1b[K", err=True, nl=False, color=True)  # clear it: the result follows
        if over:
            raise BudgetError(
                f"{what}: stopped at --max-seconds {max_seconds:g} after {done:,} of "
                f"{total:,} {unit} ({hint})"
            )

    return step


__all__ = [
    "MAX_SECONDS_HELP",
    "PROGRESS_EVERY_S",
    "Step",
    "bounded",
    "max_seconds_option",
    "on_terminal",
]
