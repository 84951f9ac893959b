"""`fabric-stack check`: the policy rules without the Pulumi engine (CI gate)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from fabric_stack.cli.common import (
    console,
    echo_json,
    format_option,
    handle_errors,
    load_spec,
    spec_options,
)
from fabric_stack.cli.params import NonEmptyPath
from fabric_stack.pipeline import paused_gc, run_pipeline
from fabric_stack.policy import (
    RULES,
    PolicyConfig,
    evaluate,
    load_policy_config,
    policy_config_schema,
)
from fabric_stack.views.policy_report import (
    render_report,
    report_json,
    report_markdown,
    rules_catalog,
)


def rule_list() -> list[str]:
    """The rules as `check --help` lists them: id, title, where it applies.

    Generated from :data:`~fabric_stack.policy.RULES` (nothing here is kept by hand).
    """
    width = max(len(r.id) for r in RULES.values()) + 2
    lines: list[str] = []
    for rule in RULES.values():
        lines.append(f"  {rule.id:<{width}} {rule.title}")
        lines.append(f"  {'':<{width}} applies to: {rule.applies.describe()}")
    return lines


CHECK_HELP = "\n".join(
    [
        "Check the planned fabric against the policy rules; exit 1 on a mandatory violation.",
        "",
        "Runs the same rules as the CrossGuard pack (policies/) on the plan derived "
        "from the spec; a rule that does not apply to the fabric is skipped, with the "
        "reason, by both.",
        "",
        "\b",
        "Rules:",
        *rule_list(),
        "",
        "Exit status: 0 clean (advisory violations allowed), 1 a mandatory rule is "
        "violated, 2 bad input (spec, stack or policy config).",
        "",
        "\b",
        "Examples:",
        "  fabric-stack check                                   # the seed cluster: clean",
        "  fabric-stack check --oversubscription 2:1            # fails oversubscription-1-to-1",
        "  fabric-stack check --stack prod --format markdown    # PR comment in CI",
        "  fabric-stack check --config cluster.yaml --format json",
        '  fabric-stack check --policy-config policy.yaml       # e.g. max_ratio "2:1"',
        "  fabric-stack check --list-rules",
    ]
)
"""`fabric-stack check --help`: the rule list comes from the registry."""


@click.command("check", help=CHECK_HELP)
@spec_options
@format_option
@click.option(
    "--policy-config",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    help="Rule levels and thresholds (YAML/JSON, same shape as pulumi --policy-pack-config).",
)
@click.option(
    "--max-rows",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Violations shown per rule in table/markdown (0 = all; json always has all).",
)
@click.option("--list-rules", is_flag=True, help="Print the rules, their levels and settings.")
@click.option("--config-schema", is_flag=True, help="Print the JSON schema of --policy-config.")
@handle_errors
def check_cmd(
    fmt: str,
    policy_config: Path | None,
    max_rows: int,
    list_rules: bool,
    config_schema: bool,
    **kwargs: Any,
) -> None:
    """Check the planned fabric against the policy rules (help: CHECK_HELP)."""
    if config_schema:
        echo_json(policy_config_schema())
        return
    if list_rules:
        _print_rules(fmt)
        return
    spec = load_spec(kwargs)
    cfg = load_policy_config(policy_config) if policy_config else PolicyConfig()
    with paused_gc():  # see fabric_stack.pipeline
        intent = run_pipeline(spec).intent
        report = evaluate(intent, cfg)
    if fmt == "json":
        echo_json(report_json(report, intent.summary))
    elif fmt == "markdown":
        click.echo(report_markdown(report, intent.summary, max_rows), nl=False)
    else:
        console().print(render_report(report, intent.summary, max_rows))
    sys.exit(1 if report.blocking else 0)


def _print_rules(fmt: str) -> None:
    rules = rules_catalog()
    if fmt == "json":
        echo_json(rules)
        return
    if fmt == "markdown":
        lines = ["| Rule | Default level | What it checks | Settings |", "|---|---|---|---|"]
        for r in rules:
            settings = ", ".join(f"`{k}` ({v['default']})" for k, v in r["settings"].items())
            lines.append(
                f"| `{r['id']}` | {r['default_level']} | {r['description']} | {settings or '-'} |"
            )
        click.echo("\n".join(lines))
        return
    t = Table(title="policy rules", title_justify="left")
    t.add_column("rule", no_wrap=True)
    t.add_column("default")
    t.add_column("what it checks")
    t.add_column("settings")
    for r in rules:
        settings = "\n".join(f"{k} = {v['default']}" for k, v in r["settings"].items())
        t.add_row(r["id"], r["default_level"], r["description"], settings or "-")
    console().print(t)
