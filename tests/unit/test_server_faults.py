"""Fault injection (issue #35): misbehaving NetBox servers and bad inventory rows, through the CLI.

Every NetBox case runs a loopback server the test starts (:mod:`tests.fault_servers`)
through every command that reads NetBox, and asserts what the contract promises: exit
status 2, one line on stderr, no traceback, no hang (each case under
:data:`CASE_SECONDS`), the token never printed, and never sent anywhere but the
configured server. The SQLite half of the bad-record cases is here too; the PostgreSQL
half (a stalling server, permissions, schema) is in
``tests/integration/postgres/test_postgres_faults.py``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.inventory import open_store
from fabric_stack.adapters.inventory.netbox import http as netbox_http
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from fabric_stack.cli import main
from fabric_stack.cli.params import one_line
from fabric_stack.errors import InventoryError
from fabric_stack.text.redact import mask_url, mask_urls
from tests.fault_servers import (
    DEVICE_MODES,
    MODES,
    busy_netbox,
    faulty_netbox,
    silent_postgres,
    stalling_listener,
)

TOKEN = "nbt_faultkey.SECRETSECRET"
SECRET = "SECRETSECRET"
DEADLINE_S = 1
"""The NetBox deadline the cases run with (FABRIC_STACK_NETBOX_DEADLINE)."""
CASE_SECONDS = 8.0
"""Longest any one case may take: the deadline plus the command's own work."""

COMMANDS = {
    "drift": ["drift", "--netbox"],
    "adopt": ["adopt", "--netbox"],
    "inventory": ["inventory", "--kind", "cable", "--format", "json", "--netbox"],
}
"""Every command that reads a NetBox, and how each is pointed at one."""

DEADLINE_ENV = "FABRIC_STACK_NETBOX_DEADLINE"
ENV = {"NETBOX_TOKEN": TOKEN, DEADLINE_ENV: str(DEADLINE_S)}


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[Any, float]:
    start = time.monotonic()
    result = CliRunner().invoke(main, args, env=env or ENV)
    return result, time.monotonic() - start


def _assert_one_line_exit_2(result: Any, seconds: float) -> str:
    """The contract of a refused input: exit 2, one stderr line, no traceback, no secret."""
    err = result.stderr.strip()
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    assert "Traceback" not in result.output and SECRET not in result.output
    assert seconds < CASE_SECONDS, f"took {seconds:.1f} s"
    return err


@pytest.fixture(autouse=True)
def _small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    # The endless stream meets the size cap in a fraction of a second, not after 256 MiB.
    monkeypatch.setattr(netbox_http, "MAX_RESPONSE_BYTES", 4 << 20)


EXPECTED = {
    "html-200": "answered HTML, not JSON (is this NetBox's API URL?)",
    "truncated-json": "invalid or truncated JSON",
    "bad-status-line": "bad status line",
    "short-read": "cut short",
    "endless-stream": "larger than 4 MiB",
    "byte-drip": f"within the {DEADLINE_S} s deadline",
    "deep-json": "nested deeper than",
    "results-not-list": "results: expected a list of objects",
    "results-missing": "expected a NetBox list page",
    "not-an-object": "expected a NetBox list page",
    "next-self": "a pagination loop",
    "next-other-port": "leaves http://127.0.0.1",
    "next-file": "not an http:// or https:// URL",
    "next-relative": "not an absolute http(s) URL",
    "redirect-302": "answered a redirect (302)",
    "huge-integer": "integer with 5,000 digits",
    "bad-objects": "/dcim/",  # the object's page: its cable (drift) or device list
    "continue-flood": "interim 100 Continue answers and no final answer",
    "next-further": "pagination that does not end",
    "count-huge": "count '1000000000' is not a whole number from 0 to",
    "tiny-objects": "values (at most 2,000,000",
    "too-many-results": "5,000 results on a page of at most 1,000",
    "missing-id": "results[0]: id: missing",
    "wrong-guid": "results[0] (id 1): custom_fields.ib_guid: expected a valid string",
}
"""What each fault's line says was wrong."""


