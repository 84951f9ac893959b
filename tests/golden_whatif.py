"""Golden what-if and estimate outputs for the seed cluster (128 GPUs, QM9700, 1:1)."""

from __future__ import annotations

import json

from fabric_stack.analysis.estimate import DEFAULT_SIZES, estimate_collective, parse_sizes
from fabric_stack.analysis.whatif import FabricIndex, Failure, analyze_failures
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import build_topology
from fabric_stack.views.whatif import estimate_json, estimate_markdown, whatif_markdown


def _dump(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """What-if (a spine, a leaf, a drained spine plus a cable; N−1 over everything) and
    estimates (every collective, healthy and with a failed leaf) of the seed cluster."""
    topo = build_topology(size_fabric(validate_spec({})))
    index = FabricIndex(topo)
    out: dict[str, str] = {}
    cases = {
        "fail-spine-01": [Failure(device="spine-01")],
        "fail-su1-r1-leaf": [Failure(device="su1-r1-leaf")],
        "drain-spine-02-and-a-cable": [
            Failure(device="spine-02", kind="drain"),
            Failure(device="su1-node03", port="mlx5_4"),
        ],
    }
    for name, failures in cases.items():
        r = analyze_failures(topo, failures, index=index)
        out[f"seed-{name}.json"] = _dump(r.model_dump(mode="json"))
    nm1 = analyze_failures(topo, [], n_minus_1_scope="all", index=index)
    out["seed-n-minus-1-all.md"] = whatif_markdown(nm1, limit=1000)
    sizes = parse_sizes(DEFAULT_SIZES)
    for coll in ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"):
        est = estimate_collective(topo, coll, sizes, index=index)
        out[f"seed-estimate-{coll}.json"] = _dump(estimate_json([("healthy", est)]))
    failed = estimate_collective(
        topo, "all_reduce", sizes, failures=[Failure(device="su1-r1-leaf")], index=index
    )
    healthy = estimate_collective(topo, "all_reduce", sizes, index=index)
    out["seed-estimate-all_reduce-healthy-vs-failed.md"] = estimate_markdown(
        [("healthy", healthy), ("failed su1-r1-leaf", failed)]
    )
    return out
