"""The package root re-exports every public stage function, and nothing from above layer 2.

A stage function is a public, verb-named function that a stage folder's modules define
and list as a stage (:data:`STAGE_FUNCTIONS`); adding a stage without exporting it, or
exporting something that is not importable from where it is defined, fails here.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import fabric_stack

PKG = Path(fabric_stack.__file__).resolve().parent

STAGE_FUNCTIONS: dict[str, str] = {
    "validate_spec": "spec",
    "size_fabric": "sizing",
    "build_topology": "topology",
    "verify_topology": "topology",
    "derive_intent": "intent",
    "plan_underlay": "underlay",
    "analyze_failures": "analysis",
    "estimate_collective": "analysis",
    "compare_placements": "analysis",
    "scheduler_view": "topology",
    "run_pipeline": "pipeline",
}
"""Every public stage function and the folder (or root module) it lives in."""

ENTRY_POINTS = {
    "spec": "validate_spec",
    "sizing": "size_fabric",
    "topology": "build_topology",
    "intent": "derive_intent",
    "underlay": "plan_underlay",
}
"""Each pipeline stage's one entry function (a stage folder must define it)."""


def test_every_stage_function_is_exported_from_where_it_lives() -> None:
    for name, home in STAGE_FUNCTIONS.items():
        assert name in fabric_stack.__all__, f"{name} is not re-exported by fabric_stack"
        fn = getattr(fabric_stack, name)
        assert inspect.isfunction(fn), name
        assert fn.__module__.split(".")[1] == home, f"{name} lives in {fn.__module__}"
        assert fn.__doc__, f"{name} has no docstring"


def test_every_stage_folder_defines_its_entry_function() -> None:
    for folder, fn in ENTRY_POINTS.items():
        defined = {
            node.name
            for path in (PKG / folder).glob("*.py")
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.FunctionDef)
        }
        assert fn in defined, f"fabric_stack/{folder}/ does not define {fn}"


def test_all_lists_only_names_that_exist_and_nothing_above_the_stages() -> None:
    for name in fabric_stack.__all__:
        obj = getattr(fabric_stack, name)
        module = getattr(obj, "__module__", "fabric_stack") or "fabric_stack"
        top = module.split(".")[1] if module.count(".") else ""
        assert top not in ("policy", "drift", "files", "adapters", "views", "cli", "twin"), name
