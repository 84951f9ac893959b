"""A signal Python could not raise inside a callback is delivered again, not printed."""

from __future__ import annotations

import io
import signal
import sys
import time
import types
from contextlib import redirect_stderr

import pytest

from fabric_stack.cli import signals


def _unraisable(exc: BaseException) -> types.SimpleNamespace:
    """What Python passes to ``sys.unraisablehook`` for an exception in a weakref callback."""
    return types.SimpleNamespace(
        exc_type=type(exc), exc_value=exc, exc_traceback=None, err_msg=None, object=None
    )


def test_an_interrupt_lost_in_a_callback_is_raised_again_where_the_command_is() -> None:
    err = io.StringIO()
    with (
        redirect_stderr(err),
        pytest.raises(signals.Interrupted) as caught,
        signals.handled(),
    ):
        # The handler fired inside a callback: Python hands the exception to the hook.
        try:
            raise signals.Interrupted(signal.SIGINT)
        except signals.Interrupted as exc:
            sys.unraisablehook(_unraisable(exc))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            time.sleep(0.01)
    assert caught.value.exit_code == 130
    assert "Traceback" not in err.getvalue() and "Exception ignored" not in err.getvalue()


def test_other_unraisable_exceptions_reach_the_previous_hook() -> None:
    seen: list[object] = []
    before = sys.unraisablehook
    sys.unraisablehook = seen.append
    try:
        with signals.handled():
            sys.unraisablehook(_unraisable(ValueError("x")))
        assert len(seen) == 1
    finally:
        sys.unraisablehook = before
    assert sys.unraisablehook is before
