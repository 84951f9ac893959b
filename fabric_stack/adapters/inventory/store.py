"""The SQL inventory store: one table of fabric records, typed columns plus JSON props.

Layout (both backends)::

    fabric_inventory(stack, kind, name, bundle, status, role, model, rack,
                     a_device, a_port, b_device, b_port, speed_gbps,
                     props, updated_at, created_at)   PRIMARY KEY (stack, kind, name)

``kind`` is the intent record kind (Switch, Cable, RdmaNic, Rail, Vlan,
Fabric). Cables are stored one row per cable even when Pulumi manages them in
bundles (``bundle`` names the managing resource), because the datacenter team
works cable by cable. Views ``inventory_switches`` and ``inventory_cables``
give a human-friendly cut. The schema is versioned and migrated forward on
first use (:mod:`.schema`).

Connections are opened per call: the Pulumi dynamic providers that use this
store must stay stateless (they are pickled into every resource's state).
:class:`SqlStore` is one implementation of
:class:`~fabric_stack.adapters.inventory.protocol.InventoryStore`; ``open_store``
(:mod:`.connect`) opens it for ``sqlite:`` and ``postgresql:`` URLs.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabric_stack.adapters.inventory.protocol import InventoryStore
from fabric_stack.adapters.inventory.schema import migrate
from fabric_stack.errors import InventoryError
from fabric_stack.text.redact import mask_url

COLUMNS = (
    "stack",
    "kind",
    "name",
    "bundle",
    "status",
    "role",
    "model",
    "rack",
    "a_device",
    "a_port",
    "b_device",
    "b_port",
    "speed_gbps",
    "props",
    "updated_at",
)
_TYPED = ("role", "model", "rack", "a_device", "a_port", "b_device", "b_port")

# Columns written on insert; ``created_at`` is kept when a later write updates the row.
_INSERT = (*COLUMNS, "created_at")
_UPSERT = (
    f"INSERT INTO fabric_inventory ({', '.join(_INSERT)}) "
    f"VALUES ({', '.join(['?'] * len(_INSERT))}) "
    "ON CONFLICT (stack, kind, name) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[3:])
)


def sqlite_path(url: str) -> Path:
    """File path of a ``sqlite:///relative`` or ``sqlite:////absolute`` URL (or a bare path)."""
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///") :])
    if url.startswith("sqlite://"):
        raise InventoryError(
            f"inventory URL {url!r}: use sqlite:///relative/path.db or sqlite:////absolute/path.db"
        )
    return Path(url)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _row(
    stack: str, kind: str, name: str, props: Mapping[str, Any], bundle: str, status: str
) -> tuple[Any, ...]:
    speed = props.get("a_speed_gbps") or props.get("speed_gbps") or props.get("port_gbps") or 0
    now = _now()
    return (
        stack,
        kind,
        name,
        bundle,
        status,
        *(str(props.get(c, "") or "") for c in _TYPED),
        int(speed),
        json.dumps(dict(props), sort_keys=True),
        now,
        now,
    )


