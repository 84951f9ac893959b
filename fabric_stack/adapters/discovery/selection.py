"""How each command lays out its discovery sources (``--help`` order, the no-source
error) and which of them a command's options chose (:func:`select_sources`).

The sources themselves, one entry each, are in :mod:`fabric_stack.adapters.discovery.registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric_stack.adapters.discovery._common import Progress, Reader, dir_size
from fabric_stack.adapters.discovery.registry import (
    SHARED,
    SOURCES,
    DriftSource,
    SourceContext,
    SourceOption,
    SourceOptionError,
)


@dataclass(frozen=True, slots=True)
class Layout:
    """How one command lays out its sources: --help order, the no-source error."""

    order: tuple[str, ...]
    """Sources and shared options (by name) in --help order; the readers run in this order.
    A source the command offers but this does not list comes after them."""
    named: tuple[str, ...]
    """The sources the no-source error names, in its order (unlisted ones after them)."""
    missing: str
    """The start of the no-source error."""
    short_help: bool = False
    """Show the options' short help texts."""


LAYOUTS: dict[str, Layout] = {
    "drift": Layout(
        order=(
            "lldp",
            "eos",
            "nvue",
            "sonic",
            "ibnetdiscover",
            "iblinkinfo",
            "ibdiagnet",
            "netbox-csv",
            "netbox-json",
            "inventory",
            "netbox",
            "mac-table",
            "slurm-topology",
            "k8s-nodes",
        ),
        named=(
            "lldp",
            "eos",
            "nvue",
            "sonic",
            "ibnetdiscover",
            "iblinkinfo",
            "ibdiagnet",
            "netbox-csv",
            "netbox-json",
            "netbox",
            "inventory",
            "slurm-topology",
            "k8s-nodes",
        ),
        missing="give at least one source",
    ),
    "adopt": Layout(
        order=(
            "ibnetdiscover",
            "iblinkinfo",
            "ibdiagnet",
            "lldp",
            "eos",
            "nvue",
            "sonic",
            "mac-table",
            "netbox-csv",
            "netbox-json",
            "netbox",
        ),
        named=(
            "ibnetdiscover",
            "iblinkinfo",
            "ibdiagnet",
            "lldp",
            "eos",
            "nvue",
            "sonic",
            "netbox-csv",
            "netbox-json",
            "netbox",
        ),
        missing="give a source",
        short_help=True,
    ),
}
"""Each command's layout: the option order of --help and of the no-source error (each new
source beside the ones of its kind: LLDP-like directories, InfiniBand dumps)."""


def _ranked(names: tuple[str, ...], items: list[Any], name: Callable[[Any], str]) -> list[Any]:
    """``items`` in the order of ``names``; items not listed keep their order, after them."""
    rank = {n: i for i, n in enumerate(names)}
    return sorted(items, key=lambda it: rank.get(name(it), len(names)))


def sources_of(command: str) -> list[DriftSource]:
    """The sources ``command`` offers, in its order (the order its readers run in)."""
    offered = [s for s in SOURCES if command in s.commands]
    return _ranked(LAYOUTS[command].order, offered, lambda s: s.name)


def options_of(command: str) -> list[SourceOption]:
    """Every source option of ``command`` in --help order: each source with its extras,
    the shared options its sources read where the layout puts them."""
    sources = sources_of(command)
    used = {u for s in sources for u in s.uses}
    blocks: list[tuple[str, list[SourceOption]]] = [
        (s.name, [s.option, *s.extras]) for s in sources
    ]
    blocks += [(o.key, [o]) for o in SHARED if o.key in used]
    ordered = _ranked(LAYOUTS[command].order, blocks, lambda b: b[0])
    return [o for _, opts in ordered for o in opts]


def missing_error(command: str) -> str:
    """The line ``command`` says when no source was given."""
    layout = LAYOUTS[command]
    flags = [s.option.flag for s in _ranked(layout.named, sources_of(command), lambda s: s.name)]
    listing = ", ".join(flags[:-1]) + " or " + flags[-1] if len(flags) > 1 else flags[0]
    return f"{layout.missing}: {listing}"


@dataclass(frozen=True, slots=True)
class Chosen:
    """A source the options ask for, with its prepared value."""

    source: DriftSource
    value: Any


@dataclass(frozen=True, slots=True)
class Selection:
    """The sources a command's options chose, checked; builds their readers."""

    chosen: tuple[Chosen, ...]
    options: Mapping[str, Any] = field(default_factory=dict)

    def input_bytes(self) -> int:
        """Total size of the files and directories given (for a progress bar)."""
        total = 0
        for c in self.chosen:
            if c.source.option.is_path:
                path = Path(c.value)
                if path.is_dir():
                    total += dir_size(path)
                elif path.is_file():
                    total += path.stat().st_size
        return total

    def readers(
        self,
        progress: Progress | None = None,
        guid_names: Mapping[str, str] | None = None,
        stack: str | None = None,
    ) -> list[Reader]:
        """One reader per chosen source, in the command's order."""
        ctx = SourceContext(self.options, progress, guid_names, stack)
        return [c.source.build(c.value, ctx) for c in self.chosen]


def select_sources(command: str, options: dict[str, Any]) -> Selection:
    """Pop ``command``'s source options from ``options`` and check them.

    An extra option without its source, a bad NetBox URL or token, or no source at
    all raise :class:`SourceOptionError` (checked in the command's order).
    """
    values = {o.name: options.pop(o.name, None) for o in options_of(command)}
    offered = sources_of(command)
    given = {s.name for s in offered if values[s.option.name] is not None}
    chosen = []
    for source in offered:
        value = values[source.option.name]
        if value is None:
            extras = {e.key for e in source.extras if values[e.name]}
            borrowers = tuple(s for s in offered if extras & set(s.borrows))
            if extras and not any(b.name in given for b in borrowers):
                raise SourceOptionError(
                    source.orphan_error(tuple(b.option.flag for b in borrowers))
                )
            continue
        if source.prepare is not None:
            value = source.prepare(value, values)
        chosen.append(Chosen(source, value))
    if not chosen:
        raise SourceOptionError(missing_error(command))
    return Selection(tuple(chosen), values)


__all__ = [
    "LAYOUTS",
    "Chosen",
    "Layout",
    "Selection",
    "missing_error",
    "options_of",
    "select_sources",
    "sources_of",
]
