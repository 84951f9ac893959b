"""Progress of NetBox writes: objects written of those asked for, per object type.

A 32,768-GPU first write into NetBox (``inventory import``, an in-process ``up``) runs
for minutes of bulk requests; without a word it looks hung. :func:`tracked` wraps the
client the NetBox store uses (hooked once, where :class:`~.store.NetBoxStore`
makes it) and, on a terminal's stderr only, shows one line while a bulk call is in
flight (at most once per :data:`EVERY_S`; cleared when the call returns)::

    netbox: dcim/interfaces 4,000/6,000 created · dcim/cables 1,500/3,000 created · 12 s

The totals are what the writes asked for so far (each bulk call adds its objects before
it runs), so they grow as the store reaches each type. A pipe, a log or the Pulumi
program's own stderr (not a terminal) get nothing: the wrapper is not installed there.
The wrapper changes no request; batching stays the client's.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi, Query

EVERY_S = 1.0
"""Seconds between two updates of the progress line."""

VERBS = {"create": "created", "update": "updated", "delete": "deleted"}
"""Each bulk write, as the progress line names it."""


class WriteProgress:
    """Counts per (endpoint, verb): objects asked for and objects written; shows them.

    The line is shown while a bulk call is in flight (when one starts, at most once per
    ``every_s``) and cleared when it returns, so whatever the command prints between
    writes starts on a clean line.
    """

    def __init__(
        self, say: Callable[[str], None], clear: Callable[[], None], every_s: float = EVERY_S
    ) -> None:
        self.say = say
        self.clear = clear
        self.every_s = every_s
        self.start = time.monotonic()
        self.shown_at = float("-inf")
        self.visible = False
        self.asked: dict[tuple[str, str], int] = {}
        self.done: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()  # the store writes from Pulumi's resource threads

    def planned(self, verb: str, endpoint: str, n: int) -> None:
        """``n`` more objects of ``endpoint`` are being written by ``verb``; show if due."""
        with self._lock:
            key = (endpoint.strip("/"), verb)
            self.asked[key] = self.asked.get(key, 0) + n
            self.done.setdefault(key, 0)
            now = time.monotonic()
            if now - self.shown_at >= self.every_s:
                self.shown_at = now
                self.visible = True
                self.say(self.line(now))

    def written(self, verb: str, endpoint: str, n: int) -> None:
        """``n`` objects of ``endpoint`` were written by ``verb`` (or the call failed: 0)."""
        with self._lock:
            key = (endpoint.strip("/"), verb)
            self.done[key] = self.done.get(key, 0) + n
            if self.visible:
                self.visible = False
                self.clear()

    def line(self, now: float | None = None) -> str:
        """``netbox: TYPE done/asked VERB · … · N s``."""
        took = (time.monotonic() if now is None else now) - self.start
        parts = [
            f"{endpoint} {self.done[endpoint, verb]:,}/{asked:,} {VERBS[verb]}"
            for (endpoint, verb), asked in self.asked.items()
        ]
        return f"netbox: {' · '.join(parts)} · {took:.0f} s"


class Tracked:
    """A :class:`~.client.NetBoxApi` that reports its bulk writes to a WriteProgress."""

    def __init__(self, api: NetBoxApi, progress: WriteProgress) -> None:
        self.api = api
        self.progress = progress

    def select(self, endpoint: str, query: Query | None = None) -> list[dict[str, Any]]:
        """As the wrapped client (reads are not counted)."""
        return self.api.select(endpoint, query)

    def count(self, endpoint: str, query: Query | None = None) -> int:
        """As the wrapped client."""
        return self.api.count(endpoint, query)

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Bulk create, counted."""
        self.progress.planned("create", endpoint, len(objs))
        ok = 0
        try:
            got = self.api.create(endpoint, objs)
            ok = len(objs)
        finally:
            self.progress.written("create", endpoint, ok)
        return got

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Bulk update, counted."""
        self.progress.planned("update", endpoint, len(objs))
        ok = 0
        try:
            got = self.api.update(endpoint, objs)
            ok = len(objs)
        finally:
            self.progress.written("update", endpoint, ok)
        return got

    def delete(self, endpoint: str, ids: Iterable[int]) -> None:
        """Bulk delete, counted."""
        todo = list(ids)
        self.progress.planned("delete", endpoint, len(todo))
        ok = 0
        try:
            self.api.delete(endpoint, todo)
            ok = len(todo)
        finally:
            self.progress.written("delete", endpoint, ok)


def _show(line: str) -> None:
    sys.stderr.write(f"\r\x1b[K{line}")
    sys.stderr.flush()


def _clear() -> None:
    sys.stderr.write("\r\x1b[K")
    sys.stderr.flush()


def tracked(api: NetBoxApi) -> NetBoxApi:
    """``api`` reporting its writes on a terminal's stderr; ``api`` itself elsewhere."""
    if not sys.stderr.isatty():
        return api
    return Tracked(api, WriteProgress(_show, _clear))


__all__ = ["EVERY_S", "Tracked", "WriteProgress", "tracked"]
