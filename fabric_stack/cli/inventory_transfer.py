"""`fabric-stack inventory export` / `import` / `upgrade`: back up, move a site, upgrade."""

from __future__ import annotations

from pathlib import Path

import click

from fabric_stack.adapters.inventory import mask_url, open_read_only, open_store
from fabric_stack.adapters.inventory.schema import MIGRATIONS, SCHEMA_VERSION
from fabric_stack.adapters.inventory.transfer import (
    dump_document,
    export_document,
    import_document,
    parse_document,
    schema_version,
)
from fabric_stack.cli.common import handle_errors, project_dir
from fabric_stack.files.inputs import read_text
from fabric_stack.files.outputs import write_file

_URL_HELP = "sqlite:///path.db or postgresql://… [default: the project's .state/inventory.db]"


def _inventory_url(ctx: click.Context, url: str | None) -> str:
    """The subcommand's --inventory, else the group's, else the project's SQLite file."""
    parent = ctx.parent.params.get("url") if ctx.parent is not None else None
    return url or parent or f"sqlite:///{project_dir() / '.state' / 'inventory.db'}"


@click.command("export")
@click.option("--inventory", "url", metavar="URL", help=_URL_HELP)
@click.option("--stack", "stacks", multiple=True, help="Only this stack (repeatable).")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON file to write (replaced atomically).",
)
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
    url = _inventory_url(ctx, url)
    doc = export_document(open_read_only(url), stacks)
    write_file(out, dump_document(doc))
    click.echo(
        f"exported {len(doc['records'])} records of {len(doc['stacks'])} stack(s) "
        f"from {mask_url(url)} to {out} (schema version {doc['schema_version']})"
    )


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--inventory", "url", metavar="URL", help=_URL_HELP)
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
    url = _inventory_url(ctx, url)
    records = parse_document(read_text(file), str(file))
    result = import_document(open_store(url), records)
    click.echo(
        f"imported {result.inserted} records into {mask_url(url)} "
        f"({result.skipped} already there, identical); stacks: {', '.join(result.stacks) or '-'}"
    )


@click.command("upgrade")
@click.option("--inventory", "url", metavar="URL", help=_URL_HELP)
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
    url = _inventory_url(ctx, url)
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
