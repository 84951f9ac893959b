"""NetBox as the inventory: the store API of :class:`InventoryStore`, kept in real NetBox objects.

URL: ``netbox+https://HOST`` (``netbox+http://`` for loopback), the API token
as the URL's password (``netbox+http://:TOKEN@HOST``: the Pulumi program builds
it from the secret ``fabric:netboxToken``) or else ``NETBOX_TOKEN``.

What each record becomes (all in one site named after the stack, tagged
``fabric-stack``; custom fields ``fabric_stack``, ``fabric_kind``,
``fabric_name``, ``fabric_bundle`` tie an object to its plan record, and
``fabric_record`` keeps the record itself)::

    Fabric   → the site (its custom fields)
    Switch   → a device (role, device type from the switch catalog, rack)
    Cable    → a cable between two interfaces (type from the plan's medium);
               the interfaces and the far-end devices are created on demand
    RdmaNic  → an interface of the server device (named as the OS names the port)
    Rail     → the prefix of the rail subnet
    Vlan     → a VLAN (its subnet's prefix points at it: the rail's, on RoCE), or a
               prefix when it has no VLAN id (an InfiniBand partition); see
               :mod:`.netbox_subnets`

Reads return the stored record with the live NetBox values laid over it (a
cable's terminations, a device's role/type/rack), so an edit made in NetBox's
UI shows in ``pulumi refresh`` and the next ``up`` puts the plan back. Writes
compare with what is there and only create, patch or delete the difference
(bulk requests), so a killed ``up`` rerun leaves no duplicates. Site, racks,
manufacturers, device types, roles, custom fields and the tag are shared
definitions: a ``destroy`` leaves them (NetBox refuses to delete them while
anything uses them, and other stacks may).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from fabric_stack.adapters.inventory.netbox_backfill import backfill
from fabric_stack.adapters.inventory.netbox_client import mask_token
from fabric_stack.adapters.inventory.netbox_ipam import (
    port_types,
    remove_ipam,
    write_addresses,
    write_switch_ipam,
)
from fabric_stack.adapters.inventory.netbox_locks import switches_of_cables, switches_of_records
from fabric_stack.adapters.inventory.netbox_objects import (
    CABLE_TYPE,
    ENDPOINT,
    ENDPOINTS,
    IF_TYPE,
    TAG,
    cf_of,
    end_of,
    name_of,
    record_of,
    ref_id,
)
from fabric_stack.adapters.inventory.netbox_prefixes import NetBoxPrefixes
from fabric_stack.adapters.inventory.netbox_subnets import (
    ref,
)
from fabric_stack.errors import InventoryError, NetBoxHttpError

# NetBox's words for "made by another request first" (a unique constraint: cable termination,
# interface or device name), and the waits before writing again (about 2.5 min in all).
_CONFLICT = ("Duplicate termination", "already exists", "unique constraint")
_CONFLICT_BACKOFF_S = (2.0, 5.0, 10.0, 20.0, 40.0, 60.0)


class NetBoxStore(NetBoxPrefixes):
    """The inventory store API on a NetBox (see the module doc for the object mapping)."""

    # -- record writes ---------------------------------------------------------------
    def put(
        self,
        stack: str,
        kind: str,
        name: str,
        props: Mapping[str, Any],
        *,
        bundle: str = "",
        status: str = "planned",
    ) -> None:
        """Insert or replace one record."""
        self.put_many(stack, kind, [(name, props)], bundle=bundle, status=status)

    def put_many(
        self,
        stack: str,
        kind: str,
        records: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        bundle: str = "",
        status: str = "planned",
    ) -> None:
        """Insert or replace records (not touching others of the bundle)."""
        self._write(stack, kind, bundle, list(records), prune=False)

    def replace_bundle(
        self,
        stack: str,
        kind: str,
        bundle: str,
        records: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        status: str = "planned",
    ) -> None:
        """Make ``bundle`` hold exactly ``records``."""
        self._write(stack, kind, bundle, list(records), prune=True)

    def _write(
        self,
        stack: str,
        kind: str,
        bundle: str,
        records: list[tuple[str, Mapping[str, Any]]],
        *,
        prune: bool,
    ) -> None:
        """Write ``records``; when NetBox refuses a create because another request made the
        same object first, read again and write what is still missing.

        That other request may be a parallel resource, or one a killed ``up`` left running on
        the server: NetBox finishes a request whose client is gone, so the rerun's first read
        can miss objects that request is still creating (seen in the killed-up test: "Duplicate
        termination found for dcim.interface 114: cable 69"). Each write reads before it
        creates, so repeating it is safe; the back-off gives such a request time to finish.
        """
        for delay in (*_CONFLICT_BACKOFF_S, None):
            try:
                self._write_once(stack, kind, bundle, records, prune=prune)
                return
            except NetBoxHttpError as exc:
                if delay is None or not any(c in str(exc) for c in _CONFLICT):
                    raise
                time.sleep(delay)

    def _write_once(
        self,
        stack: str,
        kind: str,
        bundle: str,
        records: list[tuple[str, Mapping[str, Any]]],
        *,
        prune: bool,
    ) -> None:
        if kind not in ENDPOINT:
            raise InventoryError(f"NetBox inventory: no NetBox object for record kind {kind!r}")
        if kind == "Fabric":
            self._details.pop((self.base, stack), None)  # the spec may change: derive again
            for name, rec in records:
                self.api.update(
                    "dcim/sites",
                    [
                        {
                            "id": self.site_id(stack),
                            "custom_fields": self._cf(stack, kind, name, "", rec),
                        }
                    ],
                )
            if (details := self.details(stack)) is not None:
                backfill(self, stack, details)  # what parallel writes made before the spec
            return
        if kind == "Switch":
            ids = self.ensure_devices(
                stack,
                {
                    n: {
                        "kind": "Switch",
                        "name": n,
                        "role": r["role"],
                        "model": r["model"],
                        "rack": r.get("rack", ""),
                        "record": dict(r),
                    }
                    for n, r in records
                },
            )
            details = self.details(stack)
            if details is not None:
                write_switch_ipam(self, stack, details, ids)
            return
        if kind == "RdmaNic":
            self._write_nics(stack, bundle, records, prune=prune)
            return
        if kind in ("Rail", "Vlan"):
            with self._prefix_lock:
                if prune:  # the bundle's other records go first
                    names = {n for n, _ in records}
                    for rec in self.get_bundle(stack, kind, bundle):
                        if rec["name"] not in names:
                            self.delete(stack, kind, str(rec["name"]))
                if kind == "Rail":
                    self._write_rails(stack, bundle, records)
                else:
                    self._write_vlans(stack, bundle, records)
            return
        scope = {"bundle": bundle} if prune else {}
        existing = self.api.select(ENDPOINT[kind], self._query(stack, kind, **scope))
        if not prune:
            names = {n for n, _ in records}
            existing = [o for o in existing if cf_of(o).get("fabric_name") in names]
        bodies = self._bodies(stack, kind, bundle, records)
        if kind == "Cable":
            touched = switches_of_records(records) | switches_of_cables(existing)
            with self._cables_held(stack, touched):
                self._sync(ENDPOINT[kind], existing, bodies, prune=prune)
        else:
            self._sync(ENDPOINT[kind], existing, bodies, prune=prune)

    def _bodies(
        self, stack: str, kind: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """NetBox object bodies (without id) of ``records``, by record name."""
        if kind == "Cable":
            return self._cable_bodies(stack, bundle, records)
        if kind == "RdmaNic":
            return self._nic_bodies(stack, bundle, records)
        return self._prefix_bodies(stack, kind, bundle, records)

    def _cable_bodies(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
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
        devices = self.ensure_devices(stack, specs)
        details = self.details(stack)
        types = port_types(details, records)
        ifaces = self.ensure_interfaces(stack, ports, devices, types)
        if details is not None:
            write_addresses(self, stack, details, ifaces)
        out = {}
        for n, r in records:
            a, b = ifaces[(r["a_device"], r["a_port"])], ifaces[(r["b_device"], r["b_port"])]
            body: dict[str, Any] = {
                "a_terminations": [{"object_type": "dcim.interface", "object_id": a}],
                "b_terminations": [{"object_type": "dcim.interface", "object_id": b}],
                "status": "planned",
                "label": n[:100],
                "tags": [{"slug": TAG}],
                "custom_fields": self._cf(stack, "Cable", n, bundle, r),
            }
            if CABLE_TYPE.get(str(r.get("medium") or "")):
                body["type"] = CABLE_TYPE[str(r["medium"])]
            if details is not None and n in details.cables:
                body.update(details.cables[n])  # the plant's length, label and type
            out[n] = body
        return out

    def _write_nics(
        self,
        stack: str,
        bundle: str,
        records: list[tuple[str, Mapping[str, Any]]],
        *,
        prune: bool,
    ) -> None:
        """NIC records onto the node's interfaces (a cable may have created one by that name)."""
        bodies = self._nic_bodies(stack, bundle, records)
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
                self._sync("dcim/interfaces", existing, bodies, prune=prune)
            except InventoryError:
                if attempt == 2:
                    raise
                continue  # a cable created one of these interfaces meanwhile
            return

    def _nic_bodies(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        specs = {
            str(r["node"]): {
                "kind": "Server",
                "name": r["node"],
                "role": "server",
                "model": "gpu-server",
            }
            for _, r in records
        }
        devices = self.ensure_devices(stack, specs)
        details = self.details(stack)
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
                "custom_fields": self._cf(stack, "RdmaNic", n, bundle, r),
            }
            for n, r in records
        }

    # -- deletes ---------------------------------------------------------------------
    def delete(self, stack: str, kind: str, name: str, *, unbundled_only: bool = False) -> None:
        """Remove one record's objects (nothing when already gone)."""
        self._remove(
            stack,
            kind,
            self._query(stack, kind, name=name, **({"bundle": ""} if unbundled_only else {})),
        )

    def delete_bundle(self, stack: str, kind: str, bundle: str) -> None:
        """Remove every object of a bundle."""
        self._remove(stack, kind, self._query(stack, kind, bundle=bundle))

    def _remove(self, stack: str, kind: str, query: dict[str, Any]) -> None:
        if kind == "Fabric":
            site = self.site_id(stack)
            self.api.update(
                "dcim/sites", [{"id": site, "custom_fields": self._cf(stack, "", "", "", None)}]
            )
            self.sweep_endpoints(stack)
            remove_ipam(self, stack)
            return
        unbundled = query.get("cf_fabric_bundle") == ""
        if unbundled:  # NetBox ignores an empty filter value: filter here instead
            query = {k: v for k, v in query.items() if k != "cf_fabric_bundle"}

        def select(endpoint: str) -> list[dict[str, Any]]:
            got = self.api.select(endpoint, query)
            return [o for o in got if not cf_of(o).get("fabric_bundle")] if unbundled else got

        if kind in ("Rail", "Vlan"):
            with self._prefix_lock:
                if kind == "Rail":
                    self._drop_rails(stack, select("ipam/prefixes"))
                    return
                if vlans := select("ipam/vlans"):
                    self._drop_vlans(stack, vlans)
                if plain := select("ipam/prefixes"):
                    self.api.delete("ipam/prefixes", [int(o["id"]) for o in plain])
            return
        found = select(ENDPOINT[kind])
        if not found:
            return
        if kind == "Cable":
            with self._cables_held(stack, switches_of_cables(found)):
                self.api.delete(ENDPOINT[kind], [int(o["id"]) for o in found])
        else:
            self.api.delete(ENDPOINT[kind], [int(o["id"]) for o in found])
        if kind == "Cable":
            ends = {end_of(o.get(f"{e}_terminations"))[0] for o in found for e in ("a", "b")}
            self.sweep_endpoints(stack, ends - {""})
        elif kind == "RdmaNic":
            self.sweep_endpoints(stack, {name_of(o.get("device")) for o in found} - {""})

    def sweep_endpoints(self, stack: str, names: Iterable[str] | None = None) -> None:
        """Delete devices no record owns any more.

        A server (``Server``: made for NIC records) goes with its last NIC record; a
        cable's far end (``Endpoint``) goes when no cable and no NIC record uses it.
        ``names=None`` sweeps the whole site (when the stack's summary record goes).
        """
        site = self.site_id(stack)
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

    # -- reads -----------------------------------------------------------------------
    def _records(
        self, kind: str, query: dict[str, Any]
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(custom fields, record) of every ``kind`` object ``query`` finds; a VLAN's record
        gets the subnet of the prefix pointing at it."""
        out: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for endpoint in ENDPOINTS[kind]:
            found = self.api.select(endpoint, query)
            for o in found:
                try:
                    cf = cf_of(o)
                except InventoryError as exc:  # name the endpoint too: the table of a NetBox
                    raise InventoryError(f"NetBox {self.base}/{endpoint}/: {exc}") from None
                out.append((cf, record_of(kind, o)))
            if endpoint == "ipam/vlans" and found:
                ids = sorted(int(o["id"]) for o in found)
                subnets = {
                    ref(p.get("vlan")): str(p["prefix"])
                    for i in range(0, len(ids), 80)
                    for p in self.api.select("ipam/prefixes", {"vlan_id": ids[i : i + 80]})
                }
                for o, (_, rec) in zip(found, out[-len(found) :], strict=True):
                    if int(o["id"]) in subnets:
                        rec["subnet"] = subnets[int(o["id"])]
        return out

    def get(self, stack: str, kind: str, name: str) -> dict[str, Any] | None:
        """One record (live NetBox values laid over the stored record), or None."""
        found = self._records(kind, self._query(stack, kind, name=name))
        return found[0][1] if found else None

    def get_bundle(self, stack: str, kind: str, bundle: str) -> list[dict[str, Any]]:
        """Records of a bundle, ordered by name, each with ``name`` and ``status``."""
        found = self._records(kind, self._query(stack, kind, bundle=bundle))
        recs = [{**rec, "name": cf.get("fabric_name")} for cf, rec in found]
        return sorted(recs, key=lambda r: str(r["name"]))

    def list_records(self, kind: str, stack: str | None = None) -> list[dict[str, Any]]:
        """All records of ``kind`` (optionally of one stack), with name, status, stack, bundle."""
        if kind not in ENDPOINT:
            return []
        out = [
            {
                **rec,
                "name": cf.get("fabric_name"),
                "stack": cf.get("fabric_stack"),
                "bundle": cf.get("fabric_bundle") or "",
            }
            for cf, rec in self._records(kind, self._query(stack, kind))
        ]
        return sorted(out, key=lambda r: (str(r["stack"]), str(r["name"])))

    def counts(self, stack: str | None = None) -> dict[str, int]:
        """Records per kind."""
        out = {}
        for kind, endpoints in ENDPOINTS.items():
            n = sum(self.api.count(e, self._query(stack, kind)) for e in endpoints)
            if n:
                out[kind] = n
        return out


def open_netbox(url: str, token: str | None = None) -> NetBoxStore:
    """A :class:`NetBoxStore` for ``netbox+http(s)://…`` (token: URL, ``token``, NETBOX_TOKEN)."""
    try:
        return NetBoxStore(url, token=token)
    except InventoryError:
        raise
    except ValueError as exc:
        raise InventoryError(f"NetBox URL {mask_token(url)!r}: {exc}") from None
