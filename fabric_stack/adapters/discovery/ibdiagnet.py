"""``ibdiagnet2.lst`` (and opensm's ``opensm-subnet.lst``, the same layout): one link a line.

Each line is the two ends in braces, then the link::

    { CA Ports:02 SystemGUID:0002c90300165e63 NodeGUID:0002c90300165e60 PortGUID:… VenID:000002c9
      DevID:1003 Rev:00000000 {n01 HCA-1} LID:0005 PN:01 } { SW Ports:24 … LID:0002 PN:14 }
      PHY=4x LOG=ACT SPD=2.5

(one line in the file; the real sample is ``ibdiagnet/ibdiagnet2.lst.one-line.txt``, whose
export lost the ``{NodeDescription}``: it is optional here, and a node without one is
named by its GUID). ``PN`` (port number) and ``LID`` are hexadecimal, as opensm writes
them (``%02X``; a site script reading this file says "port is in hex"). ``SystemGUID``
groups multi-chip switch systems, so chassis folding is the shared InfiniBand rule
(:mod:`~fabric_stack.adapters.discovery._infiniband`). ``PHY`` is the width, ``SPD`` the
lane rate (:data:`SPD_NAMES`), ``LOG`` the logical state.
"""

from __future__ import annotations

import re

from fabric_stack.adapters.discovery._infiniband import PortLine, ib_snapshot
from fabric_stack.adapters.discovery.ibnetdiscover import IbDumpReader
from fabric_stack.drift.model import Snapshot
from fabric_stack.errors import InputFileError
from fabric_stack.naming.ib_nodes import IbNode

SPD_NAMES: dict[str, str] = {
    "2.5": "SDR",
    "5": "DDR",
    "10": "QDR",
    "FDR10": "FDR10",
    "14": "FDR",
    "25": "EDR",
    "50": "HDR",
    "100": "NDR",
    "200": "XDR",
}
"""``SPD=`` value → speed name. ``2.5`` is in the real sample; the others follow the
InfiniBand lane rates and are UNVERIFIED (no real sample of them here)."""

_END = (
    r"\{\s*(CA|SW|RT)\s+Ports:\s*([0-9a-fA-F]+)\s+SystemGUID:\s*([0-9a-fA-F]+)\s+"
    r"NodeGUID:\s*([0-9a-fA-F]+)\s+PortGUID:\s*([0-9a-fA-F]+)\s+.*?"
    r"(?:\{(.*?)\}\s*)?LID:\s*([0-9a-fA-F]+)\s+PN:\s*([0-9a-fA-F]+)\s*\}"
)
_LINE = re.compile(
    rf"^{_END}\s*{_END}\s*PHY=(\d+)x\s+LOG=(\w+)\s+SPD=(\S+)\s*$",
)
_KINDS = {"CA": "Ca", "SW": "Switch", "RT": "Rt"}
_STATES = {"ACT": "up", "DWN": "down", "INI": "init", "ARM": "armed"}


def parse_lst(path: str, text: str) -> tuple[dict[str, IbNode], list[PortLine], list[str]]:
    """Nodes by GUID, port lines, and a note for links not ``LOG=ACT``, of a ``.lst`` file."""
    nodes: dict[str, IbNode] = {}
    ports: list[PortLine] = []
    inactive = 0
    for lineno, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _LINE.match(s)
        if m is None:
            raise InputFileError(
                path,
                f"malformed .lst line {s[:60]!r} (expected `{{ <CA|SW> Ports:… SystemGUID:… "
                "NodeGUID:… PortGUID:… [{<desc>}] LID:… PN:… } { … } PHY=4x LOG=ACT SPD=…`)",
                lineno,
            )
        g = m.groups()
        ends = []
        for kind, _ports, sysimg, node_guid, _port_guid, desc, _lid, pn in (g[0:8], g[8:16]):
            guid = f"{int(node_guid, 16):016x}"
            system = f"{int(sysimg, 16):016x}"
            if guid not in nodes:
                nodes[guid] = IbNode(_KINDS[kind], guid, desc or "", lineno, system)
            ends.append((guid, int(pn, 16)))
        width, log, spd = g[16], g[17], g[18]
        if _STATES.get(log, log.lower()) != "up":
            inactive += 1
        name = SPD_NAMES.get(spd)
        rate = (width, name) if name else None
        ports.append((ends[0][0], ends[0][1], ends[1][0], ends[1][1], rate, lineno))
    if not nodes:
        raise InputFileError(path, "no link lines (is this an ibdiagnet2.lst file?)")
    notes = [f"{path}: {inactive} link(s) not LOG=ACT"] if inactive else []
    return nodes, ports, notes


class IbdiagnetReader(IbDumpReader):
    """An ``ibdiagnet2.lst`` of one InfiniBand subnet (one plane of the compute fabric)."""

    source = "ibdiagnet"

    def load(self) -> Snapshot:
        """Parse the file; a malformed line raises InputFileError naming it."""
        path = str(self.path)
        names, text = self._names_and_text()
        if self.progress is not None:
            self.progress(len(text))
        nodes, ports, notes = parse_lst(path, text)
        return ib_snapshot(self.source, path, nodes, ports, names, self.guid_names, notes)


__all__ = ["SPD_NAMES", "IbdiagnetReader", "parse_lst"]
