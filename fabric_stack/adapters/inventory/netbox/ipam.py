"""The underlay in NetBox's IPAM: ASNs (under a private RIR), loopbacks, interface addresses,
the underlay's prefixes; and the plan's interface types of a cable write.

Written next to the records by the NetBox store (:mod:`.store`) from the plan's
:class:`~.plan.NetBoxDetails`: a switch write adds its ASN (``ipam/asns``, pointed
at by the device's ``fabric_asn`` custom field: NetBox's ASN model has no device), its
loopback (a virtual interface ``lo`` holding the ``/32``, made the device's primary IPv4)
and the prefixes it originates; a cable write adds the addresses of its two ends (``/31``
fabric links, the rail hosts' addresses). Every object is tagged and carries the ownership
fields (``fabric_kind`` ``Asn``, ``Address``, ``UnderlayPrefix``), is looked up before it is
written, and is patched only when it differs, so a rerun writes nothing. Addresses go with
their interfaces (NetBox deletes an interface's addresses with it); ASNs and prefixes go
with the stack's Fabric record (:meth:`UnderlayIpam.remove`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.adapters.inventory.netbox.definitions import Definitions
from fabric_stack.adapters.inventory.netbox.mapping import changed
from fabric_stack.adapters.inventory.netbox.objects import ObjectWriter
from fabric_stack.adapters.inventory.netbox.plan import NetBoxDetails

RIR_SLUG = "fabric-stack-private"
RIR: dict[str, Any] = {"name": "fabric-stack private", "slug": RIR_SLUG, "is_private": True}
"""The RIR the underlay's ASNs sit under: RFC 6996 private ASNs belong to no real registry."""

LOOPBACK = "lo"
"""Name of the virtual interface holding a switch's loopback address."""

_TAG = [{"slug": "fabric-stack"}]


def port_types(
    details: NetBoxDetails | None, records: Sequence[tuple[str, Mapping[str, Any]]]
) -> dict[tuple[str, str], str]:
    """(device, port) → NetBox type for both ends of the cable ``records`` the plan types
    (InfiniBand compute ports); empty when it types none."""
    if details is None or not details.compute_types:
        return {}
    out: dict[tuple[str, str], str] = {}
    for _, r in records:
        for end in ("a", "b"):
            t = details.interface_type(
                str(r.get("network") or ""), int(r.get(f"{end}_speed_gbps") or 0)
            )
            if t:
                out[(str(r[f"{end}_device"]), str(r[f"{end}_port"]))] = t
    return out


def _owned(stack: str, kind: str, name: str) -> dict[str, Any]:
    return {"fabric_stack": stack, "fabric_kind": kind, "fabric_name": name}


def asn_bodies(
    stack: str, asns: Mapping[str, int], rir: int, site: int
) -> dict[int, dict[str, Any]]:
    """ASN → ``ipam/asns`` body of each distinct ASN of ``asns`` (switch → ASN)."""
    return {
        asn: {
            "asn": asn,
            "rir": rir,
            "sites": [site],
            "description": f"fabric-stack {stack} underlay",
            "tags": _TAG,
            "custom_fields": _owned(stack, "Asn", str(asn)),
        }
        for asn in sorted(set(asns.values()))
    }


def address_body(stack: str, address: str, interface: int, role: str = "") -> dict[str, Any]:
    """The ``ipam/ip-addresses`` body of ``address`` (with its length) on ``interface``."""
    body: dict[str, Any] = {
        "address": address,
        "assigned_object_type": "dcim.interface",
        "assigned_object_id": interface,
        "status": "active",
        "tags": _TAG,
        "custom_fields": _owned(stack, "Address", address),
    }
    if role:
        body["role"] = role
    return body


def prefix_body(stack: str, prefix: str, what: str, site: int) -> dict[str, Any]:
    """The ``ipam/prefixes`` body of an underlay prefix (a pool or a leaf's rail block)."""
    return {
        "prefix": prefix,
        "status": "reserved",
        "description": what[:200],
        "scope_type": "dcim.site",
        "scope_id": site,
        "tags": _TAG,
        "custom_fields": _owned(stack, "UnderlayPrefix", prefix),
    }


