"""`fabric-stack layout`: the physical plant — the check, the run list, rack elevations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from fabric_stack.cli.common import console, handle_errors, load_spec, out_file_option, spec_options
from fabric_stack.errors import SpecError
from fabric_stack.files.outputs import write_file
from fabric_stack.plant import PlantCheck, check_plant, plant_of
from fabric_stack.sizing.size import size_fabric
from fabric_stack.topology.build import build_topology
from fabric_stack.views.plant import (
    check_json,
    check_markdown,
    elevations_svg,
    run_list_csv,
    run_list_markdown,
)

LAYOUT_FORMATS = ("table", "json", "markdown", "csv")


def _check_table(check: PlantCheck) -> Table:
    """The layout check as a rich table: problems first, then the longest runs."""
    t = Table(title=f"Layout check — {check.name}", title_justify="left")
    for col in ("Cable", "From", "To", "Length", "Medium", "Part", "Reach"):
        t.add_column(col)
    for p in check.problems:
        t.add_row(Text(p, style="bold red"), "", "", "", "", "", "")
    for r in check.longest:
        t.add_row(
            r.cable_id,
            r.a_device,
            r.b_device,
            f"{r.length_m:g} m",
            r.medium,
            r.part_number,
            f"{r.reach_m:g} m",
        )
    media = ", ".join(f"{n:,} {m}" for m, n in check.media.items())
    t.caption = (
        f"{check.racks:,} racks, {check.cables:,} cables ({media}); "
        f"{'OK' if check.passed else f'{len(check.problems):,} problem(s)'}"
    )
    return t


def _emit(text: str, out: Path | None) -> None:
    if out is None:
        click.echo(text, nl=False)
        return
    write_file(out, text)
    click.echo(f"wrote {out}", err=True)


@click.command("layout")
@spec_options
@click.option(
    "--check", "mode", flag_value="check", default=True, help="Check the plant (default)."
)
@click.option(
    "--run-list", "mode", flag_value="run-list", help="Per-rack run list (csv or markdown)."
)
@click.option("--elevations", "mode", flag_value="elevations", help="Rack elevations as SVG.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(LAYOUT_FORMATS),
    default=None,
    help="--check: table, json or markdown [table]; --run-list: csv or markdown [csv].",
)
@out_file_option("Write to FILE (atomically) instead of stdout.")
@handle_errors
def layout_cmd(mode: str, fmt: str | None, out: Path | None, **kwargs: Any) -> None:
    """The physical plant: racks over power or units, cables beyond reach, run list, elevations.

    Racks stand in rows (spec section `layout`: servers per rack, racks per
    row, pitch, tray height, slack, labels); every cable gets a length, a medium
    chosen by length and speed, a part number and a label per end. `--check`
    lists racks over their power or RU budget, cables beyond their medium's
    reach and duplicate labels, then the longest runs; exit 1 on a problem.

    \b
    Examples:
      fabric-stack layout --check                           # the seed cluster
      fabric-stack layout --check --gpus 1024 --format markdown
      fabric-stack layout --run-list --format markdown --out runs.md
      fabric-stack layout --elevations --out racks.svg
      fabric-stack layout --check --config cluster.yaml --format json
    """
    topo = build_topology(size_fabric(load_spec(kwargs)))
    if mode == "elevations":
        if fmt is not None:
            raise SpecError("--format", "--elevations writes SVG", "leave --format out")
        _emit(elevations_svg(topo), out)
        return
    if mode == "run-list":
        if fmt not in (None, "csv", "markdown"):
            raise SpecError("--format", f"the run list is csv or markdown, not {fmt}")
        _emit(run_list_markdown(topo) if fmt == "markdown" else run_list_csv(topo), out)
        return
    if fmt == "csv":
        raise SpecError("--format", "--check prints table, json or markdown", "or use --run-list")
    check = check_plant(topo, plant_of(topo, strict=False))
    if fmt == "json":
        _emit(check_json(check), out)
    elif fmt == "markdown":
        _emit(check_markdown(check), out)
    else:
        if out is not None:
            raise SpecError("--out", "the table format is for the terminal", "use json or markdown")
        console().print(_check_table(check))
    if not check.passed:
        sys.exit(1)


__all__ = ["layout_cmd"]
