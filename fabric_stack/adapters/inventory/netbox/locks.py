"""Which NetBox cable writes of one process may run at the same time: a lock per switch.

NetBox traces cable paths inside the write's transaction; two bulk cable writes through the
same switch deadlocked in PostgreSQL (``deadlock detected``, the whole request rolled back;
seen in ``pulumi up`` when every cable write ran at once). Measured against NetBox 4.7.3
(``bench/bench_netbox_cables.py``, ``bench/README.md`` issue 34): two concurrent bulk POSTs
(and DELETEs) of 32 cables on disjoint devices, 10 times, and two that share 32 servers but
no switch (two rail leaves' downlinks), 10 times: no deadlock (two through one shared
switch did not deadlock there either, but the ``up`` did, so switches stay locked). So a
cable write or delete holds the lock of every switch its cables end on (the plan's b end,
and the a end of a switch-to-switch cable), taken in sorted order (two writes can never
each hold a lock the other waits for): the leaves' downlinks are written concurrently,
writes through a shared switch (uplinks into the same spines) one after the other.
Deadlocks with another process (a second ``up``, a request a killed ``up`` left running)
stay possible; the client's deadlock retry (:meth:`~.client.NetBoxClient.request`)
covers those.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from fabric_stack.adapters.inventory.netbox.mapping import cf_of, end_of

__all__ = [
    "CABLE_LOCKS",
    "SWITCH_TO_SWITCH",
    "DeviceLocks",
    "switches_of_cables",
    "switches_of_records",
]

SWITCH_TO_SWITCH = ("leaf_spine", "spine_core")
"""Cable roles whose a end is a switch too (every plan cable's b end is one)."""


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


CABLE_LOCKS = DeviceLocks()
"""The switch locks every cable write and delete of the process holds."""


def switches_of_records(records: Iterable[tuple[str, Mapping[str, Any]]]) -> set[str]:
    """The switches Cable ``records`` end on: each b end, and the a end of switch-to-switch."""
    out = set()
    for _, r in records:
        out.add(str(r.get("b_device") or ""))
        if r.get("role") in SWITCH_TO_SWITCH:
            out.add(str(r.get("a_device") or ""))
    return out - {""}


def switches_of_cables(cables: Iterable[Mapping[str, Any]]) -> set[str]:
    """The switches NetBox ``cables`` end on now (their ends as NetBox holds them, the role
    from their plan record; an end that is not one interface names none)."""
    out: set[str] = set()
    for c in cables:
        rec = cf_of(c).get("fabric_record")
        role = rec.get("role") if isinstance(rec, Mapping) else None
        a, b = (end_of(c.get(f"{e}_terminations"))[0] for e in ("a", "b"))
        out |= {a, b} if role in SWITCH_TO_SWITCH else {b}
    return out - {""}
