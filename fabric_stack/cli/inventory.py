"""`fabric-stack inventory`: what `pulumi up` recorded, for the datacenter team."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from fabric_stack.adapters.inventory import mask_url, open_read_only
from fabric_stack.cli.common import console, echo_json, handle_errors
from fabric_stack.cli.inventory_transfer import (
    export_cmd,
    import_cmd,
    inventory_options,
    inventory_url,
    upgrade_cmd,
)
from fabric_stack.cli.params import StackName
from fabric_stack.views.fit import fit_columns

KINDS = {
    "switch": "Switch",
    "cable": "Cable",
    "nic": "RdmaNic",
    "rail": "Rail",
    "vlan": "Vlan",
    "fabric": "Fabric",
}
COLUMNS = {
    "Switch": (
        "name",
        "role",
        "model",
        "rack",
        "position",
        "su",
        "rail",
        "ports_down",
        "ports_up",
        "status",
    ),
    "Cable": (
        "name",
        "role",
        "a_device",
        "a_port",
        "b_device",
        "b_port",
        "a_speed_gbps",
        "cable_type",
        "status",
    ),
    "RdmaNic": ("name", "rail", "pcie_switch", "numa", "leaf", "leaf_port", "status"),
    "Rail": ("name", "subnet", "vlan", "pkey", "nics", "status"),
    "Vlan": ("name", "network", "vlan", "subnet", "attach", "mtu", "status"),
    "Fabric": ("name", "fabric", "gpus", "tiers", "oversubscription", "status"),
}


NAME_COLUMNS = frozenset({"name", "a_device", "b_device", "leaf"})
"""Columns shown whole, never wrapped or cut."""


@click.group("inventory", invoke_without_command=True)
@inventory_options
@click.option("--kind", type=click.Choice(sorted(KINDS)), default="switch", show_default=True)
@click.option("--stack", type=StackName(), help="Only this stack's records.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
)
@click.pass_context
@handle_errors
def inventory_cmd(
    ctx: click.Context,
    url: str | None,
    netbox_url: str | None,
    netbox_token_file: Path | None,
    netbox_branch: str | None,
    kind: str,
    stack: str | None,
    fmt: str,
) -> None:
    """List the records `pulumi up` wrote to the inventory (or export / import them).

    \b
    Examples:
      fabric-stack inventory                        # switches of every stack
      fabric-stack inventory --kind cable --format csv > cables.csv
      fabric-stack inventory --inventory postgresql://fab@db/inv --stack prod
      NETBOX_TOKEN=… fabric-stack inventory --netbox https://nb.example --kind cable
      fabric-stack inventory export --out backup.json
      fabric-stack inventory import backup.json --inventory postgresql://fab@db/inv
    """
    if ctx.invoked_subcommand is not None:
        return
    url = inventory_url(ctx, url, netbox_url, netbox_token_file, netbox_branch)
    k = KINDS[kind]
    rows = open_read_only(url).list_records(k, stack)
    cols = COLUMNS[k]
    if fmt == "json":
        echo_json({"inventory": mask_url(url), "kind": k, "records": rows})
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(("stack", *cols))
        for r in rows:
            w.writerow((r.get("stack", ""), *(r.get(c, "") for c in cols)))
        click.echo(buf.getvalue(), nl=False)
    else:
        _print_table(f"{k} records in {mask_url(url)} ({len(rows)})", k, ("stack", *cols), rows)


inventory_cmd.add_command(export_cmd)
inventory_cmd.add_command(import_cmd)
inventory_cmd.add_command(upgrade_cmd)


MAX_TABLE_ROWS = 500
"""Rows the table shows; --format csv has every one."""


PRIORITY: dict[str, tuple[str, ...]] = {
    "Cable": ("name", "a_device", "a_port", "b_device", "b_port", "role"),
    "RdmaNic": ("name", "leaf", "leaf_port", "rail"),
}
"""Per kind, the columns a narrow table keeps first (then the rest as listed, stack last)."""


def _print_table(title: str, kind: str, cols: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    """The records as a table of the columns that fit the terminal whole, most important
    first, with a line naming the ones left out: --format csv has them all."""
    con = console()
    first = [c for c in ("name", *PRIORITY.get(kind, ())) if c in cols]
    order = list(dict.fromkeys([*first, *(c for c in cols if c != "stack"), "stack"]))
    cells = [[str(r.get(c, "")) for c in order] for r in rows[:MAX_TABLE_ROWS]]
    shown, dropped = fit_columns(order, cells, con.width)
    keep = sorted(shown, key=lambda i: ("stack", *cols).index(order[i]))  # listed order
    t = Table(title=title, title_justify="left")
    for i in keep:
        t.add_column(order[i], no_wrap=order[i] in NAME_COLUMNS, overflow="fold")
    for row in cells:
        t.add_row(*(row[i] for i in keep))
    con.print(t)
    if len(rows) > MAX_TABLE_ROWS:
        con.print(f"… {len(rows) - MAX_TABLE_ROWS:,} more rows (--format csv has them all)")
    if dropped:
        con.print(
            f"left out at {con.width} columns: {', '.join(dropped)} "
            "(--format csv or json has every column)",
            style="dim",
        )
