"""Rail and Vlan records in NetBox: the prefixes a rail and its VLAN share.

Which record holds which object is :mod:`.subnets`; :class:`Prefixes` writes and deletes
them: one prefix per subnet, carrying its VLAN. A rail and its VLAN share a prefix, so
their writes and deletes take :data:`PREFIX_LOCK`, one at a time per process.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.adapters.inventory.netbox.definitions import Definitions
from fabric_stack.adapters.inventory.netbox.mapping import TAG, cf_of, query_of
from fabric_stack.adapters.inventory.netbox.objects import ObjectWriter
from fabric_stack.adapters.inventory.netbox.subnets import (
    adoptable,
    carrier_body,
    carrier_patch,
    owner,
    ref,
    released,
    unhooked,
    vlan_body,
    vlan_id,
)

PREFIX_LOCK = threading.RLock()
"""Held by every Rail and Vlan write and delete of the process (reentrant: a bundle's
replacement deletes its old records inside its write)."""


class Prefixes:
    """Rail and Vlan records on the NetBox behind ``api``, written through ``objects``."""

    def __init__(
        self,
        api: NetBoxApi,
        defs: Definitions,
        objects: ObjectWriter,
        lock: threading.RLock = PREFIX_LOCK,
    ) -> None:
        self.api = api
        self.defs = defs
        self.objects = objects
        self.lock = lock

    def bodies(
        self, stack: str, kind: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """Prefix bodies (without id) of Rail or Vlan ``records``, by record name."""
        site = self.defs.site_id(stack)
        return {
            n: {
                "prefix": r["subnet"],
                "status": "reserved",  # prefixes have no "planned" status
                "description": f"{kind} {n}"[:200],
                "scope_type": "dcim.site",
                "scope_id": site,
                "tags": [{"slug": TAG}],
                "custom_fields": owner(stack, kind, n, bundle, r),
            }
            for n, r in records
        }

    def named(self, endpoint: str, stack: str, kind: str, names: set[str]) -> list[dict[str, Any]]:
        """The stack's ``kind`` objects on ``endpoint`` whose record is one of ``names``."""
        found = self.api.select(endpoint, query_of(stack, kind))
        return [o for o in found if cf_of(o).get("fabric_name") in names]

    def write_rails(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> None:
        """Rail records onto their subnets' prefixes; a ``VlanPrefix`` its VLAN's record made
        for the subnet first is taken over (it keeps its ``vlan``)."""
        existing = self.named("ipam/prefixes", stack, "Rail", {n for n, _ in records})
        bodies = self.bodies(stack, "Rail", bundle, records)
        held = {cf_of(o).get("fabric_name") for o in existing}
        free = {str(b["prefix"]): n for n, b in bodies.items() if n not in held}
        if free:
            query = {"cf_fabric_stack": stack, "prefix": sorted(free)}
            for p in self.api.select("ipam/prefixes", query):
                if adoptable(p) and str(p["prefix"]) in free:
                    name = free[str(p["prefix"])]
                    existing.append({**p, "custom_fields": {**cf_of(p), "fabric_name": name}})
        self.objects.sync("ipam/prefixes", existing, bodies, prune=False)

    def write_vlans(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> None:
        """Vlan records: a VLAN (and its subnet's prefix pointing at it) for each with a VLAN
        id, a prefix for each without (see :mod:`.subnets`)."""
        site = self.defs.site_id(stack)
        backed = {n: r for n, r in records if vlan_id(r)}
        plain = [(n, r) for n, r in records if not vlan_id(r)]
        names = {n for n, _ in records}
        vlans = self.named("ipam/vlans", stack, "Vlan", names)
        lost = [o for o in vlans if cf_of(o).get("fabric_name") not in backed]
        if lost:  # a record that no longer has a VLAN id
            self.drop_vlans(stack, lost)
        kept = [o for o in vlans if cf_of(o).get("fabric_name") in backed]
        bodies = {n: vlan_body(stack, n, bundle, r, site) for n, r in backed.items()}
        self.objects.sync("ipam/vlans", kept, bodies, prune=False)
        prefixes = self.named("ipam/prefixes", stack, "Vlan", names)
        self.objects.sync(
            "ipam/prefixes",
            [o for o in prefixes if cf_of(o).get("fabric_name") not in backed],
            self.bodies(stack, "Vlan", bundle, plain),
            prune=False,
        )
        if backed:
            self._carry(stack, bundle, site, backed, prefixes)

    def _carry(
        self,
        stack: str,
        bundle: str,
        site: int,
        backed: Mapping[str, Mapping[str, Any]],
        stale: list[dict[str, Any]],
    ) -> None:
        """Point each VLAN-backed record's subnet prefix at its VLAN (creating a
        ``VlanPrefix`` where no prefix holds the subnet); prefixes pointing at it for another
        subnet let go, and ``stale`` ones (of the records before they had VLAN ids) not
        reused go."""
        ids = {
            str(cf_of(o).get("fabric_name")): int(o["id"])
            for o in self.named("ipam/vlans", stack, "Vlan", set(backed))
        }
        subnets = sorted({str(r["subnet"]) for r in backed.values()})
        by_subnet = {
            str(p["prefix"]): p
            for p in self.api.select("ipam/prefixes", {"cf_fabric_stack": stack, "prefix": subnets})
        }
        pointing = self.api.select(
            "ipam/prefixes", {"cf_fabric_stack": stack, "vlan_id": sorted(ids.values())}
        )
        delete: list[int] = []
        patch: list[dict[str, Any]] = []
        create: list[dict[str, Any]] = []
        for n, r in backed.items():
            subnet, vlan = str(r["subnet"]), ids[n]
            gone, loose = unhooked(pointing, {vlan}, keep=subnet)
            delete += gone
            patch += loose
            found = by_subnet.get(subnet)
            if found is None:
                create.append(carrier_body(stack, n, bundle, subnet, vlan, site))
            elif (change := carrier_patch(found, stack, n, bundle, vlan, site)) is not None:
                patch.append(change)
        used = {int(p["id"]) for p in by_subnet.values()}
        delete += [int(o["id"]) for o in stale if cf_of(o).get("fabric_name") in backed]
        delete = sorted(set(delete) - used)
        if delete:
            self.api.delete("ipam/prefixes", delete)
        if patch:
            self.api.update("ipam/prefixes", patch)
        if create:
            self.api.create("ipam/prefixes", create)

    def drop_vlans(self, stack: str, vlans: list[dict[str, Any]]) -> None:
        """Delete VLAN objects: first their ``VlanPrefix`` prefixes, and the ``vlan`` of the
        stack's other prefixes pointing at them."""
        ids = sorted({int(o["id"]) for o in vlans})
        pointing = self.api.select("ipam/prefixes", {"cf_fabric_stack": stack, "vlan_id": ids})
        delete, patch = unhooked(pointing, set(ids))
        if delete:
            self.api.delete("ipam/prefixes", delete)
        if patch:
            self.api.update("ipam/prefixes", patch)
        self.api.delete("ipam/vlans", ids)

    def drop_rails(self, stack: str, prefixes: list[dict[str, Any]]) -> None:
        """Delete Rail records' prefixes; one carrying a VLAN of the stack stays, as that
        VLAN record's ``VlanPrefix``."""
        carried = sorted({v for o in prefixes if (v := ref(o.get("vlan"))) is not None})
        vlans = (
            {
                int(v["id"]): v
                for v in self.api.select("ipam/vlans", {"id": carried, "cf_fabric_stack": stack})
            }
            if carried
            else {}
        )
        handed = [p for o in prefixes if (p := released(o, vlans)) is not None]
        kept = {int(p["id"]) for p in handed}
        if handed:
            self.api.update("ipam/prefixes", handed)
        delete = [int(o["id"]) for o in prefixes if int(o["id"]) not in kept]
        if delete:
            self.api.delete("ipam/prefixes", delete)


__all__ = ["PREFIX_LOCK", "Prefixes"]
