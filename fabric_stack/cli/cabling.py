"""`fabric-stack cabling`, `bom`, `diagram` and `verify`: the port-level plan as files.

All four build the topology from the same spec flags as `size` and only
render it; nothing here recomputes sizing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from fabric_stack.cli.common import (
    console,
    echo_json,
    format_option,
    handle_errors,
    load_spec,
    out_file_option,
    spec_options,
)
from fabric_stack.cli.console import echo_checked
from fabric_stack.errors import SpecError
from fabric_stack.files.outputs import write_file
from fabric_stack.files.prices import read_prices
from fabric_stack.pipeline import paused_gc
from fabric_stack.sizing.size import size_fabric
from fabric_stack.topology.build import FabricTopology, build_topology
from fabric_stack.topology.verify import VerifyReport, verify_topology
from fabric_stack.views.bom import bill_of_materials, bom_json, bom_markdown, bom_table
from fabric_stack.views.diagram import diagram_svg
from fabric_stack.views.exports import (
    ROLE_FILTERS,
    avd_csv,
    links_csv,
    links_csv_lines,
    links_json,
    links_json_lines,
    topo_file,
    ufm_p2p,
)

CABLING_FORMATS = ("csv", "json", "topo", "p2p", "avd")

_CHECKED_LINES = {"csv": links_csv_lines, "json": links_json_lines}
"""Exports that say whether their text holds no control character: printed to stdout
without the passes over the whole text (#43, :func:`echo_checked`)."""


def _topology(kwargs: dict[str, Any]) -> FabricTopology:
    return build_topology(size_fabric(load_spec(kwargs)))


def _emit(text: str, out: Path | None) -> None:
    """Write to ``out`` atomically (no half-written file), else to stdout."""
    if out is None:
        click.echo(text, nl=False)
        return
    write_file(out, text)
    click.echo(f"wrote {out}", err=True)


def _cabling_text(topo: FabricTopology, fmt: str, role: str | None) -> str:
    """The export ``fmt`` of ``topo``'s cables of ``role`` (each format's default)."""
    if fmt == "topo":
        if role not in (None, "compute"):
            raise SpecError(
                "--role",
                f"--format topo holds the compute fabric only, not {role}",
                "use --role compute or leave it out",
            )
        return topo_file(topo)
    if fmt == "p2p":
        return ufm_p2p(topo, role or "compute")
    if fmt == "json":
        return links_json(topo, role or "all")
    if fmt == "avd":
        return avd_csv(topo, role or "all")
    return links_csv(topo, role or "all")


@click.command("cabling")
@spec_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(CABLING_FORMATS),
    default="csv",
    show_default=True,
    help='csv: pull list with racks; json: {"links": [...]}; topo: ibdiagnet -t file; '
    "p2p: UFM cable-validation sheet; avd: Arista AVD-style CSV.",
)
@click.option(
    "--role",
    type=click.Choice(ROLE_FILTERS),
    help="Which network's cables: compute, storage, inband, oob or all. "
    "[default: all for csv/json/avd, compute for topo/p2p]",
)
@out_file_option("Write to FILE (atomically) instead of stdout.")
@handle_errors
def cabling_cmd(fmt: str, role: str | None, out: Path | None, **kwargs: Any) -> None:
    """Export the cabling plan: one row per cable, never both directions.

    Every cable of the plan with both ends (device, port, rack, position),
    speed, and the physical plant's choice for it: medium, optics, cable type,
    length, part number and a label per end (csv, json and avd; see
    `fabric-stack layout`). The a-end is always the lower tier (server, leaf,
    spine). `--format topo` writes the InfiniBand compute fabric as an
    ibdiagnet topology file so `ibdiagnet -t` can check the live fabric.

    \b
    Examples:
      fabric-stack cabling                                  # seed cluster, CSV to stdout
      fabric-stack cabling --format json --out plan.json
      fabric-stack cabling --format topo --out fabric.topo  # ibdiagnet -t fabric.topo
      fabric-stack cabling --format p2p --gpus 1024         # UFM cable validation sheet
      fabric-stack cabling --role storage --config cluster.yaml
    """
    # The cyclic collector paused: ~1M links and their runs are acyclic, and its passes
    # over them cost a fifth of the command at 131k GPUs (#43, bench/bench_tiers.py).
    with paused_gc():
        topo = _topology(kwargs)
        if fmt in _CHECKED_LINES and out is None:
            lines, checked = _CHECKED_LINES[fmt](topo, role or "all")
            if checked:
                echo_checked(lines)
                return
            text = "".join(lines)
        else:
            text = _cabling_text(topo, fmt, role)
    _emit(text, out)


