"""``python -m bench`` (``make bench``): run the quick benchmarks one after another.

The Pulumi preview benchmark takes several minutes and runs on its own:
``python -m bench.bench_preview`` (``make bench-preview``).
"""

from __future__ import annotations

import subprocess
import sys

QUICK = (
    "bench.bench_sizing",
    "bench.bench_topology",
    "bench.bench_check",
    "bench.bench_drift",
    "bench.bench_adopt",
    "bench.bench_whatif",
)


def main() -> int:
    """Run each benchmark in its own process (so peak-memory figures stay separate)."""
    rc = 0
    for mod in QUICK:
        print(f"\n=== {mod} ===", flush=True)
        rc |= subprocess.call([sys.executable, "-m", mod])
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
