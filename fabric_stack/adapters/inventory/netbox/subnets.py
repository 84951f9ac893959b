"""Rails and VLANs in NetBox's IPAM: one prefix per subnet, carrying its VLAN.

A RoCE rail and its VLAN share one subnet, and NetBox (``ENFORCE_GLOBAL_UNIQUE``, its
default) holds one prefix per subnet. So each record has a home of its own and the subnet's
prefix is shared the NetBox way, through the prefix's ``vlan`` field:

- a ``Rail`` record lives on its subnet's prefix (``fabric_kind`` ``Rail``);
- a ``Vlan`` record with a VLAN id NetBox takes (1-4094) lives on an ``ipam/vlans`` object
  (``fabric_kind`` ``Vlan``), and its subnet's prefix points at that VLAN: the rail's prefix
  when the subnet is a rail's, else a prefix of its own (``fabric_kind`` ``VlanPrefix``,
  named after the Vlan record, no record on it);
- a ``Vlan`` record without one (an InfiniBand partition, VLAN id 0) lives on its prefix
  (``fabric_kind`` ``Vlan``), as NetBox has no partition object.

A rail written after its VLAN adopts the ``VlanPrefix`` (its ``vlan`` stays); a rail deleted
while its VLAN still needs the prefix hands it back as a ``VlanPrefix``; a VLAN deleted
first clears the ``vlan`` of a rail's prefix (NetBox protects a VLAN a prefix points at) and
deletes its own ``VlanPrefix``. The functions here decide what to write; the store
(:mod:`.store`) reads and writes under one lock per process, so a rail and its VLAN
written or deleted in parallel by Pulumi never interleave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

VLAN_PREFIX = "VlanPrefix"
"""``fabric_kind`` of a prefix that exists for a VLAN's subnet no rail holds."""

_TAG = [{"slug": "fabric-stack"}]


def vlan_id(record: Mapping[str, Any]) -> int | None:
    """The VLAN id a NetBox VLAN can hold (1-4094) of a Vlan record, else None."""
    vid = int(record.get("vlan") or 0)
    return vid if 0 < vid < 4095 else None


def owner(
    stack: str, kind: str, name: str, bundle: str, record: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The ownership custom fields tying an object to a plan record."""
    return {
        "fabric_stack": stack,
        "fabric_kind": kind,
        "fabric_name": name,
        "fabric_bundle": bundle,
        "fabric_record": dict(record) if record is not None else None,
    }


def ref(value: Any) -> int | None:
    """Id of a nested object, a bare id, or None."""
    if isinstance(value, Mapping):
        value = value.get("id")
    return int(value) if value else None


def vlan_body(
    stack: str, name: str, bundle: str, record: Mapping[str, Any], site: int
) -> dict[str, Any]:
    """The ``ipam/vlans`` body of a Vlan record (its home when :func:`vlan_id` is set)."""
    return {
        "vid": vlan_id(record),
        "name": name[:64],
        "status": "active",
        "site": site,
        "tags": _TAG,
        "custom_fields": owner(stack, "Vlan", name, bundle, record),
    }


def carrier_body(
    stack: str, name: str, bundle: str, subnet: str, vlan: int, site: int
) -> dict[str, Any]:
    """A new prefix for the subnet of VLAN-backed Vlan record ``name`` (no rail holds it)."""
    return {
        "prefix": subnet,
        "status": "reserved",
        "description": f"Vlan {name}"[:200],
        "scope_type": "dcim.site",
        "scope_id": site,
        "vlan": vlan,
        "tags": _TAG,
        "custom_fields": owner(stack, VLAN_PREFIX, name, bundle, None),
    }


def _kind(obj: Mapping[str, Any]) -> str:
    return str((obj.get("custom_fields") or {}).get("fabric_kind") or "")


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("custom_fields") or {}).get("fabric_name") or "")


def carrier_patch(
    prefix: Mapping[str, Any],
    stack: str,
    name: str,
    bundle: str,
    vlan: int,
    site: int,
) -> dict[str, Any] | None:
    """The patch making existing ``prefix`` (of the stack, with the VLAN's subnet) carry
    VLAN ``vlan`` of record ``name``; None when it already does.

    A rail's prefix keeps its owner and only gains the ``vlan``. A ``VlanPrefix``, or the
    prefix this very record lived on before it had a VLAN id, becomes this record's
    ``VlanPrefix``. Another record's prefix (an InfiniBand partition's) only gains the ``vlan``.
    """
    kind = _kind(prefix)
    if kind == VLAN_PREFIX or (kind == "Vlan" and _name(prefix) == name):
        want = carrier_body(stack, name, bundle, str(prefix.get("prefix")), vlan, site)
        want.pop("tags")
        cf = prefix.get("custom_fields") or {}
        differs = ref(prefix.get("vlan")) != vlan or any(
            cf.get(k) != v for k, v in want["custom_fields"].items()
        )
        return {"id": prefix["id"], **want} if differs else None
    if ref(prefix.get("vlan")) != vlan:
        return {"id": prefix["id"], "vlan": vlan}
    return None


def released(
    prefix: Mapping[str, Any], vlans: Mapping[int, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """What a deleted Rail record leaves of its ``prefix``: the patch handing it to the VLAN
    it carries (``vlans``: the stack's VLAN objects by id) as that record's ``VlanPrefix``,
    or None when nothing needs it (then the prefix goes)."""
    vlan = vlans.get(ref(prefix.get("vlan")) or 0)
    if vlan is None:
        return None
    cf = vlan.get("custom_fields") or {}
    name = str(cf.get("fabric_name") or "")
    return {
        "id": prefix["id"],
        "description": f"Vlan {name}"[:200],
        "custom_fields": owner(
            str(cf.get("fabric_stack") or ""),
            VLAN_PREFIX,
            name,
            str(cf.get("fabric_bundle") or ""),
            None,
        ),
    }


def adoptable(prefix: Mapping[str, Any]) -> bool:
    """Whether a Rail record written onto ``prefix`` (of its stack and subnet) may take it
    over: a ``VlanPrefix`` (made for the rail's VLAN before the rail was written)."""
    return _kind(prefix) == VLAN_PREFIX


def unhooked(
    prefixes: Sequence[Mapping[str, Any]], vlans: set[int], keep: str = ""
) -> tuple[list[int], list[dict[str, Any]]]:
    """(prefix ids to delete, patches) for the stack's ``prefixes`` pointing at one of the
    VLAN objects ``vlans`` (but not subnet ``keep``): a ``VlanPrefix`` goes, another prefix
    (a rail's) loses the ``vlan``. Done before those VLANs are deleted (NetBox protects a
    VLAN a prefix points at) and when a VLAN's subnet moved (``keep``: the new one)."""
    delete, patch = [], []
    for p in prefixes:
        if ref(p.get("vlan")) not in vlans or (keep and str(p.get("prefix")) == keep):
            continue
        if _kind(p) == VLAN_PREFIX:
            delete.append(int(p["id"]))
        else:
            patch.append({"id": p["id"], "vlan": None})
    return delete, patch


__all__ = [
    "VLAN_PREFIX",
    "adoptable",
    "carrier_body",
    "carrier_patch",
    "owner",
    "ref",
    "released",
    "unhooked",
    "vlan_body",
    "vlan_id",
]