@pytest.mark.timeout(30)
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("mode", MODES)
def test_a_misbehaving_netbox_is_one_line(mode: str, command: str) -> None:
    with faulty_netbox(mode) as (base, recorder):
        result, seconds = _run([*COMMANDS[command], base])
    err = _assert_one_line_exit_2(result, seconds)
    assert base in err and EXPECTED[mode] in err, err  # names the server and the fault
    if mode == "bad-objects":
        assert "termination without" in err or "custom_fields: expected an object" in err, err
    elif not mode.startswith("next-"):
        assert f"netbox GET {base}/api/dcim/" in err, err  # and the request it made
    # The second server (where a redirect or a `next` pointed) never saw the token.
    assert recorder.seen == [], recorder.seen


@pytest.mark.timeout(30)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_netbox_that_accepts_and_never_answers_ends_at_the_deadline(command: str) -> None:
    with stalling_listener() as port:
        result, seconds = _run([*COMMANDS[command], f"http://127.0.0.1:{port}"])
    err = _assert_one_line_exit_2(result, seconds)
    assert f"within the {DEADLINE_S} s deadline" in err, err


DEVICE_EXPECTED = {
    "string-site-id": "results[0] (id 1): site: expected a nested object with a whole-number id",
    "wrong-position": "results[0] (id 1): position: expected a valid number",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("mode", DEVICE_MODES)
def test_a_device_of_the_wrong_shape_is_one_line_naming_the_field(mode: str) -> None:
    with faulty_netbox(mode) as (base, _):
        result, seconds = _run(
            ["inventory", "--kind", "switch", "--format", "json", "--netbox", base]
        )
    err = _assert_one_line_exit_2(result, seconds)
    assert f"netbox GET {base}/api/dcim/devices/" in err and DEVICE_EXPECTED[mode] in err, err


@pytest.mark.timeout(30)
@pytest.mark.parametrize("mode", ["stall", "byte-drip"])
def test_one_request_ends_at_its_own_bound_well_before_the_deadline(mode: str) -> None:
    env = {**ENV, "FABRIC_STACK_NETBOX_DEADLINE": "600", "FABRIC_STACK_NETBOX_TIMEOUT": "1"}
    if mode == "stall":
        with stalling_listener() as port:
            result, seconds = _run([*COMMANDS["inventory"], f"http://127.0.0.1:{port}"], env)
    else:
        with faulty_netbox(mode) as (base, _):
            result, seconds = _run([*COMMANDS["inventory"], base], env)
    err = _assert_one_line_exit_2(result, seconds)
    assert "within the 1 s request (set FABRIC_STACK_NETBOX_TIMEOUT" in err, err


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("status", "wait"), [(429, "2"), (503, "1")])
def test_a_busy_netbox_is_waited_for_as_its_retry_after_says(status: int, wait: str) -> None:
    with busy_netbox(status, wait) as (base, seen):
        result, _ = _run([*COMMANDS["inventory"], base], {**ENV, DEADLINE_ENV: "30"})
    assert result.exit_code == 0, result.output
    assert len(seen) == 2 and seen[1] - seen[0] >= float(wait) - 0.05, seen
    assert result.stderr == ""  # not a terminal: no progress line


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("wait", "refusals"), [("3600", 1), ("1", 1000)])
def test_a_netbox_busy_for_too_long_is_one_line(wait: str, refusals: int) -> None:
    env = {**ENV, DEADLINE_ENV: "3"}
    with busy_netbox(429, wait, refusals) as (base, seen):
        result, seconds = _run([*COMMANDS["inventory"], base], env)
    err = _assert_one_line_exit_2(result, seconds)
    assert "(429)" in err or "within the 3 s deadline" in err, err
    assert len(seen) <= 5, len(seen)


