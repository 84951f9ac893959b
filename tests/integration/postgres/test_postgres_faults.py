"""Fault injection against PostgreSQL (issue #35): a server that never answers, bad rows,
a foreign schema, a role without rights, a read that never ends.

Each case runs a command as a user would and asserts the contract: exit 2, one line on
stderr naming the inventory (password masked) and what to do, no traceback, no hang.
The stalling listener needs no server; the rest use the session's throw-away one.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.inventory import open_store
from fabric_stack.cli import main
from tests.fault_servers import stalling_listener
from tests.pg_databases import new_database

FAST = {"FABRIC_STACK_PG_CONNECT_TIMEOUT": "2", "FABRIC_STACK_PG_STATEMENT_TIMEOUT": "1"}
CASE_SECONDS = 10.0


def _run(args: list[str], tmp_path: Path) -> tuple[str, Any]:
    start = time.monotonic()
    result = CliRunner().invoke(main, args, env=FAST)
    seconds = time.monotonic() - start
    err = result.stderr.strip()
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert len(err.splitlines()) == 1 and "Traceback" not in result.output, err
    assert seconds < CASE_SECONDS, f"took {seconds:.1f} s"
    return err, result


def _commands(url: str, tmp_path: Path) -> list[list[str]]:
    doc = {"format": "fabric-stack-inventory", "schema_version": 2, "records": []}
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    return [
        ["inventory", "--inventory", url],
        ["inventory", "export", "--inventory", url, "--out", str(tmp_path / "o.json")],
        ["inventory", "import", str(tmp_path / "doc.json"), "--inventory", url],
        ["inventory", "upgrade", "--inventory", url],
        ["drift", "--inventory", url, "--lldp", str(tmp_path / "none")],
    ]


@pytest.mark.timeout(60)
def test_a_server_that_never_answers_ends_within_the_connect_timeout(tmp_path: Path) -> None:
    with stalling_listener() as port:
        url = f"postgresql://fab:s3cret@127.0.0.1:{port}/inv?password=s3cret"
        for args in _commands(url, tmp_path)[:4]:
            err, result = _run(args, tmp_path)
            assert "cannot connect" in err and "s3cret" not in result.output, err


def _as(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{user}:{password}@{parts.hostname}:{parts.port}"))


@pytest.mark.timeout(120)
def test_bad_rows_are_one_line_naming_table_key_and_field(pg_url: str, tmp_path: Path) -> None:
    url = new_database(pg_url, "badrow")
    store = open_store(url)
    store.put("site", "Switch", "leaf-1", {"role": "leaf"})
    for props, said in (("not json {", "not JSON"), ("[1]", "expected a JSON object")):
        store.execute("UPDATE fabric_inventory SET props = ?", (props,))
        for args in _commands(url, tmp_path)[:2]:
            err, _ = _run(args, tmp_path)
            assert f"fabric_inventory site/Switch/leaf-1.props: {said}" in err, err


@pytest.mark.timeout(120)
def test_a_foreign_schema_and_a_role_without_rights_say_what_to_run(
    pg_url: str, tmp_path: Path
) -> None:
    import psycopg

    url = new_database(pg_url, "foreign")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE fabric_inventory (id INTEGER, what TEXT)")
    for args in _commands(url, tmp_path)[:2]:
        err, _ = _run(args, tmp_path)
        assert "schema is not this fabric-stack's" in err and "inventory upgrade" in err, err

    url = new_database(pg_url, "noperm")
    open_store(url).put("site", "Switch", "leaf-1", {"role": "leaf"})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS fab_reader")
        conn.execute("CREATE ROLE fab_reader LOGIN PASSWORD 'reader-pw'")
    reader = _as(url, "fab_reader", "reader-pw")
    for args in _commands(reader, tmp_path)[:3]:
        err, result = _run(args, tmp_path)
        assert "permission denied" in err and "grant this role" in err, err
        assert "reader-pw" not in result.output


@pytest.mark.timeout(120)
def test_a_read_blocked_forever_is_cancelled_by_the_statement_timeout(
    pg_url: str, tmp_path: Path
) -> None:
    import psycopg

    url = new_database(pg_url, "stuck")
    open_store(url).put("site", "Switch", "leaf-1", {"role": "leaf"})
    locked, done = threading.Event(), threading.Event()

    def hold() -> None:  # a stuck writer: an exclusive lock held until the test ends
        with psycopg.connect(url) as conn:
            conn.execute("LOCK TABLE fabric_inventory IN ACCESS EXCLUSIVE MODE")
            locked.set()
            done.wait(30)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        assert locked.wait(10)
        err, _ = _run(["inventory", "--inventory", url], tmp_path)
        assert "ran longer than 1 s and was cancelled" in err, err
    finally:
        done.set()
        thread.join(10)
