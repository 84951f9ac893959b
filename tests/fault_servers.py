"""Misbehaving servers on loopback for the fault-injection tests (issue #35).

:class:`FaultyNetBox` answers every request in one chosen wrong way (HTML with 200,
truncated JSON, a bad status line, a short read, an endless stream, a byte drip, JSON
nested 100,000 deep, ``results`` that are not a list, ``next`` links that loop or leave,
a redirect); :class:`Recorder` is the second server a leaving link points at, noting
every ``Authorization`` header it receives; :func:`stalling_listener` accepts TCP
connections and never says a word (a PostgreSQL that never completes its handshake);
:func:`loopback_proxy` is an HTTP proxy (absolute-URI requests and ``CONNECT`` tunnels)
noting what each request showed it, and :func:`https_netbox` a TLS recorder behind it.
Each test starts and stops them; nothing is left listening.
"""

from __future__ import annotations

import http.server
import json
import socket
import socketserver
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

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
    "continue-flood",
    "next-further",
    "count-huge",
    "tiny-objects",
    "missing-id",
    "wrong-guid",
    "too-many-results",
)
"""Every way :class:`FaultyNetBox` can answer wrongly (every command reads these)."""

DEVICE_MODES = ("string-site-id", "wrong-position")
"""Wrong device fields: only a read of ``dcim/devices`` looks at them."""


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

    def _continue_flood(self) -> None:
        # What a misbehaving proxy does: interim answers without end, never a final one.
        try:
            while True:
                self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.wfile.flush()
        except OSError:
            return

    def _next_further(self) -> None:
        # `next` always one page further, as a NetBox whose list grows without end.
        head, _, query = self._here().partition("?")
        offset = int(dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("o", 0))
        self._page(count=1, next=f"{head}?o={offset + 1}", results=[{"id": offset + 1}])

    def _count_huge(self) -> None:
        self._page(count=10**9, next=f"{self._here()}&offset=1000", results=[])

    def _tiny_objects(self) -> None:
        # 2.2 million values in 3.3 MB (under the tests' 4 MiB cap): gigabytes once parsed.
        self._send(200, b'{"count": 1, "next": null, "results": [' + b"{}," * 1_100_000 + b"{}]}")

    def _too_many_results(self) -> None:
        self._page(count=5000, results=[{"id": n} for n in range(1, 5001)])

    def _missing_id(self) -> None:
        self._page(results=[{"name": "leaf-1", "custom_fields": {}}])

    def _string_site_id(self) -> None:
        self._page(results=[{"id": 1, "name": "leaf-1", "site": "3", "custom_fields": {}}])

    def _wrong_position(self) -> None:
        self._page(results=[{"id": 1, "name": "leaf-1", "position": [1], "custom_fields": {}}])

    def _wrong_guid(self) -> None:
        self._page(results=[{"id": 1, "name": "p1", "custom_fields": {"ib_guid": 17}}])

    def _huge_integer(self) -> None:
        self._send(200, b'{"count": 1, "next": null, "results": [{"id": ' + b"9" * 5000 + b"}]}")


class Busy(_Quiet):
    """Answers ``status`` with ``Retry-After: wait`` to the first ``refusals`` requests, then
    an empty list page (a NetBox behind a rate limiter, or restarting); counts the requests."""

    status: ClassVar[int] = 429
    wait: ClassVar[str] = "2"
    refusals: ClassVar[int] = 1
    seen: ClassVar[list[float]] = []

    def do_GET(self) -> None:
        type(self).seen.append(time.monotonic())
        if len(type(self).seen) > type(self).refusals:
            self._send(200, json.dumps(PAGE).encode())
            return
        body = b'{"detail": "Request was throttled."}'
        self.send_response(self.status)
        self.send_header("Retry-After", self.wait)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def busy_netbox(status: int, wait: str, refusals: int = 1) -> Iterator[tuple[str, list[float]]]:
    """(base URL of a :class:`Busy` NetBox, the times of the requests it received)."""
    seen: list[float] = []
    handler = type("Busy", (Busy,), {"status": status, "wait": wait, "refusals": refusals})
    handler.seen = seen
    with serve(handler) as base:
        yield base, seen


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


