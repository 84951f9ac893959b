"""Rails and VLANs sharing a subnet in NetBox's IPAM (netbox/subnets.py), on the fake.

The fake here holds NetBox's two rules the mapping exists for: one prefix per subnet
(``ENFORCE_GLOBAL_UNIQUE``, NetBox's default: "Duplicate prefix found in global table") and
no deleting a VLAN a prefix points at (``Prefix.vlan`` is ``on_delete=PROTECT``). The real
NetBox proves the same in tests/integration/netbox/test_netbox_way_real.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from fabric_stack.adapters.inventory.netbox.definitions import PROCESS_CACHE
from fabric_stack.adapters.inventory.netbox.fake import FakeNetBox
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.adapters.inventory.netbox.subnets import VLAN_PREFIX
from fabric_stack.errors import InventoryError
from tests.netbox_plan_io import intent_of

ROCE = {"gpus": 16, "fabric": "roce", "switch": "sn5600"}


class StrictNetBox(FakeNetBox):
    """The fake, refusing a second prefix of a subnet and a delete of a VLAN in use."""

    def _subnets(self, objs: Iterable[Mapping[str, Any]]) -> list[str]:
        return [str(o["prefix"]) for o in objs if "prefix" in o]

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        if endpoint == "ipam/prefixes":
            have = self._subnets(self._table(endpoint).values())
            new = self._subnets(objs)
            dup = sorted({p for p in new if p in have or new.count(p) > 1})
            if dup:
                raise InventoryError(f"Duplicate prefix found in global table: {dup[0]}")
        return super().create(endpoint, objs)

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        if endpoint == "ipam/prefixes":
            moved = {int(o["id"]): str(o["prefix"]) for o in objs if "prefix" in o}
            others = [str(p["prefix"]) for i, p in self._table(endpoint).items() if i not in moved]
            if any(p in others for p in moved.values()):
                raise InventoryError("Duplicate prefix found in global table")
        return super().update(endpoint, objs)

    def delete(self, endpoint: str, ids: Iterable[int]) -> None:
        ids = list(ids)
        if endpoint == "ipam/vlans":
            used = {
                p["vlan"]["id"] if isinstance(p.get("vlan"), Mapping) else p.get("vlan")
                for p in self._table("ipam/prefixes").values()
            }
            if used & set(ids):
                raise InventoryError("Unable to delete VLAN: a prefix points at it (PROTECT)")
        super().delete(endpoint, ids)


@pytest.fixture
def store() -> NetBoxStore:
    PROCESS_CACHE.ids.clear()  # ids cached per process belong to another fake
    PROCESS_CACHE.details.clear()
    return NetBoxStore("netbox+http://127.0.0.1:9", api=StrictNetBox(), token="t")


def _prefixes(store: NetBoxStore) -> dict[str, dict[str, Any]]:
    assert isinstance(store.api, FakeNetBox)
    rows = list(store.api.tables.get("ipam/prefixes", {}).values())
    assert len({p["prefix"] for p in rows}) == len(rows)  # one prefix per subnet
    return {str(p["prefix"]): p for p in rows}


def _vlans(store: NetBoxStore) -> dict[int, dict[str, Any]]:
    assert isinstance(store.api, FakeNetBox)
    return dict(store.api.tables.get("ipam/vlans", {}))


@pytest.mark.parametrize("vlans_first", [False, True])
def test_roce_rail_and_vlan_share_one_prefix_carrying_the_vlan(
    store: NetBoxStore, vlans_first: bool
) -> None:
    intent = intent_of(**ROCE)
    rails = [(r.name, r.props()) for r in intent.rails]
    vlans = [(v.name, v.props()) for v in intent.vlans]
    writes = (
        [("Vlan", vlans), ("Rail", rails)] if vlans_first else [("Rail", rails), ("Vlan", vlans)]
    )
    for kind, records in writes:
        store.put_many("s", kind, records)
    prefixes, by_id = _prefixes(store), _vlans(store)
    assert set(prefixes) == {r["subnet"] for _, r in rails} | {v["subnet"] for _, v in vlans}
    for v in intent.vlans:
        p = prefixes[v.subnet]
        assert by_id[p["vlan"]]["vid"] == v.vlan, v.name  # the subnet's prefix carries its VLAN
    for r in intent.rails:
        assert prefixes[r.subnet]["custom_fields"]["fabric_kind"] == "Rail"
    # Both records read back as written (live values: the prefix, the VLAN id).
    for kind, records in writes:
        for name, props in records:
            got = store.get("s", kind, name)
            assert got is not None and {k: v for k, v in got.items() if k != "status"} == props
    assert store.counts("s") == {"Rail": len(rails), "Vlan": len(vlans)}
    # A rerun writes nothing.
    api = store.api
    assert isinstance(api, FakeNetBox)
    before = api.requests
    tables = {k: dict(v) for k, v in api.tables.items()}
    for kind, records in writes:
        store.put_many("s", kind, records)
    assert api.tables == tables and api.requests > before


def test_deleting_one_leaves_the_prefix_the_other_needs(store: NetBoxStore) -> None:
    intent = intent_of(**ROCE)
    rail = intent.rails[0]
    vlan = next(v for v in intent.vlans if v.subnet == rail.subnet)
    store.put("s", "Rail", rail.name, rail.props())
    store.put("s", "Vlan", vlan.name, vlan.props())

    store.delete("s", "Rail", rail.name, unbundled_only=True)
    p = _prefixes(store)[rail.subnet]  # still there: the VLAN needs it
    assert p["custom_fields"]["fabric_kind"] == VLAN_PREFIX and p["vlan"]
    assert store.get("s", "Rail", rail.name) is None
    got = store.get("s", "Vlan", vlan.name)
    assert got is not None and got["subnet"] == rail.subnet

    store.put("s", "Rail", rail.name, rail.props())  # back: it takes the prefix over
    p = _prefixes(store)[rail.subnet]
    assert p["custom_fields"]["fabric_kind"] == "Rail" and p["vlan"]

    store.delete("s", "Vlan", vlan.name, unbundled_only=True)  # the rail's prefix stays
    assert _vlans(store) == {}
    p = _prefixes(store)[rail.subnet]
    assert p["custom_fields"]["fabric_kind"] == "Rail" and p["vlan"] is None
    assert store.get("s", "Rail", rail.name) == {**rail.props(), "status": "reserved"}

    store.delete("s", "Rail", rail.name, unbundled_only=True)
    assert _prefixes(store) == {}


def test_a_vlan_losing_its_id_moves_back_to_a_prefix(store: NetBoxStore) -> None:
    intent = intent_of(**ROCE)
    storage = next(v for v in intent.vlans if v.network == "storage")
    store.put("s", "Vlan", storage.name, storage.props())
    assert len(_vlans(store)) == 1
    plain = {**storage.props(), "vlan": 0}
    store.put("s", "Vlan", storage.name, plain)
    assert _vlans(store) == {}
    p = _prefixes(store)[storage.subnet]
    assert p["custom_fields"]["fabric_kind"] == "Vlan" and not p.get("vlan")
    assert store.get("s", "Vlan", storage.name) == {**plain, "status": "reserved"}
    store.put("s", "Vlan", storage.name, storage.props())  # and to a VLAN again
    assert list(_prefixes(store)) == [storage.subnet] and len(_vlans(store)) == 1
    store.delete("s", "Vlan", storage.name)
    assert _prefixes(store) == {} and _vlans(store) == {}


def test_infiniband_partition_stays_on_its_prefix(store: NetBoxStore) -> None:
    intent = intent_of(gpus=16)
    vlans = [(v.name, v.props()) for v in intent.vlans]
    store.put_many("s", "Vlan", vlans)
    pkey = next(v for v in intent.vlans if v.vlan == 0)
    p = _prefixes(store)[pkey.subnet]
    assert p["custom_fields"]["fabric_name"] == pkey.name and not p.get("vlan")
    assert len(_vlans(store)) == len(vlans) - 1
    assert [r["name"] for r in store.list_records("Vlan", "s")] == sorted(n for n, _ in vlans)