def _differs(have: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    return changed(have, {k: v for k, v in body.items() if k != "sites"})


def _ref(ref: Any) -> int:
    if isinstance(ref, Mapping):
        return int(ref.get("id") or 0)
    return int(ref or 0)


class UnderlayIpam:
    """The underlay's IPAM objects on the NetBox behind ``api`` (see the module); ``defs``
    gives the site and the RIR, ``objects`` the switches and their loopback interfaces."""

    def __init__(self, api: NetBoxApi, defs: Definitions, objects: ObjectWriter) -> None:
        self.api = api
        self.defs = defs
        self.objects = objects

    def _sync(
        self,
        endpoint: str,
        key: str,
        found: list[dict[str, Any]],
        bodies: Mapping[str, dict[str, Any]],
    ) -> dict[str, int]:
        """Create the missing, patch the changed bodies (by ``key``); body key → id."""
        have = {str(o.get(key)): o for o in found}
        new = [b for k, b in bodies.items() if k not in have]
        patch = [
            {"id": have[k]["id"], **b}
            for k, b in bodies.items()
            if k in have and _differs(have[k], b)
        ]
        if patch:
            self.api.update(endpoint, patch)
        made = self.api.create(endpoint, new) if new else []
        out = {k: int(o["id"]) for k, o in have.items()}
        out.update({str(o.get(key)): int(o["id"]) for o in made})
        return out

    def write_switches(
        self, stack: str, details: NetBoxDetails, devices: Mapping[str, int]
    ) -> None:
        """ASNs, loopbacks and originated prefixes of the switches ``devices`` (name → id)."""
        mine = {n: a for n, a in details.asns.items() if n in devices}
        if not mine:
            return
        site = self.defs.site_id(stack)
        rir = self.defs.shared("ipam/rirs", RIR_SLUG, {"slug": RIR_SLUG}, dict(RIR))
        wanted = asn_bodies(stack, mine, rir, site)
        found = self.api.select("ipam/asns", {"asn": sorted(wanted)})
        ids = self._sync("ipam/asns", "asn", found, {str(k): v for k, v in wanted.items()})
        have = {str(d["name"]): d for d in self.objects.devices(stack, mine).values()}
        patch = []
        for name, asn in mine.items():
            dev = have.get(name)
            cur = (dev.get("custom_fields") or {}).get("fabric_asn") if dev else None
            cur_id = cur.get("id") if isinstance(cur, Mapping) else cur
            if dev is not None and cur_id != ids[str(asn)]:
                patch.append({"id": dev["id"], "custom_fields": {"fabric_asn": ids[str(asn)]}})
        if patch:
            self.api.update("dcim/devices", patch)
        loops = {(n, LOOPBACK): 0 for n in mine if n in details.loopbacks}
        ifaces = self.objects.ensure_interfaces(
            stack, loops, devices, dict.fromkeys(loops, "virtual")
        )
        addrs = {
            details.loopbacks[d]: address_body(
                stack, details.loopbacks[d], ifaces[(d, p)], "loopback"
            )
            for d, p in loops
        }
        got = self._sync_addresses(stack, addrs)
        primary = [
            {"id": devices[d], "primary_ip4": got[details.loopbacks[d]]}
            for d, _ in loops
            if details.loopbacks[d] in got
            and int(_ref(have.get(d, {}).get("primary_ip4"))) != got[details.loopbacks[d]]
        ]
        if primary:
            self.api.update("dcim/devices", primary)
        blocks = {
            p: w for p, w in details.prefixes.items() if any(w.endswith(f" of {n}") for n in mine)
        }
        pools = {p: w for p, w in details.prefixes.items() if " of " not in w}
        bodies = {p: prefix_body(stack, p, w, site) for p, w in {**pools, **blocks}.items()}
        found = self.api.select(
            "ipam/prefixes", {"cf_fabric_stack": stack, "cf_fabric_kind": "UnderlayPrefix"}
        )
        self._sync("ipam/prefixes", "prefix", found, bodies)

    def _sync_addresses(self, stack: str, bodies: Mapping[str, dict[str, Any]]) -> dict[str, int]:
        """Write ``bodies`` (address → body) among the stack's addresses; address → id."""
        if not bodies:
            return {}
        found: list[dict[str, Any]] = []
        names = sorted(bodies)
        for i in range(0, len(names), 80):
            found += self.api.select(
                "ipam/ip-addresses", {"address": names[i : i + 80], "cf_fabric_stack": stack}
            )
        return self._sync("ipam/ip-addresses", "address", found, bodies)

    def write_addresses(
        self, stack: str, details: NetBoxDetails, ifaces: Mapping[tuple[str, str], int]
    ) -> None:
        """The planned addresses of the interfaces ``ifaces`` ((device, port) → id)."""
        bodies = {
            details.addresses[k]: address_body(stack, details.addresses[k], i)
            for k, i in ifaces.items()
            if k in details.addresses
        }
        self._sync_addresses(stack, bodies)

    def remove(self, stack: str) -> None:
        """Delete the stack's ASNs and underlay prefixes (its addresses go with its interfaces),
        and any VLAN subnet prefix its VLAN left (a ``VlanPrefix`` pointing at no VLAN)."""
        for endpoint, kind in (
            ("ipam/prefixes", "UnderlayPrefix"),
            ("ipam/prefixes", "VlanPrefix"),
            ("ipam/asns", "Asn"),
        ):
            found = self.api.select(endpoint, {"cf_fabric_stack": stack, "cf_fabric_kind": kind})
            if kind == "VlanPrefix":
                found = [o for o in found if not o.get("vlan")]
            if found:
                self.api.delete(endpoint, [int(o["id"]) for o in found])


__all__ = [
    "LOOPBACK",
    "RIR",
    "UnderlayIpam",
    "address_body",
    "asn_bodies",
    "port_types",
    "prefix_body",
]
