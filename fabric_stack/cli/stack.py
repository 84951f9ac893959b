"""`fabric-stack plan`, `apply` and `recover`: the Pulumi stack via the Automation API.

They run on the stack the user chose (``--stack``, else ``$PULUMI_STACK``, else the one
``pulumi stack select`` selected) and never create or select one: see
:mod:`fabric_stack.adapters.pulumi.stacks`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from fabric_stack.cli.common import console, echo_json, format_option, handle_errors
from fabric_stack.cli.params import StackName
from fabric_stack.views.changes import changes_json, changes_markdown, render_changes

F = TypeVar("F", bound=Callable[..., Any])


def project_dir() -> Path:
    """The Pulumi project: the nearest Pulumi.yaml upwards, else the fabric-stack checkout,
    so these commands run from any directory (issue #48)."""
    from fabric_stack.adapters.pulumi.stack_config import pulumi_project_dir

    return pulumi_project_dir()


STACK_HELP = (
    "Pulumi stack to {verb} [default: $PULUMI_STACK, else the selected stack]. "
    "Never created: `pulumi stack init NAME` makes one."
)


def _stack_option(verb: str) -> Callable[[F], F]:
    """``--stack NAME`` (no default: see :func:`_chosen`)."""
    return click.option(
        "--stack",
        type=StackName(),
        default=None,
        help=STACK_HELP.format(verb=verb),
    )


def _chosen(stack: str | None) -> str:
    """The stack to run on (exit 2 with one line when none is chosen or it does not exist)."""
    from fabric_stack.adapters.pulumi.ops import chosen_stack

    return chosen_stack(stack, project_dir())


def _check_branch(stack: str, create: bool) -> None:
    """Exit 2 with one line for a bad ``fabric:netboxBranch`` (see :mod:`.stack_branch`)."""
    from fabric_stack.cli.stack_branch import check_stack_branch

    check_stack_branch(stack, project_dir(), create)


def _progress(err: Console, verb: str):  # type: ignore[no-untyped-def]
    status = err.status(f"{verb}…")

    def tick(n: int, name: str) -> None:
        status.update(f"{verb}… {n} resources ({name})")

    return status, tick


def _run_or_exit(verb: str, fmt: str, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """Run a stack operation with a progress line; on refusal print what was seen, exit 1."""
    from fabric_stack.adapters.pulumi.ops import PreviewFailed

    status, tick = _progress(Console(stderr=True), verb)
    try:
        with status:
            return fn(*args, progress=tick, **kwargs)
    except PreviewFailed as exc:
        _emit(exc.summary, fmt)
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(1)


def _emit(summary, fmt: str) -> None:  # type: ignore[no-untyped-def]
    if fmt == "json":
        echo_json(changes_json(summary))
    elif fmt == "markdown":
        click.echo(changes_markdown(summary), nl=False)
    else:
        console().print(render_changes(summary))


@click.command("plan")
@_stack_option("preview")
@click.option("--no-policy", is_flag=True, help="Skip the CrossGuard pack in policies/.")
@click.option(
    "--estimate", is_flag=True, help="Add the full-cluster all-reduce estimate before and after."
)
@format_option
@handle_errors
def plan_cmd(stack: str | None, no_policy: bool, estimate: bool, fmt: str) -> None:
    """Preview the stack (`pulumi preview` + policy pack) and summarize it by role.

    Shows the switches to add or remove by model, cables by role and by part
    as `bom` orders them (added, re-patched, removed), the ports touched on
    existing switches, the devices whose configuration changes (lines
    added/removed: BGP, ports, QoS, SM) and every allocation that moves (none
    on a pure growth).
    Exit 0 when the preview succeeds, 1 when a policy or the program refuses it.

    \b
    Examples:
      pulumi config set fabric:gpus 512        # a capacity change (selected stack)
      fabric-stack plan                        # what it adds, by role
      fabric-stack plan --stack prod           # another stack (it must exist)
      fabric-stack plan --format markdown      # paste into the pull request
      fabric-stack plan --estimate             # and what it does to all-reduce
    """
    from fabric_stack.adapters.pulumi.ops import preview
    from fabric_stack.artifacts.growth import with_growth

    stack = _chosen(stack)
    _check_branch(stack, create=False)
    summary = _run_or_exit(
        "previewing", fmt, preview, stack, project_dir(), use_policy=not no_policy
    )
    # Both sides come from the Fabric record's specs: the config and address
    # changes are derived, like the stack itself, so no history is kept.
    summary = with_growth(summary, project_dir())
    if estimate:
        from fabric_stack.cli.plan_estimate import emit_with_estimate

        emit_with_estimate(summary, fmt, _emit, changes_json)
        return
    _emit(summary, fmt)


@click.command("apply")
@_stack_option("update")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--no-policy", is_flag=True, help="Skip the CrossGuard pack in policies/.")
@format_option
@handle_errors
def apply_cmd(stack: str | None, yes: bool, no_policy: bool, fmt: str) -> None:
    """Preview, confirm, then `pulumi up`: record the planned fabric in the inventory.

    \b
    Examples:
      fabric-stack apply                  # shows the plan, asks, applies
      fabric-stack apply --yes --format json
    """
    from fabric_stack.adapters.pulumi.ops import PreviewFailed, preview, up

    err = Console(stderr=True)
    pdir = project_dir()
    stack = _chosen(stack)
    if not yes:
        if not sys.stdin.isatty():
            click.echo(
                "error: apply needs confirmation; pass --yes when not on a terminal", err=True
            )
            sys.exit(2)
        status, tick = _progress(err, "previewing")
        try:
            with status:
                summary = preview(stack, pdir, use_policy=not no_policy, progress=tick)
        except PreviewFailed as exc:
            _emit(exc.summary, fmt)
            click.echo(f"error: {exc.message}", err=True)
            sys.exit(1)
        _emit(summary, "table")
        if not summary.has_changes:
            return
        click.confirm("Apply these changes?", abort=True)
    _check_branch(stack, create=True)
    status, tick = _progress(err, "updating")
    try:
        with status:
            done = up(stack, pdir, use_policy=not no_policy, progress=tick)
    except PreviewFailed as exc:
        _emit(exc.summary, fmt)
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(1)
    _emit(done, fmt)


@click.command("recover")
@_stack_option("recover")
@handle_errors
def recover_cmd(stack: str | None) -> None:
    """Bring a stack back after an `up` was killed (crash, OOM, Ctrl-\\).

    Repairs file:// state files a kill leaves torn (an empty .attrs sidecar;
    a checkpoint that is not JSON comes back from its backup), clears the stale
    lock, refreshes every record from the inventory and clears unfinished creates.
    Then run `fabric-stack apply` to finish: records written before the kill are
    matched, not duplicated.

    \b
    Example:
      fabric-stack recover --stack prod && fabric-stack apply --stack prod --yes
    """
    from fabric_stack.adapters.pulumi.ops import recover

    stack = _chosen(stack)
    for step in recover(stack, project_dir()):
        click.echo(f"✓ {step}")
    click.echo(f"next: fabric-stack apply --stack {stack}")
