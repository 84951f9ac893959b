"""lldpd and SONiC LLDP outputs: a directory of one file per device, each read by its content.

A file of ``--lldp DIR`` is ``lldpctl -f json0``/``-f json`` (below), ``lldpctl -f
keyvalue``, ``lldpctl`` plain text (which SONiC's ``show lldp neighbors`` prints), or
SONiC ``show lldp table`` (those three: :mod:`~fabric_stack.adapters.discovery.lldp_text`),
told apart by content, whatever its name ends in; the device is the file name without
its ending (``leaf-1.json``, ``leaf-1.txt``). A file that is none of these is named in a
note and skipped; one that looks like a format but does not parse as it is an error
naming the format, the file and the line.

``-f json0`` always uses arrays (``{"lldp": [{"interface": [{"name": …}]}]}``).
Plain ``-f json`` changes shape with the count: one interface is a dict
``{"interface": {"swp1": {…}}}``, several are a list of one-key dicts, and a
named chassis is keyed by its name (``{"chassis": {"leaf-1": {"id": …}}}``).
Both are accepted, per file. The port id's ``type`` says whether ``value``
is an interface name or a MAC address (lldpd's default on Linux hosts); the
port description then usually holds the interface name and is kept as a hint.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fabric_stack.adapters.discovery._common import (
    DirectoryReader,
    discovery_files,
    finish_directory,
    host_of,
    json_of,
    read_text,
    skipped,
)
from fabric_stack.adapters.discovery.lldp_text import (
    looks_like_keyvalue,
    looks_like_table,
    looks_like_text,
    parse_keyvalue,
    parse_table,
    parse_text,
)
from fabric_stack.drift.model import DeviceSeen, Endpoint, ObservedLink, PortType, Snapshot
from fabric_stack.drift.speeds import Speed, mau_speed
from fabric_stack.errors import InputFileError

_CHASSIS_KEYS = frozenset({"id", "name", "descr", "mgmt-ip", "mgmt-iface", "capability", "ttl"})


def _first(x: Any) -> Any:
    if isinstance(x, list):
        return x[0] if x else None
    return x


def _value(x: Any) -> Any:
    x = _first(x)
    if isinstance(x, dict):
        return x.get("value")
    return x


def _interfaces(doc: Any, path: Path) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(JSON path, local interface, neighbour entry) for either output shape."""
    if not isinstance(doc, dict) or "lldp" not in doc:
        raise InputFileError(
            str(path), "no 'lldp' key (expected `lldpctl -f json0` or `-f json` output)", "$"
        )
    lldp = doc["lldp"]
    if isinstance(lldp, list):  # json0
        for i, block in enumerate(lldp):
            if not isinstance(block, dict):
                raise InputFileError(str(path), "expected an object", f"$.lldp[{i}]")
            ifaces = block.get("interface", [])
            if not isinstance(ifaces, list):
                raise InputFileError(str(path), "expected a list (json0)", f"$.lldp[{i}].interface")
            for j, iface in enumerate(ifaces):
                jp = f"$.lldp[{i}].interface[{j}]"
                if not isinstance(iface, dict) or not isinstance(iface.get("name"), str):
                    raise InputFileError(str(path), "interface entry without a 'name'", jp)
                yield jp, iface["name"], iface
    elif isinstance(lldp, dict):  # json
        ifaces = lldp.get("interface")
        if ifaces is None:
            return
        items = [ifaces] if isinstance(ifaces, dict) else ifaces
        if not isinstance(items, list):
            raise InputFileError(str(path), "expected an object or a list", "$.lldp.interface")
        for j, item in enumerate(items):
            base = "$.lldp.interface" if isinstance(ifaces, dict) else f"$.lldp.interface[{j}]"
            if not isinstance(item, dict):
                raise InputFileError(str(path), "expected an object keyed by interface name", base)
            for name, entry in item.items():
                if not isinstance(entry, dict):
                    raise InputFileError(str(path), "expected an object", f"{base}.{name}")
                yield f"{base}.{name}", name, entry
    else:
        raise InputFileError(str(path), "expected an object or a list", "$.lldp")


