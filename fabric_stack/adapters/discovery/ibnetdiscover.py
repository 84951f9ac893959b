"""``ibnetdiscover`` topology text (rdma-core), with an optional ``--node-name-map``.

One block per node: ``vendid=``/``devid=``/``sysimgguid=``/``switchguid=``,
``caguid=`` or ``rtguid=`` lines, the node line, then one line per connected port::

    Switch  64 "S-fc6a1c0300e4a1c0"  # "MF0;su1-r1-leaf:MQM9700/U1" enhanced port 0 lid 1 lmc 0
    [1]     "H-0c42a10300a1b2c4"[1](c42a10300a1b2c4)  # "su1-node01 mlx5_0" lid 17 4xNDR
    Ca      1 "H-0c42a10300a1b2c4"  # "su1-node01 mlx5_0"
    [1](c42a10300a1b2c4)  "S-fc6a1c0300e4a1c0"[1]  # lid 17 lmc 0 "MF0;su1-r1-leaf:…" lid 1 4xNDR

**Naming and multi-chip systems** are :mod:`fabric_stack.naming.ib_nodes` (shared with
the twin): identity is the node GUID, never the description; a node is named by the
node-name map, by its NodeDescription when that names a host or is unique in the dump,
else ``<description> <guid>``. Switch nodes that share a system image GUID are one
device (a Quantum-X800 Q3400 reports each of its four ASICs as a switch), with
chip-qualified ports (``U2/149``); links between its chips are internal and skipped,
and the per-chip links of one cable fold into one link whose width is the sum of the
chips' widths (the shared assembly is :mod:`~fabric_stack.adapters.discovery._infiniband`,
also used by ``iblinkinfo`` and ``ibdiagnet2.lst``). The Q3400 facts this relies on are
UNVERIFIED (see :data:`Q3400_LAYOUT`).

**Variants accepted**: plain and ``-g`` output (``Chassis N (guid …)``,
``Non-Chassis Nodes``, ``# Spine Nodes``, ``[ext N]`` port suffixes), and ``-p`` (the
ports report, told apart by content and read by
:mod:`~fabric_stack.adapters.discovery.ibnetdiscover_ports`); stray
stderr lines captured with the dump (``src/query_smp.c:195; umad …``,
``ibwarn: …``) are skipped and reported as warnings naming file and line.
Anything else that is not a comment, header, node or port line is an error
naming the line, and a node referenced by a port line but never described in
a block of its own means the dump was cut short.
"""

from __future__ import annotations

import re
from pathlib import Path

from fabric_stack.adapters.discovery._common import Progress, read_text
from fabric_stack.adapters.discovery._infiniband import Q3400_LAYOUT, PortLine, ib_snapshot
from fabric_stack.adapters.discovery.ibnetdiscover_ports import (
    is_ports_report,
    parse_ports_report,
)
from fabric_stack.drift.identity import normalize_guid
from fabric_stack.drift.model import Snapshot
from fabric_stack.drift.speeds import LANE_GBPS
from fabric_stack.errors import InputFileError
from fabric_stack.naming.ib_nodes import IbNode

__all__ = ["LANE_GBPS", "Q3400_LAYOUT", "IbnetdiscoverReader", "load_node_name_map"]

_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]+)"\s*(?:#\s*"([^"]*)"(.*))?$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\]'
    r"(?:\[ext \d+\])?\s*(?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$"
)
_RATE = re.compile(r"(?:^|\s)(\d+)x([A-Z0-9]+|\?\?\?)(?:\s+s=\d+ w=\d+ v=\d+)?\s*(?:\(scp\))?$")
_HEADER = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=(\S+)", re.I)
_GROUPING = re.compile(
    r"^(?:Chassis \d+(?:\s+\(guid 0x[0-9a-fA-F]+\))?|Non-Chassis Nodes|Hostname: .*)$"
)
_STDERR = re.compile(
    r"^(?:[\w./-]+\.c:\d+[;:]|(?:ibwarn|ibpanic|ibnetdiscover|libibnetdisc|ibnd_\w+|"
    r"mad_\w+|umad_\w+)\s*[:\[(]|(?:ERROR|WARNING|Warning):)"
)
_MAP_KEY = re.compile(r"^(?:0x[0-9a-fA-F]+|[SHR]-[0-9a-fA-F]+|[0-9a-fA-F]{16})$")


