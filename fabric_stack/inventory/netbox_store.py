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
    Rail     → a prefix (the rail subnet)
    Vlan     → a prefix, plus a VLAN when the record has a VLAN id

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

import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import unquote

from ..errors import InventoryError
from .netbox_client import NetBoxApi, NetBoxClient, mask_token, split_netbox_url
from .store import InventoryStore

TAG = "fabric-stack"
TEXT_FIELDS = ("fabric_stack", "fabric_kind", "fabric_name", "fabric_bundle")
OBJECT_TYPES = (
    "dcim.site",
    "dcim.device",
    "dcim.interface",
    "dcim.cable",
    "ipam.prefix",
    "ipam.vlan",
)
ENDPOINT = {
    "Fabric": "dcim/sites",
    "Switch": "dcim/devices",
    "Cable": "dcim/cables",
    "RdmaNic": "dcim/interfaces",
    "Rail": "ipam/prefixes",
    "Vlan": "ipam/prefixes",
}
_NAMES_PER_QUERY = 80  # names per ?name=…&name=… query (URL length)

# NetBox interface types by link speed (Gb/s); other speeds are "other".
_IF_TYPE = {
    1: "1000base-t",
    10: "10gbase-x-sfpp",
    25: "25gbase-x-sfp28",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-osfp",
    800: "800gbase-x-osfp",
}
# The plan's cable medium → NetBox cable type.
_CABLE_TYPE = {"mmf": "mmf", "smf": "smf", "copper": "dac-passive"}


def slug(text: str) -> str:
    """NetBox slug of ``text`` (lower case, [a-z0-9_-], at most 100 characters)."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")[:100] or "x"


def _chunks(items: Sequence[Any], n: int) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def cf_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The custom fields of a NetBox object (``{}`` when none)."""
    return dict(obj.get("custom_fields") or {})


def name_of(ref: Any) -> str:
    """``name`` of a nested NetBox object (or ``""``)."""
    return str(ref.get("name") or "") if isinstance(ref, Mapping) else ""


def end_of(terms: Any) -> tuple[str, str]:
    """(device, interface) of a cable end's termination list; ("", "") unless one interface."""
    if not isinstance(terms, list) or len(terms) != 1:
        return "", ""
    obj = terms[0].get("object") or {}
    return name_of(obj.get("device")), str(obj.get("name") or "")


