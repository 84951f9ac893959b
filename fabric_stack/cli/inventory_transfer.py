"""`fabric-stack inventory export` / `import` / `upgrade`: back up, move a site, upgrade."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fabric_stack.adapters.discovery.registry import (
    NETBOX,
    NETBOX_BRANCH,
    NETBOX_TOKEN_FILE,
    netbox_source,
    netbox_token,
)
from fabric_stack.adapters.inventory import mask_url, open_read_only, open_store
from fabric_stack.adapters.inventory.netbox.branching import check_branch_name, with_branch
from fabric_stack.adapters.inventory.netbox.client import url_with_token
from fabric_stack.adapters.inventory.sql.schema import MIGRATIONS, SCHEMA_VERSION
from fabric_stack.adapters.inventory.sql.transfer import (
    dump_document,
    export_document,
    import_document,
    parse_document,
    schema_version,
)
from fabric_stack.cli.common import handle_errors, out_file_option, project_dir
from fabric_stack.cli.params import StackName
from fabric_stack.cli.sources import click_option
from fabric_stack.files.inputs import read_text
from fabric_stack.files.outputs import write_file

SQL_HELP = "sqlite:///path.db or postgresql://… [default: the project's .state/inventory.db]"
"""export, import and upgrade work on SQL inventories only (a NetBox one is refused)."""

INVENTORY_HELP = (
    "sqlite:///path.db, postgresql://… or netbox+https://HOST "
    "[default: the project's .state/inventory.db]"
)

_F = TypeVar("_F", bound=Callable[..., Any])


def inventory_options(fn: _F) -> _F:
    """``--inventory URL``, or ``--netbox URL`` with ``--netbox-token-file FILE`` (the NetBox
    options of every command, from the drift-source registry)."""
    fn = click_option(NETBOX_BRANCH)(fn)
    fn = click_option(NETBOX_TOKEN_FILE)(fn)
    fn = click_option(NETBOX)(fn)
    return click.option("--inventory", "url", metavar="URL", help=INVENTORY_HELP)(fn)


def _given(
    url: str | None, netbox_url: str | None, token_file: Path | None, branch: str | None = None
) -> str | None:
    """The inventory URL one command's options name, or None."""
    if url is not None and netbox_url:
        raise click.UsageError("give --inventory or --netbox, not both")
    if branch and not netbox_url:
        raise click.UsageError("--netbox-branch needs --netbox URL")
    if netbox_url:
        base, token = netbox_source(netbox_url, token_file)
        base = base if base.startswith("netbox+") else f"netbox+{base}"
        if branch:
            base = with_branch(base, check_branch_name(branch, "--netbox-branch"))
        return url_with_token(base, token)
    if token_file is not None:
        if not (url or "").startswith("netbox+"):
            raise click.UsageError("--netbox-token-file needs --netbox URL")
        return url_with_token(str(url), netbox_token(token_file))
    return url


def inventory_url(
    ctx: click.Context,
    url: str | None,
    netbox_url: str | None = None,
    netbox_token_file: Path | None = None,
    netbox_branch: str | None = None,
) -> str:
    """The subcommand's --inventory/--netbox, else the group's, else the project's SQLite."""
    own = _given(url, netbox_url, netbox_token_file, netbox_branch)
    if own is not None:  # '' too: the store says what is wrong with it
        return own
    p = ctx.parent.params if ctx.parent is not None else {}
    parent = _given(
        p.get("url"), p.get("netbox_url"), p.get("netbox_token_file"), p.get("netbox_branch")
    )
    return (
        parent if parent is not None else f"sqlite:///{project_dir() / '.state' / 'inventory.db'}"
    )


@click.command("export")
@click.option("--inventory", "url", metavar="URL", help=SQL_HELP)
@click.option(
    "--stack", "stacks", type=StackName(), multiple=True, help="Only this stack (repeatable)."
)
@out_file_option("JSON file to write (replaced atomically).", required=True)
@click.pass_context
@handle_errors
def export_cmd(ctx: click.Context, url: str | None, stacks: tuple[str, ...], out: Path) -> None:
    """Write every record (of --stack, or all) to a JSON file: a backup, or a site to move.

    The file holds every column of every row; `inventory import` of it into an
    empty inventory and a second export give the same file byte for byte.

    \b
    Examples:
      fabric-stack inventory export --out backup.json
      fabric-stack inventory export --stack site-a --out site-a.json \\
          --inventory postgresql://fab@db/fabric_inventory
    """
    url = inventory_url(ctx, url)
    doc = export_document(open_read_only(url), stacks)
    write_file(out, dump_document(doc))
    click.echo(
        f"exported {len(doc['records'])} records of {len(doc['stacks'])} stack(s) "
        f"from {mask_url(url)} to {out} (schema version {doc['schema_version']})"
    )


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--inventory", "url", metavar="URL", help=SQL_HELP)
@click.pass_context
@handle_errors
def import_cmd(ctx: click.Context, file: Path, url: str | None) -> None:
    """Load an `inventory export` file into an inventory, in one transaction.

    Rows already present with the same content are skipped; if any row differs
    from one already there the import is refused and nothing is written.

    \b
    Examples:
      fabric-stack inventory import backup.json
      fabric-stack inventory import site-a.json --inventory postgresql://fab@db2/fabric_inventory
    """
    url = inventory_url(ctx, url)
    records = parse_document(read_text(file), str(file))
    result = import_document(open_store(url), records)
    click.echo(
        f"imported {result.inserted} records into {mask_url(url)} "
        f"({result.skipped} already there, identical); stacks: {', '.join(result.stacks) or '-'}"
    )


@click.command("upgrade")
@click.option("--inventory", "url", metavar="URL", help=SQL_HELP)
@click.pass_context
@handle_errors
def upgrade_cmd(ctx: click.Context, url: str | None) -> None:
    """Migrate an inventory to this fabric-stack's schema version, in one transaction.

    `pulumi up` does it on first use too; run it as the database owner where the
    role the stacks write with may not change the schema. Never downgrades.

    \b
    Examples:
      fabric-stack inventory upgrade
      fabric-stack inventory upgrade --inventory postgresql://owner@db/fabric_inventory
    """
    url = inventory_url(ctx, url)
    before = schema_version(open_read_only(url))
    open_store(url).counts()  # opening a writable store migrates it
    after = schema_version(open_read_only(url))
    if before == after:
        click.echo(f"{mask_url(url)}: already at schema version {after} (newest: {SCHEMA_VERSION})")
        return
    click.echo(f"{mask_url(url)}: schema version {before} -> {after}")
    for m in MIGRATIONS:
        if before < m.version <= after:
            click.echo(f"  {m.version}: {m.description}")