def test_the_deadline_and_the_cap_are_in_help() -> None:
    r = CliRunner().invoke(main, ["drift", "--help"])
    assert "FABRIC_STACK_NETBOX_DEADLINE" in " ".join(r.output.split())


BAD_URLS = [
    ("http://127.0.0.1:9/net box", TOKEN, "contains a space"),
    ("http://[::1:9/", TOKEN, "Invalid IPv6 URL"),
    ("http://127.0.0.1:99999/", TOKEN, "Port out of range"),
    ("ftp://127.0.0.1/", TOKEN, "expected http(s)://HOST"),
    ("http://127.0.0.1:9", "nbt_a\nX-Injected: 1", "newline"),
    ("http://127.0.0.1:9", "nbt_ä.b", "non-ASCII"),
    ("http://127.0.0.1:9", "nbt_a b", "space"),
]


@pytest.mark.parametrize("command", ["drift", "adopt", "inventory"])
@pytest.mark.parametrize(("url", "token", "said"), BAD_URLS)
def test_bad_urls_and_tokens_are_refused_before_sending(
    command: str, url: str, token: str, said: str
) -> None:
    result, seconds = _run(
        [*COMMANDS[command], url], {"NETBOX_TOKEN": token, "FABRIC_STACK_NETBOX_DEADLINE": "2"}
    )
    err = _assert_one_line_exit_2(result, seconds)
    assert said in err, err


def test_a_token_in_the_url_is_never_printed() -> None:
    for command in ("drift", "adopt", "inventory"):
        result, seconds = _run([*COMMANDS[command], f"http://:{TOKEN}@127.0.0.1:9"])
        err = _assert_one_line_exit_2(result, seconds)
        assert "unreachable" in err, err


def test_a_bad_deadline_is_one_line() -> None:
    result, seconds = _run(
        ["inventory", "--netbox", "http://127.0.0.1:9"],
        {"NETBOX_TOKEN": TOKEN, "FABRIC_STACK_NETBOX_DEADLINE": "soon"},
    )
    assert "expected a number of seconds" in _assert_one_line_exit_2(result, seconds)


def test_a_client_never_sends_the_token_off_origin() -> None:
    client = NetBoxClient("http://127.0.0.1:9", TOKEN)
    for url in ("http://127.0.0.2:9/api/x/", "https://127.0.0.1:9/api/x/", "http://127.0.0.1:10/"):
        with pytest.raises(InventoryError, match="only sent to the configured server"):
            client.request("GET", url)


# -- secrets in URLs -------------------------------------------------------------------

MASKED = [
    ("postgresql://fab:s3cret@db:5432/inv", "postgresql://fab:***@db:5432/inv"),
    (
        "postgresql://db/inv?user=fab&password=s3cret&sslmode=disable",
        "postgresql://db/inv?user=fab&password=***&sslmode=disable",
    ),
    ("postgresql://db/inv?PassWord=s3cret", "postgresql://db/inv?PassWord=***"),
    ("postgresql://db/inv?sslpassword=s3cret", "postgresql://db/inv?sslpassword=***"),
    ("postgresql://u:s3cret@[::1/inv", "postgresql://***@[::1/inv"),
    ("netbox+https://:s3cret@nb:8443", "netbox+https://:***@nb:8443"),
    ("sqlite:///a/b.db", "sqlite:///a/b.db"),
]


@pytest.mark.parametrize(("url", "masked"), MASKED)
def test_mask_url_hides_every_password(url: str, masked: str) -> None:
    assert mask_url(url) == masked
    assert "s3cret" not in mask_urls(f"cannot reach {url}: refused")
    assert mask_urls(f"at {url}: refused") == f"at {masked}: refused"


