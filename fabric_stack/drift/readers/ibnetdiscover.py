"""``ibnetdiscover`` topology text (rdma-core), with an optional ``--node-name-map``.

One block per node: ``vendid=``/``devid=``/``sysimgguid=``/``switchguid=`` or
``caguid=`` lines, the node line, then one line per connected port::

    Switch  64 "S-fc6a1c0300e4a1c0"  # "MF0;su1-r1-leaf:MQM9700/U1" enhanced port 0 lid 1 lmc 0
    [1]     "H-0c42a10300a1b2c4"[1](c42a10300a1b2c4)  # "su1-node01 mlx5_0" lid 17 4xNDR
    Ca      1 "H-0c42a10300a1b2c4"  # "su1-node01 mlx5_0"
    [1](c42a10300a1b2c4)  "S-fc6a1c0300e4a1c0"[1]  # lid 17 lmc 0 "MF0;su1-r1-leaf:…" lid 1 4xNDR

Quirks handled: GUIDs in parentheses are not zero-padded while ``"H-…"``
names are (both normalised to 16 hex digits); an HCA's NodeDesc is
``"<hostname> mlx5_N"`` (one CA node per HCA port); switch NodeDescs may be
MLNX-OS's ``MF0;<hostname>:<model>/U1``; width/speed is ``4xNDR``, ``2xNDR``,
``4xHDR`` … or ``???`` when unknown. Every cable appears twice (once per
end); the reader keeps one. A node-name-map names nodes by GUID and wins over
NodeDescs; a map name found in the fabric under another GUID is reported as
a GUID change.

The file is checked strictly: any line that is not a comment, a header, a
node or a port line is an error naming the line; a node referenced by a port
line but never described in a block of its own means the dump was cut short.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import InputFileError
from ..identity import normalize_guid, split_hca
from ..model import DeviceSeen, Endpoint, ObservedLink, Snapshot
from ._common import Progress, read_text

LANE_GBPS = {
    "SDR": 2.5,
    "DDR": 5,
    "QDR": 10,
    "FDR10": 10,
    "FDR": 14,
    "EDR": 25,
    "HDR": 50,
    "NDR": 100,
    "XDR": 200,
    "GDR": 400,
}
"""Per-lane data rate, Gb/s, of each InfiniBand speed name (4xNDR = 4 × 100 = 400 Gb/s)."""

_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]+)"\s*(?:#\s*"([^"]*)"(.*))?$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\]'
    r"(?:\(([0-9a-fA-F]+)\))?\s*(?:#\s*(.*))?$"
)
_RATE = re.compile(r"(?:^|\s)(\d+)x([A-Z0-9]+|\?\?\?)\s*$")
_HEADER = re.compile(r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=\S+", re.I)
_MAP_LINE = re.compile(r'^(0x[0-9a-fA-F]+|[0-9a-fA-F]+)\s+"([^"]*)"\s*(?:#.*)?$')


def load_node_name_map(path: str | Path) -> dict[str, str]:
    """``<guid> "<name>"`` lines (``#`` comments) → normalised GUID → name."""
    p = Path(path)
    text = read_text(p)
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _MAP_LINE.match(s)
        if not m:
            raise InputFileError(str(p), f'expected `<guid> "<name>"`, got {s[:60]!r}', lineno)
        out[normalize_guid(m.group(1))] = m.group(2)
    return out


@dataclass(slots=True)
class _Node:
    kind: str
    guid: str
    desc: str
    line: int


def _rate_of(groups: tuple[str, str] | None) -> tuple[str | None, str | None, int | None]:
    """(width, rate, Gb/s) from the ``(width, speed name)`` of a trailing ``4xNDR``."""
    if groups is None:
        return None, None, None
    width, name = groups
    lane = LANE_GBPS.get(name)
    speed = int(int(width) * lane) if lane else None
    return f"{width}x", f"{width}x{name}", speed


class IbnetdiscoverReader:
    """An ``ibnetdiscover`` dump of one InfiniBand subnet (one plane of the compute fabric).

    The whole subnet is covered: every planned compute cable of the plane(s)
    whose switches appear should be in it.
    """

    source = "ibnetdiscover"

    def __init__(
        self,
        path: str | Path,
        node_name_map: str | Path | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.path = Path(path)
        self.node_name_map = Path(node_name_map) if node_name_map else None
        self.progress = progress

    def _parse(self) -> tuple[dict[str, _Node], list[tuple[Any, ...]], dict[str, tuple[int, str]]]:
        """Nodes by GUID, every port line as (guid, port, remote guid, remote port, rate, line),
        and the first reference of each remote GUID (to name a truncated dump)."""
        path = str(self.path)
        text = read_text(self.path)
        lines = text.split("\n")
        # Progress in steps of ~64k lines, sized in bytes so the bar matches the file size.
        step = 1 << 16
        step_bytes = len(text) * step // max(1, len(lines))
        reported = 0
        nodes: dict[str, _Node] = {}
        ports: list[tuple[Any, ...]] = []
        referenced: dict[str, tuple[int, str]] = {}
        cur: str | None = None
        port_match, rate_search, append = _PORT.match, _RATE.search, ports.append
        for lineno, line in enumerate(lines, 1):
            if not lineno & (step - 1) and self.progress is not None:
                self.progress(step_bytes)
                reported += step_bytes
            if not line or line.isspace():
                cur = None
                continue
            first = line[0]
            if first == "[":  # by far the most common line: keep this path short
                m = port_match(line)
                if m is None:
                    raise InputFileError(
                        path,
                        f"malformed port line {line.strip()[:48]!r} (expected "
                        '[<port>] "<S-|H-><guid>"[<port>] … # … <width><speed>)',
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
                append(
                    (
                        cur,
                        int(m.group(1)),
                        rguid,
                        int(m.group(5)),
                        r.groups() if r is not None else None,
                        lineno,
                    )
                )
                if rguid not in referenced:
                    referenced[rguid] = (lineno, comment or "")
                continue
            line = line.strip()
            if first == "#" or _HEADER.match(line):
                continue
            m = _NODE.match(line)
            if not m:
                raise InputFileError(
                    path,
                    f"unrecognised line {line[:70]!r} (expected a node, port, comment or "
                    "vendid=/devid=/…guid= line)",
                    lineno,
                )
            cur = normalize_guid(m.group(4))
            nodes[cur] = _Node(m.group(1), cur, m.group(5) or "", lineno)
        if self.progress is not None:
            self.progress(max(0, len(text) - reported))
        return nodes, ports, referenced

    def load(self) -> Snapshot:
        """Parse the dump; malformed or truncated input raises InputFileError."""
        path = str(self.path)
        names = load_node_name_map(self.node_name_map) if self.node_name_map else {}
        nodes, ports, referenced = self._parse()
        if not nodes:
            raise InputFileError(
                path, "no Switch or Ca node blocks (is this ibnetdiscover output?)"
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

        # Each node's name and, for an HCA, its ibdev: worked out once per node.
        ends: dict[str, tuple[str, str | None, bool]] = {}
        for guid, node in nodes.items():
            label = names.get(guid, node.desc)
            if node.kind == "Switch":
                ends[guid] = (label, None, True)
            else:
                host, ibdev = split_hca(label)
                if ibdev is None:
                    ibdev = split_hca(node.desc)[1]
                ends[guid] = (host, ibdev, False)
        numbers = [str(n) for n in range(1025)]
        rates: dict[Any, tuple[str | None, str | None, int | None]] = {}
        snap = Snapshot(
            source=self.source, origin=path, networks=frozenset({"compute"}), one_plane=True
        )
        seen: set[tuple[str, int, str, int]] = set()
        links = snap.links
        for guid, port, rguid, rport, rate_groups, lineno in ports:
            key = (
                (guid, port, rguid, rport)
                if (guid, port) <= (rguid, rport)
                else (rguid, rport, guid, port)
            )
            if key in seen:
                continue  # every cable is printed from both ends
            seen.add(key)
            rate = rates.get(rate_groups)
            if rate is None:
                rate = rates[rate_groups] = _rate_of(rate_groups)
            ends_ab = []
            for g, p in ((guid, port), (rguid, rport)):
                name, ibdev, switch = ends[g]
                if switch:
                    ends_ab.append(Endpoint(name, numbers[p] if p < 1025 else str(p), "number"))
                elif ibdev is None:
                    ends_ab.append(Endpoint(name, f"port{p}", "unresolved"))
                else:
                    ends_ab.append(Endpoint(name, ibdev if p == 1 else f"{ibdev}/{p}"))
            links.append(
                ObservedLink(
                    ends_ab[0],
                    ends_ab[1],
                    speed_gbps=rate[2],
                    width=rate[0],
                    rate=rate[1],
                    where=f"{path}:{lineno}",
                )
            )
        by_name = {name: guid for guid, name in names.items()}
        for node in nodes.values():
            label = names.get(node.guid, node.desc)
            name = ends[node.guid][0]
            seen_dev = snap.devices.get(name)
            if seen_dev is None:
                seen_dev = snap.devices[name] = DeviceSeen(
                    name, "switch" if node.kind == "Switch" else "server", f"{path}:{node.line}"
                )
            if node.kind == "Switch":
                seen_dev.attrs["guid"] = f"0x{node.guid}"
                # A NodeDesc the map names under another GUID: the switch was replaced.
                for cand in (label, _mf0(label)):
                    if (
                        cand in by_name
                        and by_name[cand] != node.guid
                        and by_name[cand] not in nodes
                    ):
                        seen_dev.expected["guid"] = f"0x{by_name[cand]}"
        return snap


def _mf0(desc: str) -> str:
    m = re.match(r"^MF0;([^:]+):", desc)
    return m.group(1) if m else desc
