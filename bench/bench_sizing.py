"""Sizing benchmark: size_fabric from 128 to 131,072 GPUs (target < 50 ms per sizing).

    .venv/bin/python -m bench.bench_sizing

Each size is validated and sized ``REPEAT`` times; the median and the worst
single run are printed. Beyond what three tiers of a 64-port QM9700 carry
(65,536 GPUs), the larger sizes use the 144-port Q3400 at 800G.
"""

from __future__ import annotations

import statistics
import time

from fabric_stack import size_fabric, validate_spec

REPEAT = 25
SIZES = [128, 512, 2048, 8192, 32768, 65536, 131072]


def main() -> None:
    print(
        f"{'GPUs':>8} {'switch':>7} {'tiers':>5} {'switches':>9} {'cables':>8} "
        f"{'median ms':>10} {'max ms':>7}"
    )
    worst = 0.0
    for gpus in SIZES:
        kw: dict[str, object] = {"gpus": gpus}
        if gpus > 65536:
            kw.update(switch="q3400", nic_gbps=800)
        times = []
        for _ in range(REPEAT):
            t = time.perf_counter()
            plan = size_fabric(validate_spec(**kw))
            times.append((time.perf_counter() - t) * 1000)
        worst = max(worst, max(times))
        print(
            f"{gpus:>8} {plan.switch_model.key:>7} {plan.tiers:>5} {plan.switches.total:>9,} "
            f"{plan.cables.total:>8,} {statistics.median(times):>10.2f} {max(times):>7.2f}"
        )
    print(f"worst single sizing: {worst:.2f} ms (target < 50 ms)")


if __name__ == "__main__":
    main()
