"""Databases of their own on the session's throw-away PostgreSQL server (the `pg_url` fixture)."""

from __future__ import annotations

import re
import uuid
from urllib.parse import urlsplit, urlunsplit


def new_database(pg_url: str, prefix: str = "t") -> str:
    """Create an empty database on ``pg_url``'s server; return its ``postgresql://`` URL."""
    import psycopg

    name = f"{re.sub(r'[^a-z0-9_]', '_', prefix.lower())}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(pg_url)._replace(path=f"/{name}"))


def state_backend_url(db_url: str) -> str:
    """The Pulumi ``postgres://`` DIY backend URL for a database (lib/pq: sslmode=disable on
    the loopback test server, which has no TLS)."""
    return db_url.replace("postgresql://", "postgres://", 1) + "?sslmode=disable"
