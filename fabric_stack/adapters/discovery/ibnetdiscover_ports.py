"""``ibnetdiscover -p`` (the ports report): one line per port, read into the shared IB model.

The layout (rdma-core ``infiniband-diags/ibnetdiscover.c``, ports report; the real sample
is ``ibnetdiscover/ibnetdiscover-p-ports.ncar-docstring.txt``; the first line wrapped here)::

    CA    44  1 0x0002c9030045f121 4x FDR - SW     2 17 0x0002c903006e1430
          ( 'localhost HCA-1' - 'MF0;js01ib2:SX60XX/U1' )
    SW     2 19 0x0002c903006e1430 4x SDR                                    'MF0;js01ib2:SX60XX/U1'

node type (``CA``/``SW``/``RT``), LID, port number, port GUID, width and speed, then
either `` - `` and the far end (type, LID, port, GUID, both NodeDescriptions in
parentheses) or, for a port with nothing on it, the node's own NodeDescription. A
cable is printed from both ends. The GUID is the *port* GUID (a switch's ports share
the node GUID; an HCA port has its own), and there is no system image GUID, so a
multi-chip switch system is not folded (the reader says so in a note).
"""

from __future__ import annotations

import re

from fabric_stack.adapters.discovery._infiniband import DownPort, PortLine
from fabric_stack.errors import InputFileError
from fabric_stack.naming.ib_nodes import IbNode

_KINDS = {"CA": "Ca", "SW": "Switch", "RT": "Rt"}
_END = r"(CA|SW|RT)\s+(\d+)\s+(\d+)\s+0x([0-9a-fA-F]{1,16})"
_LINE = re.compile(
    rf"^{_END}\s+(\d+)x\s+(\S+)\s+"
    rf"(?:-\s+{_END}\s+\(\s*'(.*)'\s+-\s+'(.*)'\s*\)|'(.*)')\s*$"
)
_START = re.compile(rf"^{_END}\s+\d+x\s")


def is_ports_report(text: str) -> bool:
    """True when the first line that is not blank or a comment is a ``-p`` port line."""
    for line in text.split("\n", 64)[:64]:
        s = line.strip()
        if s and not s.startswith("#"):
            return _START.match(s) is not None
    return False


def _node(nodes: dict[str, IbNode], kind: str, guid: str, desc: str, lineno: int) -> str:
    key = f"{int(guid, 16):016x}"
    if key not in nodes:
        nodes[key] = IbNode(_KINDS[kind], key, desc, lineno)
    return key


def parse_ports_report(
    path: str, text: str
) -> tuple[dict[str, IbNode], list[PortLine], list[DownPort]]:
    """Nodes by GUID, connected ports and unconnected ports of a ``-p`` report.

    A line that is not a port line (nor blank or a ``#`` comment) is an error naming it.
    """
    nodes: dict[str, IbNode] = {}
    ports: list[PortLine] = []
    down: list[DownPort] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _LINE.match(s)
        if m is None:
            raise InputFileError(
                path,
                f"malformed `ibnetdiscover -p` line {s[:60]!r} (expected <CA|SW|RT> <lid> "
                "<port> 0x<guid> <width>x <speed> then - <far end> ( '<desc>' - '<desc>' ) "
                "or '<desc>')",
                lineno,
            )
        kind, _lid, port, guid, width, speed = m.group(1, 2, 3, 4, 5, 6)
        if m.group(7) is None:
            own = _node(nodes, kind, guid, m.group(13), lineno)
            down.append((own, int(port), lineno))
            continue
        rkind, _rlid, rport, rguid, desc, rdesc = m.group(7, 8, 9, 10, 11, 12)
        own = _node(nodes, kind, guid, desc, lineno)
        far = _node(nodes, rkind, rguid, rdesc, lineno)
        rate = None if speed == "???" else (width, speed)
        ports.append((own, int(port), far, int(rport), rate, lineno))
    if not nodes:
        raise InputFileError(path, "no port lines (is this `ibnetdiscover -p` output?)")
    return nodes, ports, down


__all__ = ["is_ports_report", "parse_ports_report"]
