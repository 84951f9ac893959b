"""Every signal that ends a process (INT, TERM, HUP, QUIT) ends a command the same way:
one line, exit 128 + the signal (130, 143, 129, 131), no litter.

The handlers are installed once, around the command the group runs (see
:meth:`fabric_stack.cli.LazyGroup.invoke`). A signal becomes :class:`Interrupted`
raised where the command is, so every ``finally`` and ``with`` on the way out runs:
the output layer removes its staging files, ``tempfile.TemporaryDirectory`` removes
its directory (e.g. the ``fabric-stack-netbox-*`` one), a child process is killed by
``subprocess.run``. Without this SIGTERM would end the process at once, leaving all
of them behind. Further signals while that unwinding runs are ignored, so the
clean-up itself is not cut short (SIGKILL still ends the process).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

from fabric_stack.files import outputs

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
"""The signals a command turns into one line and a clean exit (HUP: the terminal closed;
QUIT: Ctrl-\\ — by default both end the process at once, leaving staging files behind)."""


class Interrupted(KeyboardInterrupt):
    """A command was ended by ``signum``; a KeyboardInterrupt, so libraries treat SIGTERM
    as they treat Ctrl-C (``subprocess.run`` kills its child, for one)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as a shell reports a process the signal ended."""
        return 128 + self.signum


class _Handler:
    """Raises :class:`Interrupted` on the first signal; ignores later ones (clean-up runs)."""

    def __init__(self) -> None:
        self.fired = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.fired:
            return
        self.fired = True
        raise Interrupted(signum)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Install the handlers for the block and restore the previous ones after it.

    Only the main thread can install signal handlers; elsewhere (a command run from
    a thread, as a library call) the block runs with the handlers it has.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = _Handler()
    old: dict[int, Any] = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def summary(since: int) -> str:
    """``interrupted: nothing written`` or the files written since ``WRITTEN[since]``."""
    done = outputs.WRITTEN[since:]
    if not done:
        return "interrupted: nothing written"
    names = ", ".join(str(p) for p in done[:3])
    more = f" and {len(done) - 3} more" if len(done) > 3 else ""
    return f"interrupted: wrote {names}{more} (each complete); nothing else written"


__all__ = ["SIGNALS", "Interrupted", "handled", "summary"]
