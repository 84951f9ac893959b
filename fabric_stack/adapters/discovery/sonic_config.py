"""SONiC ``config_db.json``: the neighbours a switch is configured with (``DEVICE_NEIGHBOR``).

One file per switch in the directory (``<host>.json`` or ``<host>.config_db.json``; the
device is ``DEVICE_METADATA.localhost.hostname`` when set, else the file name). Both
spellings of ``DEVICE_NEIGHBOR`` in use are read:

* keyed by the local port, as ``sonic-cfggen`` writes it from a minigraph and running
  configs show it: ``{"Ethernet0": {"name": "leaf-1", "port": "Ethernet1"}}``;
* keyed by the neighbour, with ``local_port``, as SONiC's ``doc/Configuration.md`` and the
  YANG model (``sonic-device_neighbor.yang``, ``../shared/schemas/sonic``: list key
  ``peer_name``, leaves ``name``, ``local_port``, ``port``, ``mgmt_addr``, ``type``) spell it:
  ``{"leaf-1": {"local_port": "Ethernet0", "port": "Ethernet1"}}``.

``PORT`` gives each local port's ``alias`` (the vendor's front-panel name, ``etp1``) and
``speed`` (Mb/s): a neighbour that reports the alias resolves to the port, and the speed
is the link's. These are *records* (what the switch is configured to expect), not what
the wire says: drift treats them as it treats NetBox (fix the record, not the cable).
No real ``config_db.json`` sample is here; the test fixture follows the layouts above.
"""

from __future__ import annotations

from typing import Any

from fabric_stack.adapters.discovery._common import (
    DirectoryReader,
    discovery_files,
    host_of,
    json_of,
    read_text,
    skipped,
)
from fabric_stack.drift.model import DeviceSeen, Endpoint, ObservedLink, Snapshot
from fabric_stack.errors import InputFileError


def _speed(port: Any) -> int | float | None:
    raw = port.get("speed") if isinstance(port, dict) else None
    try:
        mbps = int(str(raw))
    except ValueError:
        return None
    value = mbps / 1000
    return int(value) if value.is_integer() else value


def parse_config_db(
    doc: Any, default_host: str, path: str
) -> tuple[str, list[ObservedLink], dict[tuple[str, str], str]]:
    """(device, links, (device, alias) → port) of one ``config_db.json``."""
    if not isinstance(doc, dict) or not isinstance(doc.get("DEVICE_NEIGHBOR", {}), dict):
        raise InputFileError(
            path, "expected an object with a DEVICE_NEIGHBOR object (config_db.json)", "$"
        )
    if "DEVICE_NEIGHBOR" not in doc:
        raise InputFileError(
            path, "no DEVICE_NEIGHBOR table (is this a SONiC config_db.json?)", "$"
        )
    meta = doc.get("DEVICE_METADATA", {})
    local = meta.get("localhost", {}) if isinstance(meta, dict) else {}
    host = str(local.get("hostname") or default_host) if isinstance(local, dict) else default_host
    ports = doc.get("PORT", {}) if isinstance(doc.get("PORT"), dict) else {}
    aliases = {
        (host, str(p["alias"])): name
        for name, p in ports.items()
        if isinstance(p, dict) and p.get("alias") and p["alias"] != name
    }
    links = []
    for key, n in doc["DEVICE_NEIGHBOR"].items():
        jp = f"$.DEVICE_NEIGHBOR.{key}"
        if not isinstance(n, dict) or not n.get("port"):
            raise InputFileError(
                path, "neighbour without 'port' (expected name/local_port/port)", jp
            )
        if n.get("local_port"):
            local_port, device = str(n["local_port"]), str(n.get("name") or key)
        else:
            if not n.get("name"):
                raise InputFileError(path, "neighbour keyed by local port without 'name'", jp)
            local_port, device = str(key), str(n["name"])
        local_port = aliases.get((host, local_port), local_port)
        links.append(
            ObservedLink(
                a=Endpoint(host, local_port),
                b=Endpoint(device, str(n["port"])),
                speed_gbps=_speed(ports.get(local_port)),
                where=f"{path}:{jp}",
            )
        )
    return host, links, aliases


class SonicConfigReader(DirectoryReader):
    """SONiC ``config_db.json`` files, one per switch: its configured neighbours (records)."""

    source = "sonic"

    def load(self) -> Snapshot:
        """Read every file; a malformed one raises InputFileError naming its JSON path."""
        snap = Snapshot(source=self.source, origin=str(self.directory), physical=False)
        hosts = []
        for path in discovery_files(self.directory, "SONiC config_db.json"):
            text = read_text(path)
            if text.lstrip()[:1] != "{":
                snap.notes.append(skipped(path, "a SONiC config_db.json"))
                continue
            default = host_of(path).removesuffix(".config_db")
            host, links, aliases = parse_config_db(json_of(text, path), default, str(path))
            hosts.append(host)
            snap.links.extend(links)
            snap.aliases.update(aliases)
            snap.devices[host] = DeviceSeen(host, where=str(path))
        if not hosts:
            raise InputFileError(
                str(self.directory), f"no config_db.json in it ({'; '.join(snap.notes)})"
            )
        snap.covered = frozenset(hosts)
        return snap


__all__ = ["SonicConfigReader", "parse_config_db"]