def _startup_then_silence(conn: socket.socket) -> None:
    """Speak PostgreSQL's start-up (refuse TLS and GSS, trust the user, say ready), then
    read whatever the client sends and never answer it."""
    conn.settimeout(30)
    with suppress(OSError):
        while True:
            head = conn.recv(8, socket.MSG_WAITALL)
            if len(head) < 8:
                return
            size, code = struct.unpack("!ii", head)
            conn.recv(max(0, size - 8), socket.MSG_WAITALL)
            if code in (80877103, 80877104):  # SSLRequest, GSSENCRequest: not here
                conn.sendall(b"N")
                continue
            ready = [
                b"R" + struct.pack("!ii", 8, 0),  # AuthenticationOk
                b"S" + _param(b"server_version", b"16.4"),
                b"S" + _param(b"client_encoding", b"UTF8"),
                b"S" + _param(b"standard_conforming_strings", b"on"),
                b"K" + struct.pack("!iii", 12, 4242, 1),  # BackendKeyData
                b"Z" + struct.pack("!i", 5) + b"I",  # ReadyForQuery, idle
            ]
            conn.sendall(b"".join(ready))
            break
        while conn.recv(65536):  # every query, read and never answered
            pass


def _param(name: bytes, value: bytes) -> bytes:
    body = name + b"\0" + value + b"\0"
    return struct.pack("!i", len(body) + 4) + body


@contextmanager
def silent_postgres() -> Iterator[int]:
    """A loopback PostgreSQL that completes the start-up and then never answers a query
    (what a stuck server or a proxy holding the connection looks like); yields its port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    stop = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            held.append(conn)
            threading.Thread(target=_startup_then_silence, args=(conn,), daemon=True).start()

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


class _ProxyHandler(socketserver.BaseRequestHandler):
    """One client of :func:`loopback_proxy`: an absolute-URI request or a ``CONNECT``."""

    seen: ClassVar[list[tuple[str, dict[str, str]]]]

    def handle(self) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            got = self.request.recv(4096)
            if not got:
                return
            head += got
        raw, _, rest = head.partition(b"\r\n\r\n")
        first, *lines = raw.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines if ": " in line)
        type(self).seen.append((first, headers))
        method, target, _version = first.split(" ", 2)
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)), timeout=5)
            self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            url = urlsplit(target)
            upstream = socket.create_connection((url.hostname, url.port or 80), timeout=5)
            path = url.path + (f"?{url.query}" if url.query else "")
            kept = [ln for ln in lines if not ln.lower().startswith("proxy-authorization")]
            fwd = "\r\n".join([f"{method} {path} HTTP/1.1", *kept]) + "\r\n\r\n"
            upstream.sendall(fwd.encode("latin-1") + rest)
        _relay(self.request, upstream)


def _relay(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""

    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    other = threading.Thread(target=pump, args=(b, a), daemon=True)
    other.start()
    pump(a, b)
    other.join(5)
    b.close()


@contextmanager
def loopback_proxy() -> Iterator[tuple[int, list[tuple[str, dict[str, str]]]]]:
    """A forwarding HTTP proxy on loopback (absolute-URI requests and ``CONNECT``); yields
    (port, the request line and headers of every request it received)."""
    seen: list[tuple[str, dict[str, str]]] = []
    handler = type("Proxy", (_ProxyHandler,), {"seen": seen})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def https_netbox(tmp: Path) -> Iterator[tuple[str, str]]:
    """An HTTPS :class:`Recorder` on loopback with a throw-away self-signed certificate for
    127.0.0.1 (made by ``openssl``); yields (base URL, the certificate file to trust)."""
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec"),
            *("-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    recorder = type("Recorder", (Recorder,), {"seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), recorder)
    server.daemon_threads = True
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", str(cert)
    finally:
        server.shutdown()
        server.server_close()
