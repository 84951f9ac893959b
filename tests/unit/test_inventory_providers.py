"""Provider CRUD against a real SQLite file and a real PostgreSQL server (no engine)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import dill
import pytest

from components.providers import (
    CableBundle,
    CableBundleProvider,
    CableProvider,
    SwitchProvider,
)
from fabric_stack import build_topology, derive_intent, size_fabric, validate_spec
from fabric_stack.adapters.inventory import mask_url, open_store
from fabric_stack.adapters.pulumi.sdk_dynamic import serialized_provider
from fabric_stack.errors import InventoryError
from fabric_stack.intent.wire import decode_cables, encode_cables, record_of, record_text


@pytest.fixture(scope="module")
def intent():  # type: ignore[no-untyped-def]
    return derive_intent(build_topology(size_fabric(validate_spec())))


def _crud(url: str, intent: Any) -> None:
    base = {"inventory": {"url": url, "stack": "test"}}

    def wire(fields: dict[str, Any]) -> dict[str, Any]:
        return {"record": record_text(fields), **base}

    store = open_store(url)
    leaf = intent.switches[0]
    sw = SwitchProvider()
    fields = leaf.props()
    props = wire(fields)
    assert not sw.check({}, props).failures
    created = sw.create(props)
    assert created.id == f"test/Switch/{leaf.name}"
    assert store.get("test", "Switch", leaf.name)["model"] == "qm9700"

    # read returns the record as the program sends it: nothing to refresh
    assert sw.read(created.id, props).outs == props
    # an edit made in the inventory shows up
    store.execute(
        'UPDATE fabric_inventory SET props = replace(props, \'"rack": "su1-net"\', '
        "'\"rack\": \"row9\"') WHERE kind = 'Switch' AND name = ?",
        (leaf.name,),
    )
    read = sw.read(created.id, props)
    assert record_of(read.outs)["rack"] == "row9"
    assert {k: v for k, v in record_of(read.outs).items() if k != "rack"} == {
        k: v for k, v in fields.items() if k != "rack"
    }
    diff = sw.diff(created.id, read.outs, props)
    assert diff.changes and not diff.replaces

    # identity changes replace; other changes update in place
    replace = sw.diff(created.id, props, wire({**fields, "model": "q3400"}))
    # same name, same inventory row: the old one must go before the new one is written
    assert replace.replaces == ["record"] and replace.delete_before_replace
    moved = {**props, "inventory": {"url": url, "stack": "other"}}
    assert sw.diff(created.id, props, moved).replaces == ["inventory"]
    # state written before records were one JSON text: same record, nothing to do
    legacy = {**fields, "inventory": url, "stack": "test"}
    assert not sw.diff(created.id, legacy, props).changes
    assert record_of(sw.read(created.id, legacy).outs) == record_of(read.outs)
    assert sw.diff(created.id, props, wire({**fields, "ports_down": 30})).replaces == []
    assert sw.diff(created.id, props, wire({**fields, "ports_down": 30})).changes
    assert not sw.diff(created.id, props, dict(props)).changes
    sw.update(created.id, props, wire({**fields, "rack": "row1"}))
    assert store.get("test", "Switch", leaf.name)["rack"] == "row1"

    # bundles: one row per cable; update replaces the set; delete removes them
    cb = CableBundleProvider()
    cables = [c.props() for c in intent.cables if c.b_device == leaf.name and c.role == "node_leaf"]
    bfields = {
        "name": f"{leaf.name}/downlinks",
        "device": leaf.name,
        "side": "downlinks",
        "role": "node_leaf",
        "count": len(cables),
        "cables": cables,
    }
    bprops = wire(bfields)
    assert not cb.check({}, bprops).failures
    cb.create(bprops)
    assert len(store.get_bundle("test", "Cable", bfields["name"])) == 16
    fewer = wire({**bfields, **encode_cables(cables[:10]), "count": 10})
    cb.update("x", bprops, fewer)
    assert len(store.get_bundle("test", "Cable", bfields["name"])) == 10
    got = cb.read("x", fewer)
    assert got.outs == fewer  # compact form, canonical text: refresh sees no change
    assert record_of(got.outs)["count"] == 10
    assert decode_cables(record_of(got.outs)) == cables[:10]
    # an edit to one cable's shared field survives the compact form on read
    store.execute(
        "UPDATE fabric_inventory SET props = replace(props, '\"a_speed_gbps\": 400', "
        "'\"a_speed_gbps\": 200') WHERE kind = 'Cable' AND name = ?",
        (cables[2]["name"],),
    )
    edited = decode_cables(record_of(cb.read("x", fewer).outs))
    assert edited[2]["a_speed_gbps"] == 200 and edited[3]["a_speed_gbps"] == 400
    # Switching granularity (cable -> bundle) creates the bundle before deleting the
    # per-cable resources: their deletes must leave the rows the bundle now holds.
    CableProvider().delete("y", wire(cables[0]))
    assert len(store.get_bundle("test", "Cable", bfields["name"])) == 10
    cb.delete("x", fewer)
    assert store.get_bundle("test", "Cable", bfields["name"]) == []
    assert cb.read("x", fewer).id is None  # gone: refresh drops it

    sw.delete(created.id, props)
    assert store.get("test", "Switch", leaf.name) is None
    assert sw.read(created.id, props).id is None


def test_provider_crud_sqlite(tmp_path: Path, intent: Any) -> None:
    _crud(f"sqlite:///{tmp_path / 'inv.db'}", intent)


def test_check_reports_bad_props(tmp_path: Path, intent: Any) -> None:
    sw = SwitchProvider()
    fields = {**intent.switches[0].props(), "radix": "many"}
    inv = {"url": "sqlite:///x.db", "stack": "s"}
    bad = {"record": record_text(fields), "inventory": inv}
    failures = sw.check({}, bad).failures
    assert [f.property for f in failures] == ["radix"]
    good = record_text({**fields, "radix": 64})
    assert not sw.check({}, {"record": good, "inventory": inv}).failures
    for broken in (None, "sqlite:///x.db", {"url": "sqlite:///x.db"}, {"stack": "s"}):
        got = sw.check({}, {"record": good, "inventory": broken}).failures
        assert [f.property for f in got] == ["inventory"], broken
    for text, why in (("{not json", "not JSON"), ("[1, 2]", "expected a JSON object")):
        got = sw.check({}, {**bad, "record": text}).failures
        assert [f.property for f in got] == ["record"] and why in got[0].reason


def test_store_rejects_unknown_urls_and_masks_passwords() -> None:
    with pytest.raises(InventoryError, match="not supported"):
        open_store("mysql://u:p@h/db")
    assert (
        mask_url("postgresql://fab:s3cret@127.0.0.1:5432/inv")
        == "postgresql://fab:***@127.0.0.1:5432/inv"
    )


@pytest.mark.postgres
def test_postgres_connection_error_hides_password() -> None:
    store = open_store("postgresql://fab:s3cret@127.0.0.1:1/inv")
    with pytest.raises(InventoryError) as e:
        store.counts()
    assert "s3cret" not in str(e.value) and "***" in str(e.value)


def test_provider_is_serialized_by_reference_and_round_trips() -> None:
    blob = serialized_provider(CableBundle.provider_cls)
    # A class pickled by value would embed its code and grow to tens of KB.
    assert len(blob) < 400, len(blob)
    # What the engine does with it: base64, then dill (pickle) by reference.
    provider = dill.loads(base64.b64decode(blob))
    assert isinstance(provider, CableBundleProvider)
