"""An incomplete registry entry fails where it is declared, not when a command meets it.

A render target (``TARGETS`` in ``fabric_stack/artifacts/__init__.py``) and a discovery
format (a ``DriftSource`` in ``fabric_stack/adapters/discovery/registry.py``) each check
themselves when they are made (``__post_init__``, as diffsync checks a model's fields in
``__pydantic_init_subclass__``), and each registry checks its entries together at import.
The recipes are docs/dev/add-a-render-target.md and docs/dev/add-a-discovery-format.md;
each test below declares one entry with one thing missing and expects the error naming it.
"""

from __future__ import annotations

from typing import Any

import pytest

from fabric_stack.adapters.discovery import registry
from fabric_stack.adapters.discovery.registry import (
    SOURCES,
    DriftSource,
    SourceOption,
    check_sources,
)
from fabric_stack.artifacts import EVERY_FABRIC, TARGETS, Target, check_targets, nccl
from fabric_stack.errors import DeclarationError, FabricStackError

# --------------------------------------------------------------------------- render targets

COMPLETE_TARGET: dict[str, Any] = {
    "render": nccl.render,
    "files": nccl.files,
    "help": "A complete target.",
    "writes": ("demo/<fabric>.env",),
    "applies": EVERY_FABRIC,
}
"""What a render target needs, all of it (a copy of the nccl entry's functions)."""


def test_a_complete_target_is_accepted() -> None:
    target = Target(**COMPLETE_TARGET)
    check_targets({**TARGETS, "demo": target})


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("help", "", "help: a one-line description"),
        ("help", "Two lines.\nOf help.", "help: a one-line description"),
        ("help", "No full stop", "help: a one-line description"),
        ("writes", (), "writes: the patterns"),
        ("writes", ("flat.env",), "writes: the patterns"),
        ("render", None, "render and files: functions"),
        ("files", "nccl/x.env", "render and files: functions"),
        ("applies", None, "applies: an Applicability"),
    ],
)
def test_a_target_missing_a_part_fails_where_it_is_declared(
    field: str, value: object, named: str
) -> None:
    with pytest.raises(DeclarationError, match=named):
        Target(**{**COMPLETE_TARGET, field: value})


def test_a_target_is_declared_with_every_field() -> None:
    # No default stands in for a missing field (applicability above all: none by default).
    without_applies = {k: v for k, v in COMPLETE_TARGET.items() if k != "applies"}
    with pytest.raises(TypeError, match="applies"):
        Target(**without_applies)


@pytest.mark.parametrize(
    ("name", "writes", "named"),
    [
        ("all", ("all/x.env",), "name: lowercase"),
        ("Demo", ("Demo/x.env",), "name: lowercase"),
        ("demo", ("nccl/<fabric>.env",), r"writes: \['nccl/<fabric>.env'\] not under demo/"),
    ],
)
def test_the_registry_refuses_a_name_or_files_that_clash(
    name: str, writes: tuple[str, ...], named: str
) -> None:
    target = Target(**{**COMPLETE_TARGET, "writes": writes})
    with pytest.raises(DeclarationError, match=named):
        check_targets({**TARGETS, name: target})


def test_a_declaration_error_is_no_bad_input() -> None:
    # The CLI prints a FabricStackError as one line, exit 2: a broken registry is a bug.
    assert not issubclass(DeclarationError, FabricStackError)


# --------------------------------------------------------------------------- drift sources


def _option(**changes: Any) -> SourceOption:
    return SourceOption(**{"flag": "--demo", "takes": "file", "help": "A demo dump.", **changes})


def _source(**changes: Any) -> DriftSource:
    complete: dict[str, Any] = {
        "name": "demo",
        "option": _option(),
        "networks": frozenset({"compute"}),
        "build": lambda path, ctx: None,
        "formats": (("`demo` output", "`a b c`"),),
    }
    return DriftSource(**{**complete, **changes})


def test_a_complete_source_is_accepted() -> None:
    check_sources((*SOURCES, _source()))


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"name": "Demo Source"}, "name: lowercase"),
        ({"option": _option(flag="--other")}, "option: a SourceOption whose flag is --demo"),
        ({"networks": frozenset()}, "networks: some of"),
        ({"networks": frozenset({"wan"})}, "networks: some of"),
        ({"build": None}, "build"),
        ({"prepare": "not a function"}, "build"),
        ({"formats": ()}, r"formats: \(format, an example line\)"),
        ({"formats": (("`demo`", ""),)}, r"formats: \(format, an example line\)"),
        ({"commands": ()}, "commands: some of drift, adopt"),
        ({"commands": ("inventory",)}, "commands: some of drift, adopt"),
        ({"uses": ("mac-tables",)}, "uses: shared options"),
    ],
)
def test_a_source_missing_a_part_fails_where_it_is_declared(
    changes: dict[str, Any], named: str
) -> None:
    with pytest.raises(DeclarationError, match=f"drift source .*{named}"):
        _source(**changes)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"flag": "demo"}, "flag: '--' and a lowercase name"),
        ({"flag": "--Demo"}, "flag: '--' and a lowercase name"),
        ({"takes": "socket"}, "takes: one of file, dir, url, slug"),
        ({"help": " "}, "help: the --help text"),
    ],
)
def test_an_option_missing_a_part_fails_where_it_is_declared(
    changes: dict[str, Any], named: str
) -> None:
    with pytest.raises(DeclarationError, match=named):
        _option(**changes)


@pytest.mark.parametrize(
    ("source", "named"),
    [
        (_source(name="lldp", option=_option(flag="--lldp")), "name: declared twice"),
        (
            _source(extras=(_option(flag="--node-name-map"),)),
            "option: --node-name-map declared twice",
        ),
        (_source(extras=(registry.MAC_TABLE,)), "option: --mac-table declared twice"),
        (_source(borrows=("node-map",)), "borrows: extras of other sources"),
    ],
)
def test_the_registry_refuses_a_source_that_clashes(source: DriftSource, named: str) -> None:
    with pytest.raises(DeclarationError, match=named):
        check_sources((*SOURCES, source))


def test_the_registries_as_shipped_are_complete() -> None:
    # What import already checked, stated: every entry passes its own and the registry's.
    check_targets(TARGETS)
    check_sources(SOURCES)
