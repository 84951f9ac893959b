"""Renderers for `fabric-stack accept`: a rich table, Markdown (an acceptance record for the
design report) and JSON.

Pure functions of :class:`~fabric_stack.acceptance.AcceptReport`; nothing is judged here.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import PurePath
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fabric_stack.acceptance import AcceptReport, MatrixCell, TestResult
from fabric_stack.views.whatif import size_label

MAX_HOSTS = 3
"""Hosts shown per test in the table and Markdown (JSON has all)."""


def _verdict(t: TestResult) -> str:
    if t.passed is None:
        return "not judged"
    if t.passed:
        return "PASS"
    if t.fail_reason == "below the floor" and t.shortfall_pct:
        return f"FAIL (−{t.shortfall_pct:g}%)"
    return f"FAIL ({t.fail_reason})" if t.fail_reason else "FAIL"


def _hosts(t: TestResult) -> str:
    names = t.servers or t.hosts
    more = f" +{len(names) - MAX_HOSTS}" if len(names) > MAX_HOSTS else ""
    return ", ".join(names[:MAX_HOSTS]) + more


def _name(t: TestResult) -> str:
    return f"{PurePath(t.file).name}#{t.run}"


def _num(x: float | None) -> str:
    """One decimal for the figures of a real fabric; three digits for a few Gb/s (iperf3)."""
    if x is None:
        return "—"
    return f"{x:,.1f}" if x >= 10 or x == 0 else f"{x:.3g}"


def _row(t: TestResult) -> tuple[str, ...]:
    return (
        _name(t),
        t.kind,
        _hosts(t),
        size_label(t.bytes) if t.bytes else "—",
        f"{_num(t.measured)} {t.unit.split()[0]}" if t.measured is not None else "—",
        f"{_num(t.expected)} (≥ {_num(t.pass_at)})" if t.expected is not None else "—",
        _verdict(t),
    )


HEADS = ("result", "test", "servers", "size", "measured", "expected (pass at)", "verdict")
MIN_WIDTH = {"servers": 11}
"""Columns that wrap or shorten when the terminal is narrow, and how far (a server name
whole); the test's kind stays whole."""


