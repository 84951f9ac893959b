"""`fabric-stack compare`: InfiniBand or RoCEv2, the same cluster on each, side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from fabric_stack.cli.common import (
    SIZES_HELP,
    emit_formatted,
    handle_errors,
    load_spec,
    out_file_option,
    sharp_option,
    spec_options,
)


@click.command("compare")
@spec_options
@click.option(
    "--candidates",
    metavar="LIST",
    help="FABRIC[:SWITCH],… e.g. infiniband:qm9700,roce:sn5600,ethernet. "
    "[default: InfiniBand on the Quantum switch and RoCEv2 on the Spectrum switch for the "
    "NIC speed]",
)
@sharp_option
@click.option(
    "--prices",
    "prices",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Price the order: a CSV part_number,unit_price,currency (one currency; switches "
    "by catalog key, cables and optics by part number). No prices ship with fabric-stack.",
)
@click.option(
    "--weights",
    metavar="LIST",
    help="CRITERION=W,… over performance, cost, operations, headroom (normalised). "
    "[default: performance=0.4,cost=0.3,operations=0.2,headroom=0.1]",
)
@click.option("--sizes", default=None, metavar="LIST", help=SIZES_HELP)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown", "svg"]),
    default="table",
    show_default=True,
    help="markdown is a decision record for a pull request; svg charts the estimates.",
)
@out_file_option("Write to FILE (atomically) instead of stdout.")
@handle_errors
def compare_cmd(
    candidates: str | None,
    sharp: bool | None,
    prices: Path | None,
    weights: str | None,
    sizes: str | None,
    fmt: str,
    out: Path | None,
    **kwargs: Any,
) -> None:
    """Plan the same cluster on each candidate fabric and recommend one.

    Side by side: tiers, switches by model, the two-tier ceiling, cables and
    optics by part, power, latency of the longest path (sourced per-switch and
    NIC figures, UNVERIFIED marked), all-reduce and all-to-all busbw at
    `estimate`'s sizes, what each needs to operate, and a recommendation
    computed from the weights with the figures that decided it. JSON keys:
    candidates[] {fabric, switch, tiers, switches, cables, optics, power_w,
    latency_us, allreduce_busbw_gbs, alltoall_busbw_gbs, two_tier_max_gpus,
    cost, operations}, weights, recommendation {fabric, switch, reasons}.

    \b
    Examples:
      fabric-stack compare --gpus 1024
      fabric-stack compare --gpus 1024 --sharp --format markdown --out decision.md
      fabric-stack compare --gpus 4096 --candidates infiniband:qm9700,roce:sn5600 \\
          --weights performance=1,headroom=1
      fabric-stack compare --gpus 1024 --format svg --out options.svg
    """
    from fabric_stack.analysis.estimate import DEFAULT_SIZES, parse_sizes
    from fabric_stack.files.prices import read_prices
    from fabric_stack.pipeline import paused_gc
    from fabric_stack.views.compare import (
        compare_json,
        compare_markdown,
        compare_svg,
        compare_table,
    )
    from fabric_stack.views.options import (
        DEFAULT_WEIGHTS,
        compare_fabrics,
        parse_candidates,
        parse_weights,
    )

    spec = load_spec(kwargs)
    cands = parse_candidates(candidates, spec) if candidates else None
    w = parse_weights(weights or DEFAULT_WEIGHTS)
    byte_sizes = parse_sizes(sizes or DEFAULT_SIZES)
    price_list = read_prices(prices) if prices else None
    with paused_gc():
        cmp = compare_fabrics(
            spec, cands, sharp=sharp, weights=w, sizes=byte_sizes, prices=price_list
        )
    emit_formatted(
        cmp, fmt, out, (compare_json, compare_markdown, compare_svg, compare_table), width=140
    )
