"""The NetBox inventory against the in-memory fake (fast), and the client's error lines.

The fake only shows the store's bookkeeping (what it creates, patches, deletes);
tests/test_netbox_stack.py proves the same against a real NetBox.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.errors import InventoryError
from fabric_stack.inventory import open_store
from fabric_stack.inventory.netbox_client import (
    FakeNetBox,
    NetBoxClient,
    mask_token,
    split_netbox_url,
    url_with_token,
)
from fabric_stack.inventory.netbox_store import NetBoxStore

URL = "netbox+http://127.0.0.1:9"


@pytest.fixture(scope="module")
def intent() -> Any:
    return derive_intent(build_topology(size_fabric(validate_spec(gpus=128))))


@pytest.fixture
def store() -> NetBoxStore:
    NetBoxStore._shared.clear()  # ids cached per process belong to another fake
    return NetBoxStore(URL, api=FakeNetBox(), token="t")


def _cables(intent: Any, leaf: str) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.props()) for c in intent.cables if c.b_device == leaf]


def test_url_token_round_trip_and_masking() -> None:
    url = url_with_token("netbox+https://nb.example:8443/netbox", "nbt_abc.DEF")
    assert split_netbox_url(url) == ("https://nb.example:8443/netbox", "nbt_abc.DEF")
    assert "DEF" not in mask_token(url)
    with pytest.raises(InventoryError, match="expected netbox"):
        split_netbox_url("https://nb.example")


def test_bundle_write_is_idempotent_and_prunes(store: NetBoxStore, intent: Any) -> None:
    api = store.api
    assert isinstance(api, FakeNetBox)
    leaf = intent.switches[0].name
    cables = _cables(intent, leaf)
    assert cables, "the first switch has downlinks"
    store.replace_bundle("s", "Cable", f"{leaf}/downlinks", cables)
    tables = {k: len(v) for k, v in api.tables.items()}
    assert tables["dcim/cables"] == len(cables)
    store.replace_bundle("s", "Cable", f"{leaf}/downlinks", cables)  # a rerun: nothing new
    assert {k: len(v) for k, v in api.tables.items()} == tables
    got = store.get_bundle("s", "Cable", f"{leaf}/downlinks")
    assert [g["name"] for g in got] == sorted(n for n, _ in cables)
    assert got[0]["b_device"] == leaf
    store.replace_bundle("s", "Cable", f"{leaf}/downlinks", cables[:2])
    assert len(api.tables["dcim/cables"]) == 2
    store.delete_bundle("s", "Cable", f"{leaf}/downlinks")
    assert api.tables["dcim/cables"] == {}


def test_switch_adopts_the_endpoint_a_cable_created(store: NetBoxStore, intent: Any) -> None:
    leaf = intent.switches[0]
    store.replace_bundle("s", "Cable", f"{leaf.name}/downlinks", _cables(intent, leaf.name))
    store.put("s", "Switch", leaf.name, leaf.props())
    api = store.api
    assert isinstance(api, FakeNetBox)
    named = [d for d in api.tables["dcim/devices"].values() if d["name"] == leaf.name]
    assert len(named) == 1
    assert named[0]["custom_fields"]["fabric_kind"] == "Switch"
    assert store.get("s", "Switch", leaf.name) is not None
    assert [r["name"] for r in store.list_records("Switch", "s")] == [leaf.name]


def test_open_store_dispatches_netbox_urls() -> None:
    assert isinstance(open_store(url_with_token("netbox+http://127.0.0.1:9", "x")), NetBoxStore)


def test_unreachable_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    client = NetBoxClient(f"http://127.0.0.1:{port}", "tok", timeout=5)
    with pytest.raises(InventoryError) as err:
        client.status()
    assert "unreachable" in str(err.value) and "\n" not in str(err.value)


@pytest.fixture
def refusing_server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"detail": "Invalid v1 token"}'
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_refused_token_is_one_line_without_the_token(refusing_server: str) -> None:
    client = NetBoxClient(refusing_server, "secret-token-value", timeout=5)
    with pytest.raises(InventoryError) as err:
        client.select("dcim/sites")
    msg = str(err.value)
    assert "token was refused (403" in msg and "secret-token-value" not in msg
