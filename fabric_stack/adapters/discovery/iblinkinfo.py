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

``iblinkinfo --line`` (``-l``) is read too, told apart by content (its lines start with a
GUID): one line per port, with no node headers, each naming its own port GUID and padded
NodeDescription and the far end's port GUID before its LID (the layout of ``print_port``
in rdma-core ``infiniband-diags/iblinkinfo.c``; the twin's sample
``tests/fixtures/discovery-formats/iblinkinfo/``)::

    0x0000000000200000 "         MF0;leaf-1:MSB7700/U1"      1    1[  ] ==( 4X  2.5 Gbps …
        … Active/  LinkUp)==>  0x0000000000100001      2    1[  ] "node01 mlx5_0" ( )

As the line mode prints no node type, a GUID printed with more than one port number (a
switch's ports share its one port GUID; a CA's ports each have their own) or with an
``MF0;`` description is a switch, any other a CA.
"""

from __future__ import annotations

import re

from fabric_stack.adapters.discovery._infiniband import DownPort, PortLine, ib_snapshot, lane_name
from fabric_stack.adapters.discovery.ibnetdiscover import IbDumpReader
from fabric_stack.drift.model import Snapshot
from fabric_stack.errors import InputFileError
from fabric_stack.naming.ib_nodes import IbNode
from fabric_stack.naming.nodedesc import may_be_aggregation, parse_nodedesc

_HEADER = re.compile(r"^(CA|Switch|Router):\s+(?:0x([0-9a-fA-F]{1,16})\s+)?(.*):\s*$")
_PORT = re.compile(
    r"^\s*(?:0x([0-9a-fA-F]{1,16})\s+)?(\d+)\s+(\d+)\[[^\]]*\]\s+==\((.*?)\)==>\s*"
    r'(?:(\d+)\s+(\d+)\[[^\]]*\]\s+"(.*)"|\[[^\]]*\]\s+"")\s*\((.*)\)\s*$'
)
_LINK = re.compile(r"^\s*(?:(\d+)X\s+([\d.]+)\s+Gbps\s+)?(\w+)/\s*(\w+)\s*$")
_KINDS = {"CA": "Ca", "Switch": "Switch", "Router": "Rt"}
_BLOCK_LINE = re.compile(
    r"^(?:(CA|Switch|Router):[ ]+(?:0x([0-9a-fA-F]{1,16})[ ]+)?([!-~][ -~]*|):[ ]*\r?"
    r"|[ \t]*(?:0x([0-9a-fA-F]{1,16})[ \t]+)?(\d+)[ \t]+(\d+)\[[^\]\n]*\][ \t]+"
    r"==\(([^)\n]*)\)==>[ \t]*"
    r'(?:(\d+)[ \t]+(\d+)\[[^\]\n]*\][ \t]+"([^"\n]*)"|\[[^\]\n]*\][ \t]+"")'
    r'[ \t]*\([^)"\n]*\)[ \t\r]*)$',
    re.M,
)
"""A header or port line of the usual shape, found over the whole text at once (one C
loop instead of a match per line). Narrower than :data:`_HEADER`/:data:`_PORT` (spaces
and tabs only, a header of printable ASCII, no ``)`` in the link, no quote after the
description), so wherever it
matches they give the same fields; a text with a line it misses is read line by line."""
_Fields = tuple[str, str, str, str, str, str, str, str, str, str]
"""A line's :data:`_BLOCK_LINE` groups: header (kind, GUID, description), then port (own
GUID, LID, port, link text, far LID, far port, far description); "" where not given."""
_LINE_MODE = re.compile(
    r'^0x([0-9a-fA-F]{1,16})\s+"(.*?)"\s+(\d+)\s+(\d+)\[[^\]]*\]\s+==\((.*?)\)==>\s*'
    r'(?:0x([0-9a-fA-F]{1,16})\s+(\d+)\s+(\d+)\[[^\]]*\]\s+"(.*)"|\[[^\]]*\]\s+"")'
    r"\s*\((.*)\)\s*$"
)

_Far = tuple[int, str, int, int, str, int, str, "tuple[str, str] | None", int]
"""A port line whose far LID no earlier line carried: (its place in the port lines, own
GUID, own port, far LID, own kind, far port, far description, rate, line)."""


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
    """Nodes by GUID, connected ports, down ports and notes of an ``iblinkinfo`` output
    (node blocks, or one line per port as ``--line`` prints it)."""
    lines = text.split("\n")
    first = next((x for x in lines if x and not x.isspace()), "")
    if first.startswith("0x"):
        return _parse_line_mode(path, lines)
    linenos = [n for n, x in enumerate(lines, 1) if x and not x.isspace()]
    found = _BLOCK_LINE.findall(text)
    if len(found) != len(linenos):
        # Some line is not of the usual shape: read line by line (which names a bad one).
        found = [_fields(path, lines[n - 1], n) for n in linenos]
    return _parse_blocks(path, linenos, found)


def _fields(path: str, line: str, lineno: int) -> _Fields:
    """One header or port line's fields as :data:`_BLOCK_LINE` gives them ("" for a group
    that did not take part), by the per-line patterns; a line of neither shape is an error."""
    h = None if line[0].isspace() else _HEADER.match(line.strip())
    if h is not None:
        return (h.group(1), h.group(2) or "", h.group(3), "", "", "", "", "", "", "")
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
    raw, lid, port, link, rlid, rport, rdesc = m.group(1, 2, 3, 4, 5, 6, 7)
    if rlid is None:
        return ("", "", "", raw or "", lid, port, link, "", "", "")
    return ("", "", "", raw or "", lid, port, link, rlid, rport, rdesc)


def _parse_blocks(
    path: str, linenos: list[int], found: list[_Fields]
) -> tuple[dict[str, IbNode], list[PortLine], list[DownPort], list[str]]:
    """:func:`parse_iblinkinfo` of node blocks, from each non-blank line's fields."""
    nodes: dict[str, IbNode] = {}
    by_lid: dict[int, str] = {}
    ports: list[PortLine] = []
    fars: list[_Far] = []  # resolved at the end, when every node's LID is known
    down: list[DownPort] = []
    kind, guid, desc = "", "", ""
    header_line = 0
    rates: dict[str, tuple[str, str] | None] = {}
    guids: dict[str, str] = {}
    last_lid: tuple[str, str] = ("", "")
    append = ports.append
    for lineno, (hkind, hguid, hdesc, raw, lid, port_s, link, rlid, rport, rdesc) in zip(
        linenos, found, strict=True
    ):
        if hkind:
            kind, desc, header_line = _KINDS[hkind], hdesc.strip(), lineno
            guid = f"{int(hguid, 16):016x}" if hguid else ""
            if guid and guid not in nodes:
                nodes[guid] = IbNode(kind, guid, desc, lineno)
            continue
        if not kind:
            raise InputFileError(path, "port line before any CA:/Switch: header", lineno)
        own = (guids.get(raw) or guids.setdefault(raw, f"{int(raw, 16):016x}")) if raw else guid
        if not own:
            raise InputFileError(path, "CA port line without its 0x<guid>", lineno)
        if (own, lid) != last_lid:  # a switch's lines repeat both: look them up once
            last_lid = (own, lid)
            if own not in nodes:
                nodes[own] = IbNode(kind, own, desc, header_line)
            by_lid.setdefault(int(lid), own)
        port = int(port_s)
        if not rlid:
            down.append((own, port, lineno))
            continue
        if link in rates:
            rate = rates[link]
        else:
            rate = rates[link] = _rate(path, link, lineno)
        far_lid = int(rlid)
        far = by_lid.get(far_lid)  # known once the far end's own lines came (first wins)
        if far is None:
            fars.append((len(ports), own, port, far_lid, kind, int(rport), rdesc, rate, lineno))
        append((own, port, far or "", int(rport), rate, lineno))
    if not nodes:
        raise InputFileError(path, "no CA:/Switch: blocks (is this `iblinkinfo` output?)")
    _resolve(nodes, by_lid, fars, ports)
    _attach_aggregation_nodes(nodes, ports)
    return nodes, ports, down, []


