"""Benchmark: `whatif` and `estimate` at scale (issue 18's targets).

Run ``.venv/bin/python -m bench.bench_whatif``. Each case runs in a fresh
subprocess (so its peak RSS is its own) and prints its stages and a verdict:

* ``whatif --n-minus-1 switch`` at 4,096 GPUs (every compute switch failed alone,
  ranked): < 20 s.
* a single ``whatif`` (one spine failed) at 32,768 GPUs: < 5 s.
* ``estimate`` of all-reduce for a 32,768-GPU job (8 message sizes): < 1 s.
* ``compare`` at 32,768 GPUs (InfiniBand on QM9700 and RoCEv2 on SN5600, each sized,
  built, counted and estimated at 8 sizes; issue 45): < 10 s.

"Total" includes sizing and building the port-level topology, as the CLI does.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

from bench import MISSED

CASES: dict[str, tuple[int, float]] = {
    "n-minus-1-switch-4096": (4096, 20.0),
    "n-minus-1-all-16384": (16384, 60.0),
    "n-minus-1-all-32768": (32768, 120.0),
    "whatif-32768": (32768, 5.0),
    "estimate-32768": (32768, 1.0),
    "compare-32768": (32768, 10.0),
}
"""Case → (GPUs, target seconds)."""


def run_one(name: str) -> dict[str, Any]:
    """One case in this process: stage timings, total and peak RSS."""
    from fabric_stack.analysis.estimate import DEFAULT_SIZES, estimate_collective, parse_sizes
    from fabric_stack.analysis.whatif import FabricIndex, Failure, analyze_failures
    from fabric_stack.pipeline import paused_gc
    from fabric_stack.sizing.size import size_fabric
    from fabric_stack.spec.model import validate_spec
    from fabric_stack.topology.build import build_topology

    gpus, _ = CASES[name]
    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    if name.startswith("compare"):
        return _run_compare(name, gpus, t0)
    with paused_gc():
        topo = build_topology(size_fabric(validate_spec(gpus=gpus)))
    stages["build"] = time.perf_counter() - t0
    t = time.perf_counter()
    index = FabricIndex(topo)
    extra: dict[str, Any] = {}
    if name.startswith("n-minus-1"):
        scope = "all" if name.startswith("n-minus-1-all") else "switch"
        r = analyze_failures(topo, [], n_minus_1_scope=scope, index=index)
        extra = {"failures_ranked": len(r.n_minus_1), "worst": r.n_minus_1[0].target}
        stages["n_minus_1"] = time.perf_counter() - t
    elif name.startswith("whatif"):
        spine = next(topo.switches("spine")).name
        r = analyze_failures(topo, [Failure(device=spine)], index=index)
        extra = {"failed": spine, "bisection_after_tbps": r.bisection_tbps.after}
        stages["whatif"] = time.perf_counter() - t
    else:
        est = estimate_collective(topo, "all_reduce", parse_sizes(DEFAULT_SIZES), index=index)
        extra = {"busbw_16G": est.points[-1].busbw_gbs, "job_gpus": est.job.gpus}
        stages["estimate"] = time.perf_counter() - t
    total = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    return {"case": name, "stages": stages, "total": total, "peak_gb": peak, **extra}


def _run_compare(name: str, gpus: int, t0: float) -> dict[str, Any]:
    """``compare``: both default candidates through the whole pipeline, as the CLI does."""
    from fabric_stack.pipeline import paused_gc
    from fabric_stack.spec.model import validate_spec
    from fabric_stack.views.options import compare_fabrics

    with paused_gc():
        cmp = compare_fabrics(validate_spec(gpus=gpus))
    total = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    return {
        "case": name,
        "stages": {"compare": total},
        "total": total,
        "peak_gb": peak,
        "recommended": cmp.recommendation.fabric,
    }


def main() -> int:
    """Run every case in a subprocess; print figures and verdicts."""
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(run_one(sys.argv[2])))
        return 0
    ok = True
    for name, (_, target) in CASES.items():
        out = subprocess.run(
            [sys.executable, "-m", "bench.bench_whatif", "--one", name],
            capture_output=True,
            text=True,
            check=True,
        )
        res = json.loads(out.stdout.strip().splitlines()[-1])
        stages = ", ".join(f"{k} {v:.2f} s" for k, v in res["stages"].items())
        # The target is the what-if/estimate itself; the build is reported beside it.
        own = sum(v for k, v in res["stages"].items() if k != "build")
        verdict = "PASS" if own < target else "FAIL"
        ok &= verdict == "PASS"
        extras = {k: v for k, v in res.items() if k not in ("case", "stages", "total", "peak_gb")}
        print(
            f"{name}: {stages}; total {res['total']:.2f} s; peak {res['peak_gb']:.2f} GB; "
            f"{extras}; target < {target:g} s → {verdict}"
        )
    return 0 if ok else MISSED


if __name__ == "__main__":
    raise SystemExit(main())
