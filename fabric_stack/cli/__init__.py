"""The `fabric-stack` command line: a thin click + rich layer over the pipeline.

Each command lives in its own module; this package only assembles the group.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from fabric_stack import __version__
from fabric_stack.cli import console, signals
from fabric_stack.cli.params import OneLineUsageError, one_line_usage
from fabric_stack.files import outputs

# (module, attribute) of every command, in --help order. Modules are imported
# lazily so `fabric-stack size` does not pay for Pulumi or networkx imports.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "size": ("size", "size_cmd", "Size the fabric and print the sizing card."),
    "guide": ("size", "guide_cmd", "Sizing card with fabric comparison, CNI and practices."),
    "cabling": ("cabling", "cabling_cmd", "Cabling plan: CSV, JSON, ibdiagnet .topo, UFM P2P."),
    "bom": ("cabling", "bom_cmd", "Bill of materials: switches, cables, optics, power."),
    "diagram": ("cabling", "diagram_cmd", "Draw the fabric as an SVG."),
    "verify": ("cabling", "verify_cmd", "Check the port-level plan against the sizing."),
    "layout": (
        "layout",
        "layout_cmd",
        "Physical plant: rack budgets, cable reach, run list per rack, rack elevations.",
    ),
    "whatif": (
        "whatif",
        "whatif_cmd",
        "What failures or drains do: bisection, isolation, ECMP, N−1.",
    ),
    "estimate": ("whatif", "estimate_cmd", "Estimate NCCL collective bandwidth on the fabric."),
    "compare": (
        "compare",
        "compare_cmd",
        "InfiniBand or RoCEv2: the same cluster on each, side by side, and a recommendation.",
    ),
    "accept": (
        "accept",
        "accept_cmd",
        "Judge nccl-tests/perftest results against the plan; find the slow rail or setting.",
    ),
    "check": ("check", "check_cmd", "Run the policy rules on the plan (exit 1 on mandatory)."),
    "plan": ("stack", "plan_cmd", "Preview the Pulumi stack: switches and cables to add, by role."),
    "diff": (
        "diff",
        "diff_cmd",
        "Config and address changes between two specs (what growth touches).",
    ),
    "apply": ("stack", "apply_cmd", "Apply the Pulumi stack: record the fabric in the inventory."),
    "recover": ("stack", "recover_cmd", "Bring a stack back after a killed `up`."),
    "stack": (
        "stack_spec",
        "stack_group",
        "Make a Pulumi stack from a spec file (init), or a spec file from a stack (export).",
    ),
    "env": ("env", "env_cmd", "Print the Pulumi environment (backend, passphrase) for `pulumi`."),
    "inventory": ("inventory", "inventory_cmd", "List what `pulumi up` recorded in the inventory."),
    "drift": ("drift", "drift_cmd", "Compare the plan with the inventory and the live fabric."),
    "adopt": ("adopt", "adopt_cmd", "Place an existing fabric on the plan; write its names file."),
    "twin": (
        "twin",
        "twin_cmd",
        "Digital twin of the plan from real daemons (ibsim + OpenSM, or lldpd): needs root.",
    ),
    "render": (
        "render",
        "render_cmd",
        "Render deployment artifacts: QoS, NVUE, OpenSM, NCCL, K8s, report.",
    ),
}


class LazyGroup(click.Group):
    """Click group that imports a command's module only when it runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f".{entry[0]}", __name__)
        cmd: click.Command = getattr(module, entry[1])
        return cmd

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the group's own flags; a usage error is one line (see cli/params.py)."""
        try:
            return super().parse_args(ctx, args)
        except OneLineUsageError:
            raise
        except click.UsageError as exc:
            raise one_line_usage(exc) from None

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; usage errors of every subcommand are one line, and SIGINT or
        SIGTERM ends it with one line and exit 130/143 (see cli/signals.py)."""
        since = len(outputs.WRITTEN)
        # The try is outside both blocks: a signal while the output streams are set up or
        # restored (the handler is already in place) is the same one line, not a traceback.
        try:
            with console.sane_output(), signals.handled():
                return super().invoke(ctx)
        except OneLineUsageError:
            raise
        except click.UsageError as exc:
            raise one_line_usage(exc) from None
        except signals.Interrupted as exc:
            click.echo(signals.summary(since), err=True)
            sys.exit(exc.exit_code)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_) for name, (_, _, help_) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="fabric-stack")
def main() -> None:
    """fabric-stack: GPU-cluster fabrics as code.

    Size a rail-optimized leaf/spine(/core) fabric from cluster intent, export the
    port-level cabling plan, check it against policy, and manage it with Pulumi.

    \b
    Start here:
      fabric-stack size                 the seed cluster's sizing card
      fabric-stack size --help          every spec flag, with defaults

    \b
    One spelling per concept, in every command:
      --out FILE        writes one file; --out-dir DIR a directory of files (atomically);
                        without them a command prints to stdout
      --stack NAME      a Pulumi stack (plan/apply/recover: the one to run, else
                        $PULUMI_STACK, else the selected one; elsewhere: its config)
      --netbox URL      a live NetBox, with --netbox-token-file FILE (or NETBOX_TOKEN)
      --inventory URL   sqlite:///PATH, postgresql://… or netbox+https://HOST

    \b
    Servers are bounded: FABRIC_STACK_NETBOX_TIMEOUT (seconds one NetBox GET may take,
    default 60; a write 120 more), FABRIC_STACK_NETBOX_DEADLINE (seconds a command may spend
    on NetBox, default 1800), FABRIC_STACK_PG_CONNECT_TIMEOUT (default 10),
    FABRIC_STACK_PG_STATEMENT_TIMEOUT (per read, on the server, default 45) and
    FABRIC_STACK_PG_QUERY_TIMEOUT (per round trip, on the client, default 60).
    """
