"""The NetBox client's transport: one HTTP exchange, bounded in time and size, never redirected.

Every request is checked before it is sent and every answer before it is believed:

* the URL must be ``http(s)://`` of the configured origin (scheme, host, port): a
  pagination ``next`` elsewhere, a ``file:`` or relative link is refused, so the API
  token only ever goes to the server it was given for;
* redirects are never followed (``http.client`` does not, unlike ``urllib``): a 3xx is
  one line naming where it pointed;
* the token must be printable ASCII (a newline would split the header);
* connecting has :data:`CONNECT_TIMEOUT_S`, each read :data:`READ_TIMEOUT_S`, each request
  as a whole (interim ``1xx`` answers, headers and body) ``FABRIC_STACK_NETBOX_TIMEOUT``
  seconds (:func:`request_seconds`), at most :data:`MAX_INTERIM` interim answers, and the
  whole command a :class:`Budget` (``FABRIC_STACK_NETBOX_DEADLINE`` seconds), so a server
  that drips a byte at a time, or sends ``100 Continue`` without end, still ends; a body
  over :data:`MAX_RESPONSE_BYTES` is refused;
* the body must be JSON (HTML is named as such) within the input layer's nesting and
  integer budgets (:func:`fabric_stack.files.inputs.parse_json`).

Every failure is one :class:`~fabric_stack.errors.InventoryError` line,
``netbox METHOD URL: what was wrong``, that never contains the token.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.client
import os
import socket
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import fabric_stack.adapters.inventory.resolve as resolve
from fabric_stack.errors import InputFileError, InventoryError
from fabric_stack.files.inputs import parse_json
from fabric_stack.text.redact import echo_env, mask_url

CONNECT_TIMEOUT_S = 10.0
"""Seconds to open the TCP (and TLS) connection."""

READ_TIMEOUT_S = 30.0
"""Seconds any one read of a GET may wait (NetBox serializes a 1000-object page in a few)."""

WRITE_TIMEOUT_S = 120.0
"""Seconds a bulk write may wait for its answer (NetBox works tens of seconds on a chunk of
:data:`~.client.CHUNK` objects before it sends the first byte)."""

TIMEOUT_ENV = "FABRIC_STACK_NETBOX_TIMEOUT"
"""Environment variable: seconds one GET may take in all (a write gets :data:`WRITE_TIMEOUT_S`
more), interim answers, headers and body included."""

DEFAULT_TIMEOUT_S = 60.0
"""The default whole-request bound of a GET: a page of 1000 cables takes seconds."""

MAX_INTERIM = 16
"""Interim ``1xx`` answers accepted before the final one (a real server sends one at most)."""

DEADLINE_ENV = "FABRIC_STACK_NETBOX_DEADLINE"
"""Environment variable: seconds one command may spend talking to NetBox in all."""

DEFAULT_DEADLINE_S = 1800.0
"""The default total: a 32k-GPU first apply writes for minutes, never for half an hour."""

MAX_RESPONSE_BYTES = 64 << 20
"""Largest answer read: a page of 1000 cables with the selected fields is about 2 MB, a
page of full objects several times that; the cap stops an endless body growing without bound."""

MAX_JSON_ITEMS = 2_000_000
"""Most JSON values (counted by their ``,``, ``{`` and ``[``) one answer may hold: a page of
1000 cables with the selected fields has about 50,000. Counted on the bytes before parsing,
so 64 MiB of ``{},{},…`` (20 million objects, gigabytes once parsed) is refused unparsed."""

_READ = 1 << 16


def env_seconds(name: str, default: float) -> float:
    """Seconds from environment variable ``name`` (a number > 0), or ``default``."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e7:  # NaN fails this too
        raise InventoryError(f"{echo_env(name, raw)}: expected a number of seconds > 0")
    return value


def deadline_seconds() -> float:
    """The per-command deadline: ``FABRIC_STACK_NETBOX_DEADLINE`` (seconds) or the default."""
    return env_seconds(DEADLINE_ENV, DEFAULT_DEADLINE_S)


def request_seconds(method: str) -> float:
    """How long one request may take in all: ``FABRIC_STACK_NETBOX_TIMEOUT`` for a GET, that
    plus :data:`WRITE_TIMEOUT_S` for a bulk write."""
    base = env_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT_S)
    return base if method == "GET" else base + WRITE_TIMEOUT_S


class InterimFlood(http.client.HTTPException):
    """The server sent more than :data:`MAX_INTERIM` interim answers before a final one."""


class _BoundedResponse(http.client.HTTPResponse):
    """http.client's response, counting the ``100 Continue`` answers it skips: it would
    skip them for ever (``HTTPResponse.begin`` loops until a final status)."""

    interim = 0

    def _read_status(self) -> tuple[str, int, str]:
        version, status, reason = super()._read_status()  # type: ignore[misc]
        if status == http.client.CONTINUE:
            self.interim += 1
            if self.interim > MAX_INTERIM:
                raise InterimFlood(f"{self.interim} interim 100 Continue answers")
        return str(version), int(status), str(reason)


@dataclass
class Budget:
    """Time left for one command's NetBox requests (started when the client is made)."""

    seconds: float = field(default_factory=deadline_seconds)
    start: float = field(default_factory=time.monotonic)
    setting: str = DEADLINE_ENV
    """The environment variable that sets :attr:`seconds` (named when they run out)."""
    what: str = "deadline"
    """What the bound is called in the message (the command's deadline, one request's)."""

    def left(self, where: str) -> float:
        """Seconds left; InventoryError naming ``where`` once the deadline has passed."""
        left = self.seconds - (time.monotonic() - self.start)
        if left <= 0:
            raise InventoryError(
                f"{where}: no complete answer within the {self.seconds:g} s {self.what} "
                f"(set {self.setting} to allow more)"
            )
        return left


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an ``http(s)://`` URL; ValueError for anything else."""
    if any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in url):
        raise ValueError("contains a space or a control character")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError("not an http:// or https:// URL")
    if not parts.hostname:
        raise ValueError("no host")
    if "@" in parts.netloc:
        # Credentials in the URL would be printed with it: the token has its own ways in.
        raise ValueError("credentials in the URL (give the token by NETBOX_TOKEN or a token file)")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, parts.hostname.lower(), port


