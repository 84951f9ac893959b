"""A live NetBox through its REST API: the cables, read page by page, filtered by site and tag.

The cables come from ``/api/dcim/cables/`` exactly as the JSON export reader
(:class:`~.netbox.NetboxJsonReader`) reads them from a file, and are handed to
that reader unchanged, so a live read and an export of the same NetBox give the
same findings. Findings point at ``URL/dcim/cables/ID/`` (the page to edit).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from fabric_stack.adapters.discovery.netbox import NetboxJsonReader
from fabric_stack.adapters.inventory.netbox.branching import branch_of
from fabric_stack.adapters.inventory.netbox.client import NetBoxApi, NetBoxClient, split_netbox_url
from fabric_stack.drift.model import Snapshot
from fabric_stack.errors import InputFileError, InventoryError


class NetboxApiReader:
    """Cables of a live NetBox (``site``: a site slug or name; ``tag``: a tag slug)."""

    source = "netbox"

    def __init__(
        self,
        url: str,
        token: str,
        site: str | None = None,
        tag: str | None = None,
        api: NetBoxApi | None = None,
    ) -> None:
        # A token in the URL's userinfo is taken out of it: the base is printed everywhere.
        self.base, url_token = split_netbox_url("netbox+" + url.removeprefix("netbox+"))
        self.site = site
        self.tag = tag
        token = unquote(url_token) or token
        # ``?branch=NAME`` (--netbox-branch) reads that branch; it is never created here.
        self.api = api if api is not None else NetBoxClient(self.base, token, branch=branch_of(url))
        self._site_id: int | None = None

    def site_id(self) -> int | None:
        """Id of the ``site`` in scope (None: every site); InventoryError when it is not there."""
        if not self.site:
            return None
        if self._site_id is None:
            sites = self.api.select("dcim/sites", {"slug": self.site}) or self.api.select(
                "dcim/sites", {"name": self.site}
            )
            if not sites:
                raise InventoryError(f"NetBox {self.base}: no site {self.site!r} (slug or name)")
            self._site_id = int(sites[0]["id"])
        return self._site_id

    def _scope(self) -> dict[str, Any]:
        query: dict[str, Any] = {}
        site = self.site_id()
        if site is not None:
            query["site_id"] = site
        if self.tag:
            query["tag"] = self.tag
        return query

    def fetch(self) -> list[dict[str, Any]]:
        """Every cable in scope (all pages)."""
        return self.api.select("dcim/cables", self._scope())

    def device_attrs(self) -> dict[str, dict[str, Any]]:
        """Device name → what NetBox holds of it beyond cables: ``rack``, ``position``,
        ``guid`` (a switch's node GUID), ``hca_guids`` (a server's port GUIDs), ``asn``
        (custom fields ``ib_guid`` and ``fabric_asn``, written by the NetBox inventory).
        Read only with a site in scope (a whole NetBox's devices would be too many)."""
        if self.site_id() is None:
            return {}
        out: dict[str, dict[str, Any]] = {}
        fields = "id,name,rack,position,custom_fields"
        for d in self.api.select("dcim/devices", {**self._scope(), "fields": fields}):
            attrs: dict[str, Any] = {}
            rack = d.get("rack")
            if isinstance(rack, dict) and rack.get("name"):
                attrs["rack"] = str(rack["name"])
            if d.get("position") is not None:
                attrs["position"] = float(d["position"])
            raw = d.get("custom_fields")
            cf: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if cf.get("ib_guid"):
                attrs["guid"] = str(cf["ib_guid"])
            asn = cf.get("fabric_asn")
            if isinstance(asn, dict) and asn.get("asn") is not None:
                attrs["asn"] = int(asn["asn"])
            out[str(d.get("name") or "")] = attrs
        query = {
            **self._scope(),
            "cf_ib_guid__empty": "false",
            "fields": "id,name,device,custom_fields",
        }
        for i in self.api.select("dcim/interfaces", query):
            guid = (i.get("custom_fields") or {}).get("ib_guid")
            dev = i.get("device")
            if guid and isinstance(dev, dict) and dev.get("name"):
                out.setdefault(str(dev["name"]), {}).setdefault("hca_guids", []).append(str(guid))
        return out

    def _cable_of(self, where: str | int | None, ids: list[Any]) -> str:
        """``URL/dcim/cables/ID/`` (and the field) of a ``$[i].field`` path in the copy."""
        text = str(where or "")
        if not text.startswith("$["):
            return f"{self.base}/dcim/cables/"
        idx, _, rest = text[2:].partition("]")
        try:
            cable = ids[int(idx)]
        except (ValueError, IndexError):
            return f"{self.base}/dcim/cables/"
        return f"{self.base}/dcim/cables/{cable}/ {rest.lstrip('.') or '$'}"

    def load(self) -> Snapshot:
        """Read the cables and compare-ready links, as the JSON export reader would."""
        cables = self.fetch()
        with tempfile.TemporaryDirectory(prefix="fabric-stack-netbox-") as tmp:
            path = Path(tmp) / "cables.json"
            path.write_text(json.dumps(cables))
            ids = [c.get("id") for c in cables]
            try:
                snap = NetboxJsonReader(path).load()
            except InputFileError as exc:
                # The file is ours, a copy: the line names the cable in NetBox instead.
                raise InventoryError(f"{self._cable_of(exc.where, ids)}: {exc.problem}") from None

        def where(text: str) -> str:
            # "<tmp>/cables.json:$[i]" → the cable's page in NetBox.
            head, _, idx = text.rpartition("$[")
            if not head.startswith(str(path)):
                return text
            try:
                return f"{self.base}/dcim/cables/{ids[int(idx.rstrip(']'))]}/"
            except (ValueError, IndexError):
                return text

        snap.links = [replace(link, where=where(link.where)) for link in snap.links]
        for dev in snap.devices.values():
            dev.where = where(dev.where)
        for name, attrs in self.device_attrs().items():
            if name in snap.devices:
                snap.devices[name].attrs.update(attrs)
        snap.origin = self.base + (f" (site {self.site})" if self.site else "")
        return snap
