"""The inventory store protocol: both implementations follow it, neither imports the other,
and the URL picks the implementation in one place."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from fabric_stack.adapters.inventory import InventoryStore, open_read_only, open_store
from fabric_stack.adapters.inventory.netbox.client import url_with_token
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.adapters.inventory.readonly import ReadOnlyStore
from fabric_stack.adapters.inventory.sql.store import SqlStore
from fabric_stack.adapters.inventory.sql.transfer import export_document, schema_version
from fabric_stack.errors import InventoryError
from tests.unit.test_layers import MODULES, _imports

METHODS = [
    name
    for name, member in vars(InventoryStore).items()
    if inspect.isfunction(member) and not name.startswith("_")
]
NETBOX = url_with_token("netbox+http://127.0.0.1:9", "t")


def test_the_protocol_is_the_store_api() -> None:
    assert set(METHODS) == {
        "put",
        "put_many",
        "replace_bundle",
        "delete",
        "delete_bundle",
        "get",
        "get_bundle",
        "list_records",
        "counts",
    }


@pytest.mark.parametrize("impl", [SqlStore, ReadOnlyStore, NetBoxStore])
@pytest.mark.parametrize("method", METHODS)
def test_each_implementation_has_the_protocol_signature(impl: type, method: str) -> None:
    want = inspect.signature(getattr(InventoryStore, method))
    have = inspect.signature(getattr(impl, method))
    assert have == want, f"{impl.__name__}.{method}{have} differs from the protocol's {want}"


def test_the_url_picks_the_implementation(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/inv.db"
    assert type(open_store(db)) is SqlStore
    assert type(open_read_only(db)) is ReadOnlyStore
    assert type(open_store(NETBOX)) is NetBoxStore
    assert type(open_read_only(NETBOX)) is NetBoxStore
    with pytest.raises(InventoryError, match="is not supported"):
        open_read_only("mysql://u@h/db")


def test_neither_implementation_imports_the_other() -> None:
    base = "fabric_stack.adapters.inventory."
    sql = (f"{base}sql", f"{base}readonly")
    netbox = (f"{base}netbox",)

    def within(mod: str, roots: tuple[str, ...]) -> bool:
        return any(mod == r or mod.startswith(r + ".") for r in roots)

    for mod, path in MODULES:
        if not within(mod, sql + netbox):
            continue
        other = netbox if within(mod, sql) else sql
        bad = [t for t, _ in _imports(mod, path) if within(t, other)]
        assert not bad, f"{mod} imports {bad}"


def test_row_transfer_refuses_a_netbox_inventory_in_one_line() -> None:
    for call in (export_document, schema_version):
        with pytest.raises(InventoryError) as refused:
            call(open_read_only(NETBOX))
        assert refused.value.message == (
            "inventory netbox+http://:***@127.0.0.1:9: export, import and upgrade work on SQL "
            "inventories (sqlite:///… or postgresql://…), not on a NetBox inventory"
        )
