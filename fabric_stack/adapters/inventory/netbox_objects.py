"""NetBox objects behind the NetBox inventory: shared definitions, devices, interfaces.

See :mod:`fabric_stack.adapters.inventory.netbox_store` for what each record becomes. The
definitions every stack shares (custom fields, tag, site, manufacturers, device
types, roles, racks) are looked up or created once per process and cached by id.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import unquote

from fabric_stack.adapters.inventory.netbox_client import NetBoxApi, NetBoxClient, split_netbox_url
from fabric_stack.adapters.inventory.netbox_custom_fields import (
    OWNED_OBJECT_TYPES,
    ensure_custom_fields,
)
from fabric_stack.adapters.inventory.netbox_plan import NetBoxDetails, details_of_spec
from fabric_stack.adapters.inventory.netbox_progress import tracked
from fabric_stack.adapters.inventory.netbox_subnets import owner
from fabric_stack.adapters.inventory.protocol import InventoryStore
from fabric_stack.errors import InventoryError
from fabric_stack.hardware.switches import CATALOG, NetBoxDeviceType, lookup_switch

TAG = "fabric-stack"
TEXT_FIELDS = ("fabric_stack", "fabric_kind", "fabric_name", "fabric_bundle")
OBJECT_TYPES = OWNED_OBJECT_TYPES
ENDPOINT = {
    "Fabric": "dcim/sites",
    "Switch": "dcim/devices",
    "Cable": "dcim/cables",
    "RdmaNic": "dcim/interfaces",
    "Rail": "ipam/prefixes",
    "Vlan": "ipam/vlans",
}
"""The NetBox endpoint a record kind lives on (a Vlan without a VLAN id NetBox takes lives on
a prefix: :data:`ENDPOINTS`, :mod:`.netbox_subnets`)."""
ENDPOINTS: dict[str, tuple[str, ...]] = {
    **{k: (v,) for k, v in ENDPOINT.items()},
    "Vlan": ("ipam/vlans", "ipam/prefixes"),
}
"""Every endpoint a record kind's objects may be on."""
_NAMES_PER_QUERY = 80  # names per ?name=…&name=… query (URL length)

# NetBox interface types by link speed (Gb/s); other speeds are "other".
IF_TYPE = {
    1: "1000base-t",
    10: "10gbase-x-sfpp",
    25: "25gbase-x-sfp28",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-osfp",
    800: "800gbase-x-osfp",
}
# The plan's cable medium → NetBox cable type.
CABLE_TYPE = {"mmf": "mmf", "smf": "smf", "copper": "dac-passive"}


def library_type(model: str) -> NetBoxDeviceType | None:
    """The community-library device type of catalog key ``model`` (None: not a catalog model,
    or one the library lacks), from the switch model's record
    (:attr:`~fabric_stack.hardware.switches.SwitchModel.netbox_device_type`, with its source).

    A NetBox that imported the library's types then uses those very device types, and one
    that did not gets types the library import later recognises by slug.
    """
    record = CATALOG.get(model.strip().lower())
    return record.netbox_device_type if record is not None else None


def type_slug(model: str) -> str:
    """NetBox device-type slug of a catalog key: the library's where it has the model."""
    lib = library_type(model)
    return lib.slug if lib else slug(model)


def model_of(type_slug_: str) -> str:
    """The catalog key of a device-type slug (the slug itself when no catalog model has it)."""
    for key, record in CATALOG.items():
        lib = record.netbox_device_type
        if lib is not None and lib.slug == type_slug_:
            return key
    return type_slug_


def slug(text: str) -> str:
    """NetBox slug of ``text`` (lower case, [a-z0-9_-], at most 100 characters)."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-")[:100] or "x"


def _chunks(items: Sequence[Any], n: int) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), n):
        yield items[i : i + n]


def cf_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The custom fields of a NetBox object (``{}`` when none); InventoryError naming the
    object and the field when NetBox answered something else (a record read is checked)."""
    cf = obj.get("custom_fields")
    if cf is None:
        return {}
    if not isinstance(cf, Mapping):
        raise InventoryError(
            f"NetBox object id {obj.get('id')!r}: custom_fields: expected an object, "
            f"got {type(cf).__name__}"
        )
    return dict(cf)


def name_of(ref: Any) -> str:
    """``name`` of a nested NetBox object (or ``""``)."""
    return str(ref.get("name") or "") if isinstance(ref, Mapping) else ""


def end_of(terms: Any) -> tuple[str, str]:
    """(device, interface) of a cable end's termination list; ("", "") unless one interface."""
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], Mapping):
        return "", ""
    obj = terms[0].get("object")
    if not isinstance(obj, Mapping):
        return "", ""
    return name_of(obj.get("device")), str(obj.get("name") or "")


