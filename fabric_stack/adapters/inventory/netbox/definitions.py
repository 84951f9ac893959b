"""The NetBox definitions every stack shares, and the stack's site with its plan details.

Custom fields (:mod:`.custom_fields`), the tag, the stack's site, manufacturers, device
types, roles and racks are looked up or created once per process and cached by id
(:data:`PROCESS_CACHE`: every store of the process, of any NetBox, shares it, keyed by the
NetBox's base URL). A ``destroy`` leaves them: NetBox refuses to delete them while anything
uses them, and other stacks may.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.adapters.inventory.netbox.custom_fields import ensure_custom_fields
from fabric_stack.adapters.inventory.netbox.mapping import TAG, cf_of, library_type, slug, type_slug
from fabric_stack.adapters.inventory.netbox.plan import NetBoxDetails, details_of_spec
from fabric_stack.errors import InventoryError
from fabric_stack.hardware.switches import lookup_switch


@dataclass
class DefinitionCache:
    """Ids of shared definitions and the stacks' plan details, kept for a process."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    """Held while a definition is looked up or created (one create per definition)."""
    ids: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(base, endpoint, key) → id."""
    details: dict[tuple[str, str], NetBoxDetails] = field(default_factory=dict)
    """(base, stack) → the NetBox way of the stack's plan."""


PROCESS_CACHE = DefinitionCache()
"""The cache every :class:`Definitions` of the process uses unless given another."""


class Definitions:
    """Shared definitions and the stacks' sites on the NetBox at ``base``, through ``api``."""

    def __init__(self, api: NetBoxApi, base: str, cache: DefinitionCache = PROCESS_CACHE) -> None:
        self.api = api
        self.base = base
        self.cache = cache

    def shared(self, endpoint: str, key: str, query: dict[str, Any], obj: dict[str, Any]) -> int:
        """Id of the object ``query`` finds, creating ``obj`` if none (cached per process)."""
        ck = (self.base, endpoint, key)
        with self.cache.lock:
            if ck in self.cache.ids:
                return self.cache.ids[ck]
            found = self.api.select(endpoint, query)
            if not found:
                try:
                    found = self.api.create(endpoint, [obj])
                except InventoryError:
                    found = self.api.select(endpoint, query)  # created meanwhile by another process
                    if not found:
                        raise
            self.cache.ids[ck] = int(found[0]["id"])
            return self.cache.ids[ck]

    def _fields(self) -> None:
        with self.cache.lock:
            if (self.base, "extras/custom-fields", "*") not in self.cache.ids:
                ensure_custom_fields(self.api)
                self.cache.ids[(self.base, "extras/custom-fields", "*")] = 0
        self.shared("extras/tags", TAG, {"slug": TAG}, {"name": TAG, "slug": TAG})

    def site_id(self, stack: str) -> int:
        """The stack's site (created with the custom fields and tag on first use)."""
        self._fields()
        return self.shared(
            "dcim/sites",
            f"site:{stack}",
            {"slug": slug(stack)},
            {
                "name": stack,
                "slug": slug(stack),
                "status": "planned",
                "tags": [{"slug": TAG}],
                "custom_fields": {"fabric_stack": stack},
            },
        )

    def details(self, stack: str) -> NetBoxDetails | None:
        """The NetBox way of the stack's plan (:mod:`.plan`), from the spec its Fabric
        record keeps on the site; None until that record is written (then only the records'
        own fields are written: the next ``up`` adds the rest)."""
        with self.cache.lock:
            got = self.cache.details.get((self.base, stack))
        if got is not None:
            return got
        site = self.site_id(stack)
        found = self.api.select("dcim/sites", {"id": site})
        rec = cf_of(found[0]).get("fabric_record") if found else None
        spec = rec.get("spec") if isinstance(rec, Mapping) else None
        if not isinstance(spec, Mapping):
            return None
        got = details_of_spec(spec)
        if got is not None:
            with self.cache.lock:
                self.cache.details[(self.base, stack)] = got
        return got

    def forget_details(self, stack: str) -> None:
        """Drop the stack's cached plan details (its spec may change: derive them again)."""
        self.cache.details.pop((self.base, stack), None)

    def _manufacturer(self, vendor: str) -> int:
        s = slug(vendor)
        return self.shared("dcim/manufacturers", s, {"slug": s}, {"name": vendor, "slug": s})

    def device_type(self, model: str) -> int:
        """Device type of a switch catalog key, a server (``gpu-server``, or
        ``server:PROFILE:RU`` for a server profile of that height), or a not-yet-known
        endpoint. The community library has no type for the server profiles (its
        device-types/Nvidia holds DGX A100 and DGX Spark, no DGX H100/B200 or HGX)."""
        part = ""
        lib = library_type(model)
        if model in ("gpu-server", "endpoint"):
            vendor, name, height = "Generic", f"fabric-stack {model}", 0
        elif model.startswith("server:"):
            _, profile, units = model.split(":")
            vendor, name, height = "Generic", f"fabric-stack {profile}", int(units)
        elif lib is not None:
            vendor, name, part = lib.manufacturer, lib.model, lib.part_number
            height = lookup_switch(model).rack_units
        else:
            sw = lookup_switch(model)
            vendor, name, height = sw.vendor, sw.name, sw.rack_units
        s = type_slug(model)
        body = {"manufacturer": self._manufacturer(vendor), "model": name, "slug": s}
        return self.shared(
            "dcim/device-types",
            s,
            {"slug": s},
            {**body, "u_height": height, **({"part_number": part} if part else {})},
        )

    def role(self, role: str) -> int:
        """Id of the device role ``role`` (created on first use)."""
        s = slug(role)
        return self.shared(
            "dcim/device-roles", s, {"slug": s}, {"name": role, "slug": s, "vm_role": False}
        )

    def rack(self, stack: str, rack: str) -> int:
        """Id of the stack's rack ``rack`` (created on first use, as high as the plan's racks)."""
        site = self.site_id(stack)
        details = self.details(stack)
        height = {"u_height": details.rack_units} if details and details.rack_units else {}
        return self.shared(
            "dcim/racks",
            f"{site}:{rack}",
            {"site_id": site, "name": rack},
            {"name": rack, "site": site, "status": "planned", "tags": [{"slug": TAG}], **height},
        )


__all__ = ["PROCESS_CACHE", "DefinitionCache", "Definitions"]
