"""Benchmark: `fabric-stack adopt` on a 32,768-GPU ibnetdiscover snapshot (< 10 s, < 1.5 GB).

Run ``.venv/bin/python -m bench.bench_adopt``. The snapshot is the plan's compute
fabric (4,096 servers × 8 rails, 1,024 leaves, 1,024 spines, 512 cores: three tiers,
~98k cables, ~400k lines) with every device renamed as a site would name it
(``dgx0312``-style servers, ``MF0;ib-leaf-07:MQM9700/U1`` switches), the order
shuffled and 5 cable swaps injected (:mod:`tests.adopt_fixtures`).

Two measurements, medians of 3 fresh processes:

* ``stages``: plan build, read, observation, ``adopt`` (placement), names CSV;
* ``cli``: ``fabric-stack adopt --gpus 32768 --ibnetdiscover … --out names.csv
  --format json`` as a user runs it (interpreter start, imports, everything).

``--source iblinkinfo`` runs both on the same fabric written as ``iblinkinfo`` output
(``tests/ib_formats.py``, from the dump): the reader differs, nothing else.

Wall time on a shared machine depends on its load: CPU time (user + sys) is printed
beside it, with the load average at the start. The stages run with the cyclic garbage
collector paused, as the CLI runs them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
GPUS = 32768
RUNS = 3
TARGET_S = 10.0
TARGET_MB = 1536
SEED = 7
SWAPS = 5


def write_input(directory: Path) -> tuple[Path, dict[str, str]]:
    """The renamed, shuffled, miswired dump (and the true planned → site name map)."""
    from tests.adopt_fixtures import site_snapshot, write_ibnetdiscover

    topo, names, wires, _ = site_snapshot({"gpus": GPUS}, SEED, SWAPS)
    path = write_ibnetdiscover(directory / "fabric.txt", topo, names, wires, hca_form=False)
    (directory / "truth.json").write_text(json.dumps(names), encoding="utf-8")
    from tests.ib_formats import iblinkinfo_of

    (directory / "fabric.iblinkinfo").write_text(
        iblinkinfo_of(path.read_text(encoding="utf-8")), encoding="utf-8"
    )
    return path, names


FILES = {"ibnetdiscover": "fabric.txt", "iblinkinfo": "fabric.iblinkinfo"}
"""The input file of each source."""


def stages(directory: Path, source: str = "ibnetdiscover") -> dict[str, float]:
    """Each stage timed in this process; placement checked against the truth."""
    from fabric_stack import build_topology, size_fabric, validate_spec
    from fabric_stack.adapters.discovery import IbnetdiscoverReader
    from fabric_stack.adapters.discovery.iblinkinfo import IblinkinfoReader
    from fabric_stack.drift.adopt import adopt, observation_from_snapshot
    from fabric_stack.files.names_file import write_names
    from fabric_stack.pipeline import paused_gc

    out: dict[str, float] = {}

    cpu: dict[str, float] = {}

    def timed(stage: str, fn: Callable[[], Any]) -> Any:
        t, c = time.perf_counter(), time.process_time()
        value = fn()
        out[stage] = time.perf_counter() - t
        cpu[stage] = time.process_time() - c
        return value

    reader = IblinkinfoReader if source == "iblinkinfo" else IbnetdiscoverReader
    with paused_gc():  # as `fabric-stack adopt` runs these stages (fabric_stack/cli/adopt.py)
        topo = timed(
            "plan (spec → topology)", lambda: build_topology(size_fabric(validate_spec(gpus=GPUS)))
        )
        snap = timed("read", lambda: reader(directory / FILES[source]).load())
        obs = timed("observation", lambda: observation_from_snapshot(snap))
        res = timed("adopt (placement)", lambda: adopt(topo, obs))
    timed("names CSV", lambda: write_names(res.rows))
    out["end to end"] = sum(out.values())
    out["end to end, CPU"] = sum(cpu.values())
    out["adopt (placement), CPU"] = cpu["adopt (placement)"]
    out["read, CPU"] = cpu["read"]
    truth = json.loads((directory / "truth.json").read_text(encoding="utf-8"))
    right = sum(1 for planned, actual in truth.items() if res.placed.get(actual) == planned)
    out["devices"] = float(len(truth))
    out["placed right"] = float(right)
    out["contradictions"] = float(len(res.contradictions))
    return out


def _child(directory: Path, source: str) -> dict[str, float]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_adopt",
            "--child",
            "--dir",
            str(directory),
            "--source",
            source,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(proc.stdout)
    return result


def _cli(directory: Path, source: str) -> dict[str, float]:
    cmd = [
        str(REPO / ".venv" / "bin" / "fabric-stack"),
        "adopt",
        "--gpus",
        str(GPUS),
        f"--{source}",
        str(directory / FILES[source]),
        "--out",
        str(directory / "names.csv"),
        "--format",
        "json",
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"fabric-stack adopt exited {proc.returncode}: {proc.stderr}")
    report = json.loads(proc.stdout)
    placed = sum(c["placed"] for c in report["classes"].values())
    return {
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak RSS MB": after.ru_maxrss / 1024,
        "placed": float(placed),
    }


def main() -> int:
    """Write the input, run the stages and the CLI RUNS times in fresh processes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--source", choices=sorted(FILES), default="ibnetdiscover")
    args = ap.parse_args()
    if args.child:
        result = stages(args.dir, args.source)
        result["peak RSS MB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return 0
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    with tempfile.TemporaryDirectory(prefix="bench-adopt-") as tmp:
        d = Path(tmp)
        t = time.perf_counter()
        path, names = write_input(d)
        print(
            f"input written in {time.perf_counter() - t:.1f} s (not timed): "
            f"{path.stat().st_size / 1e6:.1f} MB, {len(names):,} devices renamed, {SWAPS} swaps"
        )
        runs = [_child(d, args.source) for _ in range(RUNS)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"\nstages, {args.source} (median of {RUNS} fresh processes)")
        for k, v in med.items():
            unit = "" if k in ("devices", "placed right", "contradictions", "peak RSS MB") else " s"
            print(f"  {k:26} {v:10.2f}{unit}" if unit else f"  {k:26} {v:10.0f}")
        cli = [_cli(d, args.source) for _ in range(RUNS)]
        wall = statistics.median(c["wall"] for c in cli)
        cpu = statistics.median(c["cpu"] for c in cli)
        rss = max(c["peak RSS MB"] for c in cli)
        print(f"\ncli: fabric-stack adopt --gpus {GPUS} --{args.source} … --out names.csv")
        print(f"  wall (median of {RUNS})       {wall:10.2f} s")
        print(f"  CPU user+sys (median)      {cpu:10.2f} s")
        print(f"  peak RSS (max)             {rss:10.0f} MB")
        print(f"  placed                     {cli[0]['placed']:10.0f}")
        ok = wall < TARGET_S and rss < TARGET_MB
        print(
            f"\nCLI {wall:.2f} s wall / {cpu:.2f} s CPU, {rss:.0f} MB — "
            f"{'within' if ok else 'OVER'} the targets ({TARGET_S:.0f} s, {TARGET_MB} MB)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