def shown(url: str) -> str:
    """``url`` as messages show it: without the long ``fields=`` list every read selects."""
    head, sep, query = url.partition("?")
    kept = "&".join(p for p in query.split("&") if not p.startswith("fields="))
    return f"{head}{sep}{kept}" if kept else head


def check_base(base: str) -> str:
    """``base`` if it is a usable API origin; InventoryError naming what is wrong."""
    try:
        origin(base)
    except ValueError as exc:
        raise InventoryError(
            f"netbox {mask_url(base)!r}: {exc} (expected http(s)://HOST[:PORT][/PATH])"
        ) from None
    return base


def check_token(base: str, token: str) -> str:
    """``token`` if it can go in a header; InventoryError (never showing it) otherwise."""
    if any(not (0x21 <= ord(c) <= 0x7E) for c in token):
        raise InventoryError(
            f"netbox {base}: the API token holds a space, newline, control or non-ASCII "
            "character (a NetBox token is letters, digits, '_' and '.'; check the token file)"
        )
    return token


def check_same_origin(base: str, url: str, what: str) -> None:
    """InventoryError unless ``url`` is on ``base``'s origin: the token goes nowhere else."""
    try:
        same = origin(url) == origin(base)
    except ValueError as exc:
        raise InventoryError(f"netbox {base}: {what} {shown(url)!r} is refused ({exc})") from None
    if not same:
        raise InventoryError(
            f"netbox {base}: {what} {shown(url)!r} is refused: it leaves {base} "
            "(the API token is only sent to the configured server)"
        )


def proxy_for(url: str) -> str | None:
    """The proxy URL the environment names for ``url`` (``http_proxy``/``https_proxy``,
    ``no_proxy``: :func:`urllib.request.getproxies` and ``proxy_bypass`` semantics), or None."""
    parts = urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme or "")
    if not proxy or urllib.request.proxy_bypass(parts.netloc):
        return None
    return proxy


def _proxy_origin(proxy: str) -> tuple[str, int, dict[str, str]]:
    """(host, port, headers) of an ``http://[USER:PASS@]HOST[:PORT]`` proxy URL; ValueError else.

    The only credentials a proxy is sent are those in its own URL (``Proxy-Authorization:
    Basic``); the NetBox token is never one of them.
    """
    if "://" not in proxy:
        proxy = f"http://{proxy}"  # curl and urllib accept a bare HOST:PORT too
    if any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in proxy):
        raise ValueError("contains a space or a control character")
    parts = urlsplit(proxy)
    if parts.scheme != "http":
        raise ValueError("only an http:// proxy is supported (the tunnel to NetBox is TLS)")
    try:
        port = parts.port or 80
    except ValueError:
        raise ValueError("bad port") from None
    if not parts.hostname:
        raise ValueError("no host")
    headers: dict[str, str] = {}
    if parts.username is not None or parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    return parts.hostname, port, headers


