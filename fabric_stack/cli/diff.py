"""`fabric-stack diff --from OLD.yaml --to NEW.yaml`: config and address changes, no Pulumi.

The same comparison `fabric-stack plan` adds to a preview
(:func:`fabric_stack.artifacts.growth.compare_specs`), between two spec files:
reviewable in a pull request before any stack exists.
"""

from __future__ import annotations

from pathlib import Path

import click

from fabric_stack.cli.common import console, echo_json, format_option, handle_errors
from fabric_stack.files.config import spec_from_file


@click.command("diff")
@click.option(
    "--from",
    "old",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The spec before the change.",
)
@click.option(
    "--to",
    "new",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The spec after the change.",
)
@click.option("--lines", is_flag=True, help="Print every configuration line added/removed.")
@format_option
@handle_errors
def diff_cmd(old: Path, new: Path, lines: bool, fmt: str) -> None:
    """Which devices' configuration changes, and which allocation moves, between two specs.

    Growth (more SUs or pods) moves no address: "Address changes" is empty and
    "Config changes" lists the existing switches that gain neighbours and ports,
    and the new ones.

    \b
    Examples:
      fabric-stack diff --from cluster.yaml --to cluster-1024.yaml
      fabric-stack diff --from a.yaml --to b.yaml --format json --lines
    """
    from fabric_stack.artifacts.growth import compare_specs
    from fabric_stack.views.changes import growth_markdown

    diff = compare_specs(spec_from_file(old), spec_from_file(new))
    if fmt == "json":
        data = diff.model_dump(mode="json")
        if lines:
            for row, c in zip(data["config_changes"], diff.config_changes, strict=True):
                row["lines_added"], row["lines_removed"] = c.lines_added, c.lines_removed
        echo_json(data)
        return
    text = "\n".join(growth_markdown(diff.config_changes, diff.address_changes, 10**6))
    if lines:
        for c in diff.config_changes:
            text += f"\n{c.device}\n" + "".join(f"+ {ln}\n" for ln in c.lines_added)
            text += "".join(f"- {ln}\n" for ln in c.lines_removed)
    if fmt == "markdown":
        click.echo(text)
    else:
        console().print(text, markup=False, highlight=False)
