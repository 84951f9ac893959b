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
               :mod:`.subnets`

Reads return the stored record with the live NetBox values laid over it (a
cable's terminations, a device's role/type/rack), so an edit made in NetBox's
UI shows in ``pulumi refresh`` and the next ``up`` puts the plan back. Writes
compare with what is there and only create, patch or delete the difference
(bulk requests), so a killed ``up`` rerun leaves no duplicates. Site, racks,
manufacturers, device types, roles, custom fields and the tag are shared
definitions: a ``destroy`` leaves them (NetBox refuses to delete them while
anything uses them, and other stacks may).

:class:`NetBoxStore` is that protocol over parts it composes (listed in the package doc,
:mod:`fabric_stack.adapters.inventory.netbox`): it hands each record kind to the part that
writes it, and reads every kind the same way.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote

from fabric_stack.adapters.inventory.netbox.backfill import Backfill
from fabric_stack.adapters.inventory.netbox.branching import branch_of
from fabric_stack.adapters.inventory.netbox.cabling import Cabling
from fabric_stack.adapters.inventory.netbox.client import (
    NetBoxApi,
    NetBoxClient,
    mask_token,
    split_netbox_url,
)
from fabric_stack.adapters.inventory.netbox.definitions import Definitions
from fabric_stack.adapters.inventory.netbox.ipam import UnderlayIpam
from fabric_stack.adapters.inventory.netbox.mapping import (
    ENDPOINT,
    ENDPOINTS,
    cf_of,
    query_of,
    record_of,
)
from fabric_stack.adapters.inventory.netbox.objects import ObjectWriter
from fabric_stack.adapters.inventory.netbox.prefixes import Prefixes
from fabric_stack.adapters.inventory.netbox.progress import tracked
from fabric_stack.adapters.inventory.netbox.subnets import owner, ref
from fabric_stack.adapters.inventory.protocol import InventoryStore
from fabric_stack.errors import InventoryError, NetBoxHttpError

# NetBox's words for "made by another request first" (a unique constraint: cable termination,
# interface or device name), and the waits before writing again (about 2.5 min in all).
_CONFLICT = ("Duplicate termination", "already exists", "unique constraint")
_CONFLICT_BACKOFF_S = (2.0, 5.0, 10.0, 20.0, 40.0, 60.0)