def _connection(
    url: str, budget: Budget, where: str
) -> tuple[http.client.HTTPConnection, str, dict[str, str]]:
    """(connection, request target, extra headers) for ``url``, through the environment's
    proxy when it names one: HTTPS through a ``CONNECT`` tunnel; plain HTTP through a proxy
    is refused (the proxy would read the token). Name lookups (NetBox's, the proxy's) run
    under ``budget``."""
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += f"?{parts.query}"
    host, port = parts.hostname or "", parts.port
    proxy = proxy_for(url)
    extra: dict[str, str] = {}
    if proxy is not None:
        try:
            p_host, p_port, p_headers = _proxy_origin(proxy)
        except ValueError as exc:
            raise InventoryError(
                f"{where}: proxy {mask_url(proxy)!r} from the environment: {exc} "
                "(expected http://[USER:PASS@]HOST[:PORT]; or add the host to no_proxy)"
            ) from None
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        ctx = ssl.create_default_context()
        if proxy is None:
            conn = http.client.HTTPSConnection(host, port, timeout=CONNECT_TIMEOUT_S, context=ctx)
        else:
            conn = http.client.HTTPSConnection(
                p_host, p_port, timeout=CONNECT_TIMEOUT_S, context=ctx
            )
            conn.set_tunnel(host, port, headers=p_headers)
    elif proxy is None:
        conn = http.client.HTTPConnection(host, port, timeout=CONNECT_TIMEOUT_S)
    else:
        # A plain-HTTP request through a proxy hands the proxy the whole request, token
        # included (#49): only a CONNECT tunnel (https://) keeps the token end to end.
        raise InventoryError(
            f"{where}: refusing to send the NetBox token through proxy {mask_url(proxy)} "
            f"over plain HTTP (the proxy would read it); give NetBox's https:// URL (tunnelled "
            f"end to end) or add {host} to no_proxy"
        )
    conn._create_connection = functools.partial(_connect, budget=budget, where=where)  # type: ignore[attr-defined]
    conn.response_class = _BoundedResponse
    return conn, target, extra


