"""lldpd's text forms and SONiC's LLDP tables, each into the links of one device.

* ``lldpctl -f keyvalue`` (real sample ``lldpd/lldpctl-keyvalue-mozilla-2if.txt``)::

      lldp.eth0.chassis.name=switch1.vlan.dc.mozilla.com
      lldp.eth0.port.ifname=Gi3/0/9

  keys are ``lldp.<local interface>.<section>…``; the interface name may itself hold
  dots (``eth0.100``), so it ends at the first known section (``via``, ``chassis``,
  ``port``…). A second ``via`` for one interface starts its next neighbour.
* ``lldpctl`` plain text, which SONiC's ``show lldp neighbors`` prints unchanged (real
  sample ``sonic/sonic-show-lldp-neighbors-microsoft-owr01.txt``): blocks between dash
  lines, ``Interface: eth0, via: LLDP, …``, ``SysName:``, ``ChassisID: mac …``,
  ``PortID: ifname Ethernet5/35/1`` (or ``mac …``, ``local …``), ``PortDescr:``,
  ``MAU oper type:``.
* SONiC ``show lldp table`` (sonic-utilities ``scripts/lldpshow``, summary view)::

      Capability codes: (R) Router, (B) Bridge, (O) Other
      LocalPort    RemoteDevice  RemotePortID  Capability  RemotePortDescr
      -----------  ------------  ------------  ----------  ---------------
      Ethernet0    leaf-1        Ethernet1/51  BR          spine-1:Ethernet0
      --------------------------------------------------
      Total entries displayed:  1

  columns are cut at the header's column starts (a description may hold spaces, a
  capability may be empty); the total, when printed, must match the rows. No real
  sample: the layout is the docstring of ``lldpshow`` in sonic-net/sonic-utilities.

As for lldpd's JSON (:mod:`~fabric_stack.adapters.discovery.lldp`), a port id that is a
MAC address keeps the port description as a hint, and the neighbour's chassis MAC is
collected by its name.
"""

from __future__ import annotations

import re
from pathlib import Path

from fabric_stack.drift.model import Endpoint, ObservedLink, PortType
from fabric_stack.drift.speeds import mau_speed
from fabric_stack.errors import InputFileError

_KV = re.compile(
    r"^lldp\.(.+?)\.(via|rid|age|chassis|port|vlan|ppvid|pi|lldp-med|unknown-tlvs|unknown-tlv)"
    r"(?:\.([^=]*))?=(.*)$"
)
_TEXT_IFACE = re.compile(r"^\s*Interface:\s+([^,\s]+)\s*,")
_TEXT_FIELD = re.compile(r"^\s*(SysName|ChassisID|PortID|PortDescr|MAU oper type):\s*(.*?)\s*$")
_TABLE_HEADER = re.compile(r"^\s*LocalPort\s+RemoteDevice\s+RemotePortID\b")
_TOTAL = re.compile(r"^\s*Total entries displayed:\s*(\d+)\s*$")
_PORT_KINDS = ("ifname", "mac", "local", "ip", "unhandled")


