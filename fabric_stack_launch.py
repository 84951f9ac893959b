"""The `fabric-stack` console script: signal handlers first, then the CLI.

This module lives outside the ``fabric_stack`` package on purpose: importing any
``fabric_stack.*`` module runs the package's ``__init__`` (light since it re-exports
lazily, but a command's own imports still take up to a second), and the CLI's own
handlers (``fabric_stack/cli/signals.py``) are installed only once the command runs. A
SIGINT in that window printed a KeyboardInterrupt traceback and a SIGTERM ended the
process without a word. Here the handlers are set before anything is imported: a signal
before the command starts (or after it has ended) is the same one line as one during it,
and exit 130 or 143.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

EARLY_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""Caught from the first line of the process (the command then installs its own)."""


def interrupted_line() -> str:
    """What a signal outside the command says: the files written so far, if any.

    Before the command nothing has been written; after it every file is complete (the
    output layer renames each staging file before the command returns).
    """
    signals = sys.modules.get("fabric_stack.cli.signals")
    summary = getattr(signals, "summary", None)
    return str(summary(0)) if callable(summary) else "interrupted: nothing written"


def _interrupted(signum: int, frame: FrameType | None) -> None:
    # os._exit: nothing is staged outside a command, and unwinding a half-done import
    # would only print a traceback. The line goes straight to fd 2 (no buffering).
    os.write(2, (interrupted_line() + "\n").encode())
    os._exit(128 + signum)


def main() -> None:
    """Install the early handlers, then run `fabric-stack` (``fabric_stack.cli.main``)."""
    for s in EARLY_SIGNALS:
        signal.signal(s, _interrupted)
    try:
        from fabric_stack.cli import main as cli_main

        cli_main()
    finally:
        # The command has ended and every file it wrote is whole. Python resets the
        # handlers it set to the default disposition when it shuts down, so a signal in
        # those last milliseconds would kill the process without a word; ignored handlers
        # are left alone, and the process ends with the command's own status.
        for s in EARLY_SIGNALS:
            signal.signal(s, signal.SIG_IGN)


if __name__ == "__main__":
    main()
