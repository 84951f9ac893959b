"""Every generated output equals its golden file (regenerate: ``make goldens``)."""

from __future__ import annotations

import pytest

from tests.regenerate import GOLDEN_DIR, all_goldens

_FILES = all_goldens()
_OWN = {p.name for p in GOLDEN_DIR.glob("*.py")} | {"README.md"}
"""This test package's own files and README (the golden data shares its folder)."""


@pytest.mark.parametrize("rel", sorted(_FILES))
def test_golden(rel: str) -> None:
    path = GOLDEN_DIR / rel
    assert path.exists(), f"missing golden {rel}: run `make goldens` and review the diff"
    expected = path.read_text(encoding="utf-8")
    assert _FILES[rel] == expected, f"{rel} differs from its golden; if intended, `make goldens`"


def test_no_stale_goldens() -> None:
    stale = [
        p.relative_to(GOLDEN_DIR).as_posix()
        for p in GOLDEN_DIR.rglob("*")
        if p.is_file()
        and p.relative_to(GOLDEN_DIR).as_posix() not in _FILES.keys() | _OWN
        and "__pycache__" not in p.parts
    ]
    assert not stale, f"golden files nobody generates: {stale}"
