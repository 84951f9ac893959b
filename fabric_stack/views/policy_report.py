"""Renderings of a :class:`~fabric_stack.policy.models.PolicyReport`: rich, Markdown, JSON.

JSON carries every violation; the table and the Markdown (a PR comment) show at
most ``max_rows`` per rule so a badly oversubscribed 32k-GPU fabric still gives
a readable comment (GitHub caps comments at 65,536 characters).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.intent.model import FabricSummary
from fabric_stack.policy.models import PolicyReport, RuleResult, Violation
from fabric_stack.policy.registry import RULES

_MD_STATUS = {
    "pass": "✅ pass",
    "fail": "❌ fail",
    "skipped": "➖ skipped",
    "disabled": "➖ disabled",
}
_RICH_STATUS = {
    "pass": "[green]pass[/]",
    "fail": "[bold red]fail[/]",
    "skipped": "[dim]skipped[/]",
    "disabled": "[dim]disabled[/]",
}


def _by_rule(report: PolicyReport) -> dict[str, list[Violation]]:
    out: dict[str, list[Violation]] = {}
    for v in report.violations:
        out.setdefault(v.rule, []).append(v)
    return out


def _failed(report: PolicyReport) -> Iterator[tuple[RuleResult, list[Violation]]]:
    groups = _by_rule(report)
    for r in report.rules:
        if groups.get(r.id):
            yield r, groups[r.id]


def headline(report: PolicyReport) -> str:
    """'FAIL: 8 mandatory violations, 0 advisory' / 'PASS: …' / 'WARN: …'."""
    m, a = report.counts.get("mandatory", 0), report.counts.get("advisory", 0)
    ran = sum(1 for r in report.rules if r.status in ("pass", "fail"))
    if report.blocking:
        return f"FAIL: {m} mandatory violation{'s' * (m != 1)}, {a} advisory ({ran} rules run)"
    if a:
        return f"WARN: {a} advisory violation{'s' * (a != 1)}, no mandatory ones ({ran} rules run)"
    return f"PASS: no violations ({ran} rules run)"


def _context(summary: FabricSummary) -> str:
    return (
        f"{summary.gpus:,} GPUs, {summary.fabric}, {summary.tiers} tiers, "
        f"oversubscription {summary.oversubscription}"
    )


def report_json(report: PolicyReport, summary: FabricSummary) -> dict[str, Any]:
    """``{"summary": {...}, "violations": [...]}``: every violation, rule outcomes, counts."""
    return {
        "summary": {
            "fabric": report.fabric,
            "technology": summary.fabric,
            "gpus": summary.gpus,
            "tiers": summary.tiers,
            "oversubscription": summary.oversubscription,
            "status": report.status,
            "exit_code": 1 if report.blocking else 0,
            "violations": len(report.violations),
            "mandatory": report.counts.get("mandatory", 0),
            "advisory": report.counts.get("advisory", 0),
            "rules": [r.model_dump(mode="json") for r in report.rules],
        },
        "violations": [v.model_dump(mode="json") for v in report.violations],
    }


DITTO = "〃"
"""Shown in the fix column when a row's fix repeats the row above (e.g. one re-size fixes all)."""


def _fixes(vs: list[Violation]) -> list[str]:
    out: list[str] = []
    for i, v in enumerate(vs):
        out.append(DITTO if i and v.fix == vs[i - 1].fix else v.fix)
    return out


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def report_markdown(report: PolicyReport, summary: FabricSummary, max_rows: int = 20) -> str:
    """A PR comment: verdict, per-rule outcome, and a table of violations per failing rule."""
    icon = {"fail": "❌", "warn": "⚠️", "pass": "✅"}[report.status]
    lines = [
        f"## {icon} fabric-stack check: {report.fabric}",
        "",
        f"**{headline(report)}** — {_context(summary)}.",
        "",
        "| Rule | Level | Result | Violations |",
        "|---|---|---|---:|",
    ]
    for r in report.rules:
        result = _MD_STATUS[r.status]
        if r.reason:
            result += f" ({_md(r.reason)})"
        lines.append(f"| `{r.id}` | {r.level} | {result} | {r.violations} |")
    for r, vs in _failed(report):
        rule = RULES[r.id]
        lines += [
            "",
            f"### {'❌' if r.level == 'mandatory' else '⚠️'} `{r.id}` — {rule.title} "
            f"({r.level}, {len(vs)})",
            "",
            "| Resource | Measured | Allowed | Fix |",
            "|---|---|---|---|",
        ]
        shown = vs if max_rows <= 0 else vs[:max_rows]
        for v, fix in zip(shown, _fixes(shown), strict=True):
            lines.append(
                f"| `{_md(v.resource)}` | {_md(v.measured)} | {_md(v.allowed)} | {_md(fix)} |"
            )
        if len(shown) < len(vs):
            lines.append(f"| … {len(vs) - len(shown)} more | | | see `--format json` |")
        lines += ["", "```text", *(v.message for v in shown[:3]), "```"]
    return "\n".join(lines) + "\n"


def render_report(
    report: PolicyReport, summary: FabricSummary, max_rows: int = 20
) -> RenderableType:
    """Rich output: one table per failing rule (resource, measured, allowed, fix), then
    every rule's outcome and the verdict."""
    parts: list[RenderableType] = [
        Text(f"fabric-stack check: {report.fabric} ({_context(summary)})", style="bold"),
        Text(""),
    ]
    for r, vs in _failed(report):
        style = "bold red" if r.level == "mandatory" else "bold yellow"
        t = Table(
            title=f"{r.id} — {RULES[r.id].title} ({r.level}, {len(vs)})",
            title_style=style,
            title_justify="left",
            box=box.SIMPLE_HEAD,
            show_lines=False,
            expand=True,
        )
        t.add_column("resource", no_wrap=True)
        t.add_column("measured")
        t.add_column("allowed")
        t.add_column("fix", ratio=2)
        shown = vs if max_rows <= 0 else vs[:max_rows]
        for v, fix in zip(shown, _fixes(shown), strict=True):
            t.add_row(v.resource, v.measured, v.allowed, fix)
        if len(shown) < len(vs):
            t.add_row(f"… {len(vs) - len(shown)} more", "", "", "see --format json")
        parts += [t, Text(vs[0].message, style="dim"), Text("")]
    rules = Table(title="rules", title_justify="left", box=box.SIMPLE_HEAD)
    rules.add_column("rule", no_wrap=True)
    rules.add_column("level")
    rules.add_column("result")
    rules.add_column("violations", justify="right")
    for r in report.rules:
        rules.add_row(r.id, r.level, _RICH_STATUS[r.status], str(r.violations))
    # Skip reasons go below the table: a fifth column would wrap them letter by
    # letter on an 80-column terminal.
    notes = [f"{r.id}: {r.reason}" for r in report.rules if r.reason]
    style = {"fail": "bold red", "warn": "bold yellow", "pass": "bold green"}[report.status]
    parts.append(rules)
    parts += [Text(n, style="dim") for n in notes]
    parts.append(Text(headline(report), style=style))
    return Group(*parts)


def rules_catalog() -> list[dict[str, Any]]:
    """Every rule's metadata (for ``fabric-stack check --list-rules``)."""
    return [
        {
            "id": r.id,
            "title": r.title,
            "default_level": r.default_level,
            "description": r.description,
            "remediation": r.remediation,
            "settings": {
                k: {"default": v.get("default"), "description": v.get("description", "")}
                for k, v in r.config_schema().items()
            },
        }
        for r in RULES.values()
    ]
