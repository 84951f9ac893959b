"""The NetBox cable locks (netbox/locks.py): writes sharing a switch never run together, writes on
disjoint switches do, and no two writes wait for each other for ever. No NetBox needed."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory.netbox.definitions import PROCESS_CACHE
from fabric_stack.adapters.inventory.netbox.fake import FakeNetBox
from fabric_stack.adapters.inventory.netbox.locks import (
    DeviceLocks,
    switches_of_cables,
    switches_of_records,
)
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore

URL = "netbox+http://127.0.0.1:9"


def test_overlapping_sets_never_run_together_and_never_deadlock() -> None:
    locks = DeviceLocks()
    busy: set[str] = set()
    guard = threading.Lock()
    clashes: list[tuple[str, ...]] = []
    keys = "abcdef"

    def work(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(40):
            mine = rng.sample(keys, rng.randint(1, 4))  # any order: held sorts them
            with locks.held(mine):
                with guard:
                    if busy & set(mine):
                        clashes.append(tuple(mine))
                    busy.update(mine)
                time.sleep(0.0005)
                with guard:
                    busy.difference_update(mine)

    threads = [threading.Thread(target=work, args=(s,), daemon=True) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "two writes wait for each other (deadlock)"
    assert clashes == []


def test_disjoint_sets_run_together() -> None:
    locks = DeviceLocks()
    both_inside = threading.Barrier(2, timeout=5)

    def work(keys: list[str]) -> None:
        with locks.held(keys):
            both_inside.wait()  # raises BrokenBarrierError if the other cannot get in

    threads = [threading.Thread(target=work, args=(k,)) for k in (["s1", "h1"], ["s2", "h2"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not both_inside.broken


def test_a_shared_key_waits_for_the_holder() -> None:
    locks = DeviceLocks()
    release, entered = threading.Event(), threading.Event()

    def holder() -> None:
        with locks.held(["h1", "s1"]):
            release.wait(5)

    def second() -> None:
        with locks.held(["s2", "h1"]):
            entered.set()

    first = threading.Thread(target=holder)
    first.start()
    time.sleep(0.05)
    other = threading.Thread(target=second)
    other.start()
    assert not entered.wait(0.3), "a write sharing h1 ran while h1 was held"
    release.set()
    assert entered.wait(5)
    first.join()
    other.join()


def test_no_keys_hold_nothing_and_locks_are_released_on_error() -> None:
    locks = DeviceLocks()
    with locks.held([]):
        pass
    with pytest.raises(RuntimeError), locks.held(["a"]):
        raise RuntimeError("write failed")
    with locks.held(["a"]):  # would block for ever if the failed write kept "a"
        pass


def test_switches_of_records_and_of_netbox_cables() -> None:
    down = {"a_device": "node01", "b_device": "leaf1", "role": "node_leaf"}
    up = {"a_device": "leaf1", "b_device": "spine1", "role": "leaf_spine"}
    assert switches_of_records([("d", down)]) == {"leaf1"}  # a server end takes no lock
    assert switches_of_records([("d", down), ("u", up)]) == {"leaf1", "spine1"}

    def end(dev: str) -> list[dict[str, Any]]:
        return [{"object_type": "dcim.interface", "object": {"device": {"name": dev}}}]

    def cable(a: str, b: str, role: str) -> dict[str, Any]:
        cf = {"fabric_record": {"role": role}}
        return {"a_terminations": end(a), "b_terminations": end(b), "custom_fields": cf}

    cables = [
        cable("node01", "leaf1", "node_leaf"),
        cable("leaf2", "spine1", "leaf_spine"),  # NetBox's ends, not the record's
        {"a_terminations": end("leaf3"), "b_terminations": [], "custom_fields": {}},  # lost end
    ]
    assert switches_of_cables(cables) == {"leaf1", "leaf2", "spine1"}


class _Watching(FakeNetBox):
    """A thread-safe fake that reports whether two cable writes ran at the same time: each
    cable create or delete waits up to ``linger`` s for a second to come in."""

    def __init__(self, linger: float) -> None:
        super().__init__()
        self.linger = linger
        self.cond = threading.Condition()
        self.active = self.peak = 0

    def _cable_op(self) -> None:
        with self.cond:
            self.active += 1
            self.peak = max(self.peak, self.active)
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.active >= 2, timeout=self.linger)
            self.active -= 1

    def select(self, endpoint: str, query: Any = None) -> list[dict[str, Any]]:
        with self.cond:
            got = super().select(endpoint, query)
            if endpoint == "dcim/cables":  # NetBox answers with the ends' devices
                ifs = self._table("dcim/interfaces")
                devs = self._table("dcim/devices")
                for c in got:
                    for e in ("a", "b"):
                        for t in c[f"{e}_terminations"]:
                            dev = devs.get(int(ifs[int(t["object_id"])]["device"]), {})
                            t["object"] = {"device": {"name": dev.get("name", "")}}
            return got

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        if endpoint == "dcim/cables":
            self._cable_op()
        with self.cond:
            return super().create(endpoint, objs)

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        with self.cond:
            return super().update(endpoint, objs)

    def delete(self, endpoint: str, ids: Iterable[int]) -> None:
        if endpoint == "dcim/cables":
            self._cable_op()
        with self.cond:
            super().delete(endpoint, ids)


@pytest.fixture(scope="module")
def intent() -> Any:
    return derive_intent(build_topology(size_fabric(validate_spec(gpus=128))))


def _bundle(intent: Any, leaf: str, side: str) -> list[tuple[str, dict[str, Any]]]:
    if side == "downlinks":
        return [(c.name, c.props()) for c in intent.cables if c.b_device == leaf]
    return [(c.name, c.props()) for c in intent.cables if c.a_device == leaf]


def _peak(intent: Any, bundles: list[tuple[str, str]], *, delete: bool) -> int:
    """The most cable writes (or, ``delete``, deletes) of ``bundles`` running at once when
    each bundle is written (deleted) from its own thread, as Pulumi's resources are."""
    PROCESS_CACHE.ids.clear()
    api = _Watching(linger=0.5)
    store = NetBoxStore(URL, api=api, token="t")
    jobs = [(f"{leaf}/{side}", _bundle(intent, leaf, side)) for leaf, side in bundles]
    if delete:
        for name, cables in jobs:  # written one at a time first
            store.replace_bundle("s", "Cable", name, cables)
        api.peak = 0
    errors: list[BaseException] = []

    def run(name: str, cables: list[tuple[str, dict[str, Any]]]) -> None:
        try:
            if delete:
                store.delete_bundle("s", "Cable", name)
            else:
                store.replace_bundle("s", "Cable", name, cables)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and not any(t.is_alive() for t in threads)
    assert len(api.tables.get("dcim/cables", {})) == (0 if delete else sum(len(c) for _, c in jobs))
    return api.peak


SHARING = {
    "the leaf": [("su1-r1-leaf", "downlinks"), ("su1-r1-leaf", "uplinks")],
    "the spines": [("su1-r1-leaf", "uplinks"), ("su1-r2-leaf", "uplinks")],
}
DISJOINT = {
    "nothing": [("su1-r1-leaf", "downlinks"), ("su1-r2-leaf", "uplinks")],
    "only servers": [("su1-r1-leaf", "downlinks"), ("su1-r2-leaf", "downlinks")],
}


@pytest.mark.parametrize("delete", [False, True], ids=["write", "delete"])
@pytest.mark.parametrize("shared", list(SHARING))
def test_bundles_sharing_a_switch_are_written_one_at_a_time(
    intent: Any, shared: str, delete: bool
) -> None:
    assert _peak(intent, SHARING[shared], delete=delete) == 1


@pytest.mark.parametrize("delete", [False, True], ids=["write", "delete"])
@pytest.mark.parametrize("shared", list(DISJOINT))
def test_bundles_on_disjoint_switches_are_written_together(
    intent: Any, shared: str, delete: bool
) -> None:
    assert _peak(intent, DISJOINT[shared], delete=delete) == 2