def _chassis(entry: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """(system name, id object) of the neighbour's chassis, in either shape."""
    c = _first(entry.get("chassis"))
    if not isinstance(c, dict):
        return None, None
    if "name" in c or "id" in c or not c:
        name = _value(c.get("name"))
        return (str(name) if name else None), _first(c.get("id"))
    keys = [k for k in c if k not in _CHASSIS_KEYS]
    if len(keys) != 1 or not isinstance(c[keys[0]], dict):
        return None, None
    return keys[0], _first(c[keys[0]].get("id"))


def _speed(port: dict[str, Any]) -> Speed | None:
    """Speed from the neighbour's MAU type (``2p5GigT`` → 2.5, ``100BaseTXFD`` → 0.1), if any."""
    an = _first(port.get("auto-negotiation"))
    if not isinstance(an, dict):
        return None
    cur = _value(an.get("current"))
    return mau_speed(str(cur or ""))


def parse_lldpd(
    doc: Any, hostname: str, path: Path, macs: dict[str, str] | None = None
) -> list[ObservedLink]:
    """Observed links of one lldpd JSON document (either shape) from device ``hostname``.

    ``macs`` (when given) collects each neighbour's chassis MAC by its name.
    """
    out: list[ObservedLink] = []
    for jp, local, entry in _interfaces(doc, path):
        name, cid = _chassis(entry)
        is_mac = isinstance(cid, dict) and str(cid.get("type", "")).lower() == "mac"
        if macs is not None and name and is_mac and cid and cid.get("value"):
            macs[name] = str(cid["value"])
        port = _first(entry.get("port"))
        pid = _first(port.get("id")) if isinstance(port, dict) else None
        if not isinstance(pid, dict) or not pid.get("value"):
            raise InputFileError(str(path), "neighbour without a port id", f"{jp}.port")
        device = name or (
            str(cid.get("value")) if isinstance(cid, dict) and cid.get("value") else None
        )
        if device is None:
            raise InputFileError(
                str(path), "neighbour without a chassis name or id", f"{jp}.chassis"
            )
        ptype: PortType = "mac" if str(pid.get("type", "")).lower() == "mac" else "name"
        descr = _value(port.get("descr")) if isinstance(port, dict) else None
        assert isinstance(port, dict)
        out.append(
            ObservedLink(
                a=Endpoint(hostname, local),
                b=Endpoint(device, str(pid["value"]), ptype, str(descr or "")),
                speed_gbps=_speed(port),
                where=f"{path}:{jp}",
            )
        )
    return out


FORMATS = "lldpctl JSON, keyvalue or text, nor SONiC `show lldp neighbors`/`show lldp table`"
"""What a file of ``--lldp DIR`` may be (the skip note names them)."""


def read_lldp_file(
    path: Path, hostname: str, macs: dict[str, str] | None = None
) -> list[ObservedLink] | None:
    """The links of one file of an LLDP directory, by its content; None when it is none of
    the formats (:data:`FORMATS`)."""
    text = read_text(path)
    body = text.lstrip()
    if body[:1] in ("{", "["):
        return parse_lldpd(json_of(text, path), hostname, path, macs)
    try:
        if looks_like_keyvalue(text):
            fmt = "`lldpctl -f keyvalue`"
            return parse_keyvalue(text, hostname, path, macs)
        if looks_like_table(text):
            fmt = "SONiC `show lldp table`"
            return parse_table(text, hostname, path)
        if looks_like_text(text):
            fmt = "lldpctl text / SONiC `show lldp neighbors`"
            return parse_text(text, hostname, path, macs)
    except InputFileError as exc:
        if exc.problem.startswith(("not an `lldpctl", "`show lldp table`")):
            raise
        # The one line names the format the file was read as.
        raise InputFileError(exc.path, f"{exc.problem} (read as {fmt})", exc.where) from None
    return None


class LldpReader(DirectoryReader):
    """LLDP outputs (lldpctl JSON, keyvalue, text; SONiC's LLDP tables), one file per device.

    Every device with a file is *covered*: a planned cable on any of its ports
    that no file reports is missing. ``mac_table`` (CSV ``device,port,mac[,ifname]``)
    maps MAC port ids and host interface names onto plan ports.
    """

    source = "lldp"

    def load(self) -> Snapshot:
        """Read every file by its content; the first malformed one raises InputFileError."""
        snap = Snapshot(source=self.source, origin=str(self.directory))
        hosts = []
        for path in discovery_files(self.directory, "LLDP neighbours (lldpctl or SONiC)"):
            host = host_of(path)
            if self.progress is not None:
                self.progress(path.stat().st_size)
            links = read_lldp_file(path, host, snap.chassis_macs)
            if links is None:
                snap.notes.append(skipped(path, FORMATS))
                continue
            hosts.append(host)
            snap.links.extend(links)
            snap.devices[host] = DeviceSeen(host, where=str(path))
        return finish_directory(
            snap, hosts, self.directory, "file of LLDP neighbours", self.mac_table
        )
