"""Inventory export and import: a JSON backup, and a way to move a site between servers.

The document holds every column of every row (``props`` as a JSON object), so
export → import → export gives the same file byte for byte::

    {"format": "fabric-stack-inventory", "schema_version": 2,
     "stacks": ["demo"], "records": [{"stack": "demo", "kind": "Cable", ...}, ...]}

An import is one transaction. A row whose key (stack, kind, name) is already
in the target with the same content is skipped (re-running an import is
harmless); one with different content is a conflict, and any conflict refuses
the whole import: nothing is written. Rows are an SQL inventory's: a NetBox
inventory is refused with one line (NetBox keeps objects, not rows).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabric_stack.adapters.inventory.protocol import InventoryStore
from fabric_stack.adapters.inventory.sql.schema import SCHEMA_VERSION, current_version
from fabric_stack.adapters.inventory.sql.store import (
    _INSERT,
    MAX_SPEED_GBPS,
    SqlStore,
    props_of,
    sqlite_path,
)
from fabric_stack.errors import InputFileError, InventoryError
from fabric_stack.files.inputs import parse_json
from fabric_stack.text.redact import mask_url

__all__ = [
    "FORMAT",
    "ImportResult",
    "dump_document",
    "export_document",
    "import_document",
    "parse_document",
    "schema_version",
    "sql_store",
]

FORMAT = "fabric-stack-inventory"
_KEY = ("stack", "kind", "name")
_TEXT = tuple(c for c in _INSERT if c not in ("speed_gbps", "props"))


@dataclass(frozen=True)
class ImportResult:
    """What an import did: rows inserted, identical rows skipped, per stack."""

    inserted: int
    skipped: int
    stacks: tuple[str, ...]


def sql_store(store: InventoryStore) -> SqlStore:
    """``store`` as the SQL store that holds rows; InventoryError for any other inventory."""
    if not isinstance(store, SqlStore):
        raise InventoryError(
            f"inventory {mask_url(store.url)}: export, import and upgrade work on SQL "
            "inventories (sqlite:///… or postgresql://…), not on a NetBox inventory"
        )
    return store


def export_document(store: InventoryStore, stacks: Sequence[str] = ()) -> dict[str, Any]:
    """Every row (of ``stacks``, or all), ordered by stack, kind and name, as a document.

    Works on a read-only store and on a database not yet upgraded: a schema 1 row's
    ``created_at`` is its ``updated_at``, as the migration would make it.
    """
    store = sql_store(store)
    params: list[str] = []
    where = ""
    if stacks:
        where = f" WHERE stack IN ({', '.join('?' * len(stacks))})"
        params = list(stacks)
    with store._conn() as conn:
        store._ensure(conn)
        old = current_version(conn, store.dialect) < 2
        cols = [("updated_at" if old and c == "created_at" else c) for c in _INSERT]
        sql = f"SELECT {', '.join(cols)} FROM fabric_inventory{where} ORDER BY stack, kind, name"
        rows = store._exec(conn, sql, params).fetchall()
    records = [_record(row, store) for row in rows]
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "stacks": sorted({r["stack"] for r in records}),
        "records": records,
    }


def _record(row: Sequence[Any], store: SqlStore) -> dict[str, Any]:
    """One row as an export record, checked: a bad ``props`` or ``speed_gbps`` is one line
    naming the table, the row's key and the field."""
    rec = dict(zip(_INSERT, row, strict=True))
    where = store._where(*(str(rec[k]) for k in _KEY))
    rec["props"] = props_of(rec["props"], where)
    speed = rec["speed_gbps"]
    if not isinstance(speed, int) or isinstance(speed, bool) or not 0 <= speed <= MAX_SPEED_GBPS:
        raise InventoryError(
            f"{where}.speed_gbps: {str(speed)[:40]!r} is not a whole number from 0 to "
            f"{MAX_SPEED_GBPS}"
        )
    return rec


def dump_document(doc: Mapping[str, Any]) -> str:
    """The document as the text ``inventory export`` writes (one record per line)."""
    head = {k: v for k, v in doc.items() if k != "records"}
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False) for r in doc["records"]]
    body = ",\n  ".join(lines)
    text = json.dumps(head, ensure_ascii=False)[:-1]
    return f'{text}, "records": [\n  {body}\n]}}\n' if lines else f'{text}, "records": []}}\n'


def parse_document(text: str, path: str) -> list[dict[str, Any]]:
    """The records of an export, checked field by field; InputFileError names the bad one."""
    try:
        doc = parse_json(text, path)  # the input layer: integer and nesting budgets too
    except ValueError as exc:
        where = getattr(exc, "lineno", None)
        raise InputFileError(path, f"not JSON ({exc.args[0].split(':')[0]})", where) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InputFileError(path, f'not an inventory export (expected "format": "{FORMAT}")', "$")
    version = doc.get("schema_version")
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise InputFileError(
            path,
            f"schema_version {version!r} is not supported (1 to {SCHEMA_VERSION}; "
            "a newer export needs a newer fabric-stack)",
            "$.schema_version",
        )
    records = doc.get("records")
    if not isinstance(records, list):
        raise InputFileError(path, "records: expected a list of rows", "$.records")
    out = [_check_record(r, path, i) for i, r in enumerate(records)]
    seen: set[tuple[str, ...]] = set()
    for i, rec in enumerate(out):
        key = tuple(rec[k] for k in _KEY)
        if key in seen:
            raise InputFileError(path, f"duplicate record {'/'.join(key)}", f"$.records[{i}]")
        seen.add(key)
    return out


