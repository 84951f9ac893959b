"""Drift reports for people: a rich table grouped by switch and kind, and Markdown for a ticket."""

from __future__ import annotations

from itertools import groupby

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.drift.coverage import Coverage, low_coverage_text
from fabric_stack.drift.model import KINDS, DriftReport, Finding, FindingKind

_STYLE: dict[FindingKind, str] = {
    "missing_link": "red",
    "unexpected_link": "magenta",
    "wrong_peer": "yellow",
    "speed_mismatch": "cyan",
    "missing_device": "bold red",
    "unexpected_device": "bold magenta",
    "attribute_changed": "blue",
    "link_up_no_neighbor": "cyan",
    "unknown_port": "bold yellow",
    "plan_mismatch": "dim",
}


def _group(f: Finding) -> str:
    return f.switch or "(servers)"


def _where(f: Finding) -> str:
    parts = []
    if f.rail:
        parts.append(f"rail {f.rail}")
    if f.su:
        parts.append(f"SU {f.su}")
    return ", ".join(parts)


def headline(report: DriftReport) -> str:
    """``8 findings: 1 missing_link, …`` or ``no drift``."""
    total = report.summary.get("total", 0)
    if not total:
        return "no drift: every compared cable and device matches the plan"
    counts = ", ".join(f"{report.summary[k]} {k}" for k in KINDS if report.summary.get(k))
    return f"{total} finding{'s' if total != 1 else ''}: {counts}"


def coverage_line(name: str, c: Coverage) -> str:
    """``compute: devices 20 planned, 20 seen, 20 matched; links 64 planned, …``."""
    return (
        f"{name}: devices {c.planned_devices} planned, {c.seen_devices} seen, "
        f"{c.matched_devices} matched; links {c.planned_links} planned, {c.seen_links} seen, "
        f"{c.matched_links} matched"
    )


def coverage_lines(report: DriftReport) -> list[str]:
    """The scope and one coverage line per network (empty without coverage)."""
    c = report.coverage
    if c is None:
        return []
    out = [f"scope: {', '.join(c.networks) or 'none'} ({c.scope})"]
    out += [coverage_line(net, nc) for net, nc in c.by_network.items()]
    return out


DEFAULT_MAX_ROWS = 50
"""Findings a table or Markdown report shows before its "N more" line (JSON has all)."""

FINDING_MIN_WIDTH = 32
"""The finding column never gets narrower than this: on an 80-column terminal the other
columns give way (their text folds) instead of squeezing the sentence to four letters."""


NAME_MAX_WIDTH = 19
"""Widest the switch and kind columns get (``link_up_no_neighbor``); a longer name folds."""


def _more(hidden: int) -> str:
    return (
        f"… {hidden:,} more finding{'s' if hidden != 1 else ''} "
        "(--max-rows 0 shows all; --format json has every one)"
    )


def _shown(report: DriftReport, max_rows: int) -> tuple[list[Finding], int]:
    """The findings to print and how many are left out (``max_rows`` 0: all)."""
    findings = list(report.findings)
    if max_rows <= 0 or len(findings) <= max_rows:
        return findings, 0
    return findings[:max_rows], len(findings) - max_rows


def render_table(report: DriftReport, max_rows: int = DEFAULT_MAX_ROWS) -> RenderableType:
    """Rich renderable: a low-coverage warning, sources, coverage, the findings (at most
    ``max_rows``, then a "N more" line), then notes."""
    parts: list[RenderableType] = []
    if report.coverage is not None and report.coverage.low:
        parts.append(Text(low_coverage_text(report.coverage), style="bold red"))
    for s in report.sources:
        parts.append(
            Text(f"{s.source}: {s.origin} ({s.links} links, {s.devices} devices)", style="dim")
        )
    parts.extend(Text(line, style="dim") for line in coverage_lines(report))
    parts.append(Text(headline(report), style="bold green" if report.clean else "bold"))
    shown, hidden = _shown(report, max_rows)
    if shown:
        # Names and kinds fold rather than being cut; where (rail, SU) goes under the
        # kind, so the finding keeps its width on a narrow terminal.
        table = Table(show_lines=False, expand=False, pad_edge=False)
        table.add_column("Switch", overflow="fold", max_width=NAME_MAX_WIDTH)
        table.add_column("Kind", overflow="fold", max_width=NAME_MAX_WIDTH)
        table.add_column("Finding and fix", ratio=1, min_width=FINDING_MIN_WIDTH)
        for gi, (group, items) in enumerate(groupby(shown, key=_group)):
            if gi:
                table.add_section()
            for i, f in enumerate(items):
                kind = Text(f.kind, style=_STYLE.get(f.kind, ""))
                for extra in (f.cause, _where(f)):
                    if extra:
                        kind.append(f"\n{extra}", style="dim")
                body = Text(f.summary)
                body.append(f"\n→ {f.fix}", style="green")
                if len(report.sources) > 1:
                    body.append(f"\n[{f.source}]", style="dim")
                table.add_row(group if i == 0 else "", kind, body)
        parts.append(table)
    if hidden:
        parts.append(Text(_more(hidden), style="bold"))
    notes = [n for s in report.sources for n in s.notes]
    if notes:
        parts.append(Text("Notes:", style="dim"))
        parts.extend(Text(f"  • {n}", style="dim") for n in notes)
    return Group(*parts)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(report: DriftReport, max_rows: int = DEFAULT_MAX_ROWS) -> str:
    """Markdown for a ticket: summary, sources, then a task list per switch (at most
    ``max_rows`` findings, then a "N more" line)."""
    out = ["# Fabric drift report", ""]
    c = report.coverage
    if c is not None and c.low:
        out += [f"> **{_md(low_coverage_text(c))}**", ""]
    out += [f"**{headline(report)}**", ""]
    out += ["| Source | Read from | Links | Devices |", "|---|---|---:|---:|"]
    for s in report.sources:
        out.append(f"| {s.source} | `{s.origin}` | {s.links} | {s.devices} |")
    out.append("")
    if c is not None:
        out += [f"Scope: {', '.join(c.networks) or 'none'} ({_md(c.scope)})", ""]
        out += [
            "| Network | Devices planned | seen | matched | Links planned | seen | matched |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for net, nc in c.by_network.items():
            out.append(
                f"| {net} | {nc.planned_devices} | {nc.seen_devices} | {nc.matched_devices} "
                f"| {nc.planned_links} | {nc.seen_links} | {nc.matched_links} |"
            )
        out.append("")
    if report.findings:
        out += ["| Kind | Count |", "|---|---:|"]
        out += [f"| {k} | {report.summary[k]} |" for k in KINDS if report.summary.get(k)]
        out.append("")
    shown, hidden = _shown(report, max_rows)
    for group, items in groupby(shown, key=_group):
        out += [f"## {group}", ""]
        for f in items:
            tags = ", ".join(x for x in (f.cause, _where(f), f.source) if x)
            out.append(f"- [ ] **{f.kind}** ({tags}): {_md(f.summary)}")
            out.append(f"  - Fix: {_md(f.fix)}")
            evidence = "; ".join(dict.fromkeys(s.where for s in f.actual if s.where))
            ref = f"`{f.id}`" + (f", evidence `{evidence}`" if evidence else "")
            out.append(f"  - id {ref}")
        out.append("")
    if hidden:
        out += [f"_{_md(_more(hidden))}_", ""]
    notes = [n for s in report.sources for n in s.notes]
    if notes:
        out += ["### Notes", ""] + [f"- {_md(n)}" for n in notes] + [""]
    return "\n".join(out)
