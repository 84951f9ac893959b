"""The bad-input contract, as one helper the regression and fuzz tests share.

Every run of a command, whatever its input: exit status 0, 1 or 2; on 2
exactly one line on stderr (``error: …``) and no file created, changed or
removed; never a traceback; bounded time (a hang detector, not a speed check)
and bounded memory (tracemalloc peak, a generous cap).
"""

from __future__ import annotations

import hashlib
import os
import signal
import tracemalloc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from click.testing import CliRunner

from fabric_stack.cli import main

TIME_CAP_S = 60
"""A run that takes longer is a hang (the slowest valid run here takes a few seconds)."""

MEMORY_CAP_BYTES = 1 << 30
"""Peak Python allocation of one run (the alias bomb of issue 20 passed 3.6 GB)."""

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


@dataclass(frozen=True)
class Run:
    """What one in-process run did."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    exception: BaseException | None
    peak_bytes: int


def tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` → a fingerprint (content hash, link target or 'dir')."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = "-> " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            elif p.is_file():
                st = p.stat()
                digest = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                out[rel] = f"{st.st_mode:o}:{digest}"
            else:
                out[rel] = "special"
    return out


class Hang(Exception):
    """Raised inside a run that exceeded :data:`TIME_CAP_S`."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang(f"run exceeded {TIME_CAP_S} s")


@contextmanager
def _time_cap() -> Iterator[None]:
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_CAP_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def invoke(args: Sequence[str], measure_memory: bool = True) -> Run:
    """Run ``fabric-stack ARGS`` in-process (CliRunner) with a time cap and memory measure."""
    runner = CliRunner()
    if measure_memory:
        tracemalloc.start()
    try:
        with _time_cap():
            r = runner.invoke(main, list(args), env=ENV, catch_exceptions=True)
        peak = tracemalloc.get_traced_memory()[1] if measure_memory else 0
    finally:
        if measure_memory:
            tracemalloc.stop()
    exc = r.exception if not isinstance(r.exception, SystemExit) else None
    return Run(tuple(args), r.exit_code, r.stdout, r.stderr, exc, peak)


def check_contract(run: Run, before: dict[str, str], after: dict[str, str]) -> None:
    """Assert the bad-input contract on one run (see the module docstring)."""
    where = f"fabric-stack {' '.join(repr(a) for a in run.args)[:300]}"
    assert run.exception is None, f"{where}: {type(run.exception).__name__}: {run.exception}"
    assert run.code in (0, 1, 2), f"{where}: exit {run.code}\n{run.stderr}"
    assert "Traceback" not in run.stderr + run.stdout, f"{where}: traceback\n{run.stderr}"
    assert run.peak_bytes < MEMORY_CAP_BYTES, f"{where}: peak {run.peak_bytes:,} bytes"
    if run.code == 2:
        lines = run.stderr.splitlines()
        assert len(lines) == 1, f"{where}: exit 2 with {len(lines)} stderr lines:\n{run.stderr}"
        assert lines[0].startswith("error: "), f"{where}: {lines[0]!r}"
        assert "sys.set_int_max_str_digits" not in lines[0], lines[0]
        assert after == before, f"{where}: files changed on error: " + str(
            sorted(set(after.items()) ^ set(before.items()))
        )


def run_checked(args: Sequence[str], root: Path, measure_memory: bool = True) -> Run:
    """Run a command in cwd and assert the contract, watching the files under ``root``."""
    before = tree(root)
    run = invoke(args, measure_memory)
    check_contract(run, before, tree(root))
    return run
