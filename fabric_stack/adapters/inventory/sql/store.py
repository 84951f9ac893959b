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
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fabric_stack.adapters.inventory.resolve as resolve
from fabric_stack.adapters.inventory.protocol import InventoryStore
from fabric_stack.adapters.inventory.sql.schema import migrate
from fabric_stack.errors import InputFileError, InventoryError
from fabric_stack.files.inputs import parse_json
from fabric_stack.text.redact import echo_env, mask_url, mask_urls

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


CONNECT_TIMEOUT_ENV = "FABRIC_STACK_PG_CONNECT_TIMEOUT"
"""Seconds to reach a PostgreSQL server and finish its handshake (default 10)."""

STATEMENT_TIMEOUT_ENV = "FABRIC_STACK_PG_STATEMENT_TIMEOUT"
"""Seconds one read statement may run on PostgreSQL (default 45; the client's own bound,
``FABRIC_STACK_PG_QUERY_TIMEOUT``, is 60: :mod:`.guard`)."""

MAX_SPEED_GBPS = 2**31 - 1
"""Largest speed the ``speed_gbps`` column holds (PostgreSQL ``INTEGER``)."""


def env_seconds(name: str, default: int) -> int:
    """Whole seconds from environment variable ``name`` (>= 1), else ``default``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 86400:
        raise InventoryError(f"{echo_env(name, raw)}: expected whole seconds from 1 to 86400")
    return int(raw)


def pg_hostaddr(url: str, seconds: float) -> dict[str, str]:
    """``{"hostaddr": IP}`` for a PostgreSQL URL naming one host by name, looked up within
    ``seconds`` (psycopg's own lookup has no timeout: ``connect_timeout`` starts after it);
    ``{}`` when there is nothing to look up (an address, a socket directory, several hosts).

    Raises OSError (:class:`~.resolve.ResolveTimeout` or ``socket.gaierror``) for a name
    that does not resolve in time or at all.
    """
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = conninfo_to_dict(url)
    except Exception:  # psycopg.connect names what is wrong with the URL
        return {}
    host = str(params.get("host") or "")
    if params.get("hostaddr") or not host or "," in host or host.startswith("/"):
        return {}
    if resolve.is_address(host):
        return {}
    raw_port = str(params.get("port") or "5432")
    port = int(raw_port) if raw_port.isdigit() and int(raw_port) < 65536 else 5432
    addrs = list(dict.fromkeys(str(a[4][0]) for a in resolve.resolve(host, port, seconds)))
    # Every address, as libpq would try them (localhost: ::1, then 127.0.0.1).
    return {"host": ",".join([host] * len(addrs)), "hostaddr": ",".join(addrs)}


def sqlite_path(url: str) -> Path:
    """File path of a ``sqlite:///relative`` or ``sqlite:////absolute`` URL (or a bare path)."""
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///") :])
    if url.startswith("sqlite://"):
        raise InventoryError(
            f"inventory URL {url!r}: use sqlite:///relative/path.db or sqlite:////absolute/path.db"
        )
    return Path(url)


def props_of(raw: Any, where: str) -> dict[str, Any]:
    """A row's ``props`` column as an object; InventoryError naming ``where`` (the table,
    the record's key and the field) when it is not a JSON object."""
    try:
        value = parse_json(raw, where) if isinstance(raw, str) else raw
    except InputFileError as exc:
        raise InventoryError(f"{where}.props: {exc.problem}") from None
    except ValueError as exc:
        raise InventoryError(f"{where}.props: not JSON ({str(exc).split(':')[0]})") from None
    if not isinstance(value, dict):
        raise InventoryError(f"{where}.props: expected a JSON object, got {type(value).__name__}")
    return value


def db_problem(exc: Exception, timeout_s: int) -> str:
    """What a database error means for the user, with what to run (one line, no driver noise)."""
    text = " ".join(str(exc).split())[:200] or type(exc).__name__
    name = type(exc).__name__
    low = text.lower()
    if name == "QueryCanceled" or "statement timeout" in low:
        return (
            f"a read ran longer than {timeout_s} s and was cancelled "
            f"(set {STATEMENT_TIMEOUT_ENV} to allow more)"
        )
    if name == "InsufficientPrivilege" or "permission denied" in low or "readonly" in low:
        return (
            f"permission denied ({text}); grant this role SELECT, INSERT, UPDATE, DELETE on "
            "fabric_inventory, or run `fabric-stack inventory upgrade` as the database owner"
        )
    if name in ("UndefinedTable", "UndefinedColumn") or "no such" in low or "does not exist" in low:
        return (
            f"the schema is not this fabric-stack's ({text}); run `fabric-stack inventory "
            "upgrade` as the database owner, or check that the URL names the inventory"
        )
    return f"database error ({text})"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _row(
    stack: str, kind: str, name: str, props: Mapping[str, Any], bundle: str, status: str
) -> tuple[Any, ...]:
    speed = props.get("a_speed_gbps") or props.get("speed_gbps") or props.get("port_gbps") or 0
    if not isinstance(speed, int | float) or not 0 <= speed <= MAX_SPEED_GBPS:
        raise InventoryError(
            f"record {stack}/{kind}/{name}: speed_gbps {str(speed)[:40]!r} is not a whole "
            f"number from 0 to {MAX_SPEED_GBPS}"
        )
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


def enable_wal(conn: sqlite3.Connection, seconds: float) -> None:
    """Put the SQLite file in WAL mode, waiting up to ``seconds`` for other connections.

    SQLite answers ``database is locked`` at once, without its busy handler, when several
    connections switch a new file to WAL together (the providers' first writes of a fresh
    inventory: a benchmark's ``pulumi up`` failed so, and 16 processes on a new file fail
    about one time in three here), so the switch is retried until the deadline.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class SqlStore(InventoryStore):
    """Records of one or more stacks in SQLite or PostgreSQL. Every method is one transaction."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.dialect = (
            "postgresql" if url.startswith(("postgresql://", "postgres://")) else "sqlite"
        )
        self._ph = "%s" if self.dialect == "postgresql" else "?"
        self._ready = False
        self.wal = True  # concurrent writers (the providers) need WAL; an import does not
        self.statement_timeout = env_seconds(STATEMENT_TIMEOUT_ENV, 45)

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
                if self.wal:
                    enable_wal(conn, 60.0)
                conn.execute("PRAGMA busy_timeout=60000")
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise InventoryError(
                        f"inventory {path}: {db_problem(exc, 0)}; nothing was written"
                    ) from None
                raise
            finally:
                conn.close()
        else:
            import psycopg
            from psycopg.conninfo import make_conninfo

            wait = env_seconds(CONNECT_TIMEOUT_ENV, 10)
            try:
                extra = pg_hostaddr(self.url, wait)
                where = make_conninfo(self.url, **extra) if extra else self.url
                pg = psycopg.connect(where, connect_timeout=wait)
            except OSError as exc:  # the name lookup: stalled, or no such host
                raise InventoryError(
                    f"inventory {mask_url(self.url)}: cannot connect ({exc.strerror or exc})"
                ) from None
            except psycopg.Error as exc:
                lines = mask_urls(str(exc).replace(self.url, mask_url(self.url))).splitlines()
                msg = lines[0] if lines else type(exc).__name__
                raise InventoryError(
                    f"inventory {mask_url(self.url)}: cannot connect ({msg})"
                ) from None
            from fabric_stack.adapters.inventory.sql import guard

            bound = env_seconds(guard.QUERY_TIMEOUT_ENV, guard.DEFAULT_QUERY_TIMEOUT_S)
            watch = guard.guard(pg, bound)
            try:
                with guard.guarded_transaction(pg, watch):
                    yield pg
            except psycopg.Error as exc:
                if watch.fired:
                    raise InventoryError(
                        f"inventory {mask_url(self.url)}: the server did not answer a query "
                        f"within {watch.seconds:g} s (set {guard.QUERY_TIMEOUT_ENV} to allow "
                        "more; is the server, or a proxy in front of it, stuck?); nothing was "
                        "written"
                    ) from None
                raise self._pg_problem(exc) from None
            finally:
                pg.close()

    def _pg_problem(self, exc: Exception) -> InventoryError:
        """One line for a PostgreSQL error inside a transaction (nothing of it committed)."""
        import psycopg

        if isinstance(exc, (psycopg.errors.QueryCanceled, psycopg.ProgrammingError)):
            return InventoryError(
                f"inventory {mask_url(self.url)}: "
                f"{mask_urls(db_problem(exc, self.statement_timeout))}; nothing was written"
            )
        if isinstance(exc, psycopg.OperationalError):
            # The server went away mid-transaction (restart, network): nothing of
            # this call was committed. One line, not a driver traceback.
            lines = mask_urls(str(exc).replace(self.url, mask_url(self.url))).strip().splitlines()
            return InventoryError(
                f"inventory {mask_url(self.url)}: connection lost "
                f"({lines[0] if lines else type(exc).__name__}); this write was not committed"
            )
        # Anything else the driver raises: one line too.
        return InventoryError(f"inventory {mask_url(self.url)}: {mask_urls(db_problem(exc, 0))}")

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

    def _where(self, stack: str, kind: str, name: str) -> str:
        """How a message names one row: the inventory, the table and the record's key."""
        where = sqlite_path(self.url) if self.dialect == "sqlite" else mask_url(self.url)
        return f"inventory {where}: fabric_inventory {stack}/{kind}/{name}"

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
        return {**props_of(row[0], self._where(stack, kind, name)), "status": row[1]}

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
        return [
            {**props_of(p, self._where(stack, kind, n)), "name": n, "status": s} for n, p, s in rows
        ]

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
            {
                **props_of(p, self._where(s, kind, n)),
                "name": n,
                "status": st,
                "stack": s,
                "bundle": b,
            }
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
