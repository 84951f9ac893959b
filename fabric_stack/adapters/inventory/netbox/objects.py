"""The NetBox object writer: writes by difference, devices and their interfaces.

:class:`ObjectWriter` creates, patches and deletes only the difference between what NetBox
holds and the bodies wanted (so a rerun of a killed ``up`` writes no duplicates), makes the
devices and interfaces a record needs exist (a switch, a server, a cable's far end), and
sweeps the devices no record owns any more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.adapters.inventory.netbox.definitions import Definitions
from fabric_stack.adapters.inventory.netbox.mapping import (
    IF_TYPE,
    NAMES_PER_QUERY,
    TAG,
    cf_of,
    changed,
    chunks,
    name_of,
    number,
    ref_id,
    slug,
    type_slug,
)
from fabric_stack.adapters.inventory.netbox.subnets import owner
from fabric_stack.errors import InventoryError


class ObjectWriter:
    """Writes to the NetBox behind ``api``; ``defs`` gives the shared definitions' ids."""

    def __init__(self, api: NetBoxApi, defs: Definitions) -> None:
        self.api = api
        self.defs = defs

    def sync(
        self,
        endpoint: str,
        existing: list[dict[str, Any]],
        bodies: Mapping[str, dict[str, Any]],
        *,
        prune: bool,
    ) -> None:
        """Create the missing, patch the changed, (``prune``) delete the others; duplicates go."""
        have: dict[str, dict[str, Any]] = {}
        extra: list[int] = []
        for obj in existing:
            name = str(cf_of(obj).get("fabric_name"))
            if name in have or (prune and name not in bodies):
                extra.append(int(obj["id"]))
            else:
                have[name] = obj
        self._apply(endpoint, have, extra, bodies)

    def _apply(
        self,
        endpoint: str,
        have: Mapping[str, dict[str, Any]],
        extra: list[int],
        bodies: Mapping[str, dict[str, Any]],
    ) -> None:
        create = [b for n, b in bodies.items() if n not in have]
        patch = [
            {"id": have[n]["id"], **b}
            for n, b in bodies.items()
            if n in have and changed(have[n], b)
        ]
        if extra:
            self.api.delete(endpoint, extra)
        if patch:
            self.api.update(endpoint, patch)
        if create:
            self.api.create(endpoint, create)

    def devices(self, stack: str, names: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Devices of the stack's site by name."""
        site = self.defs.site_id(stack)
        out: dict[str, dict[str, Any]] = {}
        for chunk in chunks(sorted(set(names)), NAMES_PER_QUERY):
            for d in self.api.select("dcim/devices", {"site_id": site, "name": list(chunk)}):
                out[str(d["name"])] = d
        return out

    def placed(self, stack: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """``spec`` (name/kind/role/model/rack/record) with what the plan adds in NetBox: a
        server's profile type, rack and position (a switch record has its own), the GUID."""
        details = self.defs.details(stack)
        if details is None or (spec["kind"] == "Endpoint" and spec["model"] == "endpoint"):
            return dict(spec)
        out = dict(spec)
        where = details.devices.get(str(spec["name"]))
        if where is not None and spec["model"] == "gpu-server" and where.get("model"):
            out["model"] = where["model"]
        if where is not None and out["model"] != "gpu-server":
            out["rack"] = out.get("rack") or where["rack"]
            out["position"], out["face"] = where["position"], where["face"]
        if spec["name"] in details.guids:
            out["guid"] = details.guids[str(spec["name"])]
        return out

    def _device_body(self, stack: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        cf = owner(stack, spec["kind"], spec["name"], "", spec.get("record"))
        if spec.get("guid"):
            cf["ib_guid"] = spec["guid"]
        body: dict[str, Any] = {
            "role": self.defs.role(spec["role"]),
            "device_type": self.defs.device_type(spec["model"]),
            "custom_fields": cf,
        }
        if spec.get("rack"):
            body["rack"] = self.defs.rack(stack, spec["rack"])
            if spec.get("position"):
                body["position"], body["face"] = spec["position"], spec.get("face", "front")
        return body

    def ensure_devices(self, stack: str, specs: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
        """Make the devices of ``specs`` (name → kind/role/model/rack/record) exist; name → id.

        An ``Endpoint`` spec (a cable's far end) never overrides what is there; a
        ``Switch`` spec adopts an endpoint created earlier by a cable.
        """
        specs = {n: self.placed(stack, s) for n, s in specs.items()}
        ids: dict[str, int] = {}
        for attempt in (1, 2):
            have = self.devices(stack, specs)
            ids = {n: int(d["id"]) for n, d in have.items()}
            new = [n for n in specs if n not in have]
            patch = [
                {"id": have[n]["id"], **self._device_body(stack, s)}
                for n, s in specs.items()
                if n in have and s["kind"] != "Endpoint" and self._differs(have[n], s)
            ]
            try:
                if new:
                    site = self.defs.site_id(stack)
                    made = self.api.create(
                        "dcim/devices",
                        [
                            {
                                "name": n,
                                "site": site,
                                "status": "planned",
                                "tags": [{"slug": TAG}],
                                **self._device_body(stack, specs[n]),
                            }
                            for n in new
                        ],
                    )
                    # The answer names each new device and its id: no read to learn them.
                    ids.update({str(d["name"]): int(d["id"]) for d in made})
                if patch:
                    self.api.update("dcim/devices", patch)
            except InventoryError:
                if attempt == 2:
                    raise
                continue  # another resource created one of them meanwhile: look again
            break
        return {n: ids[n] for n in specs if n in ids}

    def _differs(self, dev: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
        cf = cf_of(dev)
        role = dev.get("role") or {}
        dtype = dev.get("device_type") or {}
        return (
            cf.get("fabric_kind") != spec["kind"]
            or cf.get("fabric_record") != spec.get("record")
            or (isinstance(role, Mapping) and role.get("slug") != slug(spec["role"]))
            or (isinstance(dtype, Mapping) and dtype.get("slug") != type_slug(spec["model"]))
            or name_of(dev.get("rack")) != (spec.get("rack") or "")
            # The client's device read (FIELDS) has no position: the backfill checks it.
            or (
                bool(spec.get("position"))
                and "position" in dev
                and number(dev.get("position")) != spec["position"]
            )
            or (bool(spec.get("guid")) and cf.get("ib_guid") != spec["guid"])
        )

    def ensure_interfaces(
        self,
        stack: str,
        ports: Mapping[tuple[str, str], int],
        devices: Mapping[str, int],
        types: Mapping[tuple[str, str], str] | None = None,
    ) -> dict[tuple[str, str], int]:
        """Make interfaces (device, name) → speed exist on ``devices``; (device, name) → id.

        ``types``: the NetBox type of a port where the plan knows better than its speed (an
        InfiniBand port); its HCA port GUID goes along."""
        types = types or {}
        details = self.defs.details(stack)
        guids = details.port_guids if details is not None else {}
        by_id = {v: k for k, v in devices.items()}
        ids = sorted({devices[d] for d, _ in ports})

        def current() -> dict[tuple[str, str], int]:
            out: dict[tuple[str, str], int] = {}
            for chunk in chunks(ids, NAMES_PER_QUERY):
                for i in self.api.select("dcim/interfaces", {"device_id": list(chunk), "brief": 1}):
                    dev = i["device"]["id"] if isinstance(i.get("device"), Mapping) else i["device"]
                    out[(by_id[int(dev)], str(i["name"]))] = int(i["id"])
            return out

        have = current()
        new: list[dict[str, Any]] = [
            {
                "device": devices[d],
                "name": p,
                "type": types.get((d, p)) or IF_TYPE.get(speed, "other"),
                "speed": speed * 1_000_000 if speed else None,
                "tags": [{"slug": TAG}],
                **({"custom_fields": {"ib_guid": guids[(d, p)]}} if (d, p) in guids else {}),
            }
            for (d, p), speed in sorted(ports.items())
            if (d, p) not in have
        ]
        if new:
            try:
                made = self.api.create("dcim/interfaces", new)
            except InventoryError:
                have = current()  # created meanwhile: create only what is still missing
                made = self.api.create(
                    "dcim/interfaces",
                    [n for n in new if (by_id[n["device"]], n["name"]) not in have],
                )
            # The answer carries each new interface's device, name and id: no read again.
            have.update({(by_id[ref_id(i["device"])], str(i["name"])): int(i["id"]) for i in made})
        return have

    def sweep_endpoints(self, stack: str, names: Iterable[str] | None = None) -> None:
        """Delete devices no record owns any more.

        A server (``Server``: made for NIC records) goes with its last NIC record; a
        cable's far end (``Endpoint``) goes when no cable and no NIC record uses it.
        ``names=None`` sweeps the whole site (when the stack's summary record goes).
        """
        site = self.defs.site_id(stack)
        kinds = ("Endpoint", "Server")
        if names is not None:
            wanted = sorted(set(names))
            if not wanted:
                return
            devices = [
                d
                for d in self.devices(stack, wanted).values()
                if cf_of(d).get("fabric_kind") in kinds
            ]
        else:
            devices = [
                d
                for k in kinds
                for d in self.api.select("dcim/devices", {"site_id": site, "cf_fabric_kind": k})
            ]
        unused = []
        for dev in devices:
            try:
                nics = self.api.count(
                    "dcim/interfaces", {"device_id": dev["id"], "cf_fabric_kind": "RdmaNic"}
                )
                endpoint = cf_of(dev).get("fabric_kind") == "Endpoint"
                busy = self.api.count("dcim/cables", {"device_id": dev["id"]}) if endpoint else 0
            except InventoryError as exc:
                # Deleted meanwhile by another resource (NetBox: "not one of the available
                # choices" for a device_id that no longer exists): nothing left to sweep.
                if "available choices" in str(exc):
                    continue
                raise
            if not busy and not nics:
                unused.append(int(dev["id"]))
        if unused:
            self.api.delete("dcim/devices", unused)


__all__ = ["ObjectWriter"]
