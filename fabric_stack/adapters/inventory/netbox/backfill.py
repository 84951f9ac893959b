"""Bring the stack's objects already in NetBox up to the NetBox way of its plan.

The store writes each object with the plan's NetBox fields (:mod:`.plan`) when the
stack's Fabric record, which holds the spec, is already on the site. ``pulumi up`` creates
the records' resources in parallel, so a switch or a cable may be written before the
Fabric record is (or before a grown spec replaces it); :class:`Backfill`, run after each
Fabric record write, patches what those writes left out: cables' length/label/type, the
devices' rack positions, types and GUIDs, the interfaces' types, and the underlay's IPAM.
Only differences are written, so after a write that had the spec it writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.adapters.inventory.netbox.definitions import Definitions
from fabric_stack.adapters.inventory.netbox.ipam import UnderlayIpam
from fabric_stack.adapters.inventory.netbox.mapping import cf_of, changed, number
from fabric_stack.adapters.inventory.netbox.objects import ObjectWriter
from fabric_stack.adapters.inventory.netbox.plan import NetBoxDetails


def _value(v: Any) -> Any:
    return v.get("value", v.get("id")) if isinstance(v, Mapping) else v


class Backfill:
    """Brings a stack's objects up to its plan's details (see the module); called with the
    stack and its details, after each Fabric record write."""

    def __init__(
        self, api: NetBoxApi, defs: Definitions, objects: ObjectWriter, ipam: UnderlayIpam
    ) -> None:
        self.api = api
        self.defs = defs
        self.objects = objects
        self.ipam = ipam

    def __call__(self, stack: str, details: NetBoxDetails) -> None:
        """Patch the stack's cables, devices, interfaces and IPAM to ``details`` (see module)."""
        site = self.defs.site_id(stack)
        cables = self.api.select(
            "dcim/cables",
            {
                "cf_fabric_stack": stack,
                "cf_fabric_kind": "Cable",
                "fields": "id,label,type,length,length_unit,custom_fields",
            },
        )
        patch = []
        for c in cables:
            want = details.cables.get(str(cf_of(c).get("fabric_name")))
            if want is not None and changed(c, want):
                patch.append({"id": c["id"], **want})
        if patch:
            self.api.update("dcim/cables", patch)
        devices = self.api.select(
            "dcim/devices",
            {"site_id": site, "fields": "id,name,rack,position,device_type,custom_fields"},
        )
        fix = []
        for d in devices:
            name, cf = str(d["name"]), cf_of(d)
            spec = self.objects.placed(
                stack,
                {
                    "kind": cf.get("fabric_kind") or "Endpoint",
                    "name": name,
                    "role": "",
                    "model": _model_of(d),
                },
            )
            body: dict[str, Any] = {}
            if spec.get("rack") and spec.get("position"):
                if (d.get("rack") or {}).get("name") != spec["rack"] or number(
                    d.get("position")
                ) != spec["position"]:
                    body.update(
                        rack=self.defs.rack(stack, spec["rack"]),
                        position=spec["position"],
                        face=spec["face"],
                    )
                if spec["model"] != _model_of(d):
                    want_type = self.defs.device_type(spec["model"])
                    if want_type != _ref(d.get("device_type")):
                        body["device_type"] = want_type
            if spec.get("guid") and cf.get("ib_guid") != spec["guid"]:
                body["custom_fields"] = {"ib_guid": spec["guid"]}
            if body:
                fix.append({"id": d["id"], **body})
        if fix:
            self.api.update("dcim/devices", fix)
        ids = {str(d["name"]): int(d["id"]) for d in devices}
        names = {v: k for k, v in ids.items()}
        order = sorted(names)
        by_port: dict[tuple[str, str], dict[str, Any]] = {}
        for n in range(0, len(order), 80):  # by device: ?device_id=…, as the store reads them
            query: dict[str, Any] = {
                "device_id": order[n : n + 80],
                "fields": "id,name,device,type,custom_fields",
            }
            for i in self.api.select("dcim/interfaces", query):
                by_port[(names[_ref(i.get("device"))], str(i["name"]))] = i
        retype = []
        for port, i in by_port.items():
            want_t = details.port_types.get(port)
            guid = details.port_guids.get(port)
            body = {}
            if want_t and _value(i.get("type")) != want_t:
                body["type"] = want_t
            if guid and cf_of(i).get("ib_guid") != guid:
                body["custom_fields"] = {"ib_guid": guid}
            if body:
                retype.append({"id": i["id"], **body})
        if retype:
            self.api.update("dcim/interfaces", retype)
        self.ipam.write_switches(
            stack, details, {n: i for n, i in ids.items() if n in details.asns}
        )
        self.ipam.write_addresses(stack, details, {p: int(i["id"]) for p, i in by_port.items()})


def _ref(ref: Any) -> int:
    return int((ref.get("id") if isinstance(ref, Mapping) else ref) or 0)


def _model_of(device: Mapping[str, Any]) -> str:
    """The store's model key of a device's type: ``gpu-server`` for the generic server type
    (what a cable's far end gets before the plan is known), else the type's slug."""
    dtype = device.get("device_type")
    if not isinstance(dtype, Mapping) or not dtype.get("slug"):
        return ""  # not told: leave the type alone
    s = str(dtype["slug"])
    return "gpu-server" if s == "gpu-server" else s


__all__ = ["Backfill"]
