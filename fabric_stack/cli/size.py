"""`fabric-stack size` and `fabric-stack guide`."""

from __future__ import annotations

from typing import Any

import click

from fabric_stack.cli.common import (
    console,
    echo_json,
    format_option,
    handle_errors,
    load_spec,
    spec_options,
)
from fabric_stack.sizing.size import SizingPlan, size_fabric
from fabric_stack.views.card import card_json, card_markdown, render_card


@click.command("size")
@spec_options
@format_option
@click.option(
    "--explain", is_flag=True, help="Add the fabric comparison, CNI table and practice cards."
)
@handle_errors
def size_cmd(fmt: str, explain: bool, **kwargs: Any) -> None:
    """Size the compute fabric and print the sizing card.

    \b
    Examples:
      fabric-stack size                                  # the seed card: 128 GPUs, QM9700, 1:1
      fabric-stack size --gpus 1024 --format json
      fabric-stack size --fabric roce --switch sn5600 --gpus 4096
      fabric-stack size --config cluster.yaml --explain
    """
    plan = size_fabric(load_spec(kwargs))
    rec = derived_recommendation(plan) if explain else None
    if fmt == "json":
        echo_json(card_json(plan, explain, rec))
    elif fmt == "markdown":
        click.echo(card_markdown(plan, explain, rec), nl=False)
    else:
        console().print(render_card(plan, explain, rec))


def derived_recommendation(plan: SizingPlan) -> str | None:
    """The paragraph `compare` derives for this cluster (default candidates and weights),
    or None when a candidate cannot be planned (no catalog switch for the NIC speed):
    the card then keeps the fixed sentence."""
    from fabric_stack.errors import FabricStackError
    from fabric_stack.pipeline import paused_gc
    from fabric_stack.views.options import compare_fabrics

    try:
        with paused_gc():
            return compare_fabrics(plan.spec).recommendation.paragraph
    except FabricStackError:
        return None


@click.command("guide")
@spec_options
@format_option
@handle_errors
def guide_cmd(fmt: str, **kwargs: Any) -> None:
    """The sizing card with full guidance (same as `size --explain`)."""
    plan = size_fabric(load_spec(kwargs))
    rec = derived_recommendation(plan)
    if fmt == "json":
        echo_json(card_json(plan, True, rec))
    elif fmt == "markdown":
        click.echo(card_markdown(plan, True, rec), nl=False)
    else:
        console().print(render_card(plan, True, rec))
