"""`fabric-stack stack init NAME --from spec.yaml` and `stack export NAME --out spec.yaml`.

A spec file becomes a Pulumi stack and back (issue #48): the stack's ``fabric:`` config
holds exactly the spec's keys (snake_case → ``fabric:`` camelCase), credentials as
secrets; ``size --stack NAME`` and ``size --config spec.yaml`` then read the same spec.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

from fabric_stack.cli.common import handle_errors, out_file_option
from fabric_stack.cli.params import StackName
from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.files.config import load_yaml, split_stack_config, with_names_file
from fabric_stack.files.outputs import write_file
from fabric_stack.files.stack_spec import (
    check_keys,
    config_of_spec,
    spec_of_config,
    stack_config_values,
)
from fabric_stack.spec.model import validate_spec


@click.group("stack")
def stack_group() -> None:
    """Make a Pulumi stack from a spec file, or write a stack's spec back to a file.

    \b
    Examples:
      fabric-stack stack init prod --from cluster.yaml   # the stack holds the spec
      fabric-stack size --stack prod                     # from any directory
      fabric-stack stack export prod --out cluster.yaml  # and back
    """


def read_spec_file(path: Path) -> dict[str, Any]:
    """The spec file's top-level mapping, its keys checked and its spec validated.

    Raises InputFileError (one line naming the file) for a key that is neither a spec
    field nor a stack key, or a spec no fabric can be built from: nothing is written then.
    """
    data = load_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputFileError(str(path), "expected a mapping of spec fields at the top level")
    check_keys(data, str(path))
    spec, _ = split_stack_config(config_of_spec_values(data))
    try:
        validate_spec(with_names_file(spec, path.parent))
    except SpecError as exc:
        raise InputFileError(str(path), exc.message) from None
    return data


def config_of_spec_values(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as ``fabric:``-prefixed config values (what a program would be handed)."""
    return stack_config_values(config_of_spec(data))


@stack_group.command("init")
@click.argument("name", type=StackName())
@click.option(
    "--from",
    "spec_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Spec YAML (FabricSpec fields in snake_case; stack keys such as inventory too).",
)
@handle_errors
def init_cmd(name: str, spec_file: Path) -> None:
    """Create Pulumi stack NAME whose `fabric:` config is the spec in FILE.

    Every key becomes `fabric:<camelCase>` (`gpus_per_node` → `fabric:gpusPerNode`);
    `netbox_token` and URLs with a password become secrets. The stack is not selected.
    A spec with an unknown key, a spec no fabric can be built from, or an existing
    stack is one line, exit 2, and no stack is made.

    \b
    Example:
      fabric-stack stack init prod --from cluster.yaml && fabric-stack plan --stack prod
    """
    from fabric_stack.adapters.pulumi.stack_config import create_stack

    data = read_spec_file(spec_file)
    config = config_of_spec(data, base=spec_file.resolve().parent)
    create_stack(name, config)
    secrets = sorted(k for k, v in config.items() if v["secret"])
    note = f" ({', '.join(secrets)} as secrets)" if secrets else ""
    click.echo(f"created stack {name}: {len(config)} fabric: keys from {spec_file}{note}")


@stack_group.command("export")
@click.argument("name", type=StackName())
@out_file_option("Write the spec YAML to FILE (atomically) instead of stdout.")
@handle_errors
def export_cmd(name: str, out: Path | None) -> None:
    """Write stack NAME's `fabric:` config as a spec YAML (snake_case keys).

    Secrets are never written: each one left out is named on stderr (set it again with
    `pulumi config set --secret`).

    \b
    Example:
      fabric-stack stack export prod --out cluster.yaml
    """
    from fabric_stack.adapters.pulumi.stack_config import read_stack_config

    data, secrets = spec_of_config(read_stack_config(name))
    text = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    if out is None:
        click.echo(text, nl=False)
    else:
        write_file(out, text)
        click.echo(f"wrote {out}: {len(data)} keys of stack {name}", err=True)
    for key in secrets:
        click.echo(f"note: {key} is a secret: not exported", err=True)
