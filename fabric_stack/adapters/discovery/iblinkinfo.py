"""``iblinkinfo`` (infiniband-diags): one block per node, one line per port, by LID.

The layout, as the real samples show it (``iblinkinfo/iblinkinfo-msb7700-edr-2node.txt``,
``iblinkinfo-infiniscale-iv-4node.txt``; runs of spaces shortened here)::

    CA: n02 HCA-1:
      0xec0d9a03003d62be  4  1[  ] ==( 4X 25.78125 Gbps Active/ LinkUp)==>  2 17[  ] "MF0;SB…" ( )
    Switch: 0x506b4b0300820910 MF0;SB7700:MSB7700/U1:
       2  1[  ] ==(                Down/ Polling)==>        [  ] "" ( )
       2 18[  ] ==( 4X 25.78125 Gbps Active/ LinkUp)==>  1  1[  ] "n01 HCA-1" ( )

A switch block names its node GUID in its header, a CA's GUID leads each of its port
lines; a port line gives its own LID and port, the link (width, lane rate in Gb/s,
logical/physical state) and the far end by LID, port and NodeDescription. The far end's
GUID is the node whose own lines carry that LID; a far end the file has no block for
(an excerpt, or a node filtered out) is named by its NodeDescription and keyed by its
LID, and the reader says so in a note. Naming and chassis folding are the shared
InfiniBand rules (:mod:`~fabric_stack.adapters.discovery._infiniband`), so a fabric reads
the same as from ``ibnetdiscover``; as iblinkinfo prints no system image GUID, a SHARP
aggregation node is taken to be inside the one switch it hangs off. ``Down`` ports become
port states (link down). The lane rates are
:data:`~fabric_stack.adapters.discovery._infiniband.LANE_NAMES`.
"""

from __future__ import annotations

import re

from fabric_stack.adapters.discovery._infiniband import DownPort, PortLine, ib_snapshot, lane_name
from fabric_stack.adapters.discovery.ibnetdiscover import IbDumpReader
from fabric_stack.drift.model import Snapshot
from fabric_stack.errors import InputFileError
from fabric_stack.naming.ib_nodes import IbNode
from fabric_stack.naming.nodedesc import parse_nodedesc

_HEADER = re.compile(r"^(CA|Switch|Router):\s+(?:0x([0-9a-fA-F]{1,16})\s+)?(.*):\s*$")
_PORT = re.compile(
    r"^\s*(?:0x([0-9a-fA-F]{1,16})\s+)?(\d+)\s+(\d+)\[[^\]]*\]\s+==\((.*?)\)==>\s*"
    r'(?:(\d+)\s+(\d+)\[[^\]]*\]\s+"(.*)"|\[[^\]]*\]\s+"")\s*\((.*)\)\s*$'
)
_LINK = re.compile(r"^\s*(?:(\d+)X\s+([\d.]+)\s+Gbps\s+)?(\w+)/\s*(\w+)\s*$")
_KINDS = {"CA": "Ca", "Switch": "Switch", "Router": "Rt"}

_Far = tuple[str, int, int, str, int, str, "tuple[str, str] | None", int]
"""(own GUID, own port, far LID, own kind, far port, far description, rate, line)."""


def _far_kind(own_kind: str, desc: str) -> str:
    """The kind of a far end the file does not describe: a CA's peer is a switch; a
    switch's peer is a switch when its description is an MLNX-OS switch one (``MF0;``)."""
    if own_kind != "Switch":
        return "Switch"
    return "Switch" if parse_nodedesc(desc).chip or desc.startswith("MF0;") else "Ca"


def _rate(path: str, text: str, lineno: int) -> tuple[str, str] | None:
    """(width digits, speed name) of a link as iblinkinfo prints it; None for no width or an
    unknown lane rate; a link text of another shape is an error naming the line."""
    link = _LINK.match(text)
    if link is None:
        raise InputFileError(
            path,
            f"link {text.strip()!r}: expected `<width>X <lane Gb/s> Gbps "
            "<state>/ <phys state>` or `<state>/ <phys state>`",
            lineno,
        )
    if not link.group(1):
        return None
    name = lane_name(link.group(2))
    return (link.group(1), name) if name else None


