"""The NetBox inventory against the in-memory fake (fast), and the client's error lines.

The fake only shows the store's bookkeeping (what it creates, patches, deletes);
tests/integration/netbox/test_netbox_stack.py proves the same against a real NetBox.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory import open_store
from fabric_stack.adapters.inventory.netbox.client import (
    NetBoxClient,
    mask_token,
    refuses_token,
    split_netbox_url,
    url_with_token,
)
from fabric_stack.adapters.inventory.netbox.definitions import PROCESS_CACHE
from fabric_stack.adapters.inventory.netbox.fake import FakeNetBox
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.errors import InventoryError, NetBoxHttpError

URL = "netbox+http://127.0.0.1:9"


@pytest.fixture(scope="module")
def intent() -> Any:
    return derive_intent(build_topology(size_fabric(validate_spec(gpus=128))))


@pytest.fixture
def store() -> NetBoxStore:
    PROCESS_CACHE.ids.clear()  # ids cached per process belong to another fake
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


class _Devices(http.server.BaseHTTPRequestHandler):
    """NetBox 4.7.3's bulk DELETE and id-filtered GET of ``dcim/devices``, answers as NetBox
    words them (``netbox/api/viewsets/mixins.py``): one transaction per batch, so any refusal
    deletes nothing.

    ``there``: ids that exist; ``vanish``: ids another request deletes while this batch runs
    (NetBox answers 403 "n of m objects could not be deleted"); ``protected``: ids a dependent
    object keeps (409); ``read_only``: the token may not write (403, permission).
    """

    there: ClassVar[set[int]] = set()
    vanish: ClassVar[set[int]] = set()
    busy: ClassVar[list[int]] = []
    protected: ClassVar[set[int]] = set()
    read_only: ClassVar[bool] = False
    deletes: ClassVar[list[list[int]]] = []

    def _answer(self, code: int, body: Any = None) -> None:
        raw = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        found = sorted(self.there & {int(i) for i in query.get("id", [])})
        self._answer(
            200, {"count": len(found), "next": None, "results": [{"id": i} for i in found]}
        )

    def do_DELETE(self) -> None:
        ids = [
            int(o["id"]) for o in json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ]
        type(self).deletes.append(ids)
        if self.read_only:
            self._answer(403, {"detail": "You do not have permission to perform this action."})
            return
        missing = [i for i in ids if i not in self.there]
        if missing:
            errors = [
                {"id": i, "errors": {"id": [f"Object with ID {i} does not exist"]}} for i in missing
            ]
            detail = f"{len(missing)} of {len(ids)} objects could not be found."
            self._answer(400, {"detail": detail, "errors": errors})
            return
        if self.busy:  # a related object went meanwhile: refused, rolled back, still there
            denied = "You do not have permission to perform this action on this object."
            self.busy.pop()
            errors = [{"id": ids[0], "errors": {"__all__": [denied]}}]
            self._answer(
                403, {"detail": f"1 of {len(ids)} objects could not be deleted.", "errors": errors}
            )
            return
        gone = [i for i in ids if i in self.vanish]
        held = [i for i in ids if i in self.protected]
        if gone or held:
            self.there.difference_update(gone)  # the other request's delete commits
            denied = "You do not have permission to perform this action on this object."
            errors = [{"id": i, "errors": {"__all__": [denied]}} for i in gone]
            errors += [
                {
                    "id": i,
                    "errors": {
                        "__all__": ["Unable to delete: 1 dependent object(s) prevent deletion."]
                    },
                }
                for i in held
            ]
            detail = f"{len(errors)} of {len(ids)} objects could not be deleted."
            self._answer(409 if held else 403, {"detail": detail, "errors": errors})
            return
        self.there.difference_update(ids)
        self._answer(204)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def devices_server() -> Iterator[tuple[str, type[_Devices]]]:
    handler = type(
        "Devices",
        (_Devices,),
        {
            "there": set(range(1, 11)),
            "vanish": set(),
            "busy": [],
            "protected": set(),
            "read_only": False,
            "deletes": [],
        },
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_delete_skips_objects_already_gone(devices_server: tuple[str, type[_Devices]]) -> None:
    url, nb = devices_server
    nb.there -= {3, 4}  # deleted before this request (a cascade, another resource)
    NetBoxClient(url, "tok", timeout=5).delete("dcim/devices", [1, 2, 3, 4, 5])
    assert nb.there == set(range(6, 11))
    assert nb.deletes == [[1, 2, 3, 4, 5], [1, 2, 5]]


def test_delete_race_403_is_not_a_token_problem(devices_server: tuple[str, type[_Devices]]) -> None:
    url, nb = devices_server
    nb.vanish = {2}  # deleted by another request while this batch runs: NetBox answers 403
    NetBoxClient(url, "tok", timeout=5).delete("dcim/devices", [1, 2, 3])
    assert nb.there == set(range(4, 11))
    assert nb.deletes == [[1, 2, 3], [1, 3]]


def test_delete_refused_while_related_objects_go_is_retried(
    devices_server: tuple[str, type[_Devices]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabric_stack.adapters.inventory.netbox import client as netbox_client

    monkeypatch.setattr(netbox_client, "DELETE_RETRY_S", (0.0, 0.0))
    url, nb = devices_server
    nb.busy = [1, 1]  # refused twice (the object still there), then deleted
    NetBoxClient(url, "tok", timeout=5).delete("dcim/devices", [1, 2])
    assert nb.there == set(range(3, 11)) and nb.deletes == [[1, 2]] * 3


def test_delete_refused_for_real_still_fails(
    devices_server: tuple[str, type[_Devices]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabric_stack.adapters.inventory.netbox import client as netbox_client

    monkeypatch.setattr(netbox_client, "DELETE_RETRY_S", (0.0,))
    url, nb = devices_server
    nb.protected = {2}
    client = NetBoxClient(url, "tok", timeout=5)
    with pytest.raises(NetBoxHttpError) as err:
        client.delete("dcim/devices", [1, 2])
    assert err.value.status == 409 and not err.value.auth
    assert "could not be deleted" in str(err.value) and nb.there == set(range(1, 11))

    nb.protected, nb.read_only = set(), True  # a token without write: its own line, once
    with pytest.raises(NetBoxHttpError) as err:
        client.delete("dcim/devices", [1, 2])
    assert err.value.auth and "token was refused (403" in str(err.value)
    assert "\n" not in str(err.value) and nb.there == set(range(1, 11))


@pytest.mark.parametrize(
    ("status", "detail", "auth"),
    [
        (401, {"detail": "Authentication credentials were not provided."}, True),
        (403, {"detail": "Invalid v2 token"}, True),
        (403, {"detail": "You do not have permission to perform this action."}, True),
        (403, {"detail": "1 of 1 objects could not be deleted.", "errors": [{"id": 7}]}, False),
        (403, None, False),
        (400, {"detail": "token"}, False),
    ],
)
def test_refuses_token_only_when_the_message_is_about_it(
    status: int, detail: Any, auth: bool
) -> None:
    assert refuses_token(status, detail) is auth


def test_switch_device_types_follow_the_community_library(store: NetBoxStore, intent: Any) -> None:
    leaf = intent.switches[0]
    assert leaf.props()["model"] == "qm9700"  # the seed cluster's switch
    store.put("s", "Switch", leaf.name, leaf.props())
    api = store.api
    assert isinstance(api, FakeNetBox)
    (dtype,) = api.tables["dcim/device-types"].values()
    # device-types/Nvidia/QM9700.yaml: manufacturer Nvidia, model QM9700, slug nvidia-qm9700
    assert (dtype["model"], dtype["slug"], dtype["u_height"]) == ("QM9700", "nvidia-qm9700", 1)
    maker = api.tables["dcim/manufacturers"][dtype["manufacturer"]]
    assert (maker["name"], maker["slug"]) == ("Nvidia", "nvidia")
    got = store.get("s", "Switch", leaf.name)
    assert got is not None and got["model"] == "qm9700"  # no drift from the slug mapping


class _ZombieNetBox(FakeNetBox):
    """A NetBox where a request a killed ``up`` left running creates the same cables first:
    the next cable create is refused as NetBox refuses it, after those cables exist."""

    def __init__(self) -> None:
        super().__init__()
        self.zombie = True

    def create(self, endpoint: str, objs: Any) -> list[dict[str, Any]]:
        if endpoint == "dcim/cables" and self.zombie:
            self.zombie = False
            super().create(endpoint, objs)  # the other request's cables, committed
            raise NetBoxHttpError(
                "NetBox http://x: POST /api/dcim/cables/ failed (400): "
                '{"errors": [{"__all__": ["Duplicate termination found for dcim.interface 1"]}]}',
                400,
            )
        return super().create(endpoint, objs)


def test_write_after_a_killed_up_adopts_what_it_left_running(
    intent: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabric_stack.adapters.inventory.netbox import store as netbox_store

    monkeypatch.setattr(netbox_store, "_CONFLICT_BACKOFF_S", (0.0,))
    PROCESS_CACHE.ids.clear()
    api = _ZombieNetBox()
    store = NetBoxStore(URL, api=api, token="t")
    leaf = intent.switches[0].name
    cables = _cables(intent, leaf)
    store.replace_bundle("s", "Cable", f"{leaf}/downlinks", cables)
    assert not api.zombie and len(api.tables["dcim/cables"]) == len(cables)  # no duplicates

    api.zombie = True  # a refusal that is no such conflict is not retried
    api.create = lambda *_: (_ for _ in ()).throw(NetBoxHttpError("failed (400): bad", 400))  # type: ignore[method-assign]
    with pytest.raises(NetBoxHttpError, match="bad"):
        store.replace_bundle("s", "Cable", f"{leaf}/uplinks", cables)
