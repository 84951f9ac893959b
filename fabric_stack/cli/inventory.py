"""`fabric-stack inventory`: what `pulumi up` recorded, for the datacenter team."""

from __future__ import annotations

import csv
import io
from pathlib import Path

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
    url = inventory_url(ctx, url, netbox_url, netbox_token_file)
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
        t = Table(title=f"{k} records in {mask_url(url)} ({len(rows)})", title_justify="left")
        for c in ("stack", *cols):
            t.add_column(c)
        for r in rows[:500]:
            t.add_row(str(r.get("stack", "")), *(str(r.get(c, "")) for c in cols))
        if len(rows) > 500:
            t.add_row("…", f"{len(rows) - 500} more (use --format csv)", *[""] * (len(cols) - 1))
        console().print(t)


inventory_cmd.add_command(export_cmd)
inventory_cmd.add_command(import_cmd)
inventory_cmd.add_command(upgrade_cmd)