def parse_iblinkinfo(
    path: str, text: str
) -> tuple[dict[str, IbNode], list[PortLine], list[DownPort], list[str]]:
    """Nodes by GUID, connected ports, down ports and notes of an ``iblinkinfo`` output."""
    nodes: dict[str, IbNode] = {}
    by_lid: dict[int, str] = {}
    fars: list[_Far] = []
    down: list[DownPort] = []
    kind, guid, desc = "", "", ""
    header_line = 0
    rates: dict[str, tuple[str, str] | None] = {}
    guids: dict[str, str] = {}
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        # A header starts its line; port lines are indented (tried first: most lines).
        h = None if line[0].isspace() else _HEADER.match(line.strip())
        if h is not None:
            kind, desc, header_line = _KINDS[h.group(1)], h.group(3).strip(), lineno
            guid = f"{int(h.group(2), 16):016x}" if h.group(2) else ""
            if guid:
                nodes.setdefault(guid, IbNode(kind, guid, desc, lineno))
            continue
        m = _PORT.match(line)
        if m is None:
            raise InputFileError(
                path,
                f"unrecognised line {line.strip()[:60]!r} (expected a `CA: <desc>:` or "
                "`Switch: 0x<guid> <desc>:` header or a port line "
                "`<lid> <port>[ ] ==( 4X 25.78125 Gbps Active/ LinkUp)==> <lid> <port>[ ] "
                '"<desc>" ( )`)',
                lineno,
            )
        if not kind:
            raise InputFileError(path, "port line before any CA:/Switch: header", lineno)
        raw = m.group(1)
        if raw is None:
            own = guid
        else:
            own = guids.get(raw) or guids.setdefault(raw, f"{int(raw, 16):016x}")
        if not own:
            raise InputFileError(path, "CA port line without its 0x<guid>", lineno)
        nodes.setdefault(own, IbNode(kind, own, desc, header_line))
        by_lid.setdefault(int(m.group(2)), own)
        port = int(m.group(3))
        if m.group(5) is None:
            down.append((own, port, lineno))
            continue
        text_rate = m.group(4)
        if text_rate in rates:
            rate = rates[text_rate]
        else:
            rate = rates[text_rate] = _rate(path, text_rate, lineno)
        fars.append((own, port, int(m.group(5)), kind, int(m.group(6)), m.group(7), rate, lineno))
    if not nodes:
        raise InputFileError(path, "no CA:/Switch: blocks (is this `iblinkinfo` output?)")
    ports = _resolve(nodes, by_lid, fars)
    _attach_aggregation_nodes(nodes, ports)
    return nodes, ports, down, []


def _attach_aggregation_nodes(nodes: dict[str, IbNode], ports: list[PortLine]) -> None:
    """Make a SHARP aggregation node part of the one switch it hangs off: iblinkinfo has no
    system image GUID, which is how ibnetdiscover tells that the node is inside the switch
    (its link is then internal, not a cable)."""
    candidates = [
        n for n in nodes.values() if n.kind == "Ca" and parse_nodedesc(n.desc).aggregation
    ]
    if not candidates:
        return
    peers: dict[str, set[str]] = {}
    for guid, _port, rguid, _rport, _rate, _line in ports:
        peers.setdefault(guid, set()).add(rguid)
        peers.setdefault(rguid, set()).add(guid)
    for node in candidates:
        (switch, *more) = peers.get(node.guid, {""})
        if not more and switch in nodes and nodes[switch].kind == "Switch":
            nodes[switch].sysimg = nodes[switch].sysimg or switch
            node.sysimg = nodes[switch].sysimg


def _resolve(nodes: dict[str, IbNode], by_lid: dict[int, str], fars: list[_Far]) -> list[PortLine]:
    """The port lines with each far end's GUID (by its LID), or a stand-in keyed by LID."""
    ports: list[PortLine] = []
    for own, port, rlid, kind, rport, rdesc, rate, lineno in fars:
        far = by_lid.get(rlid)
        if far is None:
            far = f"lid:{rlid}"
            if far not in nodes:
                nodes[far] = IbNode(_far_kind(kind, rdesc), far, rdesc, lineno)
        ports.append((own, port, far, rport, rate, lineno))
    return ports


class IblinkinfoReader(IbDumpReader):
    """An ``iblinkinfo`` output of one InfiniBand subnet (one plane of the compute fabric)."""

    source = "iblinkinfo"

    def load(self) -> Snapshot:
        """Parse the output; a malformed line raises InputFileError naming it."""
        path = str(self.path)
        names, text = self._names_and_text()
        if self.progress is not None:
            self.progress(len(text))
        nodes, ports, down, notes = parse_iblinkinfo(path, text)
        undescribed = [n for n in nodes.values() if n.guid.startswith("lid:")]
        if undescribed:
            first = undescribed[0]
            notes.append(
                f"{path}: {len(undescribed)} far end(s) without a block of their own (first: "
                f'{first.guid} "{first.desc}", line {first.line}): named by their '
                "NodeDescription, no GUID"
            )
        return ib_snapshot(self.source, path, nodes, ports, names, self.guid_names, notes, down)


__all__ = ["IblinkinfoReader", "parse_iblinkinfo"]
