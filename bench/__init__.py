"""Benchmarks of fabric-stack (``python -m bench``); figures in ``bench/README.md``."""

from __future__ import annotations

import os

MISSED = 3
"""Exit status of a benchmark that ran but missed a target (a goal, not a test).

``python -m bench`` reports it without failing; any other non-zero status is a
benchmark that could not run, and fails the run.
"""


def load_average() -> str:
    """The 1/5/15-minute load average and the CPU count, as one phrase."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f}, {five:.1f}, {fifteen:.1f} on {os.cpu_count()} CPU(s)"
