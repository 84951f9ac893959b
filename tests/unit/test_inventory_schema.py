"""Inventory schema versions, forward migrations, and export / import.

The previous schema is ``tests/data/inventory_schema_v1.sql``: the DDL of the store
before versions were tracked, verbatim, with rows as that code wrote them.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.inventory import mask_url, open_store
from fabric_stack.adapters.inventory.sql.schema import SCHEMA_VERSION
from fabric_stack.adapters.inventory.sql.transfer import dump_document, export_document
from fabric_stack.cli import main
from fabric_stack.errors import InventoryError

V1_SQL = Path(__file__).resolve().parents[1] / "data" / "inventory_schema_v1.sql"
V1_COLUMNS = (
    "stack, kind, name, bundle, status, role, model, rack, a_device, a_port, b_device, b_port, "
    "speed_gbps, props, updated_at"
)


def _v1_statements(dialect: str) -> list[str]:
    sql = "\n".join(line for line in V1_SQL.read_text().splitlines() if not line.startswith("--"))
    if dialect == "postgresql":  # as the old store did on PostgreSQL
        sql = sql.replace("CREATE VIEW IF NOT EXISTS", "CREATE OR REPLACE VIEW")
    return [s.strip() for s in sql.split(";") if s.strip()]


def _make_v1(url: str) -> None:
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        for stmt in _v1_statements("sqlite"):
            conn.execute(stmt)
        conn.commit()
        conn.close()
    else:
        import psycopg

        with psycopg.connect(url) as pg:
            for stmt in _v1_statements("postgresql"):
                pg.execute(stmt)


def _columns(url: str, relation: str) -> list[str]:
    store = open_store(url)
    if store.dialect == "sqlite":
        return [r[1] for r in store.execute(f"PRAGMA table_info({relation})")]
    return [
        r[0]
        for r in store.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = ? ORDER BY ordinal_position",
            (relation,),
        )
    ]


def _check_upgrade(old: str, fresh: str) -> None:
    _make_v1(old)
    store = open_store(old)
    rows = store.execute(f"SELECT {V1_COLUMNS}, created_at FROM fabric_inventory ORDER BY name")
    assert len(rows) == 3
    for row in rows:  # every old column kept; created_at backfilled from updated_at
        assert row[-1] == row[-2] and row[-1].startswith("2026-10-0")
    assert [v for v, *_ in store.execute("SELECT * FROM fabric_inventory_schema")] == [1, 2]
    for rel in ("fabric_inventory", "inventory_switches", "inventory_cables"):
        assert _columns(old, rel) == _columns(fresh, rel), rel
    # The upgraded database works with today's code: reads, the views, an upsert.
    assert store.get("demo", "Switch", "su1-r1-leaf") == {
        "model": "qm9700",
        "port_gbps": 400,
        "ports_down": 16,
        "ports_up": 16,
        "rack": "su1-rack-1",
        "role": "leaf",
        "status": "planned",
    }
    store.put("demo", "Switch", "su1-r1-leaf", {"role": "leaf", "model": "qm9700"})
    ((created, updated),) = store.execute(
        "SELECT created_at, updated_at FROM inventory_switches WHERE name = 'su1-r1-leaf'"
    )
    assert created == "2026-10-01T09:00:00+00:00" and updated > created
    assert store.execute("SELECT created_at FROM inventory_cables") == [
        ("2026-10-01T09:00:01+00:00",)
    ]


def test_v1_sqlite_database_is_upgraded(tmp_path: Path) -> None:
    _check_upgrade(f"sqlite:///{tmp_path / 'old.db'}", f"sqlite:///{tmp_path / 'new.db'}")


def test_a_newer_schema_is_refused_and_left_alone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'inv.db'}"
    open_store(url).put("s", "Vlan", "v", {"vlan": 1})
    open_store(url).execute("INSERT INTO fabric_inventory_schema VALUES (99, 'future', 'x')")
    with pytest.raises(InventoryError, match="schema version 99 is newer than this"):
        open_store(url).get("s", "Vlan", "v")
    conn = sqlite3.connect(tmp_path / "inv.db")
    assert conn.execute("SELECT MAX(version) FROM fabric_inventory_schema").fetchone() == (99,)


def _fill(url: str) -> None:
    store = open_store(url)
    store.put("site-a", "Switch", "spine-01", {"role": "spine", "model": "qm9700", "rack": "r1"})
    store.put_many(
        "site-a",
        "Cable",
        [
            (f"leaf:1/{i}/1", {"role": "leaf_spine", "a_device": "leaf", "a_speed_gbps": 400})
            for i in range(1, 6)
        ],
        bundle="leaf/uplinks",
    )
    store.put("site-b", "Vlan", "storage", {"vlan": 200, "note": "ünïcode"}, status="installed")


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _roundtrip(src: str, dst: str, tmp_path: Path) -> None:
    _fill(src)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    r = _cli("inventory", "export", "--inventory", src, "--out", str(first))
    assert r.exit_code == 0, r.output
    assert "exported 7 records of 2 stack(s)" in r.output
    r = _cli("inventory", "import", str(first), "--inventory", dst)
    assert r.exit_code == 0, r.output
    assert "imported 7 records" in r.output
    r = _cli("inventory", "--inventory", dst, "export", "--out", str(second))
    assert r.exit_code == 0, r.output
    assert first.read_bytes() == second.read_bytes()
    doc = json.loads(first.read_text())
    assert doc["schema_version"] == SCHEMA_VERSION and doc["stacks"] == ["site-a", "site-b"]
    # Importing the same file again is harmless.
    r = _cli("inventory", "import", str(first), "--inventory", dst)
    assert r.exit_code == 0 and "imported 0 records" in r.output and "7 already there" in r.output


def test_export_import_round_trip_sqlite(tmp_path: Path) -> None:
    _roundtrip(f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}", tmp_path)


def _conflict(dst: str, tmp_path: Path) -> None:
    src = f"sqlite:///{tmp_path / 'src.db'}"
    _fill(src)
    out = tmp_path / "all.json"
    assert _cli("inventory", "export", "--inventory", src, "--out", str(out)).exit_code == 0
    target = open_store(dst)
    target.put("site-b", "Vlan", "storage", {"vlan": 201})  # the same key, other content
    before = export_document(target)
    r = _cli("inventory", "import", str(out), "--inventory", dst)
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1] == (
        f"error: import refused: 1 record(s) differ from rows already in {mask_url(dst)} "
        "(site-b/Vlan/storage); nothing was written"
    )
    assert dump_document(export_document(target)) == dump_document(before)


def test_conflicting_import_is_refused_nothing_written_sqlite(tmp_path: Path) -> None:
    _conflict(f"sqlite:///{tmp_path / 'dst.db'}", tmp_path)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("{not json", "bad.json:1: not JSON (Expecting property name enclosed in double quotes)"),
        ('{"format": "x"}', 'bad.json:$: not an inventory export (expected "format": '),
        (
            '{"format": "fabric-stack-inventory", "schema_version": 7, "records": []}',
            "bad.json:$.schema_version: schema_version 7 is not supported (1 to 2;",
        ),
        (
            '{"format": "fabric-stack-inventory", "schema_version": 2, '
            '"records": [{"stack": "s", "kind": "Vlan", "name": "", "props": {}}]}',
            "bad.json:$.records[0].name: expected a non-empty string",
        ),
        (
            '{"format": "fabric-stack-inventory", "schema_version": 1, "records": '
            '[{"stack": "s", "kind": "Vlan", "name": "v", "props": [], "updated_at": "t"}]}',
            "bad.json:$.records[0].props: expected an object of record fields",
        ),
    ],
)
def test_bad_import_file_is_one_line_exit_2_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, line: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text(text)
    url = f"sqlite:///{tmp_path / 'dst.db'}"
    r = _cli("inventory", "import", "bad.json", "--inventory", url)
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and r.output.startswith(f"error: {line}"), r.output
    assert not (tmp_path / "dst.db").exists()


def test_schema_1_export_gets_created_at_from_updated_at(tmp_path: Path) -> None:
    doc = {
        "format": "fabric-stack-inventory",
        "schema_version": 1,
        "records": [
            {"stack": "s", "kind": "Vlan", "name": "v", "props": {"vlan": 3}, "updated_at": "T0"}
        ],
    }
    (tmp_path / "old.json").write_text(json.dumps(doc))
    url = f"sqlite:///{tmp_path / 'dst.db'}"
    r = _cli("inventory", "import", str(tmp_path / "old.json"), "--inventory", url)
    assert r.exit_code == 0, r.output
    assert open_store(url).execute("SELECT created_at, updated_at FROM fabric_inventory") == [
        ("T0", "T0")
    ]


def test_upgrade_command_and_export_of_an_old_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    _make_v1(url)
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    # export is read-only: it reads a schema 1 database without upgrading it
    assert _cli("inventory", "export", "--inventory", url, "--out", str(before)).exit_code == 0
    conn = sqlite3.connect(tmp_path / "old.db")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert tables == {"fabric_inventory"}
    r = _cli("inventory", "upgrade", "--inventory", url)
    assert r.exit_code == 0, r.output
    assert r.output == (
        f"{url}: schema version 1 -> 2\n  2: created_at: when a record was first written\n"
    )
    r = _cli("inventory", "upgrade", "--inventory", url)
    assert r.output == f"{url}: already at schema version 2 (newest: 2)\n"
    assert _cli("inventory", "export", "--inventory", url, "--out", str(after)).exit_code == 0
    assert before.read_bytes() == after.read_bytes()