class NetBoxObjects(InventoryStore):
    """Shared definitions, devices and interfaces of a NetBox (base of ``NetBoxStore``)."""

    _lock: ClassVar[threading.RLock] = threading.RLock()
    _shared: ClassVar[
        dict[tuple[str, str, str], int]
    ] = {}  # (base, endpoint, key) → id, per process
    _details: ClassVar[dict[tuple[str, str], NetBoxDetails]] = {}  # (base, stack), per process

    def __init__(self, url: str, api: NetBoxApi | None = None, token: str | None = None) -> None:
        super().__init__(url)
        self.dialect = "netbox"
        self.base, url_token = split_netbox_url(url)
        token = unquote(url_token) or token or os.environ.get("NETBOX_TOKEN", "")
        # Progress of bulk writes on a terminal (netbox_progress); a given client (a test's
        # fake) is used as it is.
        self.api: NetBoxApi = api if api is not None else tracked(NetBoxClient(self.base, token))

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

    def shared(self, endpoint: str, key: str, query: dict[str, Any], obj: dict[str, Any]) -> int:
        """Id of a shared definition (an RIR, a rack…): found by ``query`` or created."""
        return self._get_or_create(endpoint, key, query, obj)

    def shared_rack(self, stack: str, rack: str) -> int:
        """Id of the stack's rack ``rack`` (created on first use)."""
        return self._rack(stack, rack)

    def device_type(self, model: str) -> int:
        """Id of the device type of ``model`` (see :meth:`_device_type`)."""
        return self._device_type(model)

    def _fields(self) -> None:
        with self._lock:
            if (self.base, "extras/custom-fields", "*") not in self._shared:
                ensure_custom_fields(self.api)
                self._shared[(self.base, "extras/custom-fields", "*")] = 0
        self._get_or_create("extras/tags", TAG, {"slug": TAG}, {"name": TAG, "slug": TAG})

    def details(self, stack: str) -> NetBoxDetails | None:
        """The NetBox way of the stack's plan (:mod:`.netbox_plan`), from the spec its Fabric
        record keeps on the site; None until that record is written (then only the records'
        own fields are written: the next ``up`` adds the rest)."""
        with self._lock:
            got = self._details.get((self.base, stack))
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
            with self._lock:
                self._details[(self.base, stack)] = got
        return got

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
        return self._get_or_create(
            "dcim/device-types",
            s,
            {"slug": s},
            {**body, "u_height": height, **({"part_number": part} if part else {})},
        )

    def _role(self, role: str) -> int:
        s = slug(role)
        return self._get_or_create(
            "dcim/device-roles", s, {"slug": s}, {"name": role, "slug": s, "vm_role": False}
        )

    def _rack(self, stack: str, rack: str) -> int:
        site = self.site_id(stack)
        details = self.details(stack)
        height = {"u_height": details.rack_units} if details and details.rack_units else {}
        return self._get_or_create(
            "dcim/racks",
            f"{site}:{rack}",
            {"site_id": site, "name": rack},
            {"name": rack, "site": site, "status": "planned", "tags": [{"slug": TAG}], **height},
        )

    def _cf(
        self, stack: str, kind: str, name: str, bundle: str, record: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        return owner(stack, kind, name, bundle, record)

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

    def placed(self, stack: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        """``spec`` (name/kind/role/model/rack/record) with what the plan adds in NetBox: a
        server's profile type, rack and position (a switch record has its own), the GUID."""
        details = self.details(stack)
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
        cf = self._cf(stack, spec["kind"], spec["name"], "", spec.get("record"))
        if spec.get("guid"):
            cf["ib_guid"] = spec["guid"]
        body: dict[str, Any] = {
            "role": self._role(spec["role"]),
            "device_type": self._device_type(spec["model"]),
            "custom_fields": cf,
        }
        if spec.get("rack"):
            body["rack"] = self._rack(stack, spec["rack"])
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
                    site = self.site_id(stack)
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
                and _num(dev.get("position")) != spec["position"]
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
        details = self.details(stack)
        guids = details.port_guids if details is not None else {}
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


def _num(value: Any) -> float | None:
    """A NetBox number (a position comes back as ``"1.0"`` or ``1.0``), or None."""
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def ref_id(ref: Any) -> int:
    """Id of a nested object or a bare id."""
    return int(ref["id"] if isinstance(ref, Mapping) else ref)


def _status(obj: Mapping[str, Any]) -> str:
    st = obj.get("status")
    return str(st.get("value") if isinstance(st, Mapping) else st or "")


def record_of(kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    """The plan record kept on ``obj``, with what NetBox holds now laid over it (and ``status``)."""
    stored = cf_of(obj).get("fabric_record") or {}
    if not isinstance(stored, Mapping):
        raise InventoryError(
            f"NetBox {kind} id {obj.get('id')!r}: custom_fields.fabric_record: expected an "
            f"object, got {type(stored).__name__} (edited by hand? `pulumi up` rewrites it)"
        )
    rec = dict(stored)
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
            and dtype["slug"] != type_slug(str(rec.get("model", "")))
        ):
            rec["model"] = model_of(dtype["slug"])
        if "rack" in obj:
            rec["rack"] = name_of(obj.get("rack"))
    elif kind in ("Rail", "Vlan") and obj.get("prefix"):
        rec["subnet"] = obj["prefix"]
    elif kind == "Vlan" and obj.get("vid"):
        rec["vlan"] = obj["vid"]
    return {**rec, "status": _status(obj)}


def changed(have: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
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
