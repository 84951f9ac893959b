"""Inventory schema versions and the forward migrations between them.

A database records the migrations applied to it in ``fabric_inventory_schema``
(one row per version). Opening a store brings it to :data:`SCHEMA_VERSION` in
one transaction, so a failed upgrade leaves the previous schema intact:

* version 1: the first schema (``fabric_inventory``, its bundle index and the
  ``inventory_switches`` / ``inventory_cables`` views). Databases written before
  versions were tracked have this table but no version table: they are
  recognised as version 1 and upgraded from there;
* version 2: ``created_at`` (when a record was first written; ``updated_at``
  moves on every change). Rows that predate it get their ``updated_at``, the
  best known bound; the views show it.

A database newer than this fabric-stack is refused, never downgraded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fabric_stack.errors import InventoryError

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "current_version", "migrate"]

VERSION_TABLE = "fabric_inventory_schema"

_V1 = """
CREATE TABLE IF NOT EXISTS fabric_inventory (
    stack       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    bundle      TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'planned',
    role        TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    rack        TEXT NOT NULL DEFAULT '',
    a_device    TEXT NOT NULL DEFAULT '',
    a_port      TEXT NOT NULL DEFAULT '',
    b_device    TEXT NOT NULL DEFAULT '',
    b_port      TEXT NOT NULL DEFAULT '',
    speed_gbps  INTEGER NOT NULL DEFAULT 0,
    props       TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (stack, kind, name)
);
CREATE INDEX IF NOT EXISTS fabric_inventory_bundle ON fabric_inventory (stack, kind, bundle);
CREATE VIEW inventory_switches AS
    SELECT stack, name, role, model, rack, status, updated_at
    FROM fabric_inventory WHERE kind = 'Switch';
CREATE VIEW inventory_cables AS
    SELECT stack, name, role, a_device, a_port, b_device, b_port, speed_gbps, status, bundle
    FROM fabric_inventory WHERE kind = 'Cable'
"""

# Views depend on the columns they select, so they are dropped and recreated around
# the column change (SQLite cannot CREATE OR REPLACE a view).
_V2 = """
DROP VIEW IF EXISTS inventory_switches;
DROP VIEW IF EXISTS inventory_cables;
ALTER TABLE fabric_inventory ADD COLUMN created_at TEXT NOT NULL DEFAULT '';
UPDATE fabric_inventory SET created_at = updated_at WHERE created_at = '';
CREATE VIEW inventory_switches AS
    SELECT stack, name, role, model, rack, status, created_at, updated_at
    FROM fabric_inventory WHERE kind = 'Switch';
CREATE VIEW inventory_cables AS
    SELECT stack, name, role, a_device, a_port, b_device, b_port, speed_gbps, status, bundle,
           created_at
    FROM fabric_inventory WHERE kind = 'Cable'
"""


@dataclass(frozen=True)
class Migration:
    """One forward step: the schema version it produces and its SQL statements."""

    version: int
    description: str
    sql: str

    def statements(self) -> list[str]:
        """The migration's statements, one per ``;``."""
        return [s.strip() for s in self.sql.split(";") if s.strip()]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "fabric_inventory table, bundle index, switch and cable views", _V1),
    Migration(2, "created_at: when a record was first written", _V2),
)
SCHEMA_VERSION = MIGRATIONS[-1].version
"""The schema this fabric-stack writes; older databases are migrated up to it."""


def _has_table(conn: Any, dialect: str, name: str) -> bool:
    if dialect == "sqlite":
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return conn.execute(sql, (name,)).fetchone() is not None
    # pg_class is scanned with the statement's snapshot: after the advisory lock this sees a
    # table another process just committed, where to_regclass() may answer from this
    # session's cache that it is still missing.
    sql = (
        "SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
        "ON n.oid = c.relnamespace WHERE c.relname = %s AND n.nspname = current_schema()"
    )
    return conn.execute(sql, (name,)).fetchone() is not None


def current_version(conn: Any, dialect: str) -> int:
    """The schema version of the database behind ``conn``: 0 when it holds no inventory yet."""
    if _has_table(conn, dialect, VERSION_TABLE):
        row = conn.execute(f"SELECT MAX(version) FROM {VERSION_TABLE}").fetchone()
        if row and row[0] is not None:
            return int(row[0])
    # Written before versions were tracked: the first schema.
    return 1 if _has_table(conn, dialect, "fabric_inventory") else 0


def migrate(
    conn: Any, dialect: str, lock: Callable[[], None] | None = None, target: int | None = None
) -> list[Migration]:
    """Bring the database to ``target`` (default :data:`SCHEMA_VERSION`); returns the steps run.

    Runs inside the caller's transaction. ``lock`` is called before the first DDL so
    concurrent openers serialise (PostgreSQL: an advisory lock); the version is then
    read again, because another process may have migrated meanwhile. Raises
    InventoryError for a database newer than this fabric-stack.
    """
    target = SCHEMA_VERSION if target is None else target
    version = current_version(conn, dialect)
    if version > SCHEMA_VERSION:
        raise InventoryError(
            f"inventory schema version {version} is newer than this fabric-stack "
            f"(version {SCHEMA_VERSION}): upgrade fabric-stack; the database was left as it is"
        )
    if version >= target:
        return []
    if lock is not None:
        lock()
        version = current_version(conn, dialect)
    ph = "?" if dialect == "sqlite" else "%s"
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version INTEGER PRIMARY KEY, "
        "description TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if version == 1 and not _recorded(conn, 1):
        conn.execute(
            f"INSERT INTO {VERSION_TABLE} VALUES ({ph}, {ph}, {ph})",
            (1, MIGRATIONS[0].description + " (found without a version table)", now),
        )
    done = []
    for m in MIGRATIONS:
        if version < m.version <= target:
            for stmt in m.statements():
                conn.execute(stmt)
            conn.execute(
                f"INSERT INTO {VERSION_TABLE} VALUES ({ph}, {ph}, {ph})",
                (m.version, m.description, now),
            )
            done.append(m)
    return done


def _recorded(conn: Any, version: int) -> bool:
    row = conn.execute(f"SELECT COUNT(*) FROM {VERSION_TABLE} WHERE version = {int(version)}")
    return bool(row.fetchone()[0])
