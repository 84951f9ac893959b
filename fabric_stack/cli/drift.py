"""`fabric-stack drift`: compare the plan with the inventory and with what the fabric reports."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

from fabric_stack.adapters.discovery import Reader
from fabric_stack.cli.common import (
    console,
    echo_json,
    format_option,
    handle_errors,
    load_spec,
    spec_options,
)
from fabric_stack.cli.drift_status import status_writer
from fabric_stack.cli.params import FiniteFloat, NonEmptyPath
from fabric_stack.cli.sources import chosen_sources, source_options
from fabric_stack.drift import (
    DriftReport,
    IgnoreRules,
    PlanIndex,
    Snapshot,
    combine,
    compute_drift,
    load_ignore,
)
from fabric_stack.drift.coverage import DEFAULT_MIN_COVERAGE, NETWORKS
from fabric_stack.drift.ignore import alias_rates
from fabric_stack.drift.names import (
    bind_macs,
    bind_ports,
    bindings,
    drop_others,
    others_of,
    port_map_of,
    with_planned,
)
from fabric_stack.drift.scheduler import compare_scheduler
from fabric_stack.drift.shape_file import SiteShape, load_shape, shape_path
from fabric_stack.drift.shape_fold import fold_shape
from fabric_stack.pipeline import paused_gc
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import FabricSpec
from fabric_stack.topology.build import FabricTopology, build_topology
from fabric_stack.views.drift import DEFAULT_MAX_ROWS, render_markdown, render_table

PROGRESS_MIN_BYTES = 2 << 20
"""Show a progress bar (on a terminal) when the inputs are larger than this."""

_PATH = NonEmptyPath(path_type=Path)


@click.command("drift")
@spec_options
@format_option
@source_options("drift")
@click.option(
    "--network",
    "network",
    type=click.Choice([*NETWORKS, "all"]),
    default=None,
    help="Network(s) to compare (default: the networks the input can see, stated in the report).",
)
@click.option(
    "--min-coverage",
    type=FiniteFloat(0.0, 1.0),
    default=DEFAULT_MIN_COVERAGE,
    show_default=True,
    help="Share of planned devices that must be seen; below it the report warns at the "
    "top and drift exits 1.",
)
@click.option(
    "--max-rows",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_ROWS,
    show_default=True,
    help="Findings shown in table/markdown, then an 'N more' line (0 = all; json has all).",
)
@click.option(
    "--ignore",
    "ignore_file",
    type=_PATH,
    metavar="FILE",
    help="YAML of ports/devices to ignore or check for link state only.",
)
@click.option(
    "--shape",
    "shape_file",
    type=_PATH,
    metavar="FILE",
    help="The site's shape as adopt inferred it (default: NAMES.shape.json beside --names "
    "when there): planned leaves / spines the site does not have and the leaf–spine "
    "cables the plan numbers otherwise fold into one plan_mismatch finding, and the "
    "uplinks are judged per leaf–spine pair against the shape.",
)
@click.option(
    "--write-status",
    is_flag=True,
    help="With --netbox and a fabric source: set each planned cable's NetBox status "
    "(connected when the fabric shows it as planned, planned when missing) and add a "
    "journal entry per finding to its devices; only objects fabric-stack wrote.",
)
@handle_errors
def drift_cmd(
    fmt: str,
    network: str | None,
    min_coverage: float,
    max_rows: int,
    ignore_file: Path | None,
    shape_file: Path | None = None,
    write_status: bool = False,
    **kwargs: Any,
) -> None:
    """Compare the plan with the inventory and the live fabric, cable by cable.

    Each finding says what was expected, what is there and how to fix it
    (missing, unexpected, wrong peer: swap / wrong port / wrong rail / wrong
    switch, speed mismatch, missing or extra device, changed attribute, link
    up with no neighbour, a port the switch model cannot have). Every report
    carries coverage: planned / seen / matched devices and links per network;
    when fewer than --min-coverage of the planned devices were seen it says so
    at the top. With adopt's names file, the site's shape adopt wrote beside
    it (NAMES.shape.json, or --shape FILE) turns a plan the site is not built
    as (other rails, spines, cables per leaf–spine pair) into one
    plan_mismatch finding and judges the uplinks per pair against the shape.
    Exit status: 0 no drift, 1 drift or low coverage, 2 bad input.

    \b
    Examples:
      fabric-stack drift --ibnetdiscover fabric.txt --node-name-map nodes.map
      fabric-stack drift --iblinkinfo iblinkinfo.txt   # or --ibdiagnet ibdiagnet2.lst
      fabric-stack drift --fabric roce --switch sn5600 --nvue nvue/ --sonic config_db/
      fabric-stack drift --fabric roce --switch sn5600 --lldp lldp/ --mac-table macs.csv
      fabric-stack drift --stack prod --inventory sqlite:///.state/inventory.db
      fabric-stack drift --config cluster.yaml --netbox-csv cables.csv --format markdown
      fabric-stack drift --eos eos/ --ignore drift-ignore.yaml --format json
      fabric-stack drift --lldp lldp/ --network compute --min-coverage 0.9
      fabric-stack drift --lldp lldp/ --max-rows 0         # every finding, not the first 50
      fabric-stack drift --gpus 1024 --names names.csv --ibnetdiscover fabric.txt
      fabric-stack drift --names names.csv --shape site.shape.json --ibnetdiscover fabric.txt
      fabric-stack drift --slurm-topology /etc/slurm/topology.conf --k8s-nodes nodes.json
      NETBOX_TOKEN=… fabric-stack drift --stack prod --netbox https://nb.example --netbox-site prod
      fabric-stack drift --netbox https://nb.example --ibnetdiscover fabric.txt --write-status

    \b
    Ignore file (YAML):
      ports:
        - {device: su1-node07, port: mlx5_3, mode: ignore}
        - {device: su1-r1-leaf, port: swp4s0, mode: link_state_only}
      devices: [su1-node16]
    """
    sources = chosen_sources("drift", kwargs)
    stack = kwargs.get("stack")
    spec = load_spec(kwargs)
    rules = load_ignore(ignore_file) if ignore_file is not None else None
    guids, macs = bindings(spec)
    total = sources.input_bytes()
    err = Console(stderr=True)
    show = err.is_terminal and total >= PROGRESS_MIN_BYTES

    def readers(advance: Callable[[int], None] | None) -> list[Reader]:
        return sources.readers(advance, guids, stack)

    # The reading, plan and comparison build ~a million long-lived objects and no
    # reference cycles: the cyclic collector is paused while they are built (as in
    # fabric_stack.pipeline), which it would otherwise rescan over and over.
    with paused_gc():
        # Everything is read before anything is printed: a bad file stops the run with
        # its one error line and no partial report.
        if show and not write_status:
            with Progress(
                TextColumn("reading inputs"),
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
            ) as bar:
                task = bar.add_task("read", total=total)
                snapshots = [r.load() for r in readers(lambda n: bar.advance(task, n))]
        else:
            built = readers(None)
            if write_status:
                writer = status_writer(built, sources)  # before reading: a usage error first
            snapshots = [r.load() for r in built]
        port_map = port_map_of(spec)
        others = others_of(spec)  # login / storage hosts adopt listed: known, left out
        snapshots = [
            drop_others(bind_ports(bind_macs(s, macs), port_map), others) for s in snapshots
        ]
        topo = build_topology(size_fabric(spec))
        index = PlanIndex.from_topology(topo)
        report = _compare(topo, index, snapshots, rules, network, min_coverage)
        if (shape := shape_of(spec, shape_file)) is not None:
            adopted = frozenset(r.planned for r in spec.names.rows)
            report = fold_shape(report, topo, shape[0], snapshots, adopted, shape[1])
        report = with_planned(report, topo)
    if write_status:
        click.echo(writer(topo, report, snapshots), err=True)
    _show(report, fmt, max_rows)
    sys.exit(0 if report.clean else 1)


def shape_of(spec: FabricSpec, explicit: Path | None) -> tuple[SiteShape, str] | None:
    """(the site's shape, its file): ``--shape``, else the file adopt wrote beside the names
    file (``None``: neither)."""
    path = explicit
    if path is None and spec.names.file:
        beside = shape_path(spec.names.file)
        path = beside if beside.is_file() else None
    return None if path is None else (load_shape(path), path.name)


def _show(report: DriftReport, fmt: str, max_rows: int = DEFAULT_MAX_ROWS) -> None:
    """Print the report as a table, JSON (every finding) or Markdown."""
    if fmt == "json":
        echo_json(report.to_json())
    elif fmt == "markdown":
        click.echo(render_markdown(report, max_rows), nl=False)
    else:
        console().print(render_table(report, max_rows))


def _compare(
    topo: FabricTopology,
    index: PlanIndex,
    snapshots: list[Snapshot],
    rules: IgnoreRules | None,
    network: str | None,
    min_coverage: float,
) -> DriftReport:
    """Every snapshot against the plan (the ignore file's ``rates:`` applied), one report: a
    scheduler's view (Slurm topology, Kubernetes nodes) against the plan's scheduler view."""
    snapshots = [alias_rates(s, rules) for s in snapshots]
    networks = None
    if network is not None:
        networks = frozenset(NETWORKS) if network == "all" else frozenset({network})
    return combine(
        [
            compute_drift(index, s, rules, networks, min_coverage)
            if s.scheduler is None
            else compare_scheduler(topo, s, rules)
            for s in snapshots
        ]
    )