def load_node_name_map(path: str | Path) -> dict[str, str]:
    """A node-name map: ``<guid> <name>`` lines (``#`` comments) → normalised GUID → name.

    rdma-core's own parser (``util/node_name_map.c``) reads the GUID with
    ``strtoull(…, 0)`` and the name as the first token of the rest of the
    line delimited by ``"`` or ``#`` — so quotes are optional (``0x… "sw1"``
    and ``0x… sw1`` are the same) and a ``#`` ends the name. Accepted here as
    well, beyond rdma-core: ``H-``/``S-``/``R-`` prefixed GUIDs and 16 bare hex
    digits (the form ibnetdiscover prints GUIDs in, used by real maps such as
    ``H-003048c74e4a0000 x5570comp1``; rdma-core itself rejects those lines).
    """
    p = Path(path)
    text = read_text(p)  # the input layer: size limit, UTF-8, symlinks
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        key, _, rest = s.replace("\t", " ").partition(" ")
        name = next((t.strip() for t in re.split(r'["#]', rest) if t.strip()), "")
        if not _MAP_KEY.match(key) or not name:
            raise InputFileError(
                str(p),
                f"expected `<guid> <name>` (guid as 0x…, H-… or 16 hex digits), got {s[:60]!r}",
                lineno,
            )
        out[normalize_guid(key)] = name
    return out


def _parse_lines(
    path: str, text: str, progress: Progress | None
) -> tuple[dict[str, IbNode], list[PortLine], dict[str, tuple[int, str]], list[str]]:
    """Nodes by GUID, port lines as (guid, port, rguid, rport, rate, line), the first
    reference of each remote GUID (to name a truncated dump), and skipped-line warnings."""
    lines = text.split("\n")
    step = 1 << 16  # progress in steps of ~64k lines, sized in bytes
    step_bytes = len(text) * step // max(1, len(lines))
    reported = 0
    nodes: dict[str, IbNode] = {}
    ports: list[PortLine] = []
    referenced: dict[str, tuple[int, str]] = {}
    warnings: list[str] = []
    cur: str | None = None
    sysimg = ""
    port_match, rate_search, append = _PORT.match, _RATE.search, ports.append
    for lineno, line in enumerate(lines, 1):
        if not lineno & (step - 1) and progress is not None:
            progress(step_bytes)
            reported += step_bytes
        if not line or line.isspace():
            cur = None
            continue
        if line[0] == "[":  # by far the most common line: keep this path short
            m = port_match(line)
            if m is None:
                raise InputFileError(
                    path,
                    f"malformed port line {line.strip()[:48]!r} (expected "
                    '[<port>] "<S-|H-|R-><guid>"[<port>] … # … <width><speed>)',
                    lineno,
                )
            if cur is None:
                raise InputFileError(path, "port line outside a node block", lineno)
            rguid = m.group(4).lower()
            if len(rguid) != 16:
                rguid = f"{int(rguid, 16):016x}"
            comment = m.group(7)
            r = rate_search(comment) if comment is not None else None
            if r is None and comment is not None:
                raise InputFileError(
                    path,
                    f"port line without a width/speed like 4xNDR: {line.strip()[:70]!r}",
                    lineno,
                )
            rate = None if r is None else (r.group(1), r.group(2))
            append((cur, int(m.group(1)), rguid, int(m.group(5)), rate, lineno))
            if rguid not in referenced:
                referenced[rguid] = (lineno, comment or "")
            continue
        s = line.strip()
        if s[0] == "#" or _GROUPING.match(s):
            continue
        if s.startswith("sysimgguid="):
            sysimg = normalize_guid(s[11:].split()[0].split("(")[0])
            continue
        if _HEADER.match(s):
            continue
        m = _NODE.match(s)
        if m:
            cur = normalize_guid(m.group(4))
            nodes[cur] = IbNode(m.group(1), cur, m.group(5) or "", lineno, sysimg)
            sysimg = ""
            continue
        if _STDERR.match(s):
            warnings.append(f"warning: {path}:{lineno}: skipped a captured stderr line {s[:70]!r}")
            continue
        raise InputFileError(
            path,
            f"unrecognised line {s[:70]!r} (expected a node, port, comment, "
            "vendid=/devid=/…guid= or -g grouping line)",
            lineno,
        )
    if progress is not None:
        progress(max(0, len(text) - reported))
    return nodes, ports, referenced, warnings


