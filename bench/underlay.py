"""Benchmark: underlay plan + every underlay render for a large RoCE plan (prints its figures).

Renders timed: frr, hosts, cumulus (QoS + NVUE underlay), sonic, kubernetes (rail IPAM).

Run: ``.venv/bin/python bench/underlay.py [GPUS]`` (default 32,768 GPUs, SN5600).
"""

from __future__ import annotations

import sys
import time

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.artifacts import RenderContext, render_artifacts


def main() -> None:
    """Time each stage once and print one line per stage."""
    gpus = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
    t0 = time.perf_counter()
    topo = build_topology(size_fabric(validate_spec({"fabric": "roce", "switch": "sn5600",
                                                     "gpus": gpus})))  # fmt: skip
    ctx = RenderContext.from_topology(topo)
    t1 = time.perf_counter()
    u = ctx.underlay
    t2 = time.perf_counter()
    frr = render_artifacts("frr", ctx)
    t3 = time.perf_counter()
    hosts = render_artifacts("hosts", ctx)
    t4 = time.perf_counter()
    more = {}
    for target in ("cumulus", "sonic", "kubernetes"):
        ts = time.perf_counter()
        n = len(render_artifacts(target, ctx))
        more[target] = (n, time.perf_counter() - ts)
    print(f"{gpus:,} GPUs RoCE SN5600: {len(u.switches):,} switches, {len(u.links):,} fabric "
          f"links, {len(u.hosts):,} host ports")  # fmt: skip
    print(f"  pipeline (spec→topology→intent): {t1 - t0:6.2f} s")
    print(f"  underlay plan:                   {t2 - t1:6.2f} s")
    print(f"  render frr   ({len(frr):,} files):  {t3 - t2:6.2f} s")
    print(f"  render hosts ({len(hosts):,} files): {t4 - t3:6.2f} s")
    for target, (n, took) in more.items():
        print(f"  render {target:<10} ({n:,} files): {took:6.2f} s")
    total = t4 - t1 + sum(took for _, took in more.values())
    print(f"  underlay + renders:              {total:6.2f} s")


if __name__ == "__main__":
    main()
