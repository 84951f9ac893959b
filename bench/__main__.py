"""``python -m bench`` (``make bench``): run the quick benchmarks one after another.

Targets are goals, not tests: a benchmark that misses one exits with
:data:`bench.MISSED`, which is reported in the summary and does not fail the
run (``--strict`` makes it fail). A benchmark that could not run at all (any
other non-zero exit) fails it. The load average is printed before and after
each benchmark: on a shared machine it is what the figures mean.

The Pulumi preview benchmark takes several minutes and runs on its own:
``python -m bench.bench_preview`` (``make bench-preview``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from bench import MISSED, load_average

QUICK = (
    "bench.bench_sizing",
    "bench.bench_topology",
    "bench.bench_check",
    "bench.bench_drift",
    "bench.bench_adopt",
    "bench.bench_whatif",
)


def verdict(rc: int) -> str:
    """``ok``, ``MISSED a target`` or ``FAILED (exit N)`` for a benchmark's exit status."""
    if rc == 0:
        return "ok"
    if rc == MISSED:
        return "MISSED a target"
    return f"FAILED (exit {rc})"


def run_status(codes: dict[str, int], strict: bool = False) -> int:
    """The run's exit status: 1 if a benchmark failed (or, when ``strict``, missed), else 0."""
    bad = [rc for rc in codes.values() if rc != 0 and (strict or rc != MISSED)]
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """Run each benchmark in its own process (so peak-memory figures stay separate)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strict", action="store_true", help="a missed target fails the run")
    args = ap.parse_args(argv)
    codes: dict[str, int] = {}
    for mod in QUICK:
        print(f"\n=== {mod} ({load_average()}) ===", flush=True)
        codes[mod] = subprocess.call([sys.executable, "-m", mod])
    print(f"\n=== summary ({load_average()}) ===")
    for mod, rc in codes.items():
        print(f"  {mod:<22} {verdict(rc)}")
    return run_status(codes, args.strict)


if __name__ == "__main__":
    raise SystemExit(main())
