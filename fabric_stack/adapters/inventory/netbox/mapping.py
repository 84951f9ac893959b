"""What a record becomes in NetBox and back: endpoints, types, slugs, the record read from an
object, and whether an object differs from a write.

Pure functions over NetBox's JSON objects, shared by every part of the NetBox store
(:mod:`.store` says what each record kind becomes); nothing here talks to NetBox.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fabric_stack.errors import InventoryError
from fabric_stack.hardware.switches import CATALOG, NetBoxDeviceType

TAG = "fabric-stack"
"""The tag on every object the store writes (and the only ones drift's write-back touches)."""
ENDPOINT = {
    "Fabric": "dcim/sites",
    "Switch": "dcim/devices",
    "Cable": "dcim/cables",
    "RdmaNic": "dcim/interfaces",
    "Rail": "ipam/prefixes",
    "Vlan": "ipam/vlans",
}
"""The NetBox endpoint a record kind lives on (a Vlan without a VLAN id NetBox takes lives on
a prefix: :data:`ENDPOINTS`, :mod:`.subnets`)."""
ENDPOINTS: dict[str, tuple[str, ...]] = {
    **{k: (v,) for k, v in ENDPOINT.items()},
    "Vlan": ("ipam/vlans", "ipam/prefixes"),
}
"""Every endpoint a record kind's objects may be on."""
NAMES_PER_QUERY = 80
"""Names (or ids) per ``?name=…&name=…`` query: the URL's length bounds it."""

# NetBox interface types by link speed (Gb/s); other speeds are "other".
IF_TYPE = {
    1: "1000base-t",
    10: "10gbase-x-sfpp",
    25: "25gbase-x-sfp28",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-osfp",
    800: "800gbase-x-osfp",
}
# The plan's cable medium → NetBox cable type.
CABLE_TYPE = {"mmf": "mmf", "smf": "smf", "copper": "dac-passive"}


def query_of(stack: str | None, kind: str, **more: str) -> dict[str, Any]:
    """The NetBox filter of a stack's ``kind`` objects (``stack`` None: every stack's), with
    ``more`` custom fields (``name=…``, ``bundle=…``) to match."""
    q: dict[str, Any] = {"cf_fabric_kind": kind}
    if stack is not None:
        q["cf_fabric_stack"] = stack
    q.update({f"cf_fabric_{k}": v for k, v in more.items()})
    return q


def library_type(model: str) -> NetBoxDeviceType | None:
    """The community-library device type of catalog key ``model`` (None: not a catalog model,
    or one the library lacks), from the switch model's record
    (:attr:`~fabric_stack.hardware.switches.SwitchModel.netbox_device_type`, with its source).

    A NetBox that imported the library's types then uses those very device types, and one
    that did not gets types the library import later recognises by slug.
    """
    record = CATALOG.get(model.strip().lower())
    return record.netbox_device_type if record is not None else None


def type_slug(model: str) -> str:
    """NetBox device-type slug of a catalog key: the library's where it has the model."""
    lib = library_type(model)
    return lib.slug if lib else slug(model)


def model_of(type_slug_: str) -> str:
    """The catalog key of a device-type slug (the slug itself when no catalog model has it)."""
    for key, record in CATALOG.items():
        lib = record.netbox_device_type
        if lib is not None and lib.slug == type_slug_:
            return key
    return type_slug_


def slug(text: str) -> str:
    """NetBox slug of ``text`` (lower case, [a-z0-9_-], at most 100 characters)."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")[:100] or "x"


def chunks(items: Sequence[Any], n: int) -> Iterable[Sequence[Any]]:
    """``items`` in slices of at most ``n``."""
    for i in range(0, len(items), n):
        yield items[i : i + n]


def cf_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The custom fields of a NetBox object (``{}`` when none); InventoryError naming the
    object and the field when NetBox answered something else (a record read is checked)."""
    cf = obj.get("custom_fields")
    if cf is None:
        return {}
    if not isinstance(cf, Mapping):
        raise InventoryError(
            f"NetBox object id {obj.get('id')!r}: custom_fields: expected an object, "
            f"got {type(cf).__name__}"
        )
    return dict(cf)


def name_of(ref: Any) -> str:
    """``name`` of a nested NetBox object (or ``""``)."""
    return str(ref.get("name") or "") if isinstance(ref, Mapping) else ""


def end_of(terms: Any) -> tuple[str, str]:
    """(device, interface) of a cable end's termination list; ("", "") unless one interface."""
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], Mapping):
        return "", ""
    obj = terms[0].get("object")
    if not isinstance(obj, Mapping):
        return "", ""
    return name_of(obj.get("device")), str(obj.get("name") or "")


def number(value: Any) -> float | None:
    """A NetBox number (a position comes back as ``"1.0"`` or ``1.0``), or None."""
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def ref_id(ref: Any) -> int:
    """Id of a nested object or a bare id."""
    return int(ref["id"] if isinstance(ref, Mapping) else ref)


def status_of(obj: Mapping[str, Any]) -> str:
    """The ``status`` value of a NetBox object (``""`` when it has none)."""
    st = obj.get("status")
    return str(st.get("value") if isinstance(st, Mapping) else st or "")


def record_of(kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The plan record kept on ``obj``, with what NetBox holds now laid over it (and ``status``)."""
    stored = cf_of(obj).get("fabric_record") or {}
    if not isinstance(stored, Mapping):
        raise InventoryError(
            f"NetBox {kind} id {obj.get('id')!r}: custom_fields.fabric_record: expected an "
            f"object, got {type(stored).__name__} (edited by hand? `pulumi up` rewrites it)"
        )
    rec = dict(stored)
    if kind == "Cable" and "a_terminations" in obj:
        for end in ("a", "b"):
            dev, port = end_of(obj.get(f"{end}_terminations"))
            if dev or port or obj.get(f"{end}_terminations") == []:
                rec[f"{end}_device"], rec[f"{end}_port"] = dev, port
    elif kind == "Switch":
        role, dtype = obj.get("role"), obj.get("device_type")
        if (
            isinstance(role, Mapping)
            and role.get("slug")
            and role["slug"] != slug(str(rec.get("role", "")))
        ):
            rec["role"] = role["slug"]
        if (
            isinstance(dtype, Mapping)
            and dtype.get("slug")
            and dtype["slug"] != type_slug(str(rec.get("model", "")))
        ):
            rec["model"] = model_of(dtype["slug"])
        if "rack" in obj:
            rec["rack"] = name_of(obj.get("rack"))
    elif kind in ("Rail", "Vlan") and obj.get("prefix"):
        rec["subnet"] = obj["prefix"]
    elif kind == "Vlan" and obj.get("vid"):
        rec["vlan"] = obj["vid"]
    return {**rec, "status": status_of(obj)}


def changed(have: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    """Whether NetBox object ``have`` differs from the write ``body`` in a field ``body`` sets."""
    for key, want in body.items():
        if key == "tags":
            continue
        got = have.get(key)
        if key == "custom_fields":
            cf = cf_of(have)
            if any(cf.get(k) != v for k, v in want.items()):
                return True
        elif key.endswith("_terminations"):
            ids = sorted(int(t.get("object_id", 0)) for t in got or [])
            if ids != sorted(int(t["object_id"]) for t in want):
                return True
        elif isinstance(got, Mapping):
            if got.get("id", got.get("value")) != want:
                return True
        elif got != want:
            return True
    return False