def _parse_line_mode(
    path: str, lines: list[str]
) -> tuple[dict[str, IbNode], list[PortLine], list[DownPort], list[str]]:
    """:func:`parse_iblinkinfo` of ``iblinkinfo --line`` output: each line names both
    ends' port GUIDs; a node's kind comes from its port count and description."""
    own_lines: list[tuple[str, str, int, int]] = []  # (guid, description, port, line)
    linked: list[tuple[str, int, str, int, str, tuple[str, str] | None, int]] = []
    down: list[DownPort] = []
    rates: dict[str, tuple[str, str] | None] = {}
    for lineno, line in enumerate(lines, 1):
        if not line or line.isspace():
            continue
        m = _LINE_MODE.match(line.strip())
        if m is None:
            raise InputFileError(
                path,
                f"unrecognised line {line.strip()[:60]!r} (read as `iblinkinfo --line`, as "
                'the first line is; expected `0x<guid> "<desc>" <lid> <port>[ ] ==( 4X '
                '25.78125 Gbps Active/ LinkUp)==> 0x<guid> <lid> <port>[ ] "<desc>" ( )`)',
                lineno,
            )
        own, port = f"{int(m.group(1), 16):016x}", int(m.group(4))
        own_lines.append((own, m.group(2).strip(), port, lineno))
        if m.group(6) is None:
            down.append((own, port, lineno))
            continue
        text_rate = m.group(5)
        if text_rate not in rates:
            rates[text_rate] = _rate(path, text_rate, lineno)
        far = f"{int(m.group(6), 16):016x}"
        linked.append((own, port, far, int(m.group(8)), m.group(9), rates[text_rate], lineno))
    nodes = _line_mode_nodes(own_lines)
    notes: list[str] = []
    unlisted: list[IbNode] = []
    for own, _port, far, _rport, rdesc, _r, lineno in linked:
        if far not in nodes:
            nodes[far] = IbNode(_far_kind(nodes[own].kind, rdesc), far, rdesc, lineno)
            unlisted.append(nodes[far])
    if unlisted:
        notes.append(
            f"{path}: {len(unlisted)} far end(s) without lines of their own (first: "
            f'0x{unlisted[0].guid} "{unlisted[0].desc}", line {unlisted[0].line}): their '
            "kind taken from the NodeDescription"
        )
    ports: list[PortLine] = [(o, p, f, rp, r, n) for o, p, f, rp, _d, r, n in linked]
    _attach_aggregation_nodes(nodes, ports)
    return nodes, ports, down, notes


