"""Team-mode benchmark: the Pulumi ``postgres://`` backend against ``file://``, real CLI.

Starts a throw-away PostgreSQL server (``scripts/postgres.sh``) and, for each state
backend, a project whose inventory is a PostgreSQL database of its own on that
server (so the backends are the only difference):

* ``preview`` of 1,024 → 4,096 GPUs (state at 1,024, config at 4,096), and
* ``up`` of 1,024 → 4,096 GPUs (last: the slowest part): before each run the 1,024-GPU checkpoint is
  imported again (``pulumi stack import``), so every run does the same steps,

each ``--repeat`` / ``--up-repeat`` times, alternating backends, medians and their
ratio; and 20 stacks (32/64/128 GPUs, as in the tests) created and ``up``'d by 4
workers, wall time per backend. Order: previews (printed at once: the target
figure), the 20 stacks, then the ups (the slowest part).

    .venv/bin/python -m bench.bench_team [--repeat 3] [--up-repeat 3] [--sites 20] [--workers 4]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PULUMI = str(REPO / ".venv" / "bin" / "pulumi")
PG = str(REPO / "scripts" / "postgres.sh")


def _run(proj: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> float:
    t = time.perf_counter()
    r = subprocess.run(
        [PULUMI, *args, "--non-interactive"],
        cwd=proj,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    dt = time.perf_counter() - t
    if r.returncode != 0:
        where = env.get("PULUMI_BACKEND_URL", "file://").split(":", 1)[0]
        sys.exit(
            f"pulumi {' '.join(args)} on the {where} backend failed (rc {r.returncode}):\n"
            f"{r.stdout[-3000:]}\n{r.stderr[-6000:]}"
        )
    return dt


def _out(proj: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [PULUMI, *args, "--non-interactive"],
        cwd=proj,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _database(server: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + f"/{name}"


class Backend:
    """A project on one state backend, with a PostgreSQL inventory of its own."""

    def __init__(self, root: Path, kind: str, server: str) -> None:
        from fabric_stack.adapters.pulumi.env import offline_env

        self.kind = kind
        self.server = server
        self.proj = root / kind
        self.proj.mkdir()
        (self.proj / "Pulumi.yaml").write_text(
            f"name: fabric-stack\nruntime:\n  name: python\n  options:\n"
            f"    virtualenv: {REPO / '.venv'}\n"
        )
        (self.proj / "__main__.py").write_text("from components.program import run\n\nrun()\n")
        if kind == "file":
            self.env = offline_env(REPO, state_dir=root / "file-state")
        else:
            state = _database(server, "bench_state")
            url = state.replace("postgresql://", "postgres://") + "?sslmode=disable"
            self.env = offline_env(REPO, base={**os.environ, "PULUMI_BACKEND_URL": url})
        self.env["PULUMI_HOME"] = str(root / "home")
        self.inventory = _database(server, f"bench_inv_{kind}")
        self.previews: list[float] = []
        self.ups: list[float] = []

    def init(self, stack: str, gpus: int, inventory: str | None = None) -> None:
        """``stack init`` and its config."""
        _run(self.proj, self.env, "stack", "init", stack, "--no-select")
        _run(self.proj, self.env, "config", "set", "-s", stack, "fabric:gpus", str(gpus))
        _run(
            self.proj, self.env, "config", "set", "-s", stack, "--secret", "fabric:inventory",
            inventory or self.inventory,
        )  # fmt: skip

    def prepare(self) -> None:
        """Stack ``big`` up at 1,024 GPUs, config at 4,096; the 1,024 checkpoint kept."""
        self.init("big", 1024)
        _run(self.proj, self.env, "up", "-s", "big", "--yes", "--skip-preview")
        self.checkpoint = _out(self.proj, self.env, "stack", "export", "-s", "big")
        _run(self.proj, self.env, "config", "set", "-s", "big", "fabric:gpus", "4096")

    def time_preview(self) -> None:
        """One timed ``pulumi preview`` of 1,024 → 4,096."""
        self.previews.append(_run(self.proj, self.env, "preview", "-s", "big"))

    def time_up(self) -> None:
        """Back to the 1,024 checkpoint, then one timed ``pulumi up`` to 4,096."""
        _run(self.proj, self.env, "stack", "import", "-s", "big", stdin=self.checkpoint)
        self.ups.append(_run(self.proj, self.env, "up", "-s", "big", "--yes", "--skip-preview"))

    def parallel(self, sites: int, workers: int) -> float:
        """Wall time of ``sites`` stacks created and ``up``'d by ``workers`` at once."""
        inventory = _database(self.server, f"bench_sites_{self.kind}")

        def one(i: int) -> None:
            name = f"site-{i:02d}"
            self.init(name, (32, 64, 128)[i % 3], inventory)
            _run(self.proj, self.env, "up", "-s", name, "--yes", "--skip-preview")

        # The postgres:// backend creates its table on first open, unsafe for concurrent
        # first opens; prepare() has opened it already.
        t = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, range(sites)))
        return time.perf_counter() - t


def _fmt(times: list[float]) -> str:
    return f"{statistics.median(times):6.1f} s (runs {', '.join(f'{x:.1f}' for x in times)})"


def _report(what: str, fx: list[float], px: list[float]) -> None:
    """Both backends' medians for one operation and their ratio (postgres / file)."""
    ratio = statistics.median(px) / statistics.median(fx)
    print(f"1,024 -> 4,096 GPUs {what:<7} file:// {_fmt(fx)}")
    print(f"{'':>27}postgres:// {_fmt(px)}; ratio {ratio:.2f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3, help="timed previews per backend")
    ap.add_argument(
        "--up-repeat", type=int, default=3, help="timed ups per backend (0: none; they run last)"
    )
    ap.add_argument("--sites", type=int, default=20)
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args()
    print(
        f"# team benchmark: previews median of {args.repeat}, ups of {args.up_repeat}, "
        f"{os.cpu_count()} CPUs",
        flush=True,
    )
    # SIGTERM ends the run through the finally below (the server is stopped).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    with tempfile.TemporaryDirectory(prefix="fs-bench-team-") as tmp:
        root = Path(tmp)
        server = subprocess.run(
            ["bash", PG, "start", str(root / "pg")], capture_output=True, text=True, check=True
        ).stdout.strip()
        try:
            backends = [Backend(root, "file", server), Backend(root, "postgres", server)]
            for b in backends:
                b.prepare()
                print(f"prepared {b.kind}:// (up at 1,024 GPUs)", flush=True)
            for _ in range(args.repeat):  # alternate: a noisy moment hits both
                for b in backends:
                    b.time_preview()
            f, p = backends
            _report("preview", f.previews, p.previews)  # printed now: the target figure
            for b in backends if args.sites else ():
                wall = b.parallel(args.sites, args.workers)
                print(
                    f"{args.sites} stacks by {args.workers} workers, {b.kind + '://':<12} "
                    f"wall {wall:6.1f} s",
                    flush=True,
                )
            for _ in range(args.up_repeat):  # the slowest part last, so a cut run still reports
                for b in backends:
                    b.time_up()
            if args.up_repeat:
                _report("up", f.ups, p.ups)
        finally:
            subprocess.run(["bash", PG, "stop", str(root / "pg")], capture_output=True)


if __name__ == "__main__":
    main()
