"""Misbehaving servers on loopback for the fault-injection tests (issue #35).

:class:`FaultyNetBox` answers every request in one chosen wrong way (HTML with 200,
truncated JSON, a bad status line, a short read, an endless stream, a byte drip, JSON
nested 100,000 deep, ``results`` that are not a list, ``next`` links that loop or leave,
a redirect); :class:`Recorder` is the second server a leaving link points at, noting
every ``Authorization`` header it receives; :func:`stalling_listener` accepts TCP
connections and never says a word (a PostgreSQL that never completes its handshake).
Each test starts and stops them; nothing is left listening.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

PAGE = {"count": 1, "next": None, "previous": None, "results": []}

MODES = (
    "html-200",
    "truncated-json",
    "bad-status-line",
    "short-read",
    "endless-stream",
    "byte-drip",
    "deep-json",
    "results-not-list",
    "results-missing",
    "not-an-object",
    "next-self",
    "next-other-port",
    "next-file",
    "next-relative",
    "redirect-302",
    "huge-integer",
    "bad-objects",
)
"""Every way :class:`FaultyNetBox` can answer wrongly."""


class _Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: Any) -> None:
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


class Recorder(_Quiet):
    """A well-behaved empty NetBox that remembers every Authorization header it saw."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).seen.append(self.headers.get("Authorization", ""))
        self._send(200, json.dumps(PAGE).encode())


class FaultyNetBox(_Quiet):
    """Answers every request the way ``mode`` says; ``other`` is the recorder's base URL."""

    mode: ClassVar[str] = "html-200"
    other: ClassVar[str] = ""

    def do_GET(self) -> None:
        getattr(self, "_" + self.mode.replace("-", "_"))()

    do_POST = do_PATCH = do_DELETE = do_GET

    def _here(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{self.path}"

    def _page(self, **fields: Any) -> None:
        self._send(200, json.dumps({**PAGE, **fields}).encode())

    def _html_200(self) -> None:
        self._send(200, b"<!DOCTYPE html><html><body>Login</body></html>", "text/html")

    def _truncated_json(self) -> None:
        self._send(200, b'{"count": 3, "next": null, "results": [{"id": 1,')

    def _bad_status_line(self) -> None:
        self.wfile.write(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")
        self.close_connection = True

    def _short_read(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b'{"count": 1, "results": [')
        self.close_connection = True

    def _endless_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"results": [')
        chunk = b'{"id": 1, "name": "x"},' * 4096
        try:
            while True:
                self.wfile.write(chunk)
        except OSError:
            return  # the client hung up, as it should

    def _byte_drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(100000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.05)
        except OSError:
            return

    def _deep_json(self) -> None:
        self._send(200, b"[" * 100_000 + b"]" * 100_000)

    def _results_not_list(self) -> None:
        self._page(results={"id": 1})

    def _results_missing(self) -> None:
        self._send(200, b'{"count": 1, "next": null}')

    def _not_an_object(self) -> None:
        self._send(200, b'["not", "a", "page"]')

    def _next_self(self) -> None:
        self._page(next=self._here())

    def _next_other_port(self) -> None:
        self._page(next=f"{self.other}{self.path}")

    def _next_file(self) -> None:
        self._page(next="file:///etc/passwd")

    def _next_relative(self) -> None:
        self._page(next=self.path)

    def _redirect_302(self) -> None:
        self.send_response(302)
        self.send_header("Location", f"{self.other}{self.path}")
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()

    def _bad_objects(self) -> None:
        bad = {"id": 7, "custom_fields": ["x"], "a_terminations": [5], "role": 3}
        self._page(count=1, results=[bad])

    def _huge_integer(self) -> None:
        self._send(200, b'{"count": 1, "next": null, "results": [{"id": ' + b"9" * 5000 + b"}]}")


@contextmanager
def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """Run ``handler`` on a loopback port in threads; yield its base URL; stop it after."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    # A short poll: shutdown() waits up to one interval, for every case of the suite.
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def faulty_netbox(mode: str) -> Iterator[tuple[str, type[Recorder]]]:
    """(base URL of a NetBox answering in ``mode``, the recorder class its links lead to)."""
    recorder = type("Recorder", (Recorder,), {"seen": []})
    with serve(recorder) as other:
        faulty = type("Faulty", (FaultyNetBox,), {"mode": mode, "other": other})
        with serve(faulty) as base:
            yield base, recorder


@contextmanager
def stalling_listener() -> Iterator[int]:
    """A loopback TCP port that accepts connections and never sends a byte; yields the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            held.append(conn)  # kept open, silent, until the test ends

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join(2)
        for conn in held:
            conn.close()
        sock.close()
