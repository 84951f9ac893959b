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
import os
import signal
import sys
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
        self.active = True

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.fired:
            return
        self.fired = True
        raise Interrupted(signum)

    def redeliver(self, signum: int) -> None:
        """Send ``signum`` again, from a timer thread, while the handler is installed."""
        if self.active:
            os.kill(os.getpid(), signum)


def _unraisable_hook(handler: _Handler, previous: Any) -> Any:
    """A ``sys.unraisablehook`` that re-delivers an :class:`Interrupted` Python could not raise.

    A signal whose handler runs inside a callback Python cannot raise from (a weakref
    callback of the import lock, a ``__del__``) is printed as "Exception ignored in …"
    with a traceback, and lost: seen in ``test_write_safety`` as a rare traceback on
    stderr. The hook drops that print and sends the signal again a moment later from
    a timer thread, so the handler runs where the command is and unwinds it as usual.
    """

    def hook(args: Any) -> None:
        if isinstance(args.exc_value, Interrupted) and handler.active:
            handler.fired = False
            timer = threading.Timer(0.01, handler.redeliver, (args.exc_value.signum,))
            timer.daemon = True
            timer.start()
            return
        previous(args)

    return hook


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
    old_hook = sys.unraisablehook
    sys.unraisablehook = _unraisable_hook(handler, old_hook)
    old: dict[int, Any] = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        handler.active = False
        for s, h in old.items():
            signal.signal(s, h)
        sys.unraisablehook = old_hook


def summary(since: int) -> str:
    """``interrupted: nothing written`` or the files written since ``WRITTEN[since]``."""
    done = outputs.WRITTEN[since:]
    if not done:
        return "interrupted: nothing written"
    names = ", ".join(str(p) for p in done[:3])
    more = f" and {len(done) - 3} more" if len(done) > 3 else ""
    return f"interrupted: wrote {names}{more} (each complete); nothing else written"


__all__ = ["SIGNALS", "Interrupted", "handled", "summary"]