def _matrix_rows(cells: list[MatrixCell]) -> tuple[list[str], list[tuple[str, ...]]]:
    """(column heads, rows): one row per server (the host that ran the runs), one column
    per (plane, rail); a cell is its slowest run, ✗ when one is below the floor."""
    rails = sorted({(c.plane, c.rail) for c in cells})
    grid: dict[str, dict[tuple[int, int], list[MatrixCell]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for c in cells:
        grid[c.server][c.plane, c.rail].append(c)

    def cell(runs: list[MatrixCell]) -> str:
        if not runs:
            return "·"
        low = min(c.gbps for c in runs)
        mark = "" if all(c.passed for c in runs) else " ✗"
        return (f"{low:,.0f}" if low >= 10 else f"{low:.2f}") + mark

    heads = ["server"] + [f"r{r}" if p == 1 else f"p{p} r{r}" for p, r in rails]
    rows = [(s, *(cell(grid[s].get(k, [])) for k in rails)) for s in sorted(grid)]
    return heads, rows


MAX_LISTED = 24
"""Above this many tests, passing perftest runs are counted, not listed (the matrix has
them; JSON lists every test)."""

MAX_MATRIX_SERVERS = 32
"""Above this many servers, the matrix shows only servers with a slow rail."""


MATRIX_NOTE = "each host's slowest run (✗ below the floor)"
"""What a cell of the per-rail matrix is."""

PER_RAIL = ("perftest", "iperf3")
"""The tools whose runs make the per-rail matrix."""


def _tools(report: AcceptReport) -> str:
    """'perftest', 'iperf3' or 'perftest/iperf3': the tools of the matrix's runs."""
    used = {report.tests[c.test].tool for c in report.matrix} or {"perftest"}
    return "/".join(t for t in PER_RAIL if t in used)


def _listed(report: AcceptReport) -> tuple[list[TestResult], str]:
    """(tests to list, a line counting the passing per-rail runs left out)."""
    if len(report.tests) <= MAX_LISTED:
        return report.tests, ""
    shown = [t for t in report.tests if t.tool not in PER_RAIL or t.passed is not True]
    n = len(report.tests) - len(shown)
    return shown, (
        f"{n} more {_tools(report)} runs passed (the matrix shows them; --format json lists all)"
    )


def _matrix(cells: list[MatrixCell]) -> tuple[list[str], list[tuple[str, ...]], str]:
    heads, rows = _matrix_rows(cells)
    if len(rows) <= MAX_MATRIX_SERVERS:
        return heads, rows, ""
    slow = {c.server for c in cells if not c.passed}
    kept = [r for r in rows if r[0] in slow]
    return heads, kept, f"; {len(rows) - len(kept)} servers with every rail at the floor not shown"


def _suspect_lines(t: TestResult) -> list[str]:
    out = []
    for s in t.suspects:
        out += [f"{s.what} — {s.where}", f"    why: {s.why}", f"    check: {s.check}"]
        if s.cables:
            out.append(
                f"    cables: {'; '.join(s.cables[:8])}" + (" …" if len(s.cables) > 8 else "")
            )
    return out


def render_accept(report: AcceptReport) -> RenderableType:
    """Rich tables: the tests, the rail matrix, then suspects and notes per test."""
    t = Table()
    for h in HEADS:
        right = h in ("size", "measured")
        t.add_column(
            h, justify="right" if right else "left", no_wrap=h == "test", min_width=MIN_WIDTH.get(h)
        )
    shown, hidden = _listed(report)
    for r in shown:
        t.add_row(*_row(r), style=None if r.passed is not False else "bold red")
    parts: list[RenderableType] = [Text(f"Acceptance against {report.plan}")]
    if shown:  # every run passed and is in the matrix: no empty table
        parts.append(t)
    if hidden:
        parts.append(Text(hidden))
    if report.matrix:
        heads, rows, note = _matrix(report.matrix)
        m = Table()
        for h in heads:
            m.add_column(h, justify="left" if h == "server" else "right", no_wrap=h == "server")
        for row in rows:
            m.add_row(*row)
        parts += [Text(f"Per-rail {_tools(report)}, Gb/s: {MATRIX_NOTE}{note}"), m]
    lines: list[str] = []
    for r in report.tests:
        body = _suspect_lines(r) + ([f"note: {n}" for n in r.notes] if r.passed is False else [])
        if r.passed is False or r.suspects:
            lines += [f"{_name(r)} ({r.kind}): {r.placement}", *("  " + x for x in body), ""]
    if report.skipped:
        lines += ["skipped:", *(f"  {s}" for s in report.skipped)]
    parts.append(Text("\n".join(lines).rstrip() or "no suspects"))
    parts.append(Text(_summary(report)))
    return Group(*parts)


def _summary(report: AcceptReport) -> str:
    judged = [t for t in report.tests if t.passed is not None]
    failed = len(report.failed)
    return (
        f"{len(judged) - failed} passed, {failed} failed, "
        f"{len(report.tests) - len(judged)} not judged"
    )


def accept_markdown(report: AcceptReport) -> str:
    """An acceptance record: the plan, the tests, the matrix, suspects and notes."""
    out = [
        "## Acceptance record",
        "",
        f"Plan: {report.plan}. Pass at {_share(report)} of the plan's figure.",
        "",
        "| " + " | ".join(HEADS) + " |",
        "|" + "---|" * len(HEADS),
    ]
    shown, hidden = _listed(report)
    out += ["| " + " | ".join(_md(c) for c in _row(t)) + " |" for t in shown]
    out += ["", hidden] if hidden else []
    if report.matrix:
        heads, rows, note = _matrix(report.matrix)
        out += ["", f"### Per-rail {_tools(report)}, Gb/s: {MATRIX_NOTE}{note}", ""]
        out += ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
    for t in report.tests:
        if not t.suspects and t.passed is not False:
            continue
        out += [
            "",
            f"### {_md(_name(t))} — {t.kind}: {_verdict(t)}",
            "",
            f"- placement: {_md(t.placement)}",
        ]
        out += [f"- expected from: {_md(b)}" for b in t.basis]
        for s in t.suspects:
            out.append(f"- **suspect: {_md(s.what)}** — {_md(s.where)}")
            out.append(f"  - why: {_md(s.why)}")
            out.append(f"  - check: {_md(s.check)}")
            if s.cables:
                out.append(f"  - cables: {_md('; '.join(s.cables))}")
        out += [f"- note: {_md(n)}" for n in t.notes]
    if report.skipped:
        out += ["", "Skipped:", ""] + [f"- {_md(s)}" for s in report.skipped]
    out += ["", _summary(report)]
    return "\n".join(out) + "\n"


def _share(report: AcceptReport) -> str:
    from fabric_stack.acceptance import ACCEPTANCE_SHARE

    return f"{ACCEPTANCE_SHARE:.0%}"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def accept_json(report: AcceptReport) -> dict[str, Any]:
    """``{"plan", "tests": [{"file", "kind", "hosts", "bytes", "measured_busbw_gbs" or
    "measured_gbps", "expected", "passed", "suspects", …}], "matrix", "skipped", "summary"}``."""
    tests = []
    for t in report.tests:
        d = t.model_dump(mode="json")
        measured = d.pop("measured")
        d.pop("unit")
        key = "measured_busbw_gbs" if t.tool == "nccl-tests" else "measured_gbps"
        tests.append(
            {
                "file": d.pop("file"),
                "kind": d.pop("kind"),
                "hosts": d.pop("hosts"),
                "bytes": d.pop("bytes"),
                key: measured,
                "expected": d.pop("expected"),
                "passed": d.pop("passed"),
                "suspects": d.pop("suspects"),
                **d,
            }
        )
    judged = [t for t in report.tests if t.passed is not None]
    return {
        "plan": report.plan,
        "tests": tests,
        "matrix": [c.model_dump(mode="json") for c in report.matrix],
        "skipped": report.skipped,
        "summary": {
            "passed": len(judged) - len(report.failed),
            "failed": len(report.failed),
            "not_judged": len(report.tests) - len(judged),
        },
    }


__all__ = ["accept_json", "accept_markdown", "render_accept"]
