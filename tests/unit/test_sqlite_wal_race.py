"""The WAL switch of a fresh SQLite inventory is retried while other writers hold it.

Measured on this machine, idle: 16 processes opening a new file together and switching it
to WAL (the providers' first writes of a fresh inventory) got ``database is locked`` at
once, without SQLite's busy handler, 11 times in 30 rounds; a benchmark's ``pulumi up``
failed so. The race needs an idle machine to show, so these tests drive ``enable_wal``
with a connection that answers as SQLite did.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from fabric_stack.adapters.inventory.sql.store import enable_wal


class _Conn:
    """Answers ``database is locked`` to the first ``locked`` statements, then succeeds."""

    def __init__(self, locked: int, error: str = "database is locked") -> None:
        self.locked, self.error, self.calls = locked, error, 0

    def execute(self, sql: str) -> Any:
        self.calls += 1
        if self.calls <= self.locked:
            raise sqlite3.OperationalError(self.error)
        return None


def test_a_locked_switch_is_retried_until_it_succeeds() -> None:
    conn = _Conn(locked=5)
    enable_wal(conn, 5.0)  # type: ignore[arg-type]
    assert conn.calls == 6


def test_a_lock_held_past_the_deadline_is_raised() -> None:
    conn = _Conn(locked=10**9)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        enable_wal(conn, 0.05)  # type: ignore[arg-type]


def test_other_errors_are_not_retried() -> None:
    conn = _Conn(locked=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        enable_wal(conn, 5.0)  # type: ignore[arg-type]
    assert conn.calls == 1


def test_a_real_file_ends_in_wal_mode(tmp_path: Any) -> None:
    conn = sqlite3.connect(tmp_path / "inv.db", isolation_level=None)
    enable_wal(conn, 1.0)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
