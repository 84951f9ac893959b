"""Arista EOS ``show lldp neighbors detail | json``: a directory of ``<hostname>.json``.

Each file is the command's JSON as the switch prints it, or as a client returns it:
pyeapi's ``enable()`` and netmiko-style captures give a list of ``{"command", "result"}``
objects (real sample ``eos/eos-lldp-detail.PDX01-M01-G29-IPMISPINE-01.json`` is one such
``result``), and eAPI itself answers JSON-RPC ``{"jsonrpc": "2.0", "result": [ … ]}``
(Arista's eAPI documentation: one result object per command). The object holding
``lldpNeighbors`` is taken from either wrapper, and a ``show interfaces status`` result
in the same list serves as the status file. A file in the directory that is not JSON is
named in a note and skipped.

Quirks handled: ``interfaceId`` carries literal quotes (``"\\"Ethernet3/1\\""``;
``interfaceId_v2`` is preferred when present), ``systemName`` is often an
FQDN, and a port may list several neighbours (each becomes an observation;
the engine flags the ones the plan does not have). EOS lists every
LLDP-enabled port, including those with no neighbour.

An optional ``<hostname>.status.json`` next to it (``show interfaces status |
json``) adds each port's link state and speed: a port that is ``connected``
but has no LLDP neighbour is reported as *link up, no neighbour*, and the
port's bandwidth is the observed link speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabric_stack.adapters.discovery._common import (
    DirectoryReader,
    Progress,
    discovery_files,
    finish_directory,
    host_of,
    json_of,
    read_json,
    read_text,
    skipped,
)
from fabric_stack.drift.model import (
    DeviceSeen,
    Endpoint,
    ObservedLink,
    PortState,
    PortType,
    Snapshot,
)
from fabric_stack.drift.speeds import Speed, bandwidth_speed, mau_speed
from fabric_stack.errors import InputFileError


def unwrap(doc: Any, key: str) -> tuple[Any, str]:
    """(the object holding ``key``, its JSON path) of a plain, pyeapi or eAPI document;
    the document itself when no wrapper holds it (the caller's check then names it)."""
    results = doc.get("result") if isinstance(doc, dict) and "jsonrpc" in doc else doc
    base = "$.result" if results is not doc else "$"
    if isinstance(results, list):
        for i, item in enumerate(results):
            inner = item.get("result") if isinstance(item, dict) and "result" in item else item
            where = f"{base}[{i}].result" if inner is not item else f"{base}[{i}]"
            if isinstance(inner, dict) and key in inner:
                return inner, where
    return doc, "$"


def _status(
    path: Path, progress: Progress | None, doc: Any = None
) -> dict[str, tuple[bool, Speed | None, str]]:
    """Port → (up, speed Gb/s, JSON path) from ``show interfaces status | json``."""
    if doc is None:
        doc = read_json(path, progress)
    doc, _where = unwrap(doc, "interfaceStatuses")
    statuses = doc.get("interfaceStatuses") if isinstance(doc, dict) else None
    if not isinstance(statuses, dict):
        raise InputFileError(
            str(path),
            "no 'interfaceStatuses' object (expected `show interfaces status | json`)",
            "$",
        )
    out: dict[str, tuple[bool, Speed | None, str]] = {}
    for intf, st in statuses.items():
        jp = f"$.interfaceStatuses.{intf}"
        if not isinstance(st, dict) or "linkStatus" not in st:
            raise InputFileError(str(path), "port without 'linkStatus'", jp)
        speed = bandwidth_speed(st.get("bandwidth"))
        out[intf] = (str(st["linkStatus"]) == "connected", speed, jp)
    return out


def parse_eos(
    doc: Any,
    hostname: str,
    path: Path,
    status: dict[str, tuple[bool, Speed | None, str]] | None = None,
) -> tuple[list[ObservedLink], list[PortState]]:
    """Observed links (and port states) of one EOS LLDP document from ``hostname``
    (plain, or wrapped as pyeapi or eAPI return it)."""
    doc, where = unwrap(doc, "lldpNeighbors")
    if not isinstance(doc, dict) or not isinstance(doc.get("lldpNeighbors"), dict):
        raise InputFileError(
            str(path),
            "no 'lldpNeighbors' object (expected `show lldp neighbors detail | json`)",
            "$",
        )
    links: list[ObservedLink] = []
    states: list[PortState] = []
    status = status or {}
    spath = path.with_name(path.name.removesuffix(".json") + ".status.json")
    for intf, entry in doc["lldpNeighbors"].items():
        jp = f"{where}.lldpNeighbors.{intf}"
        infos = entry.get("lldpNeighborInfo") if isinstance(entry, dict) else None
        if not isinstance(infos, list):
            raise InputFileError(str(path), "expected a 'lldpNeighborInfo' list", jp)
        up, speed, sjp = status.get(intf, (False, None, ""))
        if not infos and intf in status:
            states.append(PortState(Endpoint(hostname, intf), up, speed, f"{spath}:{sjp}"))
        for k, info in enumerate(infos):
            ijp = f"{jp}.lldpNeighborInfo[{k}]"
            if not isinstance(info, dict):
                raise InputFileError(str(path), "expected an object", ijp)
            device = info.get("systemName") or info.get("chassisId")
            nif = info.get("neighborInterfaceInfo")
            if not device or not isinstance(nif, dict):
                raise InputFileError(
                    str(path),
                    "neighbour without systemName/chassisId or neighborInterfaceInfo",
                    ijp,
                )
            port = nif.get("interfaceId_v2") or nif.get("interfaceId")
            if not port:
                raise InputFileError(
                    str(path), "neighbour without an interfaceId", f"{ijp}.neighborInterfaceInfo"
                )
            ptype: PortType = "mac" if nif.get("interfaceIdType") == "macAddress" else "name"
            hint = nif.get("interfaceDescription") or nif.get("portDescription") or ""
            # The port's own speed (status file) wins; else the neighbour's MAU type TLV.
            told = mau_speed(str(nif.get("operMauType") or ""))
            links.append(
                ObservedLink(
                    a=Endpoint(hostname, intf),
                    b=Endpoint(str(device), str(port), ptype, str(hint)),
                    speed_gbps=speed if up and speed is not None else told,
                    where=f"{path}:{ijp}",
                )
            )
    for intf, (up, speed, sjp) in status.items():
        if intf not in doc["lldpNeighbors"]:  # LLDP off on that port: state only
            states.append(PortState(Endpoint(hostname, intf), up, speed, f"{spath}:{sjp}"))
    return links, states


class EosReader(DirectoryReader):
    """EOS ``show lldp neighbors detail | json`` outputs, one ``<hostname>.json`` per switch.

    Each file's device is covered (see :class:`~fabric_stack.adapters.discovery.lldp.LldpReader`).
    """

    source = "eos"

    def load(self) -> Snapshot:
        """Read every file (and its optional status file); the first malformed one raises."""
        snap = Snapshot(source=self.source, origin=str(self.directory))
        hosts = []
        for path in discovery_files(self.directory, "`show lldp neighbors detail | json`"):
            if path.name.endswith(".status.json"):
                if not path.with_name(path.name.replace(".status.json", ".json")).exists():
                    snap.notes.append(f"skipped {path.name}: no LLDP file of its device beside it")
                continue  # read with its device's file
            text = read_text(path)
            if text.lstrip()[:1] not in ("{", "["):
                snap.notes.append(skipped(path, "EOS JSON (`show lldp neighbors detail | json`)"))
                continue
            host = host_of(path)
            hosts.append(host)
            if self.progress is not None:
                self.progress(len(text))
            doc = json_of(text, path)
            spath = path.with_name(f"{host}.status.json")
            status = _status(spath, self.progress) if spath.exists() else None
            if status is None and unwrap(doc, "interfaceStatuses")[1] != "$":
                status = _status(path, None, doc)
            links, states = parse_eos(doc, host, path, status)
            snap.links.extend(links)
            snap.port_states.extend(states)
            snap.devices[host] = DeviceSeen(host, where=str(path))
        return finish_directory(snap, hosts, self.directory, "EOS JSON file", self.mac_table)
