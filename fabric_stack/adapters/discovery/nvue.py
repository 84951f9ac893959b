"""NVIDIA Cumulus Linux NVUE ``nv show interface -o json``: a directory, one file per switch.

The document is an object keyed by interface name (real sample
``nvue/nvue-show-interface.cumulus56.json``, Cumulus Linux 5.6)::

    {"eth0": {"type": "eth",
              "link": {"speed": "1G", "state": {"up": {}}, …},
              "lldp": {"neighbor": {"leaf1.lab": {
                  "chassis": {"chassis-id": "fc:59:c0:3d:4c:cb", "system-name": "leaf1.lab"},
                  "port": {"name": "Ethernet2", "type": "ifname", "description": ""}}}}},
     "swp1": {"type": "swp", "link": {"state": {"down": {}}, …}}}

Each LLDP neighbour is a link from the file's switch (the file name without its ending);
``link.speed`` (``1G``, ``400G``, ``100M``) is the link speed of a port that is up; a
switch port (``type: swp``) with no neighbour is a port state (up or down), so drift can
say *link up, no neighbour*. A file that is not JSON is named in a note and skipped.
"""

from __future__ import annotations

import re
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
from fabric_stack.drift.model import (
    DeviceSeen,
    Endpoint,
    ObservedLink,
    PortState,
    PortType,
    Snapshot,
)
from fabric_stack.drift.speeds import Speed
from fabric_stack.errors import InputFileError

_SPEED = re.compile(r"^(\d+(?:\.\d+)?)\s*([MGT])(?:b/?s|bps)?$", re.I)
_UNIT = {"M": 0.001, "G": 1, "T": 1000}


def nvue_speed(text: object) -> Speed | None:
    """``400G`` → 400, ``100M`` → 0.1, ``2.5G`` → 2.5; None for anything else."""
    m = _SPEED.match(str(text or "").strip())
    if m is None:
        return None
    value = float(m.group(1)) * _UNIT[m.group(2).upper()]
    return int(value) if value.is_integer() else round(value, 3)


def parse_nvue(
    doc: Any, hostname: str, path: str, macs: dict[str, str] | None = None
) -> tuple[list[ObservedLink], list[PortState]]:
    """Links and port states of one ``nv show interface -o json`` document of ``hostname``."""
    if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
        raise InputFileError(
            path,
            "expected an object of interfaces, each an object (`nv show interface -o json`)",
            "$",
        )
    links: list[ObservedLink] = []
    states: list[PortState] = []
    for intf, entry in doc.items():
        link = entry.get("link") if isinstance(entry.get("link"), dict) else {}
        state = link.get("state")
        up = isinstance(state, dict) and "up" in state
        speed = nvue_speed(link.get("speed")) if up else None
        lldp = entry.get("lldp")
        neighbours = lldp.get("neighbor") if isinstance(lldp, dict) else None
        if neighbours is not None and not isinstance(neighbours, dict):
            raise InputFileError(
                path, "expected an object of neighbours", f"$.{intf}.lldp.neighbor"
            )
        for key, n in (neighbours or {}).items():
            jp = f"$.{intf}.lldp.neighbor.{key}"
            chassis = n.get("chassis") if isinstance(n, dict) else None
            port = n.get("port") if isinstance(n, dict) else None
            if not isinstance(port, dict) or not port.get("name"):
                raise InputFileError(path, "neighbour without port.name", jp)
            chassis = chassis if isinstance(chassis, dict) else {}
            device = chassis.get("system-name") or key
            if macs is not None and chassis.get("chassis-id"):
                macs[str(device)] = str(chassis["chassis-id"])
            ptype: PortType = "mac" if port.get("type") == "mac" else "name"
            links.append(
                ObservedLink(
                    a=Endpoint(hostname, intf),
                    b=Endpoint(
                        str(device), str(port["name"]), ptype, str(port.get("description") or "")
                    ),
                    speed_gbps=speed,
                    where=f"{path}:{jp}",
                )
            )
        if not neighbours and entry.get("type") == "swp":
            states.append(PortState(Endpoint(hostname, intf), up, speed, f"{path}:$.{intf}.link"))
    return links, states


class NvueReader(DirectoryReader):
    """NVUE ``nv show interface -o json`` outputs, one file per switch (each covered)."""

    source = "nvue"

    def load(self) -> Snapshot:
        """Read every file; a malformed one raises InputFileError naming its JSON path."""
        snap = Snapshot(source=self.source, origin=str(self.directory))
        hosts = []
        for path in discovery_files(self.directory, "`nv show interface -o json`"):
            text = read_text(path)
            if text.lstrip()[:1] != "{":
                snap.notes.append(skipped(path, "NVUE JSON (`nv show interface -o json`)"))
                continue
            host = host_of(path)
            hosts.append(host)
            if self.progress is not None:
                self.progress(len(text))
            links, states = parse_nvue(json_of(text, path), host, str(path), snap.chassis_macs)
            snap.links.extend(links)
            snap.port_states.extend(states)
            snap.devices[host] = DeviceSeen(host, where=str(path))
        return finish_directory(snap, hosts, self.directory, "NVUE JSON file", self.mac_table)


__all__ = ["NvueReader", "nvue_speed", "parse_nvue"]
