"""Long work shows progress on a terminal and honours its bound (issue #35).

`render` stops at `--max-seconds` with one line naming how far it got and writes nothing;
on a terminal it shows one status line per target (never in a pipe). NetBox bulk writes
show objects written of those asked for, per type, on a terminal only, through the
wrapper :mod:`fabric_stack.adapters.inventory.netbox.progress` hooks into the store.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.inventory.netbox import progress as netbox_progress
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from fabric_stack.adapters.inventory.netbox.fake import FakeNetBox
from fabric_stack.adapters.inventory.netbox.progress import Tracked, WriteProgress
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.cli import main, progress


def _render(tmp_path: Path, *args: str) -> Any:
    return CliRunner().invoke(
        main, ["render", "all", "--out-dir", str(tmp_path / "out"), *args], catch_exceptions=False
    )


def test_render_stops_at_max_seconds_and_writes_nothing(tmp_path: Path) -> None:
    r = _render(tmp_path, "--max-seconds", "0.000001")
    assert r.exit_code == 2, r.output
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("error: render all: stopped at --max-seconds 1e-06 after 0 of "), line
    assert "targets (nothing written; raise --max-seconds, or render fewer targets)" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*"))


def test_render_shows_progress_per_target_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 0.0)  # every target, however fast
    r = _render(tmp_path)
    assert r.exit_code == 0, r.output
    shown = [s for s in r.stderr.split("\r\x1b[K") if " targets (" in s]
    total = int(shown[0].split("/")[1].split()[0])
    assert [int(s.split(":")[1].split("/")[0]) for s in shown] == list(range(total))
    assert shown[0].startswith(f"render all: 0/{total} targets (") and shown[0].endswith(" s")
    assert r.stderr.count("\r\x1b[K") == total + 1  # each line replaces the last; then cleared
    assert (tmp_path / "out").is_dir()


def test_render_in_a_pipe_shows_no_progress(tmp_path: Path) -> None:
    r = _render(tmp_path)
    assert r.exit_code == 0 and "\r" not in r.stderr and "targets" not in r.stderr


def test_whatif_progress_goes_through_the_same_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 0.0)
    r = CliRunner().invoke(main, ["whatif", "--n-minus-1", "switch", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "\r\x1b[K--n-minus-1 switch: 1/" in r.stderr and " failures, " in r.stderr


# -- NetBox writes -------------------------------------------------------------------------


def _tracked(every_s: float = 0.0) -> tuple[Tracked, list[str]]:
    seen: list[str] = []
    prog = WriteProgress(seen.append, lambda: seen.append("<clear>"), every_s)
    return Tracked(FakeNetBox(), prog), seen


def test_netbox_writes_are_counted_per_type() -> None:
    api, seen = _tracked()
    api.create("dcim/interfaces/", [{"name": f"e{i}"} for i in range(3)])
    made = api.create("dcim/cables", [{"label": "c1"}, {"label": "c2"}])
    api.update("dcim/cables", [{"id": made[0]["id"], "label": "c9"}])
    api.delete("dcim/cables", [made[1]["id"]])
    lines = [s for s in seen if s != "<clear>"]
    assert lines[0].startswith("netbox: dcim/interfaces 0/3 created · ")
    assert lines[-1].startswith(
        "netbox: dcim/interfaces 3/3 created · dcim/cables 2/2 created · "
        "dcim/cables 1/1 updated · dcim/cables 0/1 deleted · "
    )
    assert seen.count("<clear>") == 4  # each line gone once its call returned
    assert [o["label"] for o in api.select("dcim/cables")] == ["c9"]  # the writes went through


def test_a_failed_write_is_not_counted_and_the_line_is_cleared() -> None:
    api, seen = _tracked()
    with pytest.raises(KeyError):  # the fake's own error for an id it does not hold
        api.update("dcim/cables", [{"id": 404, "label": "x"}])
    assert seen[-1] == "<clear>"
    assert api.progress.line().startswith("netbox: dcim/cables 0/1 updated")


def test_the_line_is_shown_at_most_once_per_interval() -> None:
    api, seen = _tracked(every_s=3600)
    for i in range(5):
        api.create("dcim/interfaces", [{"name": f"e{i}"}])
    assert len([s for s in seen if s != "<clear>"]) == 1


def test_the_store_is_tracked_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "netbox+http://:nbt_k.SECRET@nb.example"
    assert isinstance(NetBoxStore(url).api, NetBoxClient)  # pytest's stderr: no terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    store = NetBoxStore(url)
    assert isinstance(store.api, Tracked) and isinstance(store.api.api, NetBoxClient)
    fake = FakeNetBox()
    assert NetBoxStore(url, api=fake).api is fake  # a given client is used as it is
    assert netbox_progress.tracked(fake) is not fake