def _check_record(raw: object, path: str, i: int) -> dict[str, Any]:
    where = f"$.records[{i}]"
    if not isinstance(raw, dict):
        raise InputFileError(path, "expected an object", where)
    rec = dict(raw)
    # Exports of schema 1 have no created_at: the migration's rule applies.
    rec.setdefault("created_at", rec.get("updated_at", ""))
    unknown = sorted(set(rec) - set(_INSERT))
    if unknown:
        raise InputFileError(path, f"unknown field {unknown[0]!r}", where)
    for col in _TEXT:
        value = rec.setdefault(col, "")
        if not isinstance(value, str) or (col in _KEY and not value):
            need = "a non-empty string" if col in _KEY else "a string"
            raise InputFileError(path, f"expected {need}", f"{where}.{col}")
    if not isinstance(rec.get("props"), dict):
        raise InputFileError(path, "expected an object of record fields", f"{where}.props")
    speed = rec.setdefault("speed_gbps", 0)
    if not isinstance(speed, int) or isinstance(speed, bool) or not 0 <= speed <= MAX_SPEED_GBPS:
        raise InputFileError(
            path, f"expected a whole number from 0 to {MAX_SPEED_GBPS}", f"{where}.speed_gbps"
        )
    return rec


def _as_row(rec: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(
        json.dumps(rec["props"], sort_keys=True) if c == "props" else rec[c] for c in _INSERT
    )


def import_document(store: InventoryStore, records: Sequence[Mapping[str, Any]]) -> ImportResult:
    """Insert ``records`` in one transaction; refuse all of them on any conflicting row."""
    store = sql_store(store)
    stacks = sorted({str(r["stack"]) for r in records})
    incoming = {tuple(r[k] for k in _KEY): _as_row(r) for r in records}
    # A failed import leaves the database exactly as it was: no journal-mode switch, and
    # no new empty file where there was none (the transaction undoes everything else).
    store.wal = False
    new_file = _new_sqlite_file(store)
    try:
        return _insert(store, stacks, incoming)
    except BaseException:
        if new_file is not None:
            _remove_new_file(new_file)
        raise


def _new_sqlite_file(store: SqlStore) -> Path | None:
    """The SQLite file an import would create (None when it exists or is not SQLite)."""
    if store.dialect != "sqlite":
        return None
    path = sqlite_path(store.url)
    return None if path.exists() else path


def _remove_new_file(path: Path) -> None:
    """Remove the file a failed import created, with its journals (the rest is rolled back)."""
    for extra in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)


def _insert(
    store: SqlStore, stacks: Sequence[str], incoming: Mapping[tuple[Any, ...], tuple[Any, ...]]
) -> ImportResult:
    """Insert the rows of ``incoming`` not already there, in one transaction (see
    :func:`import_document`)."""
    with store._conn() as conn:
        store._ensure(conn)
        existing = _existing_rows(store, conn, stacks)
        conflicts = [k for k, row in incoming.items() if k in existing and existing[k] != row]
        if conflicts:
            shown = ", ".join("/".join(k) for k in sorted(conflicts)[:3])
            more = f" and {len(conflicts) - 3} more" if len(conflicts) > 3 else ""
            raise InventoryError(
                f"import refused: {len(conflicts)} record(s) differ from rows already in "
                f"{mask_url(store.url)} ({shown}{more}); nothing was written"
            )
        new = [row for k, row in incoming.items() if k not in existing]
        sql = (
            f"INSERT INTO fabric_inventory ({', '.join(_INSERT)}) "
            f"VALUES ({', '.join([store._ph] * len(_INSERT))})"
        )
        try:
            if store.dialect == "sqlite":
                conn.executemany(sql, new)
            else:
                with conn.cursor() as cur:
                    cur.executemany(sql, new)
        except Exception as exc:
            # A writer that inserted one of these keys since the check: the
            # transaction rolls back as a whole.
            if "unique" not in str(exc).lower():
                raise
            raise InventoryError(
                f"import refused: {mask_url(store.url)} gained some of these records while "
                "importing (another writer?); nothing was written, run it again"
            ) from None
    return ImportResult(len(new), len(incoming) - len(new), tuple(stacks))


def _existing_rows(
    store: SqlStore, conn: Any, stacks: Sequence[str]
) -> dict[tuple[str, ...], tuple[Any, ...]]:
    if not stacks:
        return {}
    rows = store._exec(
        conn,
        f"SELECT {', '.join(_INSERT)} FROM fabric_inventory "
        f"WHERE stack IN ({', '.join('?' * len(stacks))})",
        list(stacks),
    ).fetchall()
    out = {}
    for row in rows:
        rec = _record(row, store)
        out[tuple(rec[k] for k in _KEY)] = _as_row(rec)
    return out


def schema_version(store: InventoryStore) -> int:
    """The schema version of the database behind ``store`` (read-only stores too)."""
    store = sql_store(store)
    with store._conn() as conn:
        return current_version(conn, store.dialect)
