"""Read-only access to the inventory, for commands that only look (drift, inventory listing).

A read-only command must never create or alter a database: a typo in
``sqlite:///typo/inventroy.db`` is an error naming the path, not a new empty
database that reports every device missing. So SQLite is opened with a
``mode=ro`` URI (SQLite itself refuses writes), the journal mode is never
touched (a wrong database is not switched to WAL), the schema is never created,
and a file that is not a fabric-stack inventory is one clear line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

from fabric_stack.adapters.inventory.sql.store import SqlStore, db_problem, sqlite_path
from fabric_stack.errors import InventoryError
from fabric_stack.text.redact import mask_url

TABLE = "fabric_inventory"


class ReadOnlyStore(SqlStore):
    """An SQL store that refuses to create, migrate or write anything (opened by
    :func:`fabric_stack.adapters.inventory.connect.open_read_only`)."""

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        if self.dialect != "sqlite":
            with super()._conn() as pg:
                pg.execute("SET TRANSACTION READ ONLY")
                # A read that never ends (a lock held by a stuck writer, a huge table on a
                # slow server) is cancelled by the server itself, with one line.
                pg.execute(f"SET LOCAL statement_timeout = {int(self.statement_timeout) * 1000}")
                yield pg
            return
        path = sqlite_path(self.url)
        if not path.is_file():
            what = "is not a file" if path.exists() else "does not exist"
            raise InventoryError(
                f"inventory {path}: {what} (read-only commands never create a database; "
                "check the path, or run `fabric-stack apply` to record one)"
            )
        try:
            conn = sqlite3.connect(
                f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=60
            )
        except sqlite3.Error as exc:
            raise InventoryError(f"inventory {path}: cannot open ({exc})") from None
        try:
            yield conn
        except sqlite3.DatabaseError as exc:  # any read of a file that is not an inventory
            raise InventoryError(
                f"inventory {path}: {db_problem(exc, 0)} (is it a fabric-stack inventory?)"
            ) from None
        finally:
            conn.close()

    def _ensure(self, conn: Any) -> None:
        if self._ready:
            return
        where = sqlite_path(self.url) if self.dialect == "sqlite" else mask_url(self.url)
        try:
            if self.dialect == "sqlite":
                row = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
                ).fetchone()
            else:
                row = conn.execute(f"SELECT to_regclass('{TABLE}')").fetchone()
                row = row if row and row[0] is not None else None
        except sqlite3.DatabaseError as exc:
            raise InventoryError(f"inventory {where}: not an SQLite database ({exc})") from None
        if row is None:
            raise InventoryError(
                f"inventory {where}: not a fabric-stack inventory (no {TABLE} table)"
            )
        self._ready = True

    def _exec(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        try:
            return super()._exec(conn, sql, params)
        except sqlite3.Error as exc:
            where = sqlite_path(self.url)
            raise InventoryError(
                f"inventory {where}: cannot read records: {db_problem(exc, 0)}"
            ) from None


__all__ = ["ReadOnlyStore"]
