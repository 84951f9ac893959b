"""A client-side bound on every PostgreSQL round trip: a server that never answers still ends.

``statement_timeout`` is enforced by the server, so a server (or a proxy, a half-dead
connection) that completes the start-up and then says nothing enforces nothing: the read
would wait for ever. :class:`QueryGuard` shuts the connection's socket down when one round
trip (``BEGIN``, a statement, a batch, ``COMMIT``) has run longer than its bound, so libpq's
blocked read returns and the command ends with one line naming the setting
(``FABRIC_STACK_PG_QUERY_TIMEOUT``). Statements go through :class:`GuardedCursor`
(``Connection.execute`` makes its cursor through ``cursor_factory`` too), the transaction's
start and end through :func:`guarded_transaction`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import psycopg

QUERY_TIMEOUT_ENV = "FABRIC_STACK_PG_QUERY_TIMEOUT"
"""Environment variable: seconds one round trip to PostgreSQL may take (client side)."""

DEFAULT_QUERY_TIMEOUT_S = 60
"""Default bound: above the read ``statement_timeout`` (45 s), so a slow read is the server's
line; a silent server is this one (and a command still ends within 90 s)."""

ROW_SECONDS = 0.001
"""Seconds allowed per row of a batch on top of the bound (PostgreSQL writes thousands of
rows a second over a network): a million-row import is not cut at 60 s."""


class QueryGuard:
    """Shuts ``conn``'s socket when a round trip outlasts ``seconds``; :attr:`fired` says so."""

    def __init__(self, conn: psycopg.Connection[Any], seconds: float) -> None:
        self.conn = conn
        self.seconds = seconds
        self.fired = False

    @contextlib.contextmanager
    def busy(self, rows: int = 0) -> Iterator[None]:
        """Bound the round trip run inside (``rows``: the batch's size, each given time)."""
        timer = threading.Timer(self.seconds + rows * ROW_SECONDS, self._shut)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _shut(self) -> None:
        self.fired = True
        with contextlib.suppress(OSError, ValueError):  # closed meanwhile: nothing to stop
            # A duplicate of the descriptor: shutting it down ends libpq's read on the
            # original (closing it would not), and closing the duplicate leaves libpq's.
            sock = socket.socket(fileno=os.dup(self.conn.pgconn.socket))
            try:
                sock.shutdown(socket.SHUT_RDWR)
            finally:
                sock.close()


class GuardedCursor(psycopg.Cursor[Any]):
    """A cursor whose ``execute`` and ``executemany`` run under the connection's guard."""

    guard: QueryGuard

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        """``Cursor.execute`` under the guard."""
        with self.guard.busy():
            return super().execute(query, params, **kwargs)

    def executemany(self, query: Any, params_seq: Iterable[Any], **kwargs: Any) -> None:
        """``Cursor.executemany`` under the guard (its bound grows with the batch)."""
        rows = list(params_seq)
        with self.guard.busy(len(rows)):
            super().executemany(query, rows, **kwargs)


def guard(conn: psycopg.Connection[Any], seconds: float) -> QueryGuard:
    """Put ``conn``'s statements under a new :class:`QueryGuard` of ``seconds``; return it."""
    watch = QueryGuard(conn, seconds)
    conn.cursor_factory = type("Guarded", (GuardedCursor,), {"guard": watch})
    return watch


@contextlib.contextmanager
def guarded_transaction(conn: psycopg.Connection[Any], watch: QueryGuard) -> Iterator[None]:
    """``conn.transaction()``, its ``BEGIN`` and its ``COMMIT``/``ROLLBACK`` under ``watch``."""
    tx = conn.transaction()
    with watch.busy():
        tx.__enter__()
    try:
        yield
    except BaseException as exc:
        with watch.busy():
            if tx.__exit__(type(exc), exc, exc.__traceback__):
                return
        raise
    with watch.busy():
        tx.__exit__(None, None, None)


__all__ = [
    "DEFAULT_QUERY_TIMEOUT_S",
    "QUERY_TIMEOUT_ENV",
    "QueryGuard",
    "guard",
    "guarded_transaction",
]
