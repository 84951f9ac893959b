"""Arista EOS ``show lldp neighbors detail | json``: a directory of ``<hostname>.json``.

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
    json_files,
    load_mac_table,
    read_json,
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


def _status(path: Path, progress: Progress | None) -> dict[str, tuple[bool, Speed | None, str]]:
    """Port → (up, speed Gb/s, JSON path) from ``show interfaces status | json``."""
    doc = read_json(path, progress)
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
    """Observed links (and port states) of one EOS LLDP document from ``hostname``."""
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
        jp = f"$.lldpNeighbors.{intf}"
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
        for path in json_files(self.directory, "`show lldp neighbors detail | json` output"):
            host = path.name.removesuffix(".json")
            hosts.append(host)
            spath = path.with_name(f"{host}.status.json")
            status = _status(spath, self.progress) if spath.exists() else None
            links, states = parse_eos(read_json(path, self.progress), host, path, status)
            snap.links.extend(links)
            snap.port_states.extend(states)
            snap.devices[host] = DeviceSeen(host, where=str(path))
        snap.covered = frozenset(hosts)
        if self.mac_table is not None:
            snap.macs, snap.aliases = load_mac_table(self.mac_table)
        return snap
