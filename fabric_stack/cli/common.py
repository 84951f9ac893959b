"""Shared CLI plumbing: spec options, spec loading, output formats, error handling."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from fabric_stack.cli.params import AliasedOption, NonEmptyPath, StackName, one_line
from fabric_stack.errors import FabricStackError, InputFileError, SpecError
from fabric_stack.files.config import (
    field_head,
    is_stack_file,
    load_yaml,
    spec_from_file,
    split_stack_config,
    stack_config_error,
)
from fabric_stack.files.names_file import load_names
from fabric_stack.hardware.server_profiles import PROFILES
from fabric_stack.hardware.switches import known_switch_names
from fabric_stack.spec.model import FabricSpec, validate_spec

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", "json", "markdown")


def project_dir() -> Path:
    """The Pulumi project directory: the nearest ancestor with a Pulumi.yaml, else cwd."""
    here = Path.cwd().resolve()
    for d in (here, *here.parents):
        if (d / "Pulumi.yaml").exists():
            return d
    return here


def spec_options(fn: F) -> F:
    """Add the spec flags every planning command takes (same names as the spec fields)."""
    opts = [
        click.option(
            "--config",
            "config",
            type=NonEmptyPath(dir_okay=False, path_type=Path),
            help="YAML file with FabricSpec fields (or a Pulumi.<stack>.yaml).",
        ),
        click.option(
            "--stack",
            "stack",
            type=StackName(),
            metavar="NAME",
            help="Read the spec from this Pulumi stack's config, through Pulumi's backend "
            "(`pulumi config --stack NAME --json`; works from any directory). "
            "A stack file: --config Pulumi.NAME.yaml.",
        ),
        click.option("--gpus", type=int, help="Total GPUs. [default: 128]"),
        click.option("--gpus-per-node", type=int, help="GPUs per server. [default: 8]"),
        click.option(
            "--nic-gbps", type=int, help="RDMA NIC line rate per GPU, Gb/s. [default: 400]"
        ),
        click.option(
            "--rails", type=int, help="Compute NICs (rails) per server. [default: GPUs per node]"
        ),
        click.option(
            "--fabric",
            type=click.Choice(["infiniband", "roce", "ethernet"], case_sensitive=False),
            help="Compute fabric. [default: infiniband]",
        ),
        click.option(
            "--switch",
            metavar="MODEL",
            help="Switch model: " + ", ".join(known_switch_names()) + ". [default: qm9700]",
        ),
        *(
            click.option(
                f"--{role}-switch",
                metavar="MODEL",
                help=f"{role.capitalize()} switch model. [default: --switch]",
            )
            for role in ("leaf", "spine", "core")
        ),
        click.option(
            "--uplink-gbps",
            type=int,
            help="Leaf-spine and spine-core link speed, Gb/s. [default: host link speed]",
        ),
        click.option(
            "--oversubscription", metavar="A:B", help="Leaf down:up ratio. [default: 1:1]"
        ),
        click.option(
            "--su-nodes", type=int, help="Servers per scalable unit. [default: leaf downlinks]"
        ),
        click.option("--planes", type=int, help="Fabric planes, 1-4. [default: 1]"),
        click.option(
            "--spine-grouping",
            type=click.Choice(["full", "rail"], case_sensitive=False),
            help="full: every leaf reaches every spine of its pod; rail: one spine group per "
            "rail, cross-rail traffic over NVLink/PXN, no core while a rail fits two tiers. "
            "[default: full]",
        ),
        click.option(
            "--build-out-gpus",
            type=int,
            metavar="GPUS",
            help="Final size of a build-out: cable this phase as the final fabric does, so "
            "growing only adds. [default: none]",
        ),
        click.option(
            "--node-profile",
            "node_profile",
            metavar="NAME",
            help="Server profile: "
            + ", ".join(PROFILES)
            + ". [default: hgx-8gpu for 8 GPUs and 8 rails]",
        ),
        click.option(
            "--names",
            "names_file",
            type=NonEmptyPath(dir_okay=False, path_type=Path),
            metavar="FILE",
            help="The site's device names: CSV planned,actual[,rack,u,serial,guid,mac] "
            "(wins over the spec's names: and naming: templates).",
        ),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


SPEC_FLAG_NAMES = (
    "gpus",
    "gpus_per_node",
    "nic_gbps",
    "rails",
    "fabric",
    "switch",
    "leaf_switch",
    "spine_switch",
    "core_switch",
    "uplink_gbps",
    "oversubscription",
    "su_nodes",
    "planes",
    "spine_grouping",
    "build_out_gpus",
    "node_profile",
)


def load_spec(kwargs: dict[str, Any]) -> FabricSpec:
    """Build the spec from ``--config``/``--stack`` plus flags (flags win). Pops the spec keys."""
    config = kwargs.pop("config", None)
    stack = kwargs.pop("stack", None)
    flags = {k: kwargs.pop(k, None) for k in SPEC_FLAG_NAMES}
    names_file = kwargs.pop("names_file", None)
    if names_file is not None:
        flags["names"] = load_names(names_file)
    for key in ("fabric", "spine_grouping"):
        if flags.get(key):
            flags[key] = str(flags[key]).lower()
    if config and stack:
        raise SpecError("--config/--stack", "give one of them, not both")
    if stack:
        return spec_of_stack(stack, flags)
    if config:
        remember_config(config, {k for k, v in flags.items() if v is not None})
        return spec_from_file(config, **flags)
    return validate_spec({}, **flags)


def spec_of_stack(stack: str, flags: dict[str, Any]) -> FabricSpec:
    """The spec in stack ``stack``'s config as Pulumi's backend holds it (flags win)."""
    from fabric_stack.adapters.pulumi.stack_config import pulumi_project_dir, read_stack_config
    from fabric_stack.files.config import with_names_file
    from fabric_stack.files.stack_spec import stack_config_values

    pdir = pulumi_project_dir()
    data, _ = split_stack_config(stack_config_values(read_stack_config(stack, pdir)))
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # later-stage spec errors name the stack-config key (see located)
        ctx.meta[_STACK_KEY] = {k for k, v in flags.items() if v is not None}
    try:
        return validate_spec(with_names_file(data, pdir), **flags)
    except SpecError as exc:
        raise stack_config_error(exc) from None


_CONFIG_KEY = "fabric_stack.files.config"
_FLAGS_KEY = "fabric_stack.files.config.flags"
_STACK_KEY = "fabric_stack.files.config.stack"


def remember_config(path: Path, flagged: set[str] | None = None) -> None:
    """Note the spec file of this run (and the spec keys flags set), so later-stage spec
    errors can name the file and the key as it spells it."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_CONFIG_KEY] = str(path)
        ctx.meta[_FLAGS_KEY] = flagged or set()


