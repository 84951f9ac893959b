"""The throw-away PostgreSQL server that scripts/postgres.sh starts for the tests."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.postgres


def test_select_one(pg_url: str) -> None:
    with psycopg.connect(pg_url, connect_timeout=10) as conn:
        assert conn.execute("select 1").fetchone() == (1,)


def test_listens_on_loopback_only(pg_url: str) -> None:
    assert pg_url.startswith("postgresql://fabric:fs-local-pg-pw@127.0.0.1:")
    with psycopg.connect(pg_url, connect_timeout=10) as conn:
        assert conn.execute("show listen_addresses").fetchone() == ("127.0.0.1",)