def test_every_error_line_is_masked() -> None:
    assert "s3cret" not in one_line("inventory postgresql://db/x?password=s3cret: no")


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://fab:s3cret@127.0.0.1:1/inv",
        "postgresql://127.0.0.1:1/inv?user=fab&password=s3cret",
    ],
)
@pytest.mark.parametrize(
    "args",
    [["inventory"], ["inventory", "export", "--out", "x.json"], ["inventory", "upgrade"]],
)
def test_a_postgresql_password_is_never_printed(
    url: str, args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result, seconds = _run([*args, "--inventory", url], {})
    err = _assert_one_line_exit_2(result, seconds)
    assert "s3cret" not in result.output and "***" in err, err


PG_COMMANDS = [
    ["inventory"],
    ["inventory", "export", "--out", "o.json"],
    ["inventory", "import", "doc.json"],
    ["inventory", "upgrade"],
    ["drift", "--lldp", "lldp"],
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("args", PG_COMMANDS, ids=lambda a: "-".join(a[:2]))
def test_a_postgresql_that_starts_up_and_then_never_answers_ends_at_the_query_bound(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = {"format": "fabric-stack-inventory", "schema_version": 2, "records": []}
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    (tmp_path / "lldp").mkdir()
    (tmp_path / "lldp" / "leaf-1.json").write_text('{"lldp": {"interface": []}}')
    env = {"FABRIC_STACK_PG_CONNECT_TIMEOUT": "2", "FABRIC_STACK_PG_QUERY_TIMEOUT": "1"}
    with silent_postgres() as port:
        url = f"postgresql://fab:s3cret@127.0.0.1:{port}/inv?sslmode=disable"
        result, seconds = _run([*args, "--inventory", url], env)
    err = _assert_one_line_exit_2(result, seconds)
    assert "did not answer a query within 1 s (set FABRIC_STACK_PG_QUERY_TIMEOUT" in err, err
    assert "s3cret" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json", "lldp"]  # nothing written


# -- bad rows in an SQLite inventory ---------------------------------------------------


def _inventory(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'inv.db'}"
    open_store(url).put("site", "Switch", "leaf-1", {"role": "leaf", "model": "qm9700"})
    return url


BAD_ROWS = [
    ("props = 'not json {'", "fabric_inventory site/Switch/leaf-1.props: not JSON"),
    ("props = '[1, 2]'", "fabric_inventory site/Switch/leaf-1.props: expected a JSON object"),
    ("props = '" + "[" * 100_000 + "'", "fabric_inventory site/Switch/leaf-1.props"),
    (
        "speed_gbps = '1234567890123456789012345678901234567890'",
        "fabric_inventory site/Switch/leaf-1.speed_gbps",
    ),
]


ROW_COMMANDS = [["inventory"], ["inventory", "--format", "json"], ["inventory", "export"]]


@pytest.mark.parametrize(
    ("update", "said", "args"),
    [
        (update, said, args)
        for update, said in BAD_ROWS
        for args in ROW_COMMANDS
        if "speed_gbps" not in update or args[-1] == "export"  # listing shows props only
    ],
)
def test_a_bad_row_is_one_line_naming_table_key_and_field(
    update: str, said: str, args: list[str], tmp_path: Path
) -> None:
    url = _inventory(tmp_path)
    open_store(url).execute(f"UPDATE fabric_inventory SET {update}")
    if args[-1] == "export":
        args = [*args, "--out", str(tmp_path / "out.json")]
    result, seconds = _run([*args, "--inventory", url], {})
    assert said in _assert_one_line_exit_2(result, seconds)
    assert not (tmp_path / "out.json").exists()


def test_a_foreign_schema_names_what_to_run(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE fabric_inventory (id INTEGER, what TEXT)")
    for args in (["inventory"], ["inventory", "export", "--out", str(tmp_path / "o.json")]):
        result, seconds = _run([*args, "--inventory", f"sqlite:///{db}"], {})
        err = _assert_one_line_exit_2(result, seconds)
        assert "fabric-stack inventory upgrade" in err, err


def _export(url: str, path: Path) -> None:
    r = CliRunner().invoke(main, ["inventory", "export", "--inventory", url, "--out", str(path)])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("speed_gbps", 10**39, "speed_gbps: expected a whole number from 0 to 2147483647"),
        ("speed_gbps", 10**45, "integer with 46 digits"),
        ("props", "x", "props: expected an object"),
    ],
)
def test_an_import_of_bad_records_writes_nothing(
    field: str, value: Any, said: str, tmp_path: Path
) -> None:
    url = _inventory(tmp_path)
    _export(url, tmp_path / "good.json")
    doc = json.loads((tmp_path / "good.json").read_text())
    doc["records"][0][field] = value
    doc["records"][0]["name"] = "leaf-2"
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    target = tmp_path / "new.db"
    result, seconds = _run(
        ["inventory", "import", str(tmp_path / "bad.json"), "--inventory", f"sqlite:///{target}"],
        {},
    )
    assert said in _assert_one_line_exit_2(result, seconds)
    assert not target.exists()  # no empty database where there was none


def test_a_refused_import_leaves_the_database_exactly_as_it_was(tmp_path: Path) -> None:
    src = _inventory(tmp_path)
    _export(src, tmp_path / "a.json")
    target = tmp_path / "target.db"
    r = CliRunner().invoke(
        main,
        ["inventory", "import", str(tmp_path / "a.json"), "--inventory", f"sqlite:///{target}"],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "a.json").read_text())
    doc["records"][0]["props"]["model"] = "sn5600"  # conflicts with the row now there
    (tmp_path / "b.json").write_text(json.dumps(doc))
    before = target.read_bytes()
    result, seconds = _run(
        ["inventory", "import", str(tmp_path / "b.json"), "--inventory", f"sqlite:///{target}"], {}
    )
    assert "import refused" in _assert_one_line_exit_2(result, seconds)
    assert target.read_bytes() == before
    with sqlite3.connect(target) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)  # not WAL


