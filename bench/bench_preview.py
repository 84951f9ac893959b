"""Preview benchmark: capacity changes with the real CLI, against a trivial-resource baseline.

For each case (128 → 512 and 1,024 → 4,096 GPUs) it sets up, on throw-away
projects and file:// backends:

* the fabric stack: ``pulumi up`` at the first size (SQLite inventory), then
  config set to the second size;
* the baseline: a project of trivial dynamic resources (echo provider, one
  property), ``up`` with as many resources as the first stack holds, the
  program then asking for as many as the fabric preview steps through.

Then it times ``pulumi preview`` of both, alternating, ``--repeat`` times, and
prints the medians and their ratio. ``--output plain`` (the default) times the
preview a person runs; ``--output json`` times ``pulumi preview --json``, which
also renders every property of every step.

    .venv/bin/python -m bench.bench_preview [--granularity bundle|cable] [--cases small,large]
                                            [--repeat 3] [--output plain|json]
                                            [--no-config-records] [--cold]

``--cold`` empties the fabric project's render cache (``.state/cache/render``) before
each timed preview, so every preview renders the configuration as the first preview
after a spec change does; without it the timed previews read what the untimed first
one rendered (as a second preview, ``pulumi up`` or ``fabric-stack plan`` do).

``--policy-pack GPUS[,GPUS…]`` measures the CrossGuard pack instead: a fresh stack of
that size, ``pulumi preview`` alternately without and with ``--policy-pack policies``
(and with each ``--extra-pack DIR``, e.g. a trivial one-rule pack: the floor of any
Python pack), best of ``--repeat``; it prints wall time, the CPU time of every process
of the preview (engine, program, provider and pack) and both ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PULUMI = REPO / ".venv" / "bin" / "pulumi"

CASES = {"small": (128, 512), "large": (1024, 4096)}


def _env(state: Path) -> dict[str, str]:
    from fabric_stack.adapters.pulumi.env import offline_env

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


class Case:
    """A project whose next ``pulumi preview`` is the change being measured."""

    def __init__(self, proj: Path, env: dict[str, str], up_s: float) -> None:
        self.proj, self.env, self.up_s = proj, env, up_s
        _, out = _run(proj, env, "preview", "--json")
        self.ops: dict[str, int] = {}
        for s in json.loads(out).get("steps", []):
            self.ops[s["op"]] = self.ops.get(s["op"], 0) + 1
        self.resources = sum(self.ops.values())
        self.times: list[float] = []

    @property
    def existing(self) -> int:
        """Resources already in the state before the change."""
        return sum(v for k, v in self.ops.items() if k in ("same", "update", "delete", "replace"))

    def time_preview(self, output: str, cold: bool = False) -> float:
        """One timed preview (``cold``: render cache emptied first); the figure is kept."""
        if cold:
            shutil.rmtree(self.proj / ".state" / "cache" / "render", ignore_errors=True)
        args = ["preview", "--json"] if output == "json" else ["preview"]
        dt, _ = _run(self.proj, self.env, *args)
        self.times.append(dt)
        return dt

    @property
    def median(self) -> float:
        """Median of the timed previews."""
        return statistics.median(self.times)


def fabric_case(
    root: Path,
    a: int,
    b: int,
    granularity: str,
    config_records: bool = True,
    extra: tuple[tuple[str, str], ...] = (),
) -> Case:
    """The fabric stack, up at ``a`` GPUs, configured for ``b``."""
    proj = _project(root, f"fab-{a}-{b}", "from components.program import run\n\nrun()\n")
    env = _env(root / f"state-{a}-{b}")
    _run(proj, env, "stack", "init", "bench")
    for k, v in (
        ("gpus", a),
        ("granularity", granularity),
        ("inventory", f"sqlite:///{root}/inv-{a}.db"),
        ("config_records", str(config_records).lower()),
        *extra,
    ):
        _run(proj, env, "config", "set", f"fabric:{k}", str(v))
    t_up, _ = _run(proj, env, "up", "--yes", "--skip-preview")
    _run(proj, env, "config", "set", "fabric:gpus", str(b))
    return Case(proj, env, t_up)


def baseline_case(root: Path, first: int, second: int, tag: str) -> Case:
    """Trivial resources: ``first`` in the state, ``second`` in the program."""
    main = (
        "import os\nfrom bench.trivial_provider import Trivial\n"
        "for i in range(int(os.environ['N'])):\n    Trivial(f'r{i}', i)\n"
    )
    proj = _project(root, f"base-{tag}", main)
    env = _env(root / f"bstate-{tag}")
    _run(proj, env, "stack", "init", "bench")
    t_up, _ = _run(proj, {**env, "N": str(first)}, "up", "--yes", "--skip-preview")
    return Case(proj, {**env, "N": str(second)}, t_up)


def _cpu_of(run: Callable[[], object]) -> float:
    """CPU seconds (user + system) of the processes ``run`` starts and waits for."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def pack_ratio(root: Path, gpus: int, repeat: int, packs: list[str]) -> None:
    """A fresh ``gpus`` stack previewed without a pack and with each of ``packs`` (best of)."""
    proj = _project(root, f"pack-{gpus}", "from components.program import run\n\nrun()\n")
    env = _env(root / f"pstate-{gpus}")
    _run(proj, env, "stack", "init", "bench")
    for k, v in (("gpus", gpus), ("inventory", f"sqlite:///{root}/pinv-{gpus}.db")):
        _run(proj, env, "config", "set", f"fabric:{k}", str(v))
    walls: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    for _ in range(repeat):
        for pack in ["", *packs]:  # alternate, so that a noisy moment hits every variant
            args = ["preview", *(["--policy-pack", pack] if pack else [])]
            t = time.perf_counter()
            cpus.setdefault(pack, []).append(_cpu_of(partial(_run, proj, env, *args)))
            walls.setdefault(pack, []).append(time.perf_counter() - t)
    one, five, _ = os.getloadavg()
    for pack in ["", *packs]:
        w, c = min(walls[pack]), min(cpus[pack])
        ratio = (
            f"; ratio {w / min(walls['']):.2f}x wall, {c / min(cpus['']):.2f}x CPU" if pack else ""
        )
        print(
            f"{gpus:>6} GPUs fresh, {pack or 'no pack'}: {w:6.1f} s wall, {c:6.1f} s CPU{ratio} "
            f"(runs {', '.join(f'{x:.1f}' for x in walls[pack])}; load {one:.1f}/{five:.1f})",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--granularity", default="bundle", choices=["bundle", "cable"])
    ap.add_argument("--cases", default="small,large")
    ap.add_argument("--repeat", type=int, default=3, help="timed previews of each (median)")
    ap.add_argument("--output", default="plain", choices=["plain", "json"])
    ap.add_argument(
        "--no-config-records",
        action="store_true",
        help="fabric:config_records false: switch records without config digests/allocations",
    )
    ap.add_argument(
        "--cold",
        action="store_true",
        help="empty the render cache before each timed fabric preview (first-preview cost)",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra fabric: config, e.g. --set fabric=roce --set switch=sn5600",
    )
    ap.add_argument("--sizes", default="", help="A,B GPUs instead of --cases (one case)")
    ap.add_argument(
        "--policy-pack",
        default="",
        metavar="GPUS[,GPUS]",
        help="measure the policy pack on fresh stacks of these sizes instead",
    )
    ap.add_argument("--extra-pack", action="append", default=[], metavar="DIR")
    args = ap.parse_args()
    if args.policy_pack:
        print(f"# policy pack benchmark, best of {args.repeat}, {os.cpu_count()} CPUs", flush=True)
        with tempfile.TemporaryDirectory(prefix="fs-bench-pack-") as tmp:
            for gpus in args.policy_pack.split(","):
                packs = [str(REPO / "policies"), *args.extra_pack]
                pack_ratio(Path(tmp), int(gpus), args.repeat, packs)
        return
    extra = tuple(tuple(kv.split("=", 1)) for kv in args.set)
    print(
        f"# preview benchmark, granularity={args.granularity}, output={args.output}, "
        f"median of {args.repeat}, {os.cpu_count()} CPUs, "
        f"config_records={not args.no_config_records} cold={args.cold} {' '.join(args.set)}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="fs-bench-") as tmp:
        root = Path(tmp)
        sizes = {"custom": tuple(int(x) for x in args.sizes.split(","))} if args.sizes else CASES
        for case in sizes if args.sizes else args.cases.split(","):
            a, b = sizes[case]
            fab = fabric_case(
                root,
                a,
                b,
                args.granularity,
                not args.no_config_records,
                extra,
            )
            base = baseline_case(root, fab.existing, fab.resources, case)
            for _ in range(args.repeat):
                # Alternate, so that a noisy moment hits both sides.
                fab.time_preview(args.output, args.cold)
                base.time_preview(args.output)
            ratio = fab.median / base.median
            print(
                f"{a:>6} -> {b:<6} GPUs: preview {fab.median:6.1f} s "
                f"for {fab.resources} resources "
                f"({fab.resources / fab.median:.0f}/s; ops {fab.ops}); "
                f"up at {a}: {fab.up_s:.1f} s; runs {', '.join(f'{t:.1f}' for t in fab.times)}"
            )
            print(
                f"{'':>16} baseline: preview {base.median:6.1f} s "
                f"for {base.resources} trivial resources "
                f"({base.resources / base.median:.0f}/s); ratio {ratio:.2f}x; "
                f"runs {', '.join(f'{t:.1f}' for t in base.times)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
