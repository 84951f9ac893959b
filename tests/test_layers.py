"""The architecture, checked: import layering, and no function or module too large to read.

Read from the source with ``ast`` (nothing is imported), so the test names the file and
the import that breaks a rule. The layers, lowest first (a module may import its own
layer's modules and any lower layer, never a higher one):

0. foundation: errors, catalog, nodes, naming, wire, fmt, redact, compat.pydantic_internals
1. the spec: networks, spec, spec_sections, underlay_spec, site_names
2. the pure stages: sizing(_model), topology(_model), rename, intent, pipeline, verify,
   guidance, underlay
   (and the package root, which re-exports them)
3. rules and the file layers: policy (pure rules); the input layer (inputs, config: every
   file read; names_file) and the output layer (outputs, fileio: every file written)
4. adapters: inventory, stack (Pulumi side), drift, reference, compat.pulumi_*
5. views (card, BOM, diagram, exports, change summaries) over any result
6. artifacts (render targets built from the views); twin (runs the rendered configs)
7. cli

Adapters (layer 4) do not import each other sideways; the documented exceptions are
listed in :data:`SIDEWAYS`. Nothing in ``fabric_stack`` imports ``components`` or
``policies`` (they adapt fabric_stack, not the other way round), and layers 0-3 import
no Pulumi, database, subprocess or terminal library.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "fabric_stack"

LAYERS: dict[str, int] = {
    "fabric_stack.errors": 0,
    "fabric_stack.catalog": 0,
    "fabric_stack.nodes": 0,
    "fabric_stack.server_profiles": 0,
    "fabric_stack.naming": 0,
    "fabric_stack.wire": 0,
    "fabric_stack.fmt": 0,
    "fabric_stack.redact": 0,
    "fabric_stack.compat": 0,
    "fabric_stack.compat.pydantic_internals": 0,
    "fabric_stack.networks": 1,
    "fabric_stack.spec": 1,
    "fabric_stack.spec_sections": 1,
    "fabric_stack.underlay_spec": 1,
    "fabric_stack.site_names": 1,
    "fabric_stack": 2,
    "fabric_stack.sizing": 2,
    "fabric_stack.managers": 2,
    "fabric_stack.sizing_model": 2,
    "fabric_stack.topology_model": 2,
    "fabric_stack.topology": 2,
    "fabric_stack.intent": 2,
    "fabric_stack.pipeline": 2,
    "fabric_stack.verify": 2,
    "fabric_stack.guidance": 2,
    "fabric_stack.underlay": 2,
    "fabric_stack.rename": 2,
    "fabric_stack.policy": 3,
    "fabric_stack.config": 3,
    "fabric_stack.inputs": 3,
    "fabric_stack.outputs": 3,
    "fabric_stack.fileio": 3,
    "fabric_stack.names_file": 3,
    "fabric_stack.inventory": 4,
    "fabric_stack.stack": 4,
    "fabric_stack.drift": 4,
    "fabric_stack.reference": 4,
    "fabric_stack.compat.pulumi_dynamic": 4,
    "fabric_stack.compat.pulumi_policy_proxy": 4,
    "fabric_stack.views": 5,
    "fabric_stack.artifacts": 6,
    "fabric_stack.twin": 6,
    "fabric_stack.cli": 7,
}
"""Layer of every module, by its longest listed prefix."""

ADAPTER_LAYER = 4

SIDEWAYS: dict[tuple[str, str], str] = {
    ("fabric_stack.drift.readers.inventory", "fabric_stack.inventory"): (
        "the inventory's drift reader opens the store by URL (the adapter it reads)"
    ),
    ("fabric_stack.drift.readers.netbox_live", "fabric_stack.inventory.netbox_client"): (
        "the live NetBox drift reader talks to the NetBox the inventory writes, through the "
        "same REST client (one client: auth, paging and error lines written once)"
    ),
}
"""Adapter → adapter imports allowed, and why."""

IMPURE = ("pulumi", "pulumi_policy", "psycopg", "sqlite3", "subprocess", "click", "rich")
"""Libraries layers 0-3 must not import (they do I/O or talk to a terminal or engine)."""

MAX_FUNCTION_LINES = 100
MAX_MODULE_LINES = 600
LONG_FUNCTIONS: dict[str, str] = {}
"""``module:function`` allowed over the limit, and why (none today)."""
LONG_MODULES: dict[str, str] = {}
"""Module paths allowed over the limit, and why (none today)."""


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), path))
    return out


MODULES = _modules()


def _imports(mod: str, path: Path) -> list[tuple[str, int]]:
    """(imported module, line) of every import in the file, relative ones resolved."""
    is_pkg = path.name == "__init__.py"
    pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                # ``from . import x`` may import submodule x
                names = [f"{target}.{a.name}" for a in node.names] if not node.module else []
                out.extend((n, node.lineno) for n in names if _is_module(n))
                out.append((target, node.lineno))
            elif node.module:
                out.append((node.module, node.lineno))
    return out


def _is_module(name: str) -> bool:
    rel = Path(*name.split("."))
    return (ROOT / rel).with_suffix(".py").exists() or (ROOT / rel / "__init__.py").exists()


def layer_of(mod: str) -> int:
    best = max((p for p in LAYERS if mod == p or mod.startswith(p + ".")), key=len)
    return LAYERS[best]


def _unit(mod: str) -> str:
    """The top-level unit of a module (``fabric_stack.drift``), for sideways checks."""
    return ".".join(mod.split(".")[:2])


def test_every_module_has_a_layer() -> None:
    for mod, path in MODULES:
        assert any(mod == p or mod.startswith(p + ".") for p in LAYERS), f"{path}: no layer"


@pytest.mark.parametrize("mod,path", MODULES, ids=[m for m, _ in MODULES])
def test_imports_respect_the_layers(mod: str, path: Path) -> None:
    here = layer_of(mod)
    rel = path.relative_to(ROOT)
    for target, line in _imports(mod, path):
        top = target.split(".")[0]
        assert top not in ("components", "policies"), f"{rel}:{line}: imports {target}"
        if here <= 3:
            assert top not in IMPURE, f"{rel}:{line}: layer {here} imports {target}"
        if top != "fabric_stack":
            continue
        there = layer_of(target)
        assert there <= here, f"{rel}:{line}: layer {here} imports {target} (layer {there})"
        sideways = (
            here == there == ADAPTER_LAYER
            and _unit(mod) != _unit(target)
            and not any(
                mod.startswith(a) and (target == b or target.startswith(b + "."))
                for a, b in SIDEWAYS
            )
        )
        assert not sideways, f"{rel}:{line}: adapter {mod} imports adapter {target} sideways"


def test_no_function_or_module_too_long() -> None:
    long_functions = []
    long_modules = []
    for mod, path in MODULES:
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(ROOT))
        if len(text.splitlines()) > MAX_MODULE_LINES and rel not in LONG_MODULES:
            long_modules.append(f"{rel}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                key = f"{mod}:{node.name}"
                if n > MAX_FUNCTION_LINES and key not in LONG_FUNCTIONS:
                    long_functions.append(f"{rel}:{node.lineno} {node.name}: {n} lines")
    assert not long_modules, long_modules
    assert not long_functions, long_functions


def test_the_layer_check_catches_an_upward_import(tmp_path: Path) -> None:
    # The check itself can fail: a stage importing the CLI is reported.
    src = tmp_path / "sizing.py"
    src.write_text("from .cli import main\n")
    found = _imports("fabric_stack.sizing", src)
    assert ("fabric_stack.cli", 1) in found
    assert layer_of("fabric_stack.cli") > layer_of("fabric_stack.sizing")
