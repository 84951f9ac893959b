"""Name resolution under a deadline, for the inventory clients (NetBox, PostgreSQL).

``socket.getaddrinfo`` blocks in the C library with no timeout of its own: a resolver
that never answers (a dead DNS server in ``/etc/resolv.conf``) would hang a command
before any connect or read timeout applies. Here the lookup runs in a daemon thread
and is waited for at most the seconds given; a lookup still pending then is abandoned
(the thread ends whenever the C library returns) and :class:`ResolveTimeout` raised.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from typing import Any

AddrInfo = tuple[Any, ...]
"""One ``socket.getaddrinfo`` entry: (family, type, proto, canonname, sockaddr)."""


class ResolveTimeout(TimeoutError):
    """``host`` did not resolve within ``seconds``."""

    def __init__(self, host: str, seconds: float) -> None:
        self.host = host
        self.seconds = seconds
        super().__init__(f"the name {host!r} did not resolve within {seconds:.3g} s")


def is_address(host: str) -> bool:
    """True for an IPv4 or IPv6 literal (nothing to resolve)."""
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def resolve(host: str, port: int, seconds: float) -> list[AddrInfo]:
    """``getaddrinfo(host, port, SOCK_STREAM)``, waited for at most ``seconds``.

    Raises :class:`ResolveTimeout` past ``seconds`` and ``socket.gaierror`` (an OSError)
    for a name that does not exist, as ``getaddrinfo`` itself does.
    """
    box: list[list[AddrInfo] | BaseException] = []
    done = threading.Event()

    def lookup() -> None:
        try:
            box.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except BaseException as exc:  # handed to the caller's thread, raised there
            box.append(exc)
        finally:
            done.set()

    threading.Thread(target=lookup, name=f"resolve {host}", daemon=True).start()
    if not done.wait(max(seconds, 0.0)):
        raise ResolveTimeout(host, seconds)
    got = box[0]
    if isinstance(got, BaseException):
        raise got
    return got


def connect(
    address: tuple[str, int],
    timeout: float | None,
    source: Any = None,
    *,
    left: Callable[[], float],
) -> socket.socket:
    """``socket.create_connection`` with the lookup, and each connect after it, bounded by
    ``left()`` (the seconds a deadline still allows; it may raise once none are left).

    Tries each address in turn, as ``create_connection`` does, and raises the last error.
    """
    host, port = address
    last: OSError | None = None
    for family, kind, proto, _, sockaddr in resolve(host, port, left()):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(left() if timeout is None else min(timeout, left()))
            if source:
                sock.bind(source)
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise last or OSError(f"{host!r} resolved to no address")


__all__ = ["AddrInfo", "ResolveTimeout", "connect", "is_address", "resolve"]
