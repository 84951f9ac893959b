"""Golden `fabric-stack check` outputs: JSON and Markdown for a clean and a failing cluster.

Produced through the CLI itself (click's runner), so the goldens are exactly what
CI prints. ``seed`` is the default 128-GPU cluster; ``oversub-2to1`` the same
cluster at 2:1, which fails ``oversubscription-1-to-1`` on every leaf.
"""

from __future__ import annotations

from click.testing import CliRunner

from fabric_stack.cli import main

SCENARIOS: dict[str, list[str]] = {
    "seed": [],
    "oversub-2to1": ["--oversubscription", "2:1"],
}
"""Scenario name → spec flags."""

EXIT = {"seed": 0, "oversub-2to1": 1}


def generate() -> dict[str, str]:
    """check.json and check.md per scenario."""
    out: dict[str, str] = {}
    runner = CliRunner()
    for name, flags in SCENARIOS.items():
        for fmt, ext in (("json", "json"), ("markdown", "md")):
            r = runner.invoke(main, ["check", *flags, "--format", fmt], env={"COLUMNS": "100"})
            if r.exit_code != EXIT[name]:
                raise AssertionError(
                    f"{name}: exit {r.exit_code}, expected {EXIT[name]}: {r.output}"
                )
            out[f"{name}/check.{ext}"] = r.stdout
    return out
