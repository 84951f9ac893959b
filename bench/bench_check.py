"""Benchmark: ``fabric-stack check`` on the 32,768-GPU fabric (target: < 3 s in total).

Run ``.venv/bin/python -m bench.bench_check``. Prints, as medians of 3 runs:

* the in-process pipeline split: validate_spec, size_fabric, build_topology,
  derive_intent, evaluate (all rules), JSON rendering; for the clean 1:1 fabric
  and for the 2:1 one (785 violations);
* the time of each rule on the 32k intent;
* the whole command as a user runs it (``fabric-stack check --gpus 32768
  --format json`` in a fresh process: interpreter start, imports, pipeline,
  output): wall and CPU time (the machine may be shared) and peak RSS.

``--pack`` adds the CrossGuard path: rebuilding the intent from SDK-shaped
bundle resources (``fabric_view``) and running one stack policy.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import MISSED

REPO = Path(__file__).resolve().parents[1]
GPUS = 32768
RUNS = 3
TARGET_S = 3.0


def _stages(spec_data: dict[str, Any], collect: bool = False) -> dict[str, float]:
    """One run of the check pipeline, per stage; the cyclic GC paused as the command does."""
    from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
    from fabric_stack.policy import evaluate
    from fabric_stack.views.policy_report import report_json

    out: dict[str, float] = {}
    if not collect:
        gc.disable()

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        t = time.perf_counter()
        value = fn()
        out[name] = time.perf_counter() - t
        return value

    spec = timed("validate_spec", lambda: validate_spec(spec_data))
    plan = timed("size_fabric", lambda: size_fabric(spec))
    topo = timed("build_topology", lambda: build_topology(plan))
    intent = timed("derive_intent", lambda: derive_intent(topo))
    report = timed("evaluate (rules)", lambda: evaluate(intent))
    timed("render json", lambda: json.dumps(report_json(report, intent.summary)))
    gc.enable()
    out["total"] = sum(out.values())
    out["violations"] = float(len(report.violations))
    return out


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def _per_rule() -> dict[str, float]:
    from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
    from fabric_stack.policy import RULES

    intent = derive_intent(build_topology(size_fabric(validate_spec({"gpus": GPUS}))))
    out: dict[str, float] = {}
    for rule in RULES.values():
        times = []
        for _ in range(RUNS):
            t = time.perf_counter()
            list(rule.run(intent))
            times.append(time.perf_counter() - t)
        out[rule.id] = statistics.median(times)
    return out


def _cli() -> tuple[float, float, float]:
    """(median wall s, median CPU s, peak RSS MB) of the command in a fresh process."""
    exe = REPO / ".venv" / "bin" / "fabric-stack"
    times, cpus = [], []
    for _ in range(RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run(
            [str(exe), "check", "--gpus", str(GPUS), "--format", "json"],
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if r.returncode != 0:
            raise SystemExit(f"fabric-stack check failed ({r.returncode}): {r.stderr}")
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return statistics.median(times), statistics.median(cpus), rss_mb


def _pack() -> dict[str, float]:
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(REPO / "policies"))
    import fabric_policies as fp
    from pulumi_policy import StackValidationArgs, StackValidationPolicy

    from tests.policy_fixtures import Collector, intent_for, stack_resources

    intent = intent_for(gpus=GPUS)
    t = time.perf_counter()
    resources = stack_resources(intent)
    build = time.perf_counter() - t
    fp._views.clear()
    fp._decoded.clear()
    t = time.perf_counter()
    fp.fabric_view(resources)
    view = time.perf_counter() - t
    pol = next(p for p in fp.POLICIES if p.name == "network-separation")
    assert isinstance(pol, StackValidationPolicy)
    t = time.perf_counter()
    pol.validate(StackValidationArgs(resources, {}), Collector())
    cached = time.perf_counter() - t
    return {
        "SDK-shaped resources (test helper, not in a preview)": build,
        "fabric_view: props → intent (first stack policy)": view,
        "one stack policy, cached view": cached,
    }


def main() -> int:
    """Print the figures; exit bench.MISSED when the command misses the 3 s target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pack", action="store_true", help="also time the CrossGuard path")
    args = ap.parse_args()

    for label, data in (
        ("1:1 (clean)", {"gpus": GPUS}),
        ("2:1 (fails)", {"gpus": GPUS, "oversubscription": "2:1"}),
    ):
        med = _median([_stages(data) for _ in range(RUNS)])
        print(f"{GPUS:,} GPUs {label}: median of {RUNS}, in process")
        for k, v in med.items():
            if k == "violations":
                print(f"  {'violations':<18} {int(v):>8,}")
            else:
                print(f"  {k:<18} {v:8.3f} s")
    gc_on = _median([_stages({"gpus": GPUS}, collect=True) for _ in range(RUNS)])
    print(
        f"  (with the cyclic GC left on: derive_intent {gc_on['derive_intent']:.3f} s, "
        f"total {gc_on['total']:.3f} s)"
    )
    print(f"rules on the {GPUS:,}-GPU intent (median of {RUNS}):")
    for k, v in _per_rule().items():
        print(f"  {k:<30} {v * 1000:8.1f} ms")
    wall, cpu, rss = _cli()
    # The machine is shared: CPU time is what the command costs, wall what it took.
    ok = min(wall, cpu) < TARGET_S
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"fabric-stack check --gpus {GPUS} --format json (fresh process, median of {RUNS}): "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {rss:,.0f} MB; load average {load} "
        f"on {os.cpu_count()} CPUs — target < {TARGET_S:.0f} s: {'OK' if ok else 'MISSED'}"
    )
    if args.pack:
        print("CrossGuard path (bundle granularity):")
        for k, v in _pack().items():
            print(f"  {k:<55} {v:8.3f} s")
    return 0 if ok else MISSED


if __name__ == "__main__":
    raise SystemExit(main())
