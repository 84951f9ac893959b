"""Dynamic providers that keep fabric records in the inventory.

Every resource kind has its own type token (``pulumi-python:dynamic/fabric:Switch``
…) so policies can tell a switch from a cable. Providers are stateless and live
in this importable module (never in the program's ``__main__``: dill would then
pickle the class by value, once more per resource). They open an inventory
connection per call.

Resource inputs are two: ``record``, the intent record as canonical JSON text
(:func:`fabric_stack.intent.wire.record_text`; one property, because the engine and
SDK charge per property, and `pulumi preview --diff` decodes it field by
field), and ``inventory``, where the record is kept: ``{"url": …, "stack": …}``
(the store URL, a Pulumi secret when it carries a password, and the stack
whose rows these are). Bundled kinds (``CableBundle``, ``RdmaNicGroup``) carry
their items in the record's ``cables`` / ``nics`` list and write one inventory
row per item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pulumi
from pulumi import dynamic
from pydantic import BaseModel, ValidationError

from fabric_stack.adapters.inventory import open_store
from fabric_stack.adapters.inventory.netbox.branching import with_branch
from fabric_stack.adapters.pulumi.sdk_dynamic import register_dynamic
from fabric_stack.intent.model import (
    CableIntent,
    FabricSummary,
    RailIntent,
    RdmaNicIntent,
    SwitchIntent,
    VlanIntent,
)
from fabric_stack.intent.wire import (
    RECORD_KEY,
    decode_cables,
    decode_nics,
    encode_cables,
    encode_nics,
    record_of,
    record_text,
)

BRANCH_KEY = "netboxBranch"
"""The stack config key (``fabric:netboxBranch``) naming the NetBox branch to write into."""

RESERVED = ("inventory", "stack")
"""Input keys that configure the provider rather than describe the record (``stack``: only
in state written before the record became one JSON text)."""


def inventory_of(props: Mapping[str, Any]) -> tuple[str, str]:
    """(store URL, stack) of resource ``props``; ValueError if ``inventory`` is malformed."""
    inv = props.get("inventory")
    if isinstance(inv, str) and isinstance(props.get("stack"), str):
        inv = {"url": inv, "stack": props["stack"]}  # state written before the record format
    if not isinstance(inv, Mapping) or not inv.get("url") or not inv.get("stack"):
        raise ValueError('inventory: expected {"url": "sqlite:///…|postgresql://…", "stack": …}')
    return str(inv["url"]), str(inv["stack"])


def _record_props(props: Mapping[str, Any]) -> dict[str, Any]:
    """The record fields of resource ``props`` (never the reserved keys or ``__provider``)."""
    return {
        k: v for k, v in record_of(props).items() if k not in RESERVED and not k.startswith("__")
    }


def with_record(props: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """``props``'s reserved keys plus ``fields`` as the record text: what read returns."""
    return {**{k: props[k] for k in RESERVED if k in props}, RECORD_KEY: record_text(fields)}


RECORD_EXTRAS = (
    "config_digest",
    "config_lines",
    "allocations",
    "config_digests",
    "config_records",
)
"""Fields the program adds to Switch and Fabric records beyond their intent model
(fabric_stack.artifacts.growth.device_records; ``config_records: false`` on the Fabric
record when ``fabric:config_records`` is off)."""

RENAME_FIELDS = frozenset({"device", "node", "a_device", "b_device"})
"""Record fields that carry a device name: they change with a rename, the object does not."""


