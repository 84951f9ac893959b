"""Benchmark: ``size``, ``cabling`` and ``check`` at 131,072 GPUs with per-tier speeds and
four planes (issue #43; target: < 10 s each, as a user runs them).

Run ``.venv/bin/python -m bench.bench_tiers`` (``--case "4 ×" --command cabling`` for one
case and command: on a shared machine run one at a time). Each case is a spec file in a
temporary directory; each command runs once in a fresh process (interpreter start, imports,
pipeline, output to a file). Prints the load average, wall and CPU seconds and the peak RSS
of the slowest command; exits ``bench.MISSED`` when one misses the target (judged on the
lower of wall and CPU time: on a shared machine the wall time waits for the others).

Both cases are on SN5600: at 131,072 GPUs ``cabling`` refuses Q3400 cores today, with or
without the per-tier keys (16 four-unit Q3400s to a core rack need 64 U and 80 kW; the
plant's racks take at most 60 U).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from bench import MISSED, load_average

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 10.0
GPUS = 131_072

CASES: dict[str, dict[str, object]] = {
    "RoCE SN5600, 400G NICs, 800G uplinks": {
        "fabric": "roce",
        "switch": "sn5600",
        "nic_gbps": 400,
        "uplink_gbps": 800,
    },
    "RoCE SN5600, 4-GPU trays, 800G NICs as 4 × 200G planes, 800G uplinks": {
        "gpus_per_node": 4,
        "fabric": "roce",
        "switch": "sn5600",
        "nic_gbps": 800,
        "planes": 4,
        "uplink_gbps": 800,
        # 16 rails × planes of 129 leaf blocks each: more than the default /12 holds.
        "networks": {"compute": {"subnet": "10.64.0.0/10"}},
    },
    "RoCE SN5600, 400G NICs (no per-tier key: today's baseline)": {
        "fabric": "roce",
        "switch": "sn5600",
        "nic_gbps": 400,
    },
}
"""The per-tier cases: a mixed leaf at 400G/800G, a four-plane fabric (4-GPU compute trays
with one ConnectX-8 per GPU, as GB300: four planes of eight rails need 64 U of leaves in an
SU's network rack, which the plant does not split yet), and the baseline without the keys."""

COMMANDS: dict[str, list[str]] = {
    "size": ["size", "--format", "json"],
    "cabling": ["cabling", "--format", "csv"],
    "check": ["check", "--format", "json"],
}
"""The three commands the issue times, as a user runs them."""


def _run(exe: Path, args: list[str], out: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one command in a fresh process, stdout to ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with out.open("w") as fh:
        r = subprocess.run([str(exe), *args], stdout=fh, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):  # check exits 1 on violations: still a timing
        raise SystemExit(f"fabric-stack {' '.join(args)} failed ({r.returncode}): {r.stderr}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main(argv: list[str] | None = None) -> int:
    """Time every (case, command); print a table; MISSED when one is over the target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", default="", help="only the cases whose name holds this text")
    ap.add_argument("--command", choices=sorted(COMMANDS), help="only this command")
    args = ap.parse_args(argv)
    exe = REPO / ".venv" / "bin" / "fabric-stack"
    missed = False
    print(f"load average before: {load_average()}")
    print(f"| case ({GPUS:,} GPUs) | command | wall | CPU |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, keys in CASES.items():
            if args.case not in name:
                continue
            spec = Path(tmp) / "spec.yaml"
            data = {"gpus": GPUS, **keys}
            spec.write_text(yaml.safe_dump(data))
            for cmd, words in COMMANDS.items():
                if args.command not in (None, cmd):
                    continue
                wall, cpu = _run(exe, [*words, "--config", str(spec)], Path(tmp) / "out")
                # On a shared machine wall time waits for the others: judged on the lower.
                missed |= min(wall, cpu) > TARGET_S
                print(f"| {name} | `{cmd}` | {wall:.2f} s | {cpu:.2f} s |", flush=True)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\npeak RSS of the largest command: {rss:,.0f} MB; target < {TARGET_S:g} s each")
    print(f"load average after: {load_average()}")
    return MISSED if missed else 0


if __name__ == "__main__":
    sys.exit(main())
