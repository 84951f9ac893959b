"""`fabric-stack accept`: measured nccl-tests, perftest and iperf3 results against the plan."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from fabric_stack.cli.common import (
    MAX_NVLINK_GBS,
    NVLINK_GBS_HELP,
    SPEC_FLAG_NAMES,
    console,
    echo_json,
    format_option,
    handle_errors,
    load_spec,
    spec_options,
)
from fabric_stack.cli.params import FiniteFloat, NonEmptyPath


def spec_args(kwargs: dict[str, Any]) -> str:
    """The spec options as given (for the drift commands `accept` suggests)."""
    out: list[str] = []
    for key, flag in (("config", "--config"), ("stack", "--stack"), ("names_file", "--names")):
        if kwargs.get(key) is not None:
            out += [flag, str(kwargs[key])]
    for key in SPEC_FLAG_NAMES:
        if kwargs.get(key) is not None:
            out += ["--" + key.replace("_", "-"), str(kwargs[key])]
    return " ".join(shlex.quote(x) for x in out)


@click.command("accept")
@spec_options
@click.option(
    "--nvlink-gbs",
    type=FiniteFloat(min=0, min_open=True, max=MAX_NVLINK_GBS),
    metavar="GB/S",
    help=NVLINK_GBS_HELP,
)
@format_option
@click.argument("results", nargs=-1, required=True, type=NonEmptyPath(path_type=Path))
@handle_errors
def accept_cmd(
    results: tuple[Path, ...], nvlink_gbs: float | None, fmt: str, **kwargs: Any
) -> None:
    """Judge acceptance results against the plan and localise what costs the shortfall.

    RESULT is a file or a directory of nccl-tests stdout (all_reduce_perf,
    all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf; with or
    without NCCL_DEBUG=INFO) and perftest output (ib_write_bw/ib_read_bw/
    ib_send_bw, --report_gbits or not; files named <host>_<device>.txt) and
    iperf3 -J output (RoCE/Ethernet: placed by the plan's rail addresses; `twin
    traffic` writes it). Each run is compared with the plan's figure for its
    placement and size (the `estimate` model for nccl-tests, the rail's line rate
    × the model's network efficiency for perftest; for iperf3, TCP, its -b pace
    and the median of the iperf3 runs) and passes at 90 % of it. Then the suspects: the slow
    rail, leaf, cable or host from the per-rail matrix, NCCL using fewer or other
    HCAs than the rendered NCCL_IB_HCA, GPUDirect RDMA off, a crash, and 2-server
    results that only look good through tree/NVLS; each names the plan's cables
    and the drift command that confirms it. Hosts map to the plan by name
    (--names FILE for site names). Exit 0: all pass; 1: one fails; 2: input it
    cannot read.

    \b
    Examples:
      fabric-stack accept results/
      fabric-stack accept --names site-names.csv nccl.log perftest/
      fabric-stack accept --config cluster.yaml --format markdown results/ > acceptance.md
    """
    from fabric_stack.acceptance import AcceptContext, judge_results
    from fabric_stack.analysis.estimate import ModelParams
    from fabric_stack.files.results import load_results
    from fabric_stack.pipeline import paused_gc
    from fabric_stack.sizing.size import size_fabric
    from fabric_stack.topology.build import build_topology
    from fabric_stack.views.acceptance import accept_json, accept_markdown, render_accept

    given = spec_args(kwargs)
    spec = load_spec(kwargs)
    with paused_gc():
        topo = build_topology(size_fabric(spec))
    files, skipped = load_results(results)
    ctx = AcceptContext(
        topo,
        params=ModelParams(nvlink_gbs=nvlink_gbs),
        drift=f"fabric-stack drift {given}".rstrip(),
    )
    report = judge_results(files, ctx, skipped)
    if fmt == "json":
        echo_json(accept_json(report))
    elif fmt == "markdown":
        click.echo(accept_markdown(report), nl=False)
    else:
        console().print(render_accept(report))
    sys.exit(report.exit_code)
