"""Regenerate golden files: ``make goldens`` (= ``python -m tests.regenerate [AREA ...]``).

Each ``tests/golden_<area>.py`` module exposes ``generate() -> dict[str, str]``
mapping a path relative to ``tests/golden/`` to its expected content. This
script writes them all; ``tests/golden/test_goldens.py`` compares them. Review the
git diff after regenerating: a changed golden is a changed output.

The ``artifacts`` area stores one file per symmetry class of identical devices and a
``CLASSES.yaml`` table pinning the other members (``tests/golden/README.md``); its
generator derives the classes, so this script needs no special case.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path

GOLDEN_DIR = Path(__file__).parent / "golden"


def generators() -> dict[str, object]:
    """Golden generator modules by area name."""
    import tests

    out = {}
    for info in pkgutil.iter_modules(tests.__path__):
        if info.name.startswith("golden_"):
            out[info.name.removeprefix("golden_")] = importlib.import_module(f"tests.{info.name}")
    return out


def all_goldens(only: set[str] | None = None) -> dict[str, str]:
    """Every golden file's expected content, keyed by path under tests/golden/."""
    files: dict[str, str] = {}
    for area, mod in sorted(generators().items()):
        if only and area not in only:
            continue
        for rel, content in mod.generate().items():  # type: ignore[attr-defined]
            files[f"{area}/{rel}"] = content
    return files


def main(argv: list[str] | None = None) -> int:
    """Write all goldens (or only the areas named on the command line); drop stale ones."""
    only = set(sys.argv[1:] if argv is None else argv) or None
    files = all_goldens(only)
    areas = {k.split("/", 1)[0] for k in files}
    for old in GOLDEN_DIR.rglob("*"):
        rel = old.relative_to(GOLDEN_DIR).as_posix()
        if old.is_file() and rel.split("/", 1)[0] in areas and rel not in files:
            old.unlink()
    for rel, content in files.items():
        p = GOLDEN_DIR / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, encoding="utf-8")
    print(f"wrote {len(files)} golden files under {GOLDEN_DIR}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
