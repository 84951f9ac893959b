"""`python -m validate`: render the matrix and run every real validator over it."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from validate.core import Rejection, Validator
from validate.matrix import SCENARIOS, Scenario, render_scenario
from validate.registry import VALIDATORS

DEFAULT_ROOT = Path(".state/validate")


def run_family(v: Validator, rendered: dict[str, Path]) -> tuple[list[Rejection], int]:
    """One family over every scenario: its rejections and how many files it judged."""
    out: list[Rejection] = []
    judged = 0
    for scenario, root in rendered.items():
        files = v.select(root)
        if not files:
            continue
        judged += len(files)
        out.extend(Rejection(scenario, p.file, v.tool, p.message) for p in v.check(root, files))
    return out, judged


def main(argv: list[str] | None = None) -> int:
    """Render, validate, print one line per rejection and a summary; exit 0/1/2."""
    ap = argparse.ArgumentParser(prog="python -m validate", description=__doc__)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="render the matrix here")
    ap.add_argument("--only", action="append", choices=sorted(VALIDATORS), help="families")
    ap.add_argument("--scenario", action="append", help="scenarios (default: the whole matrix)")
    ap.add_argument("--jobs", type=int, default=2, help="families run at once")
    args = ap.parse_args(argv)
    chosen: list[Scenario] = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    if args.scenario and len(chosen) != len(set(args.scenario)):
        known = ", ".join(s.name for s in SCENARIOS)
        print(f"validate: unknown --scenario; one of {known}", file=sys.stderr)
        return 2
    families = [VALIDATORS[n] for n in (args.only or VALIDATORS)]
    missing = [(v, why) for v in families if (why := v.missing())]
    for v, why in missing:
        print(f"validate: {v.name}: {v.tool} is not available: {why}", file=sys.stderr)
    if missing:
        return 2
    t0 = time.monotonic()
    rendered: dict[str, Path] = {}
    for s in chosen:
        root = args.root / s.name
        shutil.rmtree(root, ignore_errors=True)
        n = len(render_scenario(s, root))
        rendered[s.name] = root
        print(f"rendered {s.name}: {n} files", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda v: (v, *run_family(v, rendered)), families))
    total = 0
    for v, rejections, judged in results:
        for r in rejections:
            print(r.line())
        total += len(rejections)
        verdict = "accepted" if not rejections else f"{len(rejections)} rejected"
        print(f"{v.name}: {v.tool} judged {judged} file(s): {verdict}", file=sys.stderr)
    print(
        f"validate: {len(chosen)} scenario(s), {len(families)} family(ies), {total} rejection(s) "
        f"in {time.monotonic() - t0:.0f} s",
        file=sys.stderr,
    )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
