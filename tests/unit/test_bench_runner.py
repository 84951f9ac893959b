"""``python -m bench``: a missed target is reported, not a failure; a crash fails the run."""

from __future__ import annotations

import bench
from bench.__main__ import run_status, verdict


def test_missed_target_does_not_fail_the_run() -> None:
    assert run_status({"a": 0, "b": bench.MISSED}) == 0
    assert verdict(bench.MISSED) == "MISSED a target"


def test_a_benchmark_that_could_not_run_fails_it() -> None:
    assert run_status({"a": 0, "b": 1}) == 1
    assert verdict(1) == "FAILED (exit 1)"


def test_strict_fails_on_a_miss() -> None:
    assert run_status({"a": bench.MISSED}, strict=True) == 1
    assert run_status({"a": 0}, strict=True) == 0


def test_load_average_names_the_cpus() -> None:
    assert "load average" in bench.load_average()
    assert "CPU(s)" in bench.load_average()