class NetBoxStore(InventoryStore):
    """The inventory store API on a NetBox (see the module doc for the object mapping)."""

    _lock: ClassVar[threading.RLock] = threading.RLock()
    _shared: ClassVar[
        dict[tuple[str, str, str], int]
    ] = {}  # (base, endpoint, key) → id, per process

    def __init__(self, url: str, api: NetBoxApi | None = None, token: str | None = None) -> None:
        super().__init__(url)
        self.dialect = "netbox"
        self.base, url_token = split_netbox_url(url)
        token = unquote(url_token) or token or os.environ.get("NETBOX_TOKEN", "")
        self.api: NetBoxApi = api if api is not None else NetBoxClient(self.base, token)

    # -- shared definitions ----------------------------------------------------------
    def _get_or_create(
        self, endpoint: str, key: str, query: dict[str, Any], obj: dict[str, Any]
    ) -> int:
        """Id of the object ``query`` finds, creating ``obj`` if none (cached per process)."""
        ck = (self.base, endpoint, key)
        with self._lock:
            if ck in self._shared:
                return self._shared[ck]
            found = self.api.select(endpoint, query)
            if not found:
                try:
                    found = self.api.create(endpoint, [obj])
                except InventoryError:
                    found = self.api.select(endpoint, query)  # created meanwhile by another process
                    if not found:
                        raise
            self._shared[ck] = int(found[0]["id"])
            return self._shared[ck]

    def _fields(self) -> None:
        for name in (*TEXT_FIELDS, "fabric_record"):
            self._get_or_create(
                "extras/custom-fields",
                name,
                {"name": name},
                {
                    "name": name,
                    "type": "json" if name == "fabric_record" else "text",
                    "object_types": list(OBJECT_TYPES),
                    "filter_logic": "exact",
                    "group_name": "fabric-stack",
                    "description": "fabric-stack: ties this object to its plan record",
                },
            )
        self._get_or_create("extras/tags", TAG, {"slug": TAG}, {"name": TAG, "slug": TAG})

    def site_id(self, stack: str) -> int:
        """The stack's site (created with the custom fields and tag on first use)."""
        self._fields()
        return self._get_or_create(
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

    def _manufacturer(self, vendor: str) -> int:
        s = slug(vendor)
        return self._get_or_create(
            "dcim/manufacturers", s, {"slug": s}, {"name": vendor, "slug": s}
        )

    def _device_type(self, model: str) -> int:
        """Device type of a switch catalog key, a server, or a not-yet-known endpoint."""
        from ..catalog import lookup_switch

        if model in ("gpu-server", "endpoint"):
            vendor, name, height = "Generic", f"fabric-stack {model}", 0
        else:
            sw = lookup_switch(model)
            vendor, name, height = sw.vendor, sw.name, sw.rack_units
        s = slug(model)
        return self._get_or_create(
            "dcim/device-types",
            s,
            {"slug": s},
            {
                "manufacturer": self._manufacturer(vendor),
                "model": name,
                "slug": s,
                "u_height": height,
            },
        )

    def _role(self, role: str) -> int:
        s = slug(role)
        return self._get_or_create(
            "dcim/device-roles", s, {"slug": s}, {"name": role, "slug": s, "vm_role": False}
        )

    def _rack(self, stack: str, rack: str) -> int:
        site = self.site_id(stack)
        return self._get_or_create(
            "dcim/racks",
            f"{site}:{rack}",
            {"site_id": site, "name": rack},
            {"name": rack, "site": site, "status": "planned", "tags": [{"slug": TAG}]},
        )

    def _cf(
        self, stack: str, kind: str, name: str, bundle: str, record: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        return {
            "fabric_stack": stack,
            "fabric_kind": kind,
            "fabric_name": name,
            "fabric_bundle": bundle,
            "fabric_record": dict(record) if record is not None else None,
        }

    def _query(self, stack: str | None, kind: str, **more: str) -> dict[str, Any]:
        q: dict[str, Any] = {"cf_fabric_kind": kind}
        if stack is not None:
            q["cf_fabric_stack"] = stack
        q.update({f"cf_fabric_{k}": v for k, v in more.items()})
        return q

    # -- devices and interfaces ------------------------------------------------------
    def devices(self, stack: str, names: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Devices of the stack's site by name."""
        site = self.site_id(stack)
        out: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(sorted(set(names)), _NAMES_PER_QUERY):
            for d in self.api.select("dcim/devices", {"site_id": site, "name": list(chunk)}):
                out[str(d["name"])] = d
        return out

    def _device_body(self, stack: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "role": self._role(spec["role"]),
            "device_type": self._device_type(spec["model"]),
            "custom_fields": self._cf(stack, spec["kind"], spec["name"], "", spec.get("record")),
        }
        if spec.get("rack"):
            body["rack"] = self._rack(stack, spec["rack"])
        return body

    def ensure_devices(self, stack: str, specs: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
        """Make the devices of ``specs`` (name → kind/role/model/rack/record) exist; name → id.

        An ``Endpoint`` spec (a cable's far end) never overrides what is there; a
        ``Switch`` spec adopts an endpoint created earlier by a cable.
        """
        for attempt in (1, 2):
            have = self.devices(stack, specs)
            new = [n for n in specs if n not in have]
            patch = [
                {"id": have[n]["id"], **self._device_body(stack, s)}
                for n, s in specs.items()
                if n in have and s["kind"] != "Endpoint" and self._differs(have[n], s)
            ]
            try:
                if new:
                    site = self.site_id(stack)
                    self.api.create(
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
                if patch:
                    self.api.update("dcim/devices", patch)
            except InventoryError:
                if attempt == 2:
                    raise
                continue  # another resource created one of them meanwhile: look again
            break
        return {n: int(d["id"]) for n, d in self.devices(stack, specs).items()}

    def _differs(self, dev: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
        cf = cf_of(dev)
        role = dev.get("role") or {}
        dtype = dev.get("device_type") or {}
        return (
            cf.get("fabric_kind") != spec["kind"]
            or cf.get("fabric_record") != spec.get("record")
            or (isinstance(role, Mapping) and role.get("slug") != slug(spec["role"]))
            or (isinstance(dtype, Mapping) and dtype.get("slug") != slug(spec["model"]))
            or name_of(dev.get("rack")) != (spec.get("rack") or "")
        )

    def ensure_interfaces(
        self, stack: str, ports: Mapping[tuple[str, str], int], devices: Mapping[str, int]
    ) -> dict[tuple[str, str], int]:
        """Make interfaces (device, name) → speed exist on ``devices``; (device, name) → id."""
        by_id = {v: k for k, v in devices.items()}
        ids = sorted({devices[d] for d, _ in ports})

        def current() -> dict[tuple[str, str], int]:
            out: dict[tuple[str, str], int] = {}
            for chunk in _chunks(ids, _NAMES_PER_QUERY):
                for i in self.api.select("dcim/interfaces", {"device_id": list(chunk), "brief": 1}):
                    dev = i["device"]["id"] if isinstance(i.get("device"), Mapping) else i["device"]
                    out[(by_id[int(dev)], str(i["name"]))] = int(i["id"])
            return out

        have = current()
        new: list[dict[str, Any]] = [
            {
                "device": devices[d],
                "name": p,
                "type": _IF_TYPE.get(speed, "other"),
                "speed": speed * 1_000_000 if speed else None,
                "tags": [{"slug": TAG}],
            }
            for (d, p), speed in sorted(ports.items())
            if (d, p) not in have
        ]
        if new:
            try:
                self.api.create("dcim/interfaces", new)
            except InventoryError:
                have = current()  # created meanwhile: create only what is still missing
                self.api.create(
                    "dcim/interfaces",
                    [n for n in new if (by_id[n["device"]], n["name"]) not in have],
                )
            have = current()
        return have

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
        if kind not in ENDPOINT:
            raise InventoryError(f"NetBox inventory: no NetBox object for record kind {kind!r}")
        if kind == "Fabric":
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
            return
        if kind == "Switch":
            self.ensure_devices(
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
            return
        scope = {"bundle": bundle} if prune else {}
        existing = self.api.select(ENDPOINT[kind], self._query(stack, kind, **scope))
        if not prune:
            names = {n for n, _ in records}
            existing = [o for o in existing if cf_of(o).get("fabric_name") in names]
        bodies = self._bodies(stack, kind, bundle, records)
        self._sync(ENDPOINT[kind], existing, bodies, prune=prune)
        if kind == "Vlan":
            self._write_vlans(stack, bundle, records)

    def _bodies(
        self, stack: str, kind: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        """NetBox object bodies (without id) of ``records``, by record name."""
        if kind == "Cable":
            return self._cable_bodies(stack, bundle, records)
        if kind == "RdmaNic":
            return self._nic_bodies(stack, bundle, records)
        site = self.site_id(stack)
        return {
            n: {
                "prefix": r["subnet"],
                "status": "planned",
                "description": f"{kind} {n}"[:200],
                "scope_type": "dcim.site",
                "scope_id": site,
                "tags": [{"slug": TAG}],
                "custom_fields": self._cf(stack, kind, n, bundle, r),
            }
            for n, r in records
        }

    def _sync(
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
        create = [b for n, b in bodies.items() if n not in have]
        patch = [
            {"id": have[n]["id"], **b}
            for n, b in bodies.items()
            if n in have and _changed(have[n], b)
        ]
        if extra:
            self.api.delete(endpoint, extra)
        if patch:
            self.api.update(endpoint, patch)
        if create:
            self.api.create(endpoint, create)

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
        ifaces = self.ensure_interfaces(stack, ports, devices)
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
            if _CABLE_TYPE.get(str(r.get("medium") or "")):
                body["type"] = _CABLE_TYPE[str(r["medium"])]
            out[n] = body
        return out

    def _nic_bodies(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> dict[str, dict[str, Any]]:
        specs = {
            str(r["node"]): {
                "kind": "Endpoint",
                "name": r["node"],
                "role": "server",
                "model": "gpu-server",
            }
            for _, r in records
        }
        devices = self.ensure_devices(stack, specs)
        return {
            n: {
                "device": devices[str(r["node"])],
                "name": str(r["nic"]),
                "type": _IF_TYPE.get(int(r.get("speed_gbps") or 0), "other"),
                "tags": [{"slug": TAG}],
                "custom_fields": self._cf(stack, "RdmaNic", n, bundle, r),
            }
            for n, r in records
        }

    def _write_vlans(
        self, stack: str, bundle: str, records: list[tuple[str, Mapping[str, Any]]]
    ) -> None:
        wanted = {n: r for n, r in records if 0 < int(r.get("vlan") or 0) < 4095}
        existing = self.api.select("ipam/vlans", self._query(stack, "Vlan"))
        existing = [o for o in existing if cf_of(o).get("fabric_name") in {n for n, _ in records}]
        bodies = {
            n: {
                "vid": int(r["vlan"]),
                "name": n[:64],
                "status": "active",
                "tags": [{"slug": TAG}],
                "custom_fields": self._cf(stack, "Vlan", n, bundle, None),
            }
            for n, r in wanted.items()
        }
        self._sync("ipam/vlans", existing, bodies, prune=True)

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
            return
        if "cf_fabric_bundle" in query and query["cf_fabric_bundle"] == "":
            query = {k: v for k, v in query.items() if k != "cf_fabric_bundle"}
        found = self.api.select(ENDPOINT[kind], query)
        if kind == "Vlan":
            vq = {k: v for k, v in query.items() if k != "cf_fabric_bundle"}
            self.api.delete("ipam/vlans", [int(o["id"]) for o in self.api.select("ipam/vlans", vq)])
        if not found:
            return
        self.api.delete(ENDPOINT[kind], [int(o["id"]) for o in found])
        if kind == "Cable":
            ends = {end_of(o.get(f"{e}_terminations"))[0] for o in found for e in ("a", "b")}
            self.sweep_endpoints(stack, ends - {""})
        elif kind == "RdmaNic":
            self.sweep_endpoints(stack, {name_of(o.get("device")) for o in found} - {""})

    def sweep_endpoints(self, stack: str, names: Iterable[str] | None = None) -> None:
        """Delete endpoint devices (created for cables/NICs) that no cable or NIC record uses."""
        site = self.site_id(stack)
        query: dict[str, Any] = {"site_id": site, "cf_fabric_kind": "Endpoint"}
        if names is not None:
            wanted = sorted(set(names))
            if not wanted:
                return
            devices = [
                d
                for d in self.devices(stack, wanted).values()
                if cf_of(d).get("fabric_kind") == "Endpoint"
            ]
        else:
            devices = self.api.select("dcim/devices", query)
        unused = []
        for dev in devices:
            busy = self.api.count("dcim/cables", {"device_id": dev["id"]})
            nics = self.api.count(
                "dcim/interfaces", {"device_id": dev["id"], "cf_fabric_kind": "RdmaNic"}
            )
            if not busy and not nics:
                unused.append(int(dev["id"]))
        if unused:
            self.api.delete("dcim/devices", unused)

    # -- reads -----------------------------------------------------------------------
    def get(self, stack: str, kind: str, name: str) -> dict[str, Any] | None:
        """One record (live NetBox values laid over the stored record), or None."""
        if kind == "Fabric":
            found = self.api.select("dcim/sites", self._query(stack, "Fabric", name=name))
        else:
            found = self.api.select(ENDPOINT[kind], self._query(stack, kind, name=name))
        return record_of(kind, found[0]) if found else None

    def get_bundle(self, stack: str, kind: str, bundle: str) -> list[dict[str, Any]]:
        """Records of a bundle, ordered by name, each with ``name`` and ``status``."""
        found = self.api.select(ENDPOINT[kind], self._query(stack, kind, bundle=bundle))
        recs = [{**record_of(kind, o), "name": cf_of(o).get("fabric_name")} for o in found]
        return sorted(recs, key=lambda r: str(r["name"]))

    def list_records(self, kind: str, stack: str | None = None) -> list[dict[str, Any]]:
        """All records of ``kind`` (optionally of one stack), with name, status, stack, bundle."""
        if kind not in ENDPOINT:
            return []
        out = []
        for o in self.api.select(ENDPOINT[kind], self._query(stack, kind)):
            cf = cf_of(o)
            out.append(
                {
                    **record_of(kind, o),
                    "name": cf.get("fabric_name"),
                    "stack": cf.get("fabric_stack"),
                    "bundle": cf.get("fabric_bundle") or "",
                }
            )
        return sorted(out, key=lambda r: (str(r["stack"]), str(r["name"])))

    def counts(self, stack: str | None = None) -> dict[str, int]:
        """Records per kind."""
        out = {}
        for kind, endpoint in ENDPOINT.items():
            n = self.api.count(endpoint, self._query(stack, kind))
            if n:
                out[kind] = n
        return out


def _status(obj: Mapping[str, Any]) -> str:
    st = obj.get("status")
    return str(st.get("value") if isinstance(st, Mapping) else st or "")


def record_of(kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The plan record kept on ``obj``, with what NetBox holds now laid over it (and ``status``)."""
    rec = dict(cf_of(obj).get("fabric_record") or {})
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
            and dtype["slug"] != slug(str(rec.get("model", "")))
        ):
            rec["model"] = dtype["slug"]
        if "rack" in obj:
            rec["rack"] = name_of(obj.get("rack"))
    elif kind in ("Rail", "Vlan") and obj.get("prefix"):
        rec["subnet"] = obj["prefix"]
    return {**rec, "status": _status(obj)}


def _changed(have: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
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


def open_netbox(url: str, token: str | None = None) -> NetBoxStore:
    """A :class:`NetBoxStore` for ``netbox+http(s)://…`` (token: URL, ``token``, NETBOX_TOKEN)."""
    try:
        return NetBoxStore(url, token=token)
    except InventoryError:
        raise
    except ValueError as exc:
        raise InventoryError(f"NetBox URL {mask_token(url)!r}: {exc}") from None
