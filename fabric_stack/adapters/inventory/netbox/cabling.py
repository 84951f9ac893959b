"""Cable and RdmaNic records in NetBox: cables between interfaces, NICs on server ports.

A cable record becomes a NetBox cable between two interfaces, made on demand with their
devices (a cable's far end is an ``Endpoint`` device until a record says more), typed from
the plan's medium and carrying the plant's length and label; its ends get their planned
addresses (:class:`~.ipam.UnderlayIpam`). An RdmaNic record becomes an interface of its
server (one a cable made by that name is adopted). Cable writes and deletes hold the locks
of the switches they end on (:mod:`.locks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.adapters.inventory.netbox.definitions import Definitions
from fabric_stack.adapters.inventory.netbox.ipam import UnderlayIpam, port_types
from fabric_stack.adapters.inventory.netbox.locks import (
    CABLE_LOCKS,
    DeviceLocks,
    switches_of_cables,
    switches_of_records,
)
from fabric_stack.adapters.inventory.netbox.mapping import (
    CABLE_TYPE,
    IF_TYPE,
    TAG,
    cf_of,
    end_of,
    name_of,
    query_of,
    ref_id,
)
from fabric_stack.adapters.inventory.netbox.objects import ObjectWriter
from fabric_stack.adapters.inventory.netbox.subnets import owner
from fabric_stack.errors import InventoryError


class Cabling:
    """Cable and RdmaNic records on the NetBox behind ``api``: devices and interfaces through
    ``objects``, end addresses through ``ipam``, cable writes under ``locks``."""

    def __init__(
        self,
        api: NetBoxApi,
        defs: Definitions,
        objects: ObjectWriter,
        ipam: UnderlayIpam,
        locks: DeviceLocks = CABLE_LOCKS,
    ) -> None:
        self.api = api
        self.defs = defs
        self.objects = objects
        self.ipam = ipam
        self.locks = locks

    @contextmanager
    def held(self, stack: str, devices: Iterable[str]) -> Iterator[None]:
        """Hold the cable locks of ``devices`` of ``stack`` (writes through a shared switch
        deadlock inside NetBox: see :mod:`.locks`)."""
        with self.locks.held(f"{self.defs.base} {stack} {d}" for d in devices):
            yield

    def write_cables(
        self,
        stack: str,
        bundle: str,
        records: list[tuple[str, Mapping[str, Any]]],
        *,
        prune: bool,
    ) -> None:
        """Cable records onto NetBox cables (``prune``: the bundle's other cables go)."""
        scope = {"bundle": bundle} if prune else {}
        existing = self.api.select("dcim/cables", query_of(stack, "Cable", **scope))
        if not prune:
            names = {n for n, _ in records}
            existing = [o for o in existing if cf_of(o).get("fabric_name") in names]
        bodies = self.cable_bodies(stack, bundle, records)
        touched = switches_of_records(records) | switches_of_cables(existing)
        with self.held(stack, touched):
            self.objects.sync("dcim/cables", existing, bodies, prune=prune)

    def delete_cables(self, stack: str, found: list[dict[str, Any]]) -> None:
        """Delete the NetBox cables ``found``, then the far ends no record uses any more."""
        with self.held(stack, switches_of_cables(found)):
            self.api.delete("dcim/cables", [int(o["id"]) for o in found])
        ends = {end_of(o.get(f"{e}_terminations"))[0] for o in found for e in ("a", "b")}
        self.objects.sweep_endpoints(stack, ends - {""})

    def delete_nics(self, stack: str, found: list[dict[str, Any]]) -> None:
        """Delete the NIC interfaces ``found``, then the servers no record uses any more."""
        self.api.delete("dcim/interfaces", [int(o["id"]) for o in found])
        self.objects.sweep_endpoints(stack, {name_of(o.get("device")) for o in found} - {""})

    def cable_bodies(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """NetBox cable bodies (without id) of Cable ``records``, by record name; their
        devices, interfaces and end addresses are made first."""
        specs: dict[str, dict[str, Any]] = {}
        ports: dict[tuple[str, str], int] = {}
        for _, r in records:
            for end in ("a", "b"):
                dev = r[f"{end}_device"]
                switch = end == "b" or r.get("role") in ("leaf_spine", "spine_core")
                specs.setdefault(
                    dev,
                    {
                        "kind": "Endpoint",
                        "name": dev,
                        "role": "switch" if switch else "server",
                        "model": "endpoint" if switch else "gpu-server",
                    },
                )
                ports[(dev, r[f"{end}_port"])] = int(r.get(f"{end}_speed_gbps") or 0)
        devices = self.objects.ensure_devices(stack, specs)
        details = self.defs.details(stack)
        types = port_types(details, records)
        ifaces = self.objects.ensure_interfaces(stack, ports, devices, types)
        if details is not None:
            self.ipam.write_addresses(stack, details, ifaces)
        out = {}
        for n, r in records:
            a, b = ifaces[(r["a_device"], r["a_port"])], ifaces[(r["b_device"], r["b_port"])]
            body: dict[str, Any] = {
                "a_terminations": [{"object_type": "dcim.interface", "object_id": a}],
                "b_terminations": [{"object_type": "dcim.interface", "object_id": b}],
                "status": "planned",
                "label": n[:100],
                "tags": [{"slug": TAG}],
                "custom_fields": owner(stack, "Cable", n, bundle, r),
            }
            if CABLE_TYPE.get(str(r.get("medium") or "")):
                body["type"] = CABLE_TYPE[str(r["medium"])]
            if details is not None and n in details.cables:
                body.update(details.cables[n])  # the plant's length, label and type
            out[n] = body
        return out

    def write_nics(
        self,
        stack: str,
        bundle: str,
        records: list[tuple[str, Mapping[str, Any]]],
        *,
        prune: bool,
    ) -> None:
        """NIC records onto the node's interfaces (a cable may have created one by that name)."""
        bodies = self.nic_bodies(stack, bundle, records)
        for attempt in (1, 2):
            dev_ids = sorted({int(b["device"]) for b in bodies.values()})
            on_nodes = self.api.select("dcim/interfaces", {"device_id": dev_ids})
            by_port = {(ref_id(i.get("device")), str(i["name"])): i for i in on_nodes}
            have: dict[str, dict[str, Any]] = {}
            for n, b in bodies.items():
                found = by_port.get((int(b["device"]), str(b["name"])))
                if found is not None:
                    have[n] = found
            existing = list(have.values())
            if prune:
                existing += [
                    i
                    for i in on_nodes
                    if cf_of(i).get("fabric_bundle") == bundle
                    and cf_of(i).get("fabric_kind") == "RdmaNic"
                    and cf_of(i).get("fabric_name") not in bodies
                ]
            # _sync matches by fabric_name: name the adopted interfaces after their records.
            for n, obj in have.items():
                obj["custom_fields"] = {**cf_of(obj), "fabric_name": n}
            try:
                self.objects.sync("dcim/interfaces", existing, bodies, prune=prune)
            except InventoryError:
                if attempt == 2:
                    raise
                continue  # a cable created one of these interfaces meanwhile
            return

    def nic_bodies(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """NetBox interface bodies (without id) of RdmaNic ``records``, by record name; their
        servers are made first."""
        specs = {
            str(r["node"]): {
                "kind": "Server",
                "name": r["node"],
                "role": "server",
                "model": "gpu-server",
            }
            for _, r in records
        }
        devices = self.objects.ensure_devices(stack, specs)
        details = self.defs.details(stack)
        return {
            n: {
                "device": devices[str(r["node"])],
                "name": str(r["nic"]),
                "type": (
                    details.interface_type(
                        str(r.get("network") or ""), int(r.get("speed_gbps") or 0)
                    )
                    if details is not None
                    else None
                )
                or IF_TYPE.get(int(r.get("speed_gbps") or 0), "other"),
                "tags": [{"slug": TAG}],
                "custom_fields": owner(stack, "RdmaNic", n, bundle, r),
            }
            for n, r in records
        }


__all__ = ["Cabling"]
