"""Which NetBox cable writes of one process may run at the same time: a lock per device.

NetBox traces cable paths inside the write's transaction; two bulk cable writes through the
same switch deadlocked in PostgreSQL (``deadlock detected``, the whole request rolled back;
seen in ``pulumi up`` when all cable writes ran at once). Writes on disjoint devices do not
(``bench/bench_netbox_cables.py``, measured in ``bench/README.md``, issue 34). So a cable
write or delete holds the lock of every device its cables touch, taken in sorted order
(two writes can never each hold a lock the other waits for): writes on disjoint devices run
concurrently, writes sharing a device one after the other. NetBox's deadlocks with another
process (a second ``up``, a request a killed ``up`` left running) stay possible; the
client's deadlock retry (:meth:`.netbox_client.NetBoxClient.request`) covers those.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from fabric_stack.adapters.inventory.netbox_objects import end_of

__all__ = ["DeviceLocks", "devices_of_cables", "devices_of_records"]


class DeviceLocks:
    """One lock per key (a device), created on first use and kept for the process."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    @contextmanager
    def held(self, keys: Iterable[str]) -> Iterator[None]:
        """Hold the lock of every key in ``keys``, taken in sorted order, released on exit.

        No keys: nothing is held. A caller must not take ``held`` again inside (the locks
        are not reentrant: a second set could only be ordered against the first by luck).
        """
        taken: list[threading.Lock] = []
        try:
            for key in sorted(set(keys)):
                lock = self._lock(key)
                lock.acquire()
                taken.append(lock)
            yield
        finally:
            for lock in reversed(taken):
                lock.release()


def devices_of_records(records: Iterable[tuple[str, Mapping[str, Any]]]) -> set[str]:
    """The devices the Cable ``records`` name at either end."""
    return {str(r[f"{e}_device"]) for _, r in records for e in ("a", "b")}


def devices_of_cables(cables: Iterable[Mapping[str, Any]]) -> set[str]:
    """The devices NetBox ``cables`` end on (an end that is not one interface names none)."""
    return {d for c in cables for e in ("a", "b") if (d := end_of(c.get(f"{e}_terminations"))[0])}