def _line_mode_nodes(own_lines: list[tuple[str, str, int, int]]) -> dict[str, IbNode]:
    """The nodes of ``--line`` output by port GUID: a switch when its GUID carries more
    than one port number or its description is a switch one, else a CA."""
    port_numbers: dict[str, set[int]] = {}
    nodes: dict[str, IbNode] = {}
    for guid, desc, port, lineno in own_lines:
        port_numbers.setdefault(guid, set()).add(port)
        if guid not in nodes:
            nodes[guid] = IbNode("Ca", guid, desc, lineno)
    for guid, node in nodes.items():
        if len(port_numbers[guid]) > 1 or _far_kind("Switch", node.desc) == "Switch":
            node.kind = "Switch"
    return nodes


def _attach_aggregation_nodes(nodes: dict[str, IbNode], ports: list[PortLine]) -> None:
    """Make a SHARP aggregation node part of the one switch it hangs off: iblinkinfo has no
    system image GUID, which is how ibnetdiscover tells that the node is inside the switch
    (its link is then internal, not a cable)."""
    candidates = [
        n
        for n in nodes.values()
        if n.kind == "Ca"
        and may_be_aggregation(n.desc)  # the cheap test first: parse only those few
        and parse_nodedesc(n.desc).aggregation
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


def _resolve(
    nodes: dict[str, IbNode], by_lid: dict[int, str], fars: list[_Far], ports: list[PortLine]
) -> None:
    """Fill in the far GUID of the port lines read before their far end's (by its LID), or
    a stand-in keyed by LID for a far end the file has no lines of."""
    for i, own, port, rlid, kind, rport, rdesc, rate, lineno in fars:
        far = by_lid.get(rlid)
        if far is None:
            far = f"lid:{rlid}"
            if far not in nodes:
                nodes[far] = IbNode(_far_kind(kind, rdesc), far, rdesc, lineno)
        ports[i] = (own, port, far, rport, rate, lineno)


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
