"""Every member of a symmetry class renders as its stored representative under its table row.

``test_goldens`` already fails when a table changes; this module checks the other way round,
from the files on disk: each ``CLASSES.yaml`` row applied to the representative golden gives
the member's rendered content byte for byte, and every rendered file is pinned exactly once
(stored, or a member of one class). See ``tests/golden/README.md``.
"""

from __future__ import annotations

import pytest

from tests.golden.classes import TABLE, load_table, member_mismatch
from tests.golden_artifacts import rendered, target_directories
from tests.regenerate import GOLDEN_DIR

_ARTIFACTS = GOLDEN_DIR / "artifacts"
_TABLES = {
    p.parent.relative_to(_ARTIFACTS).as_posix(): load_table(p.read_text(encoding="utf-8"))
    for p in sorted(_ARTIFACTS.rglob(TABLE))
}
"""Target directory (``<variant>/<target>``) → its class table, as stored."""
_MEMBERS = [
    (directory, rep, member)
    for directory, table in _TABLES.items()
    for rep, rows in table.items()
    for member in rows
]


@pytest.mark.parametrize(("directory", "rep", "member"), _MEMBERS, ids=lambda v: str(v))
def test_member_renders_as_its_representative(directory: str, rep: str, member: str) -> None:
    representative = (_ARTIFACTS / directory / rep).read_text(encoding="utf-8")
    subs = _TABLES[directory][rep][member]
    mismatch = member_mismatch(rendered()[f"{directory}/{member}"], representative, subs)
    assert mismatch is None, f"{directory}/{member} is not {rep} under its row:\n{mismatch}"


def test_every_rendered_file_is_pinned_once() -> None:
    for directory, files in target_directories(rendered()).items():
        stored = {
            p.relative_to(_ARTIFACTS / directory).as_posix()
            for p in (_ARTIFACTS / directory).rglob("*")
            if p.is_file() and p.name != TABLE
        }
        members = [m for rows in _TABLES.get(directory, {}).values() for m in rows]
        assert len(members) == len(set(members)), f"{directory}: a member in two classes"
        assert not stored & set(members), f"{directory}: a member also stored whole"
        assert stored | set(members) == set(files), f"{directory}: unpinned or extra files"
