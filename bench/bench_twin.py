"""Digital twin benchmark (root): time to SUBNET UP / LLDP convergence, collect, peak memory.

``python -m bench.bench_twin`` (``make bench-twin``). For each size it runs the real
CLI: ``twin up`` (wall time; the state file's phases give SUBNET UP or LLDP
convergence), ``twin collect`` (wall time), then ``twin down``. Memory: the summed
resident set of every process inside the twin's namespaces right after ``up`` (ibsim +
OpenSM, or every lldpd), and the peak RSS of the CLI processes themselves.

Targets (issue 15): 1,024-GPU IB twin up + collect < 60 s; 512-GPU RoCE twin
converged < 120 s. Goal (issue 33): a 16,384-GPU IB twin (``--cases ib-16384``, not in the
default run) up + check + collect <= 120 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CLI = str(Path(sys.executable).parent / "fabric-stack")

CASES: dict[str, list[str]] = {
    "ib-128": ["--gpus", "128"],
    "ib-1024": ["--gpus", "1024"],
    "ib-4096": ["--gpus", "4096"],
    "ib-16384": ["--gpus", "16384"],
    "roce-128": ["--gpus", "128", "--fabric", "roce", "--switch", "sn5600"],
    "roce-512": ["--gpus", "512", "--fabric", "roce", "--switch", "sn5600"],
}

SLOW_CASES = ("ib-16384",)
"""Run only when named (``--cases ib-16384``): its OpenSM routing run alone takes minutes."""


def _run(args: list[str]) -> tuple[float, str]:
    t0 = time.monotonic()
    res = subprocess.run([CLI, "twin", *args], capture_output=True, text=True, check=False)
    took = time.monotonic() - t0
    if res.returncode != 0:
        raise SystemExit(f"twin {' '.join(args)} failed: {res.stderr.strip()}")
    return took, res.stdout


def _twin_rss_mb(namespaces: list[str]) -> float:
    total = 0
    for ns in namespaces:
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        for pid in pids.split():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def bench_case(name: str, flags: list[str], work: Path) -> dict[str, Any]:
    """Up, measure, collect, down one twin."""
    d, out = work / name, work / f"{name}-seen"
    try:
        up_s, _ = _run(["up", *flags, "--dir", str(d)])
        state = json.loads((d / "twin.json").read_text())
        rss = _twin_rss_mb(state["namespaces"])
        collect_s, _ = _run(["collect", "--dir", str(d), "--out", str(out)])
        check_s, _ = _run(["check", "--dir", str(d), "--format", "json"])
    finally:
        subprocess.run([CLI, "twin", "down", "--dir", str(d)], capture_output=True, check=False)
        shutil.rmtree(out, ignore_errors=True)
    phases = state["phases"]
    ready = phases.get("subnet_up", phases.get("converged"))
    return {
        "case": name,
        "up_s": round(up_s, 2),
        "ready_s": ready,
        "collect_s": round(collect_s, 2),
        "check_s": round(check_s, 2),
        "twin_rss_mb": round(rss, 1),
        "processes": len(state["processes"]),
    }


def main() -> int:
    """Run the cases given (default: all) and print a table."""
    if os.geteuid() != 0:
        print("bench_twin needs root (network namespaces)", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = [c for c in CASES if c not in SLOW_CASES]
    parser.add_argument("--cases", nargs="*", default=default, choices=list(CASES))
    opts = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-twin-") as tmp:
        for name in opts.cases:
            rows.append(bench_case(name, CASES[name], Path(tmp)))
            r = rows[-1]
            print(
                f"{r['case']:9} up {r['up_s']:6.2f} s (ready {r['ready_s']} s)  "
                f"collect {r['collect_s']:5.2f} s  check {r['check_s']:5.2f} s  "
                f"twin RSS {r['twin_rss_mb']:7.1f} MB ({r['processes']} processes)",
                flush=True,
            )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS of one fabric-stack CLI process: {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
