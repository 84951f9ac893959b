"""The drift sources on the command line: their click options and their readers, from the
registry (:mod:`fabric_stack.adapters.discovery.registry`), for `drift` and `adopt`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from fabric_stack.adapters.discovery.registry import SourceOption, SourceOptionError
from fabric_stack.adapters.discovery.selection import (
    LAYOUTS,
    Selection,
    options_of,
    select_sources,
)
from fabric_stack.cli.params import NonEmptyPath

_F = TypeVar("_F", bound=Callable[..., Any])

_PATH = NonEmptyPath(path_type=Path)


def click_option(option: SourceOption, short: bool = False) -> Callable[[_F], _F]:
    """The click option of a registry ``SourceOption`` (its flag, metavar and help)."""
    return click.option(
        option.flag,
        option.name,
        type=_PATH if option.is_path else None,
        metavar=option.shown_metavar,
        help=option.help_for(short),
    )


def source_options(command: str) -> Callable[[_F], _F]:
    """Add the option of every drift source ``command`` offers, in its --help order."""
    short = LAYOUTS[command].short_help

    def add(func: _F) -> _F:
        for option in reversed(options_of(command)):
            func = click_option(option, short)(func)
        return func

    return add


def chosen_sources(command: str, options: dict[str, Any]) -> Selection:
    """The sources ``command``'s parsed options ask for (their options popped from
    ``options``); a usage error when they do not fit together or name no source."""
    try:
        return select_sources(command, options)
    except SourceOptionError as exc:
        raise click.UsageError(exc.message) from None


__all__ = ["chosen_sources", "click_option", "source_options"]