def looks_like_keyvalue(text: str) -> bool:
    """True when the first line that is not blank is ``lldp.<iface>.<key>=…``."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return _KV.match(first.strip()) is not None


def looks_like_text(text: str) -> bool:
    """True for ``lldpctl`` plain text / SONiC ``show lldp neighbors``."""
    head = text[:4096]
    return "LLDP neighbors:" in head or any(_TEXT_IFACE.match(ln) for ln in head.splitlines())


def looks_like_table(text: str) -> bool:
    """True for SONiC ``show lldp table`` (its header line)."""
    return any(_TABLE_HEADER.match(ln) for ln in text[:4096].splitlines())


class _Neighbour:
    """One neighbour being read (local interface, chassis, port), with its first line."""

    __slots__ = ("chassis_mac", "descr", "device", "kind", "line", "local", "mau", "port")

    def __init__(self, local: str, line: int) -> None:
        self.local, self.line = local, line
        self.device = self.chassis_mac = self.port = self.descr = self.mau = ""
        self.kind = ""

    def link(self, hostname: str, path: Path, macs: dict[str, str] | None) -> ObservedLink:
        """The observed link; a neighbour without a name/chassis id or port id is an error."""
        device = self.device or self.chassis_mac
        if not device:
            raise InputFileError(str(path), "neighbour without a chassis name or id", self.line)
        if not self.port:
            raise InputFileError(str(path), "neighbour without a port id", self.line)
        if macs is not None and self.device and self.chassis_mac:
            macs[self.device] = self.chassis_mac
        ptype: PortType = "mac" if self.kind == "mac" else "name"
        return ObservedLink(
            a=Endpoint(hostname, self.local),
            b=Endpoint(device, self.port, ptype, self.descr),
            speed_gbps=mau_speed(self.mau),
            where=f"{path}:{self.line}",
        )


def parse_keyvalue(
    text: str, hostname: str, path: Path, macs: dict[str, str] | None = None
) -> list[ObservedLink]:
    """Observed links of one ``lldpctl -f keyvalue`` output from device ``hostname``."""
    found: list[_Neighbour] = []
    current: dict[str, _Neighbour] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        m = _KV.match(s)
        if m is None:
            if found and "=" not in s:
                continue  # a multi-line value (a system description) goes on
            raise InputFileError(
                str(path),
                f"not an `lldpctl -f keyvalue` line {s[:60]!r} (expected lldp.<iface>.<key>=…)",
                lineno,
            )
        iface, section, rest, value = m.groups()
        n = current.get(iface)
        if n is None or (section == "via" and (n.device or n.port)):
            n = current[iface] = _Neighbour(iface, lineno)
            found.append(n)
        key = f"{section}.{rest}" if rest else section
        if key == "chassis.name":
            n.device = value.strip()
        elif key == "chassis.mac":
            n.chassis_mac = value.strip()
        elif section == "port" and rest in _PORT_KINDS:
            n.kind, n.port = rest, value.strip()
        elif key == "port.descr":
            n.descr = value.strip()
        elif key == "port.auto-negotiation.current":
            n.mau = value.strip()
    return [n.link(hostname, path, macs) for n in found]


def parse_text(
    text: str, hostname: str, path: Path, macs: dict[str, str] | None = None
) -> list[ObservedLink]:
    """Observed links of ``lldpctl`` plain text or SONiC ``show lldp neighbors``."""
    found: list[_Neighbour] = []
    n: _Neighbour | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _TEXT_IFACE.match(line)
        if m is not None:
            n = _Neighbour(m.group(1), lineno)
            found.append(n)
            continue
        f = _TEXT_FIELD.match(line)
        if f is None or n is None:
            continue
        field, value = f.groups()
        kind, _, rest = value.partition(" ")
        if field == "SysName":
            n.device = value
        elif field == "ChassisID" and kind == "mac":
            n.chassis_mac = rest.strip()
        elif field == "ChassisID" and not n.chassis_mac:
            n.chassis_mac = rest.strip() if kind in _PORT_KINDS else value
        elif field == "PortID":
            n.kind, n.port = (kind, rest.strip()) if kind in _PORT_KINDS else ("", value)
        elif field == "PortDescr":
            n.descr = value
        else:
            n.mau = value
    return [x.link(hostname, path, macs) for x in found]


def parse_table(text: str, hostname: str, path: Path) -> list[ObservedLink]:
    """Observed links of SONiC ``show lldp table`` (see the module docstring)."""
    lines = text.splitlines()
    head = next((i for i, ln in enumerate(lines) if _TABLE_HEADER.match(ln)), None)
    if head is None:
        raise InputFileError(str(path), "no `LocalPort RemoteDevice RemotePortID` header", 1)
    header = lines[head]
    starts = [m.start() for m in re.finditer(r"\S+", header)]
    names = header.split()
    out: list[ObservedLink] = []
    total: tuple[int, int] | None = None
    for lineno, line in enumerate(lines[head + 1 :], head + 2):
        if not line.strip() or set(line.strip()) <= {"-", " "}:
            continue
        t = _TOTAL.match(line)
        if t is not None:
            total = (int(t.group(1)), lineno)
            continue
        cells = {
            name: line[a:b].strip()
            for name, a, b in zip(names, starts, [*starts[1:], len(line) + 1], strict=True)
        }
        local, device, port = (cells.get(k, "") for k in names[:3])
        if not local or not device or not port or " " in local:
            raise InputFileError(
                str(path),
                f"`show lldp table` row {line.strip()[:60]!r}: expected LocalPort, "
                "RemoteDevice and RemotePortID under their header columns",
                lineno,
            )
        out.append(
            ObservedLink(
                a=Endpoint(hostname, local),
                b=Endpoint(device, port, "name", cells.get("RemotePortDescr", "")),
                where=f"{path}:{lineno}",
            )
        )
    if total is not None and total[0] != len(out):
        raise InputFileError(
            str(path),
            f"says {total[0]} entries but lists {len(out)} (truncated or edited?)",
            total[1],
        )
    return out


__all__ = [
    "looks_like_keyvalue",
    "looks_like_table",
    "looks_like_text",
    "parse_keyvalue",
    "parse_table",
    "parse_text",
]
