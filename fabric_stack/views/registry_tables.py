"""Markdown tables of the registries, for the README and the docs (never kept by hand).

* :func:`rules_table`: the policy rules (:data:`fabric_stack.policy.RULES`);
* :func:`switch_models_table`: the switch catalog
  (:data:`fabric_stack.hardware.switches.CATALOG`);
* the render targets' table is :func:`fabric_stack.artifacts.targets_table` (the
  targets live one layer above the views, so their table lives with them, built with
  :func:`markdown_table` from here).

Each returns the table as text, one row per registry entry in registry order, ending
with a newline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fabric_stack.adapters.discovery.registry import EVERY_NETWORK, SOURCES
from fabric_stack.hardware.switches import CATALOG, radix_at
from fabric_stack.policy.registry import RULES


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|") or "-"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table (``|`` in a cell escaped, blank cells as ``-``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def rules_table() -> str:
    """The policy rules: id, what each checks, default level, where it applies."""
    rows = [
        (f"`{r.id}`", r.description, r.default_level, r.applies.describe()) for r in RULES.values()
    ]
    return markdown_table(("rule", "what it checks", "default level", "applies to"), rows)


def switch_models_table() -> str:
    """The switch catalog: key, model, protocol, ports, speeds (ports at each), OS."""
    rows = []
    for m in CATALOG.values():
        speeds = ", ".join(f"{radix_at(m, x.speed_gbps)} × {x.speed_gbps}G" for x in m.modes)
        rows.append(
            (
                f"`{m.key}`",
                m.name,
                m.protocol,
                f"{m.cages} × {m.cage_type}",
                speeds,
                ", ".join(m.operating_systems),
            )
        )
    header = ("key", "model", "protocol", "ports", "speeds", "OS")
    return markdown_table(header, rows)


def sources_table() -> str:
    """Every source as a Markdown table (option, what it accepts with an example, networks,
    commands), from :data:`SOURCES`: for the README and docs, never kept by hand."""
    rows = []
    for s in SOURCES:
        flag = f"`{s.option.flag} {s.option.shown_metavar}`"
        formats = "<br>".join(f"{name}: {example}" for name, example in s.formats)
        networks = "all" if s.networks == EVERY_NETWORK else ", ".join(sorted(s.networks))
        rows.append((flag, formats.replace("|", "\\|"), networks, ", ".join(s.commands)))
    return markdown_table(("option", "accepts (example)", "networks", "commands"), rows)


__all__ = ["markdown_table", "rules_table", "sources_table", "switch_models_table"]
