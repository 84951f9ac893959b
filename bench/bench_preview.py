"""Preview benchmark: capacity changes with the real CLI, against a trivial-resource baseline.

For each case (128 → 512 and 1,024 → 4,096 GPUs) it runs, on a throw-away
project and file:// backend: ``pulumi up`` at the first size (SQLite inventory),
then times ``pulumi preview`` at the second size. The baseline is the same
shape with trivial dynamic resources (echo provider, no inventory): ``up``
with as many resources as the first stack holds, then ``preview`` with as
many as the second preview steps through.

    .venv/bin/python -m bench.bench_preview [--granularity bundle|cable] [--cases small,large]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PULUMI = REPO / ".venv" / "bin" / "pulumi"

CASES = {"small": (128, 512), "large": (1024, 4096)}


def _env(state: Path) -> dict[str, str]:
    from fabric_stack.pulumi_env import offline_env

    env = offline_env(REPO, state_dir=state)
    env["PULUMI_HOME"] = str(state / "home")
    env["PYTHONPATH"] = str(REPO)  # bench.trivial_provider for the baseline
    return env


def _run(proj: Path, env: dict[str, str], *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    r = subprocess.run(
        [str(PULUMI), *args, "--non-interactive"],
        cwd=proj,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"pulumi {' '.join(args)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return dt, r.stdout


def _project(root: Path, name: str, main: str) -> Path:
    proj = root / name
    proj.mkdir(parents=True)
    (proj / "Pulumi.yaml").write_text(
        f"name: {name}\nruntime:\n  name: python\n  options:\n    virtualenv: {REPO / '.venv'}\n"
    )
    (proj / "__main__.py").write_text(main)
    return proj


def _steps(out: str) -> int:
    return sum(1 for s in json.loads(out).get("steps", []) if s.get("op") != "same" or True)


def fabric_case(root: Path, a: int, b: int, granularity: str) -> dict[str, float]:
    """up at ``a`` GPUs, then time preview at ``b``."""
    proj = _project(root, f"fab-{a}-{b}", "from components.program import run\n\nrun()\n")
    env = _env(root / f"state-{a}-{b}")
    _run(proj, env, "stack", "init", "bench")
    for k, v in (
        ("gpus", a),
        ("granularity", granularity),
        ("inventory", f"sqlite:///{root}/inv-{a}.db"),
    ):
        _run(proj, env, "config", "set", f"fabric:{k}", str(v))
    t_up, _ = _run(proj, env, "up", "--yes", "--skip-preview")
    _run(proj, env, "config", "set", "fabric:gpus", str(b))
    t_prev, out = _run(proj, env, "preview", "--json")
    steps = json.loads(out).get("steps", [])
    ops: dict[str, int] = {}
    for s in steps:
        ops[s["op"]] = ops.get(s["op"], 0) + 1
    return {
        "up_s": t_up,
        "preview_s": t_prev,
        "resources": len(steps),
        "ops": ops,  # type: ignore[dict-item]
        "first": sum(v for k, v in ops.items() if k in ("same", "update", "delete", "replace")),
    }


def baseline_case(root: Path, first: int, second: int, tag: str) -> dict[str, float]:
    main = (
        "import os\nfrom bench.trivial_provider import Trivial\n"
        "for i in range(int(os.environ['N'])):\n    Trivial(f'r{i}', i)\n"
    )
    proj = _project(root, f"base-{tag}", main)
    env = _env(root / f"bstate-{tag}")
    _run(proj, env, "stack", "init", "bench")
    _run(proj, {**env, "N": str(first)}, "up", "--yes", "--skip-preview")
    t_prev, out = _run(proj, {**env, "N": str(second)}, "preview", "--json")
    return {"preview_s": t_prev, "resources": len(json.loads(out).get("steps", []))}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--granularity", default="bundle", choices=["bundle", "cable"])
    ap.add_argument("--cases", default="small,large")
    args = ap.parse_args()
    print(f"# preview benchmark, granularity={args.granularity}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="fs-bench-") as tmp:
        root = Path(tmp)
        for case in args.cases.split(","):
            a, b = CASES[case]
            fab = fabric_case(root, a, b, args.granularity)
            base = baseline_case(root, int(fab["first"]), int(fab["resources"]), case)
            ratio = fab["preview_s"] / base["preview_s"]
            print(
                f"{a:>6} -> {b:<6} GPUs: preview {fab['preview_s']:6.1f} s "
                f"for {fab['resources']} resources "
                f"({fab['resources'] / fab['preview_s']:.0f}/s; ops {fab['ops']}); "
                f"up at {a}: {fab['up_s']:.1f} s"
            )
            print(
                f"{'':>16} baseline: preview {base['preview_s']:6.1f} s "
                f"for {base['resources']} trivial "
                f"resources ({base['resources'] / base['preview_s']:.0f}/s); ratio {ratio:.2f}x"
            )


if __name__ == "__main__":
    main()