class SqlStore(InventoryStore):
    """Records of one or more stacks in SQLite or PostgreSQL. Every method is one transaction."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.dialect = (
            "postgresql" if url.startswith(("postgresql://", "postgres://")) else "sqlite"
        )
        self._ph = "%s" if self.dialect == "postgresql" else "?"
        self._ready = False

    # -- connections -----------------------------------------------------------------
    @contextmanager
    def _conn(self) -> Iterator[Any]:
        if self.dialect == "sqlite":
            path = sqlite_path(self.url)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, timeout=60, isolation_level=None)
            except (OSError, sqlite3.Error) as exc:
                raise InventoryError(f"inventory {path}: cannot open ({exc})") from None
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA busy_timeout=60000")
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            finally:
                conn.close()
        else:
            import psycopg

            try:
                pg = psycopg.connect(self.url, connect_timeout=10)
            except psycopg.Error as exc:
                msg = str(exc).replace(self.url, mask_url(self.url)).splitlines()[0]
                raise InventoryError(
                    f"inventory {mask_url(self.url)}: cannot connect ({msg})"
                ) from None
            try:
                with pg.transaction():
                    yield pg
            except psycopg.OperationalError as exc:
                # The server went away mid-transaction (restart, network): nothing of
                # this call was committed. One line, not a driver traceback.
                lines = str(exc).replace(self.url, mask_url(self.url)).strip().splitlines()
                raise InventoryError(
                    f"inventory {mask_url(self.url)}: connection lost "
                    f"({lines[0] if lines else type(exc).__name__}); this write was not committed"
                ) from None
            finally:
                pg.close()

    def _ensure(self, conn: Any) -> None:
        """Create or upgrade the schema on first use (see :mod:`.schema`); one check per store."""
        if self._ready:
            return

        def lock() -> None:
            # A team database is often provisioned by its owner and written by a role
            # that may not run DDL: DDL only runs when the schema is missing or old,
            # and concurrent first-time creation is serialised across processes.
            if self.dialect == "postgresql":
                conn.execute("SELECT pg_advisory_xact_lock(727274)")

        migrate(conn, self.dialect, lock)
        self._ready = True

    def _exec(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(sql.replace("?", self._ph), params)

    # -- writes ----------------------------------------------------------------------
    def put(
        self,
        stack: str,
        kind: str,
        name: str,
        props: Mapping[str, Any],
        *,
        bundle: str = "",
        status: str = "planned",
    ) -> None:
        """Insert or replace one record."""
        self.put_many(stack, kind, [(name, props)], bundle=bundle, status=status)

    def put_many(
        self,
        stack: str,
        kind: str,
        records: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        bundle: str = "",
        status: str = "planned",
    ) -> None:
        """Insert or replace many records in one transaction."""
        rows = [_row(stack, kind, name, props, bundle, status) for name, props in records]
        with self._conn() as conn:
            self._ensure(conn)
            self._upsert(conn, rows)

    def _upsert(self, conn: Any, rows: Sequence[tuple[Any, ...]]) -> None:
        if self.dialect == "sqlite":
            conn.executemany(_UPSERT, rows)
        else:
            with conn.cursor() as cur:
                cur.executemany(_UPSERT.replace("?", "%s"), rows)

    def replace_bundle(
        self,
        stack: str,
        kind: str,
        bundle: str,
        records: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        status: str = "planned",
    ) -> None:
        """Make ``bundle`` hold exactly ``records``: upsert them, delete the bundle's others."""
        recs = list(records)
        names = [n for n, _ in recs]
        with self._conn() as conn:
            self._ensure(conn)
            existing = {
                r[0]
                for r in self._exec(
                    conn,
                    "SELECT name FROM fabric_inventory WHERE stack = ? AND kind = ? AND bundle = ?",
                    (stack, kind, bundle),
                ).fetchall()
            }
            gone = sorted(existing - set(names))
            for name in gone:
                self._exec(
                    conn,
                    "DELETE FROM fabric_inventory WHERE stack = ? AND kind = ? AND name = ?",
                    (stack, kind, name),
                )
            self._upsert(conn, [_row(stack, kind, n, p, bundle, status) for n, p in recs])

    def delete(self, stack: str, kind: str, name: str, *, unbundled_only: bool = False) -> None:
        """Remove one record (no error when it is already gone).

        ``unbundled_only``: leave it if a bundle now holds it (a per-cable resource
        being deleted after the stack switched to bundles must not take the row along).
        """
        sql = "DELETE FROM fabric_inventory WHERE stack = ? AND kind = ? AND name = ?"
        with self._conn() as conn:
            self._ensure(conn)
            self._exec(
                conn, sql + (" AND bundle = ''" if unbundled_only else ""), (stack, kind, name)
            )

    def delete_bundle(self, stack: str, kind: str, bundle: str) -> None:
        """Remove every record of a bundle."""
        with self._conn() as conn:
            self._ensure(conn)
            self._exec(
                conn,
                "DELETE FROM fabric_inventory WHERE stack = ? AND kind = ? AND bundle = ?",
                (stack, kind, bundle),
            )

    # -- reads -----------------------------------------------------------------------
    def get(self, stack: str, kind: str, name: str) -> dict[str, Any] | None:
        """One record's props (with ``status``), or None when absent."""
        with self._conn() as conn:
            self._ensure(conn)
            row = self._exec(
                conn,
                "SELECT props, status FROM fabric_inventory "
                "WHERE stack = ? AND kind = ? AND name = ?",
                (stack, kind, name),
            ).fetchone()
        if row is None:
            return None
        return {**json.loads(row[0]), "status": row[1]}

    def get_bundle(self, stack: str, kind: str, bundle: str) -> list[dict[str, Any]]:
        """Records of a bundle, ordered by name, each with ``name`` and ``status``."""
        with self._conn() as conn:
            self._ensure(conn)
            rows = self._exec(
                conn,
                "SELECT name, props, status FROM fabric_inventory "
                "WHERE stack = ? AND kind = ? AND bundle = ? ORDER BY name",
                (stack, kind, bundle),
            ).fetchall()
        return [{**json.loads(p), "name": n, "status": s} for n, p, s in rows]

    def list_records(self, kind: str, stack: str | None = None) -> list[dict[str, Any]]:
        """All records of ``kind`` (optionally of one stack), with name, status, stack, bundle."""
        sql = "SELECT stack, name, bundle, status, props FROM fabric_inventory WHERE kind = ?"
        params: list[Any] = [kind]
        if stack is not None:
            sql += " AND stack = ?"
            params.append(stack)
        with self._conn() as conn:
            self._ensure(conn)
            rows = self._exec(conn, sql + " ORDER BY stack, name", params).fetchall()
        return [
            {**json.loads(p), "name": n, "status": st, "stack": s, "bundle": b}
            for s, n, b, st, p in rows
        ]

    def counts(self, stack: str | None = None) -> dict[str, int]:
        """Records per kind."""
        sql = "SELECT kind, COUNT(*) FROM fabric_inventory"
        params: list[Any] = []
        if stack is not None:
            sql += " WHERE stack = ?"
            params.append(stack)
        with self._conn() as conn:
            self._ensure(conn)
            rows = self._exec(conn, sql + " GROUP BY kind", params).fetchall()
        return {k: int(c) for k, c in rows}

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run raw SQL (``?`` placeholders) in one transaction; for tests and admin edits."""
        with self._conn() as conn:
            self._ensure(conn)
            cur = self._exec(conn, sql, params)
            # A statement without a result set (UPDATE, DELETE) has no description; any
            # other fetch error is real and must surface, not read as "no rows".
            if cur.description is None:
                return []
            return [tuple(r) for r in cur.fetchall()]


_URL = re.compile(r"^(sqlite:///|postgres(ql)?://)")


def check_sql_url(url: str) -> None:
    """InventoryError unless ``url`` names an SQL inventory (or is the path of an SQLite file)."""
    if not url or not (_URL.match(url) or url.endswith((".db", ".sqlite", ".sqlite3"))):
        raise InventoryError(
            f"inventory URL {mask_url(url)!r} is not supported "
            "(use sqlite:///path/to/inventory.db, postgresql://user:pass@host:port/db "
            "or netbox+https://HOST)"
        )
