"""The architecture, checked: import layering, and no function or module too large to read.

Read from the source with ``ast`` (nothing is imported), so the test names the file and
the import that breaks a rule. A module's layer is its folder (or, at the package root,
its own entry): there is no catch-all, so a new folder or root module must be placed
here before it passes. The layers, lowest first (a module may import its own layer's
modules and any lower layer, never a higher one):

0. foundation: ``errors``, ``records``, ``hardware/``, ``naming/``, ``text/``, ``compat/``,
   ``nos/``
1. the spec: ``spec/``
2. the pure stages: ``sizing/``, ``topology/``, ``intent/``, ``underlay/``, ``analysis/``,
   ``plant/``,
   ``pipeline`` (and the package root, which re-exports them)
3. rules, the pure drift comparison, the acceptance judgement and the file layer:
   ``policy/``, ``drift/``, ``acceptance/``, ``files/``
4. adapters: ``adapters/pulumi``, ``adapters/inventory``, ``adapters/discovery``
5. ``views/`` (card, BOM, diagram, exports, change and drift reports) over any result
6. ``artifacts/`` (render targets built from the views); ``twin/`` (runs the rendered configs)
7. ``cli/``

Adapters (layer 4) do not import each other sideways; the documented exceptions are
listed in :data:`SIDEWAYS`. Nothing in ``fabric_stack`` imports ``components`` or
``policies`` (they adapt fabric_stack, not the other way round), and layers 0-3 import
no Pulumi, database, subprocess or terminal library. The size limits cover
``components/`` and ``policies/`` too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "fabric_stack"

ROOT_MODULES: dict[str, int] = {
    "fabric_stack": 2,
    "fabric_stack.errors": 0,
    "fabric_stack.records": 0,
    "fabric_stack.pipeline": 2,
}
"""The only modules at the package root, each with its layer."""

FOLDERS: dict[str, int] = {
    "fabric_stack.hardware": 0,
    "fabric_stack.naming": 0,
    "fabric_stack.text": 0,
    "fabric_stack.compat": 0,
    "fabric_stack.nos": 0,
    "fabric_stack.spec": 1,
    "fabric_stack.sizing": 2,
    "fabric_stack.topology": 2,
    "fabric_stack.intent": 2,  # and intent.switch_config: each switch's typed configuration
    "fabric_stack.underlay": 2,
    "fabric_stack.analysis": 2,
    "fabric_stack.plant": 2,
    "fabric_stack.policy": 3,
    "fabric_stack.drift": 3,
    "fabric_stack.files": 3,
    "fabric_stack.acceptance": 3,
    "fabric_stack.adapters": 4,
    "fabric_stack.adapters.pulumi": 4,
    "fabric_stack.adapters.inventory": 4,
    "fabric_stack.adapters.discovery": 4,
    "fabric_stack.views": 5,
    "fabric_stack.artifacts": 6,
    "fabric_stack.twin": 6,
    "fabric_stack.cli": 7,
}
"""Layer of every folder: a module is in the folder that holds it (the deepest listed)."""

ADAPTER_LAYER = 4

SIDEWAYS: dict[tuple[str, str], str] = {
    ("fabric_stack.adapters.discovery.inventory", "fabric_stack.adapters.inventory"): (
        "the inventory's drift reader opens the store by URL (the adapter it reads)"
    ),
    (
        "fabric_stack.adapters.discovery.netbox_live",
        "fabric_stack.adapters.inventory.netbox.client",
    ): (
        "the live NetBox drift reader talks to the NetBox the inventory writes, through the "
        "same REST client (one client: auth, paging and error lines written once)"
    ),
    (
        "fabric_stack.adapters.discovery.netbox_live",
        "fabric_stack.adapters.inventory.netbox.branching",
    ): "--netbox-branch reads the branch the inventory's `up` wrote (issue #48): one spelling",
    (
        "fabric_stack.adapters.discovery.registry",
        "fabric_stack.adapters.inventory.netbox.branching",
    ): "--netbox-branch's name is checked and carried as the inventory carries it (issue #48)",
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


def _modules(*roots: Path) -> list[tuple[str, Path]]:
    out = []
    for path in sorted(p for root in roots for p in root.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), path))
    return out


MODULES = _modules(PKG)
ADAPTED = _modules(ROOT / "components", ROOT / "policies")
"""``components/`` and ``policies/``: held to the same size limits, outside the layers."""


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


class UnplacedModule(LookupError):
    """A module in no listed folder and not a listed root module."""


def layer_of(mod: str) -> int:
    """The layer of ``mod``: its root-module entry, else the deepest listed folder holding it."""
    if mod in ROOT_MODULES:
        return ROOT_MODULES[mod]
    folders = [f for f in FOLDERS if mod == f or mod.startswith(f + ".")]
    if not folders:
        raise UnplacedModule(
            f"{mod}: not in any folder of FOLDERS nor in ROOT_MODULES (tests/unit/test_layers.py)"
        )
    return FOLDERS[max(folders, key=len)]


def _unit(mod: str) -> str:
    """The unit of a module for sideways checks: its folder (``fabric_stack.adapters.pulumi``)."""
    folders = [f for f in FOLDERS if mod == f or mod.startswith(f + ".")]
    return max(folders, key=len) if folders else mod


def test_every_module_has_a_layer() -> None:
    unplaced = []
    for mod, _path in MODULES:
        try:
            layer_of(mod)
        except UnplacedModule as e:
            unplaced.append(str(e))
    assert not unplaced, unplaced


def test_no_catch_all_a_new_module_must_be_placed() -> None:
    # A module dropped at the package root, or a new folder, has no layer until listed.
    for mod in ("fabric_stack.newreader", "fabric_stack.newfolder.reader"):
        with pytest.raises(UnplacedModule):
            layer_of(mod)
    assert layer_of("fabric_stack.adapters.discovery.lldp") == ADAPTER_LAYER


def test_the_root_holds_only_its_listed_modules() -> None:
    at_root = {p.stem for p in PKG.glob("*.py")} - {"__init__"}
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {f"fabric_stack.{m}" for m in at_root} == set(ROOT_MODULES) - {"fabric_stack"}
    assert {f"fabric_stack.{f}" for f in folders} <= set(FOLDERS)


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
    for mod, path in MODULES + ADAPTED:
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
    src = tmp_path / "size.py"
    src.write_text("from ..cli import main\n")
    found = _imports("fabric_stack.sizing.size", src)
    assert ("fabric_stack.cli", 1) in found
    assert layer_of("fabric_stack.cli") > layer_of("fabric_stack.sizing.size")
