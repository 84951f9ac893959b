"""NetBox's 500 for a cable end a concurrent delete removed: a GET or DELETE is retried.

The answer is NetBox 4.7.3's own (utilities/error_handlers.py ``handle_rest_api_exception``);
see :data:`fabric_stack.adapters.inventory.netbox.retry.VANISHED_END`.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from fabric_stack.adapters.inventory.netbox import client as netbox_client
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from fabric_stack.adapters.inventory.netbox.retry import (
    DEADLOCK_TRIES,
    VANISHED_END,
    wait_before_retry,
)
from fabric_stack.errors import NetBoxHttpError

ANSWER = {
    "error": VANISHED_END,
    "exception": "AttributeError",
    "netbox_version": "4.7.3",
    "python_version": "3.12.1",
}


class _Racing(http.server.BaseHTTPRequestHandler):
    """Answers the NetBox 500 ``failures`` times, then 200 (GET, POST) or 204 (DELETE)."""

    failures: ClassVar[list[int]]
    seen: ClassVar[list[str]]

    def _answer(self) -> None:
        self.seen.append(self.command)
        if self.failures[0] > 0:
            self.failures[0] -= 1
            code, body = 500, json.dumps(ANSWER).encode()
        elif self.command == "DELETE":
            code, body = 204, b""
        else:
            code, body = 200, b'{"count": 0, "next": null, "results": []}'
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def racing(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, type[_Racing]]]:
    monkeypatch.setattr(netbox_client.time, "sleep", lambda _s: None)
    handler = type("Racing", (_Racing,), {"failures": [0], "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_a_read_or_delete_meeting_a_vanished_cable_end_is_retried(
    racing: tuple[str, type[_Racing]], method: str
) -> None:
    url, nb = racing
    nb.failures = [2]
    api = NetBoxClient(url, "tok", timeout=5)
    api.request(method, "dcim/cables/", [{"id": 1}] if method == "DELETE" else None)
    assert nb.seen == [method] * 3


def test_a_create_meeting_it_is_not_retried(racing: tuple[str, type[_Racing]]) -> None:
    url, nb = racing
    nb.failures = [1]
    with pytest.raises(NetBoxHttpError) as err:
        NetBoxClient(url, "tok", timeout=5).request("POST", "dcim/cables/", [{}])
    assert err.value.status == 500 and nb.seen == ["POST"]


def test_a_race_that_does_not_end_fails_after_the_deadlock_tries(
    racing: tuple[str, type[_Racing]],
) -> None:
    url, nb = racing
    nb.failures = [100]
    with pytest.raises(NetBoxHttpError) as err:
        NetBoxClient(url, "tok", timeout=5).request("GET", "dcim/cables/")
    assert VANISHED_END in str(err.value) and "\n" not in str(err.value)
    assert nb.seen == ["GET"] * (DEADLOCK_TRIES + 1)


def test_another_500_is_never_retried() -> None:
    other = NetBoxHttpError("NetBox x: GET /api/dcim/cables/ failed (500): {}", 500)
    assert wait_before_retry(other, 0.0, 0, "GET") is None
    vanished = NetBoxHttpError(f"NetBox x: GET failed (500): {VANISHED_END}", 500)
    assert wait_before_retry(vanished, 0.0, 0, "PATCH") is None
    assert wait_before_retry(vanished, 0.0, 0, "GET") == 1.0