def located(exc: FabricStackError) -> str:
    """The error's line; a spec error from sizing (after the file was read) names the file,
    and a key a stack's config set (``--stack``, or a Pulumi.<stack>.yaml as ``--config``)
    as stack config spells it (``fabric:uplinkGbps``), as the Pulumi program does."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or not isinstance(exc, SpecError):
        return exc.message
    config = ctx.meta.get(_CONFIG_KEY)
    head = field_head(exc)
    spec_key = head in FabricSpec.model_fields  # not a command's own flag (--fail …)
    if config and not exc.message.startswith(config):
        flagged = ctx.meta.get(_FLAGS_KEY, set())
        if spec_key and head not in flagged and _is_stack_path(config):
            exc = stack_config_error(exc)
        return f"{config}: {exc.message}"
    flagged = ctx.meta.get(_STACK_KEY)
    if flagged is not None and spec_key and head not in flagged:
        return stack_config_error(exc).message
    return exc.message


def _is_stack_path(path: str) -> bool:
    """Whether the spec file ``path`` is a stack file (read again: only on an error's path)."""
    try:
        return is_stack_file(load_yaml(path))
    except FabricStackError:
        return False


OUT_RULE = (
    "--out FILE writes one file, --out-dir DIR a directory of files (both atomically); "
    "without them a command prints to stdout."
)
"""The one rule for output options, stated in ``fabric-stack --help``."""


def out_file_option(help: str, required: bool = False) -> Callable[[F], F]:
    """``--out FILE``: the one file a command writes (see :data:`OUT_RULE`)."""
    return click.option(
        "--out",
        "out",
        required=required,
        type=NonEmptyPath(dir_okay=False, path_type=Path),
        metavar="FILE",
        help=help,
    )


SIZES_HELP = "Message sizes, binary units. [default: 8K,64K,1M,16M,256M,1G,8G,16G]"
"""`--sizes` of `estimate` and `compare` (the same message sizes, the same text)."""

sharp_option = click.option(
    "--sharp/--no-sharp",
    "sharp",
    default=None,
    help="SHARP in-network reduction on an InfiniBand switch that has it (Quantum-2: "
    "SHARPv3). [default: the spec's infiniband.sharp]",
)
"""`--sharp/--no-sharp` of `estimate` and `compare`: None keeps the spec's setting."""

NVLINK_GBS_HELP = (
    "NVLink per GPU, bidirectional GB/s, for a server without a published figure "
    "(e.g. 600 for A100; disables NVLS). [default: from the node profile]"
)
"""``--nvlink-gbs`` help, shared by every command that estimates collectives."""

MAX_NVLINK_GBS = 100_000.0
"""Largest ``--nvlink-gbs``: over fifty times NVLink 5's 1,800 GB/s per GPU (the B200 figure
in :mod:`fabric_stack.hardware.nvlink`, with its source); above it the figure is a typo, and
NaN or infinity is never one."""


def out_dir_option(help: str, required: bool = False) -> Callable[[F], F]:
    """``--out-dir DIR``: the directory a command writes its files into; ``--out`` still
    works (hidden), as it was spelled before the rule (:data:`OUT_RULE`)."""
    return click.option(
        "--out-dir",
        "--out",
        "out_dir",
        cls=AliasedOption,
        hidden_aliases=("--out",),
        required=required,
        type=NonEmptyPath(file_okay=False, path_type=Path),
        metavar="DIR",
        help=help,
    )


def format_option(fn: F) -> F:
    """``--format table|json|markdown``."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="table",
        show_default=True,
        help="table for people, json for machines, markdown for PRs.",
    )(fn)


def console() -> Console:
    """Console for rich output (respects NO_COLOR / non-tty)."""
    return Console(highlight=False, soft_wrap=False)


def echo_json(data: Any) -> None:
    """Print JSON to stdout (stable key order as produced)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def emit_formatted(
    data: Any,
    fmt: str,
    out: Path | None,
    renderers: tuple[Callable[[Any], Any], ...],
    width: int = 110,
) -> None:
    """Print or write ``data`` as ``fmt`` (table, json, markdown or svg) through
    ``renderers`` = (to JSON data, to Markdown, to SVG, to a rich table); a table with no
    ``out`` goes to the terminal, anything else to ``out`` (atomically) or stdout."""
    as_json, as_md, as_svg, as_table = renderers
    if fmt == "table" and out is None:
        console().print(as_table(data))
        return
    if fmt == "json":
        text = json.dumps(as_json(data), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "markdown":
        text = as_md(data)
    elif fmt == "svg":
        text = as_svg(data)
    else:
        from io import StringIO

        buf = StringIO()
        Console(file=buf, width=width, highlight=False).print(as_table(data))
        text = buf.getvalue()
    if out is None:
        click.echo(text, nl=False)
    else:
        from fabric_stack.files.outputs import write_file

        write_file(out, text)


def handle_errors(fn: F) -> F:
    """Turn FabricStackError into one line on stderr and exit status 2, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except FabricStackError as exc:
            click.echo(f"error: {one_line(located(exc))}", err=True)
            sys.exit(exc.exit_code)
        except BrokenPipeError:  # e.g. `fabric-stack cabling | head`
            sys.exit(0)
        except OSError as exc:  # last resort: the file layers name their paths themselves
            where = exc.filename if exc.filename is not None else "fabric-stack"
            click.echo(f"error: {one_line(f'{where}: {exc.strerror or exc}')}", err=True)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


__all__ = [
    "FORMATS",
    "NVLINK_GBS_HELP",
    "OUT_RULE",
    "InputFileError",
    "console",
    "echo_json",
    "format_option",
    "handle_errors",
    "load_spec",
    "load_yaml",
    "out_dir_option",
    "out_file_option",
    "project_dir",
    "spec_options",
    "split_stack_config",
]
