"""The custom fields the NetBox inventory uses: defined here, created in NetBox when absent.

Ownership fields (``fabric_stack``, ``fabric_kind``, ``fabric_name``, ``fabric_bundle``,
``fabric_record``) tie an object to its plan record; ``ib_guid`` holds an InfiniBand node or
port GUID (NetBox has no GUID field: netbox#18275 asks for one); ``fabric_asn`` points a
device at its BGP ASN (NetBox's ASN model belongs to sites and providers, not devices).

:func:`ensure_custom_fields` is idempotent: a field that exists keeps its settings, but
gains the object types it lacks (a NetBox set up by an older fabric-stack has the
ownership fields on fewer object types).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.errors import InventoryError

OWNED_OBJECT_TYPES = (
    "dcim.site",
    "dcim.device",
    "dcim.interface",
    "dcim.cable",
    "ipam.prefix",
    "ipam.vlan",
    "ipam.ipaddress",
    "ipam.asn",
)
"""Object types the stack writes (each carries the ownership fields)."""


@dataclass(frozen=True, slots=True)
class CustomField:
    """One custom field as NetBox's ``extras/custom-fields`` API takes it."""

    name: str
    type: str
    object_types: tuple[str, ...]
    description: str
    related_object_type: str = ""

    def body(self) -> dict[str, Any]:
        """The create body."""
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "object_types": list(self.object_types),
            "filter_logic": "exact",
            "group_name": "fabric-stack",
            "description": self.description,
        }
        if self.related_object_type:
            out["related_object_type"] = self.related_object_type
        return out


_OWNER = "fabric-stack: ties this object to its plan record"

FIELDS: tuple[CustomField, ...] = (
    *(
        CustomField(n, "text", OWNED_OBJECT_TYPES, _OWNER)
        for n in ("fabric_stack", "fabric_kind", "fabric_name", "fabric_bundle")
    ),
    CustomField("fabric_record", "json", OWNED_OBJECT_TYPES, _OWNER),
    CustomField(
        "ib_guid",
        "text",
        ("dcim.device", "dcim.interface"),
        "fabric-stack: InfiniBand node GUID (switch) or HCA port GUID, from the names file",
    ),
    CustomField(
        "fabric_asn",
        "object",
        ("dcim.device",),
        "fabric-stack: the device's BGP ASN in the underlay plan",
        related_object_type="ipam.asn",
    ),
)
"""Every custom field the inventory writes."""


def missing_types(have: Mapping[str, Any], want: CustomField) -> list[str]:
    """Object types ``want`` needs that the NetBox field ``have`` lacks (sorted)."""
    got = {str(t) for t in have.get("object_types") or []}
    return sorted(set(want.object_types) - got)


def ensure_custom_fields(
    api: NetBoxApi, fields: tuple[CustomField, ...] = FIELDS, *, again: bool = True
) -> None:
    """Create the absent fields, and add missing object types to the present ones (once
    more when another process created one meanwhile)."""
    have = {
        str(f.get("name")): f
        for f in api.select("extras/custom-fields", {"name": [f.name for f in fields]})
    }
    new = [f.body() for f in fields if f.name not in have]
    patch = []
    for f in fields:
        if f.name in have and (lack := missing_types(have[f.name], f)):
            types = sorted({*(str(t) for t in have[f.name].get("object_types") or []), *lack})
            patch.append({"id": have[f.name]["id"], "object_types": types})
    if new:
        try:
            api.create("extras/custom-fields", new)
        except InventoryError:
            if not again:
                raise
            ensure_custom_fields(api, fields, again=False)
            return
    if patch:
        api.update("extras/custom-fields", patch)


__all__ = ["FIELDS", "OWNED_OBJECT_TYPES", "CustomField", "ensure_custom_fields", "missing_types"]
