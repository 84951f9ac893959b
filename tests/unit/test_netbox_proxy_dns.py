"""The NetBox client honours http_proxy/https_proxy/no_proxy, and looks names up under its
deadline (issue #35).

A loopback proxy (:func:`tests.fault_servers.loopback_proxy`) forwards to loopback
recorders: HTTPS through a ``CONNECT`` tunnel (plain HTTP through a proxy is refused:
the proxy would read the token; a throw-away certificate the test trusts), and the token
only ever reaches the NetBox: the proxy is given the credentials of its own URL and
nothing else. A resolver that never answers (``socket.getaddrinfo`` patched to block)
ends at the deadline with one
line, for NetBox and for a PostgreSQL URL.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.adapters.inventory import open_store
from fabric_stack.adapters.inventory.netbox import http as netbox_http
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from fabric_stack.adapters.inventory.resolve import ResolveTimeout
from fabric_stack.adapters.inventory.sql.store import pg_hostaddr
from fabric_stack.errors import InventoryError
from tests.fault_servers import Recorder, https_netbox, loopback_proxy, serve

TOKEN = "nbt_proxykey.SECRETSECRET"

PROXY_VARS = ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


def _recorder() -> type[Recorder]:
    return type("Recorder", (Recorder,), {"seen": []})


def test_http_through_a_proxy_is_refused_and_the_proxy_sees_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Deliberately changed in #49: plain HTTP through a proxy was sent as an absolute-URI
    # request, so the proxy read the token. Now it is one line and nothing is sent.
    rec = _recorder()
    with serve(rec) as base, loopback_proxy() as (port, seen):
        monkeypatch.setenv("http_proxy", f"http://alice:p%40ss@127.0.0.1:{port}")
        with pytest.raises(InventoryError) as err:
            NetBoxClient(base, TOKEN).select("dcim/sites")
    msg = str(err.value)
    assert "refusing to send the NetBox token through proxy http://alice:***@" in msg, msg
    assert "https://" in msg and "no_proxy" in msg and "\n" not in msg
    assert "p%40ss" not in msg and TOKEN not in msg
    assert seen == [] and rec.seen == []


def test_no_proxy_bypasses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = _recorder()
    with serve(rec) as base, loopback_proxy() as (port, seen):
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("no_proxy", "localhost,127.0.0.1")
        NetBoxClient(base, TOKEN).select("dcim/sites")
    assert seen == [] and rec.seen == [f"Bearer {TOKEN}"]


def test_https_goes_through_a_connect_tunnel_and_the_token_stays_inside_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with https_netbox(tmp_path) as (base, cert), loopback_proxy() as (port, seen):
        trusted = ssl.create_default_context(cafile=cert)
        monkeypatch.setattr(ssl, "create_default_context", lambda: trusted)  # the client's
        monkeypatch.setenv("https_proxy", f"127.0.0.1:{port}")  # a bare HOST:PORT, as curl takes
        monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # not used for https
        assert NetBoxClient(base, TOKEN).select("dcim/sites") == []
    [(line, headers)] = seen
    assert line == f"CONNECT {base.removeprefix('https://')} HTTP/1.0", line
    assert "Authorization" not in headers and "Proxy-Authorization" not in headers
    assert TOKEN not in repr(seen)


def test_an_unreachable_proxy_is_one_line_without_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("https_proxy", f"http://bob:hunter2@127.0.0.1:{port}")
    with pytest.raises(InventoryError) as err:
        NetBoxClient("https://netbox.example:8000", TOKEN).select("dcim/sites")
    msg = str(err.value)
    assert "via proxy http://bob:" in msg and "unreachable" in msg, msg
    assert "hunter2" not in msg and "SECRET" not in msg and "\n" not in msg


def test_an_https_proxy_url_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("https_proxy", "https://proxy.example:3128")
    with pytest.raises(InventoryError, match=r"only an http:// proxy is supported"):
        NetBoxClient("https://netbox.example", TOKEN).select("dcim/sites")


# -- name lookups under the deadline ------------------------------------------------------


@pytest.fixture
def stalled_dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """``socket.getaddrinfo`` blocks (until the test ends) for any name but an address."""
    release = threading.Event()
    asked: list[str] = []
    real = socket.getaddrinfo

    def stall(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host in ("127.0.0.1", "::1"):
            return real(host, *args, **kwargs)
        asked.append(str(host))
        release.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", stall)
    yield asked
    release.set()  # the abandoned lookup threads end


def test_a_stalled_netbox_lookup_ends_at_the_deadline(
    stalled_dns: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(netbox_http.DEADLINE_ENV, "1")
    start = time.monotonic()
    with pytest.raises(InventoryError) as err:
        NetBoxClient("http://netbox.example:8000", TOKEN).select("dcim/sites")
    took = time.monotonic() - start
    assert stalled_dns == ["netbox.example"]
    assert took < 3, f"took {took:.1f} s"
    msg = str(err.value)
    assert "within the 1 s deadline" in msg or "did not resolve" in msg, msg
    assert msg.startswith("netbox GET http://netbox.example:8000/api/dcim/sites/"), msg
    assert "\n" not in msg


def test_a_stalled_proxy_lookup_ends_at_the_deadline_too(
    stalled_dns: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(netbox_http.DEADLINE_ENV, "1")
    monkeypatch.setenv("https_proxy", "http://proxy.example:3128")
    start = time.monotonic()
    with pytest.raises(InventoryError, match=r"via proxy http://proxy\.example:3128"):
        NetBoxClient("https://netbox.example:8000", TOKEN).select("dcim/sites")
    assert time.monotonic() - start < 3 and stalled_dns == ["proxy.example"]


def test_a_stalled_postgres_lookup_is_bounded(stalled_dns: list[str]) -> None:
    start = time.monotonic()
    with pytest.raises(ResolveTimeout):
        pg_hostaddr("postgresql://u:pw@db.example:5433/fabric", 0.5)
    assert time.monotonic() - start < 2 and stalled_dns == ["db.example"]


def test_a_stalled_postgres_lookup_is_one_line_from_the_store(
    stalled_dns: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.setenv("FABRIC_STACK_PG_CONNECT_TIMEOUT", "1")
    start = time.monotonic()
    with pytest.raises(InventoryError) as err:
        open_store("postgresql://u:pgsecret@db.example/fabric").counts()
    msg = str(err.value)
    assert time.monotonic() - start < 3
    assert "did not resolve within 1 s" in msg and "pgsecret" not in msg and "\n" not in msg, msg


def test_addresses_and_socket_dirs_are_not_looked_up(stalled_dns: list[str]) -> None:
    assert pg_hostaddr("postgresql://u@127.0.0.1:5432/db", 0.1) == {}
    assert pg_hostaddr("postgresql://u@[::1]:5432/db", 0.1) == {}
    assert pg_hostaddr("postgresql:///db?host=/run/postgresql", 0.1) == {}
    assert pg_hostaddr("postgresql://u@a.example,b.example/db", 0.1) == {}
    assert stalled_dns == []
