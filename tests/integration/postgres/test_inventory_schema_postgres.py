"""Inventory schema upgrades, export and import against a real PostgreSQL server.

The SQLite half and the helpers are in ``tests/unit/test_inventory_schema.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pg_databases import new_database
from tests.unit.test_inventory_schema import (  # noqa: F401
    V1_COLUMNS,
    V1_SQL,
    _check_upgrade,
    _cli,
    _columns,
    _conflict,
    _fill,
    _make_v1,
    _roundtrip,
    _v1_statements,
)


@pytest.mark.postgres
def test_v1_postgres_database_is_upgraded(pg_url: str) -> None:
    _check_upgrade(new_database(pg_url, "v1"), new_database(pg_url, "fresh"))


@pytest.mark.postgres
def test_export_import_moves_a_site_from_sqlite_to_postgres(tmp_path: Path, pg_url: str) -> None:
    _roundtrip(f"sqlite:///{tmp_path / 'a.db'}", new_database(pg_url, "move"), tmp_path)


@pytest.mark.postgres
def test_conflicting_import_is_refused_nothing_written_postgres(
    tmp_path: Path, pg_url: str
) -> None:
    url = new_database(pg_url, "conflict")
    _conflict(url, tmp_path)