def _connect(
    address: tuple[str, int],
    timeout: float | None = None,
    source: Any = None,
    *,
    budget: Budget,
    where: str,
) -> socket.socket:
    """http.client's ``create_connection``, with the name lookup under the deadline too."""
    return resolve.connect(
        address, timeout, source, left=lambda: min(CONNECT_TIMEOUT_S, budget.left(where))
    )


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, reason, content type, ``Location`` and body bytes."""

    status: int
    reason: str
    content_type: str
    location: str
    body: bytes
    retry_after: str = ""
    """The ``Retry-After`` header (a 429 or 503 says when to try again), or ``""``."""


def exchange(
    method: str,
    url: str,
    headers: dict[str, str],
    data: bytes | None,
    budget: Budget,
    read_timeout: float = READ_TIMEOUT_S,
) -> Answer:
    """Send one request and read its whole answer, within ``budget``, the request's own
    bound (:func:`request_seconds`) and the size cap.

    Raises InventoryError (one line naming ``method url``) for a server that cannot be
    reached, breaks HTTP, stalls, or sends too much.
    """
    proxy = proxy_for(url)
    where = f"netbox {method} {shown(url)}" + (f" (via proxy {mask_url(proxy)})" if proxy else "")
    # The whole request ends by the command's deadline or its own bound, whichever is first.
    own = request_seconds(method)
    if own < budget.left(where):
        budget = Budget(own, setting=TIMEOUT_ENV, what="request")
    conn, target, extra = _connection(url, budget, where)
    conn.timeout = min(CONNECT_TIMEOUT_S, budget.left(where))
    # A watchdog shuts the socket at the deadline: http.client reads the status line and
    # headers itself, so a server dripping them a byte at a time (or sending interim
    # answers without end) is only stopped this way.
    expired = threading.Event()
    watchdog = threading.Timer(budget.left(where), _abort, (conn, expired))
    watchdog.daemon = True
    resp: http.client.HTTPResponse | None = None
    try:
        conn.connect()
        watchdog.start()
        conn.request(method, target, body=data, headers={**headers, **extra})
        _limit(conn, budget, where, read_timeout)
        resp = conn.getresponse()
        body = _read_body(conn, resp, budget, where, read_timeout)
        return Answer(
            resp.status,
            resp.reason,
            resp.getheader("Content-Type", "") or "",
            resp.getheader("Location", "") or "",
            body,
            (resp.getheader("Retry-After", "") or "")[:64],
        )
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set() or isinstance(exc, TimeoutError):
            budget.left(where)  # raises once past the deadline: that, not the read, is the news
        if isinstance(exc, TimeoutError) and not isinstance(exc, resolve.ResolveTimeout):
            did = (
                f"sent nothing for {read_timeout:g} s"
                if conn.sock is not None
                else f"did not accept the connection within {CONNECT_TIMEOUT_S:g} s"
            )
            raise InventoryError(
                f"{where}: {did} (timed out); is the server overloaded or the port right? "
                f"({TIMEOUT_ENV} bounds a whole request)"
            ) from None
        raise InventoryError(f"{where}: {describe(exc)}") from None
    finally:
        watchdog.cancel()
        if resp is not None:
            resp.close()  # its socket outlives conn.close() when the server said close
        conn.close()


def _abort(conn: http.client.HTTPConnection, expired: threading.Event) -> None:
    """Shut the connection down (from the watchdog thread) so a blocked read returns."""
    expired.set()
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed: nothing left to stop
            sock.shutdown(socket.SHUT_RDWR)


def _limit(
    conn: http.client.HTTPConnection, budget: Budget, where: str, read_timeout: float
) -> None:
    """Give the next socket read at most the read timeout, and never beyond the deadline."""
    if conn.sock is not None:
        conn.sock.settimeout(min(read_timeout, budget.left(where)))


def _read_body(
    conn: http.client.HTTPConnection,
    resp: http.client.HTTPResponse,
    budget: Budget,
    where: str,
    read_timeout: float,
) -> bytes:
    """The body, read a chunk at a time so the deadline and the size cap hold for a drip."""
    parts: list[bytes] = []
    size = 0
    while True:
        _limit(conn, budget, where, read_timeout)
        chunk = resp.read1(_READ)
        if not chunk:
            if resp.length:  # http.client's read1 does not notice a short Content-Length
                raise http.client.IncompleteRead(b"".join(parts), resp.length)
            return b"".join(parts)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise InventoryError(
                f"{where}: answer larger than {MAX_RESPONSE_BYTES >> 20} MiB (refused; "
                "is this NetBox's API URL?)"
            )
        parts.append(chunk)


def describe(exc: BaseException) -> str:
    """What went wrong with the connection, in words (no driver class names alone)."""
    if isinstance(exc, resolve.ResolveTimeout):
        return f"{exc}; is DNS reachable (/etc/resolv.conf), or give an address?"
    if isinstance(exc, TimeoutError):
        return "no answer in time (timed out); is the server overloaded or the port right?"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the answer was cut short ({len(exc.partial)} bytes read); try again"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(exc, InterimFlood):
        return (
            f"sent {exc} and no final answer (at most {MAX_INTERIM} are accepted; "
            "is a proxy in front of NetBox misbehaving?)"
        )
    if isinstance(exc, http.client.BadStatusLine):
        return "did not answer HTTP (bad status line); is this NetBox's URL and port?"
    if isinstance(exc, http.client.HTTPException):
        return f"broke HTTP ({type(exc).__name__}: {str(exc)[:80]})"
    if isinstance(exc, ssl.SSLError):
        return f"TLS failed ({exc.reason or exc}); is it https, and is its certificate trusted?"
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"unreachable ({reason}); is it running, and is the URL right?"


def decode(answer: Answer, where: str) -> Any:
    """The JSON of a successful answer; InventoryError naming what it was instead."""
    if not answer.body:
        return None
    if "html" in answer.content_type.lower() or answer.body.lstrip()[:1] == b"<":
        raise InventoryError(f"{where}: answered HTML, not JSON (is this NetBox's API URL?)")
    items = answer.body.count(b",") + answer.body.count(b"{") + answer.body.count(b"[")
    if items > MAX_JSON_ITEMS:
        raise InventoryError(
            f"{where}: answered JSON of {items:,} values (at most {MAX_JSON_ITEMS:,}; "
            "a page of NetBox objects has a few thousand)"
        )
    try:
        text = answer.body.decode("utf-8")
    except UnicodeDecodeError:
        raise InventoryError(f"{where}: answered bytes that are not UTF-8 JSON") from None
    try:
        return parse_json(text, where)
    except InputFileError as exc:
        raise InventoryError(f"{where}: answered JSON it cannot accept ({exc.problem})") from None
    except ValueError as exc:
        raise InventoryError(
            f"{where}: answered invalid or truncated JSON ({str(exc).split(':')[0]})"
        ) from None


__all__ = [
    "CONNECT_TIMEOUT_S",
    "DEADLINE_ENV",
    "MAX_INTERIM",
    "MAX_JSON_ITEMS",
    "MAX_RESPONSE_BYTES",
    "READ_TIMEOUT_S",
    "TIMEOUT_ENV",
    "WRITE_TIMEOUT_S",
    "Answer",
    "Budget",
    "check_base",
    "check_same_origin",
    "check_token",
    "deadline_seconds",
    "decode",
    "describe",
    "env_seconds",
    "exchange",
    "origin",
    "proxy_for",
    "request_seconds",
    "shown",
]
