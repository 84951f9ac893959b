"""`repair_file_state`: what a killed `up` leaves torn in a file:// backend, on a built tree.

The real-CLI proof (an emptied sidecar breaks `pulumi preview`, recover fixes it) is
`test_torn_metadata_sidecar_is_removed` in test_stack_integration.py; these cover the
scoping rules fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabric_stack.adapters.pulumi.ops import repair_file_state
from fabric_stack.errors import EngineError

GOOD_CKPT = json.dumps({"version": 3, "checkpoint": {"stack": "organization/p/it"}})
GOOD_ATTRS = json.dumps({"user.content_type": "application/octet-stream"})


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_torn_sidecars_of_the_stack_are_removed_and_nothing_else(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "stacks/p/it.json": GOOD_CKPT,
            "stacks/p/it.json.attrs": "",  # torn: truncated, never rewritten
            "stacks/p/it.json.bak.attrs": GOOD_ATTRS,
            "stacks/p/other.json.attrs": "",  # another stack's: not ours to touch
            "history/p/it/it-1.checkpoint.json.attrs": '{"user.content_ty',
            "locks/organization/p/it/abc.json.attrs": "",
            "backups/p/it/it.1.json.attrs": GOOD_ATTRS,
        },
    )
    steps = repair_file_state(tmp_path, "p", "it")
    assert steps == [
        "removed 3 torn metadata sidecar(s) a kill mid-write left: "
        "it.json.attrs, abc.json.attrs, it-1.checkpoint.json.attrs"
    ]
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.attrs"))
    assert left == [
        "backups/p/it/it.1.json.attrs",
        "stacks/p/it.json.bak.attrs",
        "stacks/p/other.json.attrs",
    ]
    assert repair_file_state(tmp_path, "p", "it") == []  # idempotent


def test_torn_checkpoint_restored_from_the_newest_intact_copy(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "stacks/p/it.json": GOOD_CKPT[:20],
            "stacks/p/it.json.bak": GOOD_CKPT[:10],  # torn too: skipped
            "backups/p/it/it.1.json": GOOD_CKPT,
        },
    )
    steps = repair_file_state(tmp_path, "p", "it")
    assert steps == [
        "restored the torn checkpoint from it.1.json (the torn one is kept as it.json.torn)"
    ]
    assert (tmp_path / "stacks/p/it.json").read_text() == GOOD_CKPT
    assert (tmp_path / "stacks/p/it.json.torn").read_text() == GOOD_CKPT[:20]


def test_torn_checkpoint_without_an_intact_copy_is_an_error(tmp_path: Path) -> None:
    _tree(tmp_path, {"stacks/p/it.json": "{"})
    with pytest.raises(EngineError, match="is torn and no intact backup"):
        repair_file_state(tmp_path, "p", "it")
    assert (tmp_path / "stacks/p/it.json").read_text() == "{"  # left as found
