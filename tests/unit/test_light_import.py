"""A light import: the package root re-exports the pipeline lazily (PEP 562).

Every ``fabric_stack.*`` import runs ``fabric_stack/__init__.py`` first, so an eager root
made ``import fabric_stack.errors`` load 43 modules and networkx (0.32 s), and every
command paid for them before it ran. Here a fresh interpreter proves that importing the
error hierarchy, and ``fabric-stack --version``, load neither networkx nor any module of
the spec or the stages; and that the lazy names are the ones the type checker sees.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import fabric_stack
from tests.unit.test_layers import layer_of

ROOT = Path(fabric_stack.__file__).resolve().parent / "__init__.py"

_LOADED = "import json, sys; print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
"""Appended to a child's code: the modules it ended with, on stderr (stdout is the output)."""


def _modules_after(code: str) -> tuple[str, set[str]]:
    """What a fresh interpreter running ``code`` printed, and the modules it had loaded."""
    r = subprocess.run(
        [sys.executable, "-c", f"{code}\n{_LOADED}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout, set(json.loads(r.stderr.strip().splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    """networkx, and every module of the spec or the stages (layers 1-2, the root aside)."""
    ours = [m for m in modules if m.startswith("fabric_stack.")]
    return sorted(
        {m for m in modules if m.split(".")[0] == "networkx"}
        | {m for m in ours if layer_of(m) in (1, 2)}
    )


def test_importing_the_errors_loads_no_pipeline() -> None:
    _, modules = _modules_after("import fabric_stack.errors")
    assert not _heavy(modules)
    assert {m for m in modules if m.startswith("fabric_stack")} == {
        "fabric_stack",
        "fabric_stack.errors",
    }


def test_version_loads_no_pipeline() -> None:
    # The console script's own entry (fabric_stack_launch), argv as the shell gives it.
    code = (
        "import sys; sys.argv = ['fabric-stack', '--version']\n"
        "from fabric_stack_launch import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code"
    )
    out, modules = _modules_after(code)
    assert out == "fabric-stack, version 0.1.0\n"
    assert not _heavy(modules)


def test_size_loads_neither_pulumi_nor_networkx() -> None:
    # What fabric_stack/cli/__init__.py says its lazy commands are for (false while the
    # root imported the whole pipeline: every command loaded networkx).
    code = (
        "import io, contextlib, sys; sys.argv = ['fabric-stack', 'size']\n"
        "from fabric_stack_launch import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main()\n    except SystemExit as e:\n        assert not e.code, e.code"
    )
    _, modules = _modules_after(code)
    assert "fabric_stack.sizing.size" in modules
    assert not {m.split(".")[0] for m in modules} & {"networkx", "pulumi"}


def test_a_re_export_is_imported_on_first_use_and_is_the_real_one() -> None:
    code = (
        "import sys, fabric_stack\n"
        "assert 'fabric_stack.sizing.size' not in sys.modules\n"
        "from fabric_stack import size_fabric\n"
        "from fabric_stack.sizing.size import size_fabric as real\n"
        "assert size_fabric is real and fabric_stack.size_fabric is real"
    )
    _, modules = _modules_after(code)
    assert "fabric_stack.sizing.size" in modules


def _type_checking_imports() -> dict[str, str]:
    """``name: module`` of every ``from M import name`` under ``if TYPE_CHECKING:``."""
    tree = ast.parse(ROOT.read_text(encoding="utf-8"))
    guard = next(
        n
        for n in tree.body
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"
    )
    return {
        alias.name: node.module or ""
        for node in guard.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_lazy_names_are_the_ones_the_type_checker_sees() -> None:
    homes = fabric_stack._HOMES
    assert homes == _type_checking_imports()
    assert set(fabric_stack.__all__) == {*homes, "__version__"}
    assert set(fabric_stack.__all__) <= set(dir(fabric_stack))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'size_fabrik'"):
        _ = fabric_stack.size_fabrik  # type: ignore[attr-defined]