class NetBoxStore(InventoryStore):
    """The inventory store API on a NetBox (see the module doc for the object mapping).

    ``api`` is the client (a test's fake); the parts share it and are built here, each
    given the parts it works with: ``defs`` (shared definitions), ``objects`` (devices,
    interfaces, writes by difference), ``ipam`` (the underlay), ``cabling`` (Cable and
    RdmaNic records), ``prefixes`` (Rail and Vlan records), ``backfill``.
    """

    def __init__(
        self,
        url: str,
        api: NetBoxApi | None = None,
        token: str | None = None,
        *,
        create_branch: bool = True,
    ) -> None:
        super().__init__(url)
        self.dialect = "netbox"
        self.base, url_token = split_netbox_url(url)
        token = unquote(url_token) or token or os.environ.get("NETBOX_TOKEN", "")
        # Progress of bulk writes on a terminal (.progress); a given client (a test's fake)
        # is used as it is.
        # A branch (``?branch=NAME``, :mod:`.branching`) is made when missing, unless the
        # store only reads.
        self.branch = branch_of(url)
        self.api: NetBoxApi = (
            api
            if api is not None
            else tracked(
                NetBoxClient(self.base, token, branch=self.branch, create_branch=create_branch)
            )
        )
        self.defs = Definitions(self.api, self.base)
        self.objects = ObjectWriter(self.api, self.defs)
        self.ipam = UnderlayIpam(self.api, self.defs, self.objects)
        self.cabling = Cabling(self.api, self.defs, self.objects, self.ipam)
        self.prefixes = Prefixes(self.api, self.defs, self.objects)
        self.backfill = Backfill(self.api, self.defs, self.objects, self.ipam)

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
            self._write_fabric(stack, records)
        elif kind == "Switch":
            self._write_switches(stack, records)
        elif kind == "RdmaNic":
            self.cabling.write_nics(stack, bundle, records, prune=prune)
        elif kind in ("Rail", "Vlan"):
            with self.prefixes.lock:
                if prune:  # the bundle's other records go first
                    names = {n for n, _ in records}
                    for rec in self.get_bundle(stack, kind, bundle):
                        if rec["name"] not in names:
                            self.delete(stack, kind, str(rec["name"]))
                if kind == "Rail":
                    self.prefixes.write_rails(stack, bundle, records)
                else:
                    self.prefixes.write_vlans(stack, bundle, records)
        else:
            self.cabling.write_cables(stack, bundle, records, prune=prune)

    def _write_fabric(self, stack: str, records: list[tuple[str, Mapping[str, Any]]]) -> None:
        """The stack's summary record onto its site; then what parallel writes made before
        the spec was there is brought up to it."""
        self.defs.forget_details(stack)  # the spec may change: derive again
        for name, rec in records:
            self.api.update(
                "dcim/sites",
                [
                    {
                        "id": self.defs.site_id(stack),
                        "custom_fields": owner(stack, "Fabric", name, "", rec),
                    }
                ],
            )
        if (details := self.defs.details(stack)) is not None:
            self.backfill(stack, details)  # what parallel writes made before the spec

    def _write_switches(self, stack: str, records: list[tuple[str, Mapping[str, Any]]]) -> None:
        """Switch records onto devices, with their underlay IPAM once the plan is known."""
        ids = self.objects.ensure_devices(
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
        details = self.defs.details(stack)
        if details is not None:
            self.ipam.write_switches(stack, details, ids)

    # -- deletes ---------------------------------------------------------------------
    def delete(self, stack: str, kind: str, name: str, *, unbundled_only: bool = False) -> None:
        """Remove one record's objects (nothing when already gone)."""
        self._remove(
            stack,
            kind,
            query_of(stack, kind, name=name, **({"bundle": ""} if unbundled_only else {})),
        )

    def delete_bundle(self, stack: str, kind: str, bundle: str) -> None:
        """Remove every object of a bundle."""
        self._remove(stack, kind, query_of(stack, kind, bundle=bundle))

    def _remove(self, stack: str, kind: str, query: dict[str, Any]) -> None:
        if kind == "Fabric":
            site = self.defs.site_id(stack)
            self.api.update(
                "dcim/sites", [{"id": site, "custom_fields": owner(stack, "", "", "", None)}]
            )
            self.objects.sweep_endpoints(stack)
            self.ipam.remove(stack)
            return
        unbundled = query.get("cf_fabric_bundle") == ""
        if unbundled:  # NetBox ignores an empty filter value: filter here instead
            query = {k: v for k, v in query.items() if k != "cf_fabric_bundle"}

        def select(endpoint: str) -> list[dict[str, Any]]:
            got = self.api.select(endpoint, query)
            return [o for o in got if not cf_of(o).get("fabric_bundle")] if unbundled else got

        if kind in ("Rail", "Vlan"):
            with self.prefixes.lock:
                if kind == "Rail":
                    self.prefixes.drop_rails(stack, select("ipam/prefixes"))
                    return
                if vlans := select("ipam/vlans"):
                    self.prefixes.drop_vlans(stack, vlans)
                if plain := select("ipam/prefixes"):
                    self.api.delete("ipam/prefixes", [int(o["id"]) for o in plain])
            return
        found = select(ENDPOINT[kind])
        if not found:
            return
        if kind == "Cable":
            self.cabling.delete_cables(stack, found)
        elif kind == "RdmaNic":
            self.cabling.delete_nics(stack, found)
        elif kind == "Switch":
            # A switch's delete cascades to the cables still on it: under its cable lock, so no
            # cable write or delete through that switch runs meanwhile. NetBox answers a cascade
            # that meets a row another request has just deleted with 403 "You do not have
            # permission to perform this action on this object" (NetBox 4.7's perform_destroy in
            # netbox/api/viewsets/__init__.py turns ObjectDoesNotExist into PermissionDenied), as
            # a destroy of a spine racing its leaves' uplink bundles did under load.
            with self.cabling.held(stack, {str(o.get("name") or "") for o in found} - {""}):
                self.api.delete(ENDPOINT[kind], [int(o["id"]) for o in found])
        else:
            self.api.delete(ENDPOINT[kind], [int(o["id"]) for o in found])

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
        found = self._records(kind, query_of(stack, kind, name=name))
        return found[0][1] if found else None

    def get_bundle(self, stack: str, kind: str, bundle: str) -> list[dict[str, Any]]:
        """Records of a bundle, ordered by name, each with ``name`` and ``status``."""
        found = self._records(kind, query_of(stack, kind, bundle=bundle))
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
            for cf, rec in self._records(kind, query_of(stack, kind))
        ]
        return sorted(out, key=lambda r: (str(r["stack"]), str(r["name"])))

    def counts(self, stack: str | None = None) -> dict[str, int]:
        """Records per kind."""
        out = {}
        for kind, endpoints in ENDPOINTS.items():
            n = sum(self.api.count(e, query_of(stack, kind)) for e in endpoints)
            if n:
                out[kind] = n
        return out


def open_netbox(url: str, token: str | None = None, *, read_only: bool = False) -> NetBoxStore:
    """A :class:`NetBoxStore` for ``netbox+http(s)://…`` (token: URL, ``token``, NETBOX_TOKEN);
    ``read_only``: a ``?branch=`` that does not exist is an error, never created."""
    try:
        return NetBoxStore(url, token=token, create_branch=not read_only)
    except InventoryError:
        raise
    except ValueError as exc:
        raise InventoryError(f"NetBox URL {mask_token(url)!r}: {exc}") from None


__all__ = ["NetBoxStore", "open_netbox"]
