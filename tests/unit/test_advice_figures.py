"""Figures a reader acts on agree with the numbers they come from (issue 32, item 4).

The oversubscription advice is tested with its rule (tests/unit/test_policy_rules.py:
``test_oversubscription_advice_and_fix_are_the_same_numbers``). Here: the BOM marks
UNVERIFIED switch power in every format, and the design report's overbuild figures are
the cabling plan's.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from click.testing import CliRunner

from fabric_stack.artifacts import report
from fabric_stack.cli import main
from tests.golden_artifacts import context

ENV = {"COLUMNS": "100", "NO_COLOR": "1"}


def _fs(*args: str) -> str:
    r = CliRunner().invoke(main, list(args), env=ENV)
    assert r.exit_code == 0, r.output
    return r.stdout


@pytest.mark.parametrize("spec", [[], ["--fabric", "roce", "--switch", "sn5600"]])
def test_bom_power_is_marked_unverified_in_every_format(spec: list[str]) -> None:
    lines = json.loads(_fs("bom", *spec, "--format", "json"))["switches"]
    unverified = [s for s in lines if "UNVERIFIED" in s["power_basis"]]
    assert unverified, "the catalog's power figures are all unverified today"
    table = _fs("bom", *spec)
    markdown = _fs("bom", *spec, "--format", "markdown")
    html = report.render_html(
        context({} if not spec else {"fabric": "roce", "switch": "sn5600"}), []
    )
    for s in unverified:
        each, total = f"{s['power_w']:,} *", f"{s['power_w_total']:,} *"
        assert each in table and total in table, (s["model"], table)
        assert f"| {each} | {total} |" in markdown, s["model"]
        assert f'<td class="n">{each}</td><td class="n">{total}</td>' in html, s["model"]
    assert "* UNVERIFIED: catalog power figure not confirmed against the datasheet" in table
    assert "\\* UNVERIFIED: catalog power figure" in markdown
    assert "W optics; UNVERIFIED *)" in " ".join(table.split())
    assert "W optics; UNVERIFIED *)" in markdown


@pytest.mark.parametrize(
    "spec",
    [{}, {"gpus": 512}, {"gpus": 256, "fabric": "roce", "switch": "sn5600", "su_nodes": 16}],
)
def test_report_overbuild_is_the_cabling_plans(spec: dict[str, object]) -> None:
    # Count the cabled ports of every compute switch from `cabling --format json` (the
    # plan a datacenter team pulls cables from), independently of the report.
    args = [f"--{k.replace('_', '-')}={v}" for k, v in spec.items()]
    links = json.loads(_fs("cabling", *args, "--format", "json", "--role", "compute"))["links"]
    ctx = context(spec)
    roles = {s.name: s.role for s in ctx.compute_switches()}
    used: Counter[str] = Counter()
    for link in links:
        for end in ("a", "b"):
            if link[f"{end}_device"] in roles:
                used[link[f"{end}_device"]] += 1
    html = report.render_html(ctx, [])
    section = html.split('id="overbuild"', 1)[1].split("</section>", 1)[0]
    for role in ("leaf", "spine"):
        names = [n for n, r in roles.items() if r == role]
        ports = len(names) * ctx.plan.radix
        free = ports - sum(used[n] for n in names)
        row = re.search(
            rf"<tr><td>{role}</td><td>[\d,]+</td><td>([\d,]+) of ([\d,]+)</td>", section
        )
        assert row, section
        assert (row.group(1), row.group(2)) == (f"{free:,}", f"{ports:,}"), role
    if not spec:  # the figure: the two UFM cables take two leaf ports
        assert "126 of 512" in section