def _check_complete(
    path: str, nodes: dict[str, IbNode], referenced: dict[str, tuple[int, str]]
) -> None:
    if not nodes:
        raise InputFileError(
            path, "no Switch, Ca or Rt node blocks (is this ibnetdiscover output?)"
        )
    for guid, (lineno, comment) in referenced.items():
        if guid not in nodes:
            quoted = re.findall(r'"([^"]*)"', comment)
            desc = quoted[-1] if quoted else ""
            raise InputFileError(
                path,
                f'node 0x{guid} ("{desc}") is referenced but has no block of its own: the '
                "dump looks truncated",
                lineno,
            )


class IbDumpReader:
    """What every reader of one InfiniBand dump file shares: its path, the optional
    node-name map and names-file GUIDs, and reading the text through the input layer.
    Subclasses set :attr:`source` and parse in ``load``."""

    source = ""

    def __init__(
        self,
        path: str | Path,
        node_name_map: str | Path | None = None,
        progress: Progress | None = None,
        guid_names: dict[str, str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.node_name_map = Path(node_name_map) if node_name_map else None
        self.progress = progress
        self.guid_names = dict(guid_names or {})
        """GUID → name from a names file: wins over NodeDescs and the node-name map (the
        fabric's own names may be missing or stale; the GUIDs are what the site recorded)."""

    def _read(self) -> str:
        """The dump's text through the input layer (size limit, UTF-8, symlinks)."""
        return read_text(self.path)

    def _names_and_text(self) -> tuple[dict[str, str], str]:
        """GUID → name (node-name map, then the names file's GUIDs) and the dump's text."""
        names = load_node_name_map(self.node_name_map) if self.node_name_map else {}
        names.update(self.guid_names)
        return names, self._read()


class IbnetdiscoverReader(IbDumpReader):
    """An ``ibnetdiscover`` dump of one InfiniBand subnet (one plane of the compute fabric).

    Plain, ``-g`` and ``-p`` (ports report) output, told apart by content. The whole
    subnet is covered: every planned compute cable of the plane(s) whose switches appear
    should be in it.
    """

    source = "ibnetdiscover"

    def load(self) -> Snapshot:
        """Parse the dump; malformed or truncated input raises InputFileError."""
        path = str(self.path)
        names, text = self._names_and_text()
        if is_ports_report(text):
            nodes, ports, down = parse_ports_report(path, text)
            if self.progress is not None:
                self.progress(len(text))
            note = (
                f"{path}: read as `ibnetdiscover -p` (ports report): identity is the port "
                "GUID, and a multi-chip switch system cannot be folded (no system image GUID)"
            )
            return ib_snapshot(
                self.source, path, nodes, ports, names, self.guid_names, [note], down
            )
        nodes, ports, referenced, warnings = _parse_lines(path, text, self.progress)
        _check_complete(path, nodes, referenced)
        return ib_snapshot(self.source, path, nodes, ports, names, self.guid_names, warnings)