class InventoryProvider(dynamic.ResourceProvider):
    """Create/read/update/delete one inventory record per resource."""

    serialize_as_secret_always = False
    kind: ClassVar[str] = ""
    record: ClassVar[type[BaseModel]] = BaseModel
    replace_on: ClassVar[tuple[str, ...]] = ()
    """Record fields whose change means a different physical object (delete + create)."""

    branch: str = ""
    """The NetBox branch writes go to (``fabric:netboxBranch``; '' for main), from
    :meth:`configure`. Not a resource input: a delete then goes to the branch of this run,
    not the one its resource was created in, and a new branch replaces nothing."""

    def configure(self, req: dynamic.ConfigureRequest) -> None:
        """Read ``fabric:netboxBranch`` (the engine hands dynamic providers the stack config)."""
        self.branch = str(req.config.get(f"fabric:{BRANCH_KEY}") or "")

    # -- helpers
    def _open(self, props: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
        """(store, stack, record fields) of ``props``: decoded once per engine call."""
        url, stack = inventory_of(props)
        if self.branch and url.startswith("netbox+"):
            url = with_branch(url, self.branch)
        return open_store(url), stack, _record_props(props)

    # -- engine calls
    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> dynamic.CheckResult:
        failures = []
        try:
            inventory_of(news)
        except ValueError as exc:
            failures.append(dynamic.CheckFailure("inventory", str(exc)))
        try:
            fields = _record_props(news)
        except ValueError as exc:
            return dynamic.CheckResult(
                news, [*failures, dynamic.CheckFailure(RECORD_KEY, str(exc))]
            )
        try:
            self._validate(fields)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in err["loc"]) or "props"
            failures.append(dynamic.CheckFailure(loc, str(err["msg"])))
        return dynamic.CheckResult(news, failures)

    def _validate(self, props: dict[str, Any]) -> None:
        self.record.model_validate(props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.DiffResult:
        old, new = _record_props(olds), _record_props(news)
        keys = sorted(set(old) | set(new))
        changes = [k for k in keys if old.get(k) != new.get(k)]
        reasons = set(changes)
        if old.get("name") != new.get("name"):
            # The site renamed the device (the resource came here by an alias): the same
            # box or cable under its new name is an update, not a different object.
            reasons -= RENAME_FIELDS
        # The engine names replace reasons by property; the record is one property.
        replaces = [RECORD_KEY] if any(k in self.replace_on for k in reasons) else []
        if inventory_of(olds) != inventory_of(news):
            changes.append("inventory")
            replaces.append("inventory")
        # A replacement keeps its name, so old and new are the same inventory row:
        # create-then-delete would delete the row just written. Delete first.
        return dynamic.DiffResult(
            changes=bool(changes), replaces=replaces, delete_before_replace=bool(replaces)
        )

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        store, stack, fields = self._open(props)
        self._write(store, stack, fields)
        return dynamic.CreateResult(f"{stack}/{self.kind}/{fields['name']}", outs=props)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> dynamic.UpdateResult:
        store, stack, fields = self._open(news)
        old = _record_props(olds)
        if old.get("name") != fields.get("name"):
            self._remove(store, stack, old)  # renamed: the row moves to the new name
        self._write(store, stack, fields)
        return dynamic.UpdateResult(outs=news)

    def read(self, id_: str, props: dict[str, Any]) -> dynamic.ReadResult:
        store, stack, fields = self._open(props)
        current = self._read(store, stack, fields)
        if current is None:
            return dynamic.ReadResult(None, {})
        return dynamic.ReadResult(id_, with_record(props, current))

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        store, stack, fields = self._open(props)
        self._remove(store, stack, fields)

    # -- storage (of record fields), overridden by bundles
    def _write(self, store: Any, stack: str, fields: dict[str, Any]) -> None:
        # Normalise through the record model (defaults filled, types checked); the
        # config/allocation fields the program adds (issue #27) are kept as sent, or a
        # refresh would read a record without them and show a change.
        rec = self.record.model_validate(fields).model_dump(mode="json")
        rec.update({k: fields[k] for k in RECORD_EXTRAS if k in fields})
        store.put(stack, self.kind, rec["name"], rec)

    def _read(self, store: Any, stack: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        got = store.get(stack, self.kind, fields["name"])
        if got is None:
            return None
        got.pop("status", None)
        return dict(got)

    def _remove(self, store: Any, stack: str, fields: dict[str, Any]) -> None:
        store.delete(stack, self.kind, fields["name"], unbundled_only=True)


class BundleProvider(InventoryProvider):
    """Many items (cables, NICs) managed as one resource, stored one row per item.

    Props carry the items compactly (see ``fabric_stack.intent.wire.encode_cables``);
    the inventory gets full records.
    """

    item_kind: ClassVar[str] = ""
    items_key: ClassVar[str] = ""
    item_record: ClassVar[type[BaseModel]] = BaseModel

    def decode(self, fields: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Full item records of a bundle's record ``fields``."""
        raise NotImplementedError

    def encode(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Compact props (``shared`` + items) for full item records."""
        raise NotImplementedError

    def _validate(self, props: dict[str, Any]) -> None:
        for item in self.decode(props):
            self.item_record.model_validate(item)

    def _write(self, store: Any, stack: str, fields: dict[str, Any]) -> None:
        items = [
            self.item_record.model_validate(i).model_dump(mode="json") for i in self.decode(fields)
        ]
        store.replace_bundle(stack, self.item_kind, fields["name"], [(i["name"], i) for i in items])

    def _read(self, store: Any, stack: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        rows = store.get_bundle(stack, self.item_kind, fields["name"])
        if not rows:
            return None
        names = set(self.item_record.model_fields)
        items = [{k: v for k, v in r.items() if k in names} for r in rows]
        out = {k: v for k, v in fields.items() if k not in (self.items_key, "shared")}
        out.update(self.encode(sorted(items, key=lambda i: str(i["name"]))))
        out["count"] = len(items)
        return out

    def _remove(self, store: Any, stack: str, fields: dict[str, Any]) -> None:
        store.delete_bundle(stack, self.item_kind, fields["name"])


class FabricProvider(InventoryProvider):
    """Cluster summary record."""

    kind = "Fabric"
    record = FabricSummary


class SwitchProvider(InventoryProvider):
    """A switch. Changing its model or role is a different box: replace."""

    kind = "Switch"
    record = SwitchIntent
    replace_on = ("model", "role")


class RailProvider(InventoryProvider):
    """A rail (its leaves, subnet, VLAN)."""

    kind = "Rail"
    record = RailIntent
    replace_on = ("rail", "plane")


class VlanProvider(InventoryProvider):
    """A VLAN or IB partition and its carriers."""

    kind = "Vlan"
    record = VlanIntent
    replace_on = ("network",)


class RdmaNicProvider(InventoryProvider):
    """One RDMA NIC port."""

    kind = "RdmaNic"
    record = RdmaNicIntent
    replace_on = ("node", "nic")


class CableProvider(InventoryProvider):
    """One cable. Its a-end is its identity; a new b-end is a re-patch (update)."""

    kind = "Cable"
    record = CableIntent
    replace_on = ("a_device", "a_port", "role")


class CableBundleProvider(BundleProvider):
    """The cables of one switch side (a leaf's downlinks, its uplinks, …)."""

    kind = "CableBundle"
    item_kind = "Cable"
    items_key = "cables"
    item_record = CableIntent
    replace_on = ("device", "role")

    def decode(self, fields: Mapping[str, Any]) -> list[dict[str, Any]]:
        return decode_cables(fields)

    def encode(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return encode_cables(items)


class RdmaNicGroupProvider(BundleProvider):
    """The compute NIC ports of one server."""

    kind = "RdmaNicGroup"
    item_kind = "RdmaNic"
    items_key = "nics"
    item_record = RdmaNicIntent
    replace_on = ("node",)

    def decode(self, fields: Mapping[str, Any]) -> list[dict[str, Any]]:
        return decode_nics(fields)

    def encode(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        return encode_nics(items)


class _InventoryResource(dynamic.Resource):
    """Base of our dynamic resources: same wire format, provider serialized once per class."""

    provider_cls: ClassVar[type[dynamic.ResourceProvider]]

    def __init__(
        self, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        register_dynamic(self, self.provider_cls, name, props, opts)


class Fabric(_InventoryResource, module="fabric", name="Fabric"):
    """``pulumi-python:dynamic/fabric:Fabric``: the cluster summary record."""

    provider_cls = FabricProvider


class Switch(_InventoryResource, module="fabric", name="Switch"):
    """``pulumi-python:dynamic/fabric:Switch``."""

    provider_cls = SwitchProvider


class Rail(_InventoryResource, module="fabric", name="Rail"):
    """``pulumi-python:dynamic/fabric:Rail``."""

    provider_cls = RailProvider


class Vlan(_InventoryResource, module="fabric", name="Vlan"):
    """``pulumi-python:dynamic/fabric:Vlan``."""

    provider_cls = VlanProvider


class RdmaNic(_InventoryResource, module="fabric", name="RdmaNic"):
    """``pulumi-python:dynamic/fabric:RdmaNic`` (per-item granularity)."""

    provider_cls = RdmaNicProvider


class RdmaNicGroup(_InventoryResource, module="fabric", name="RdmaNicGroup"):
    """``pulumi-python:dynamic/fabric:RdmaNicGroup``: a server's compute NIC ports."""

    provider_cls = RdmaNicGroupProvider


class Cable(_InventoryResource, module="fabric", name="Cable"):
    """``pulumi-python:dynamic/fabric:Cable`` (per-cable granularity)."""

    provider_cls = CableProvider


class CableBundle(_InventoryResource, module="fabric", name="CableBundle"):
    """``pulumi-python:dynamic/fabric:CableBundle``: one switch side's cables."""

    provider_cls = CableBundleProvider