def test_a_failed_import_into_a_new_file_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabric_stack.adapters.inventory.sql import transfer

    src = _inventory(tmp_path)
    _export(src, tmp_path / "a.json")

    def fail(*_: Any) -> Any:
        raise InventoryError("planted failure")

    monkeypatch.setattr(transfer, "_existing_rows", fail)
    target = tmp_path / "fresh.db"
    result, seconds = _run(
        ["inventory", "import", str(tmp_path / "a.json"), "--inventory", f"sqlite:///{target}"], {}
    )
    assert "planted failure" in _assert_one_line_exit_2(result, seconds)
    assert not target.exists() and not list(tmp_path.glob("fresh.db*"))


@pytest.mark.parametrize(
    "args",
    [
        ["inventory"],
        ["inventory", "upgrade"],
        ["inventory", "export", "--out", "o.json"],
        ["inventory", "import", "doc.json"],
    ],
)
def test_a_file_that_is_not_a_database_is_one_line_and_untouched(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    junk = bytes(range(256)) * 20
    (tmp_path / "junk.db").write_bytes(junk)
    doc = {"format": "fabric-stack-inventory", "schema_version": 2, "records": []}
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    result, seconds = _run([*args, "--inventory", "sqlite:///junk.db"], {})
    assert "file is not a database" in _assert_one_line_exit_2(result, seconds)
    assert (tmp_path / "junk.db").read_bytes() == junk
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.json", "junk.db"]


@pytest.mark.timeout(60)
def test_the_real_cap_stops_an_endless_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netbox_http, "MAX_RESPONSE_BYTES", 64 << 20)  # undo the small cap
    monkeypatch.setenv("FABRIC_STACK_NETBOX_DEADLINE", "30")
    with faulty_netbox("endless-stream") as (base, _):
        client = NetBoxClient(base, TOKEN)
        with pytest.raises(InventoryError, match="answer larger than 64 MiB"):
            client.select("dcim/cables")