@click.command("bom")
@spec_options
@format_option
@out_file_option("Write to FILE (atomically) instead of stdout.")
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Price the order: a CSV part_number,unit_price,currency (one currency; switches "
    "by catalog key, cables and optics by part number). No prices ship with fabric-stack.",
)
@handle_errors
def bom_cmd(fmt: str, out: Path | None, prices_file: Path | None, **kwargs: Any) -> None:
    """Bill of materials: switches by model (rack units, power), cables and optics by type,
    then what to order: cables by part number and length, optics by part number.

    Counted once from the port-level link list and its physical plant: cables as
    installed (a 1:2 splitter once), one module per lit cage at both ends, of the
    part that end's hardware takes; power is switches plus optics. Compute counts
    are checked against the sizing card. With --prices, each line's cost and the
    total, and the parts the file does not price.

    \b
    Examples:
      fabric-stack bom                           # the seed cluster
      fabric-stack bom --gpus 4096 --format markdown
      fabric-stack bom --fabric roce --switch sn5600 --format json --out bom.json
      fabric-stack bom --node-profile dgx-h100 --prices prices.csv
    """
    prices = read_prices(prices_file) if prices_file is not None else None
    bom = bill_of_materials(_topology(kwargs), prices)
    if fmt == "json":
        text = json.dumps(bom_json(bom), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "markdown":
        text = bom_markdown(bom)
    else:
        if out is not None:
            raise SpecError(
                "--out",
                "the table format is for the terminal",
                "use --format json or markdown with --out",
            )
        console().print(bom_table(bom))
        return
    _emit(text, out)


@click.command("diagram")
@spec_options
@out_file_option("SVG file to write (atomically).", required=True)
@handle_errors
def diagram_cmd(out: Path, **kwargs: Any) -> None:
    """Draw the fabric as an SVG: tiers, rails in colour, SUs (and pods) in frames.

    Large fabrics collapse to representative SUs, pods, spines and core groups
    with "… N more" boxes, and leaf-to-spine cabling is drawn as bundles, so the
    picture stays readable (and small) at any size.

    \b
    Examples:
      fabric-stack diagram --out fabric.svg
      fabric-stack diagram --gpus 32768 --out big.svg
      rsvg-convert fabric.svg -o fabric.png          # a PNG for slides
    """
    if out.suffix.lower() != ".svg":
        raise SpecError("--out", f"{out.name!r} is not an .svg file", "e.g. --out fabric.svg")
    _emit(diagram_svg(_topology(kwargs)), out)


def verify_markdown(report: VerifyReport) -> str:
    """The report as a Markdown table."""
    icon = {"pass": "✅ pass", "fail": "❌ fail", "skip": "⏭ skip"}
    lines = [
        f"### Topology checks — {report.name}",
        "",
        f"{report.gpus:,} GPUs, {report.nodes:,} servers, {report.links:,} cables: "
        f"**{'all checks pass' if report.passed else 'CHECKS FAIL'}**",
        "",
        "| Check | Result | Figures |",
        "|---|---|---|",
    ]
    for c in report.checks:
        lines.append(f"| `{c.name}` | {icon[c.status]} | {c.summary} |")
    for c in report.checks:
        if c.details:
            plural = "" if c.problems == 1 else "s"
            lines += ["", f"**{c.name}** ({c.problems:,} problem{plural}):", ""]
            lines += [f"- {d}" for d in c.details]
    return "\n".join(lines) + "\n"


def verify_table(report: VerifyReport) -> Any:
    """The report as a rich table."""
    style = {"pass": "green", "fail": "bold red", "skip": "yellow"}
    t = Table(title=f"Topology checks — {report.name}", title_justify="left")
    t.add_column("Check")
    t.add_column("Result")
    t.add_column("Figures")
    for c in report.checks:
        t.add_row(c.name, Text(c.status.upper(), style=style[c.status]), c.summary)
    for c in report.checks:
        for d in c.details:
            t.add_row("", "", Text(d, style="red"))
    return t


@click.command("verify")
@spec_options
@format_option
@click.option(
    "--mincut-max-nodes",
    type=int,
    default=512,
    show_default=True,
    help="Largest fabric (servers) for the networkx min-cut check.",
)
@handle_errors
def verify_cmd(fmt: str, mincut_max_nodes: int, **kwargs: Any) -> None:
    """Check the port-level plan: port budgets, rails, up/down split, reachability, min-cut.

    Exit status 0 when every check passes (or is skipped), 1 when one fails,
    2 on bad input.

    \b
    Examples:
      fabric-stack verify
      fabric-stack verify --gpus 1024 --oversubscription 2:1 --format json
      fabric-stack verify --config cluster.yaml --format markdown >> PR.md
    """
    report = verify_topology(_topology(kwargs), mincut_max_nodes=mincut_max_nodes)
    if fmt == "json":
        echo_json(report.model_dump(mode="json"))
    elif fmt == "markdown":
        click.echo(verify_markdown(report), nl=False)
    else:
        console().print(verify_table(report))
    if not report.passed:
        sys.exit(1)


__all__ = ["bom_cmd", "cabling_cmd", "diagram_cmd", "verify_cmd"]
