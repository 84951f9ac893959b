"""The README and docs/, checked: every example runs and prints what the page shows, the
architecture page agrees with the layer rules, the site builds strictly, and every path,
link and ``make`` target a page names exists.

The example convention and the runner are in :mod:`tests.docs_examples`; the Pulumi
examples run in ``tests/integration/pulumi/test_docs_examples_pulumi.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.docs_examples import (
    GENERATED,
    PAGES,
    PURE,
    REPO,
    has_kind,
    parse,
    prepare,
    prompts_outside_console,
    run_page,
)
from tests.unit.test_layers import FOLDERS, ROOT_MODULES, layer_of

DOCS = REPO / "docs"
ARCHITECTURE = DOCS / "architecture.md"
PKG = REPO / "fabric_stack"
UPDATE = "python -m tests.docs_examples --update (make docs-examples), then review the diff"


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


EXECUTED = [p for p in PAGES if has_kind(p, PURE) or has_kind(p, GENERATED)]


@pytest.mark.parametrize("page", EXECUTED, ids=_rel)
def test_examples_print_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    results = run_page(page, (PURE, GENERATED), prepare(tmp_path))
    wrong = [r for r in results if not r.ok]
    assert not wrong, "\n\n".join(r.diff() for r in wrong) + f"\n\nto accept: {UPDATE}"


def test_no_output_is_shown_without_being_run() -> None:
    # A `$ ` prompt outside an executed block is a transcript no test would ever rerun.
    stray = prompts_outside_console(b for p in PAGES for b in parse(p))
    assert not stray, f"{stray}: use ```console (run) or drop the prompt and output (```bash)"


def test_the_runner_compares_what_it_ran(tmp_path: Path) -> None:
    # The check can fail: a page with a wrong output is reported, with the command.
    page = tmp_path / "page.md"
    page.write_text("```console\n$ fabric-stack size --gpus 100\nerror: wrong\n$ echo $?\n2\n```\n")
    results = run_page(page, (PURE,), prepare(tmp_path / "run"))
    assert [r.ok for r in results] == [False, True]
    assert "+error: gpus: 100 is not a multiple of gpus_per_node 8" in results[0].diff()


ROOT_ONLY = {"twin": "needs root and real daemons: shown without output"}
"""Commands the README shows in a ```bash block instead of running them, and why."""


def test_the_readme_runs_every_command() -> None:
    from fabric_stack.cli import COMMANDS

    readme = REPO / "README.md"
    ran = {
        c.text.split()[1]
        for b in parse(readme)
        for c in b.commands
        if c.text.startswith("fabric-stack ")
    }
    shown = readme.read_text(encoding="utf-8")
    assert set(COMMANDS) - ran == set(ROOT_ONLY), f"no README example runs {set(COMMANDS) - ran}"
    assert all(f"fabric-stack {c}" in shown for c in ROOT_ONLY)


# --------------------------------------------------------------------------- architecture


def _architecture_blocks() -> tuple[list[str], list[str]]:
    lines = ARCHITECTURE.read_text(encoding="utf-8").splitlines()
    table = [line for line in lines if re.match(r"^\| \d \|", line)]
    tree = next(
        b.body for b in parse(ARCHITECTURE) if b.body and b.body[0].startswith("fabric_stack/")
    )
    return table, tree


def _name(entry: str, parent: str = "fabric_stack") -> str:
    """`hardware/` → fabric_stack.hardware, `errors.py` → fabric_stack.errors."""
    entry = entry.strip("`").rstrip("/")
    if entry == "__init__.py":
        return parent
    return f"{parent}.{entry.removesuffix('.py').replace('/', '.')}"


def test_the_layer_table_is_test_layers_table() -> None:
    table, _ = _architecture_blocks()
    shown = {
        _name(item): int(row.split("|")[1])
        for row in table
        for item in re.findall(r"`([^`]+)`", row.split("|")[3])
    }
    assert shown == {**FOLDERS, **ROOT_MODULES}


def test_the_package_tree_lists_every_folder_and_root_module_with_its_layer() -> None:
    _, tree = _architecture_blocks()
    shown: dict[str, int] = {}
    stack: list[str] = []
    for line in tree[1:]:
        m = re.match(r"^( *)(\S+)\s+(\d|-)\s", line)
        assert m, f"docs/architecture.md tree line not `name  layer  what`: {line!r}"
        depth = len(m[1]) // 2
        if depth == 0:  # components/, policies/: outside the package
            continue
        stack[depth - 1 :] = [m[2].rstrip("/")]
        parent = ".".join(["fabric_stack", *stack[:-1]])
        shown[_name(m[2], parent)] = int(m[3])
    folders = {
        ".".join(p.relative_to(REPO).parts)
        for p in PKG.rglob("*")
        if p.is_dir() and (p / "__init__.py").exists()
    }
    modules = {f"fabric_stack.{p.stem}" for p in PKG.glob("*.py") if p.stem != "__init__"}
    real = folders | modules | {"fabric_stack"}
    assert set(shown) == real, (
        f"missing: {sorted(real - set(shown))}, not in the package: {sorted(set(shown) - real)}"
    )
    assert shown == {name: layer_of(name) for name in shown}


# --------------------------------------------------------------------------- the site


def test_the_site_builds_strictly_with_every_page_in_the_nav(tmp_path: Path) -> None:
    mkdocs = REPO / ".venv" / "bin" / "mkdocs"
    if not mkdocs.exists():
        pytest.fail(f"{mkdocs} is missing: `make venv` installs the dev extras (mkdocs)")
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def pages(entries: object) -> list[str]:
        if isinstance(entries, str):
            return [entries]
        if isinstance(entries, list):
            return [p for e in entries for p in pages(e)]
        assert isinstance(entries, dict)
        return [p for v in entries.values() for p in pages(v)]

    assert sorted(pages(nav)) == sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    r = subprocess.run(
        [str(mkdocs), "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_PATH = re.compile(
    r"`((?:fabric_stack|components|policies|tests|scripts|bench|docs)/[\w./-]*)(?:::\w+)?`"
)


def test_every_link_and_path_a_page_names_exists() -> None:
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        # A `[1](c42a…)` inside a code span is a tool's output, not a link.
        for target in _LINK.findall(_CODE_SPAN.sub("", text)):
            if not re.match(r"^[a-z]+:", target) and not (page.parent / target).exists():
                missing.append(f"{_rel(page)}: link {target}")
        for path in _PATH.findall(text):
            if not (REPO / path).exists():
                missing.append(f"{_rel(page)}: path {path}")
    assert not missing, missing


def test_every_make_target_a_page_names_exists() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    named: set[str] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"`make ([a-z][\w -]*)`", text):  # `make docs docs-examples`
            named.update(m[1].split())
        for b in parse(page):  # make lines of a shell block: `make test-fast   # …`
            named.update(line.split()[1] for line in b.body if line.startswith("make "))
    assert named - targets == set(), f"Makefile lacks {sorted(named - targets)}"


def test_the_commands_docs_run_are_on_this_machine() -> None:
    # The examples pipe through a few standard tools; a missing one is a setup error.
    for tool in ("bash", "grep", "sed", "head", "tail", "cut"):
        assert shutil.which(tool), tool
