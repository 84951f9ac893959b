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
chips' widths. The Q3400 facts this relies on are UNVERIFIED (see :data:`Q3400_LAYOUT`).

**Variants accepted**: plain and ``-g`` output (``Chassis N (guid …)``,
``Non-Chassis Nodes``, ``# Spine Nodes``, ``[ext N]`` port suffixes); stray
stderr lines captured with the dump (``src/query_smp.c:195; umad …``,
``ibwarn: …``) are skipped and reported as warnings naming file and line.
Anything else that is not a comment, header, node or port line is an error
naming the line, and a node referenced by a port line but never described in
a block of its own means the dump was cut short.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fabric_stack.adapters.discovery._common import Progress, read_text
from fabric_stack.drift.identity import normalize_guid
from fabric_stack.drift.model import DeviceSeen, Endpoint, ObservedLink, Snapshot
from fabric_stack.drift.speeds import LANE_GBPS, ib_speed
from fabric_stack.errors import InputFileError
from fabric_stack.naming.ib_nodes import (
    IbNode,
    NodeName,
    cable_key,
    folded_port_label,
    folded_rate,
    internal_link,
    name_nodes,
    port_label,
)
from fabric_stack.naming.nodedesc import parse_nodedesc

__all__ = ["LANE_GBPS", "Q3400_LAYOUT", "IbnetdiscoverReader", "load_node_name_map"]

Q3400_LAYOUT = (
    "UNVERIFIED: a Quantum-X800 Q3400 is reported as four switch nodes U1..U4 sharing one "
    "system image GUID; each front-panel port is carried one lane per ASIC (1xXDR on each "
    "of U1..U4, same port number on every ASIC), so a fully-up 800G port is four 1xXDR "
    "links. Source: NVIDIA's Q3200-RA/Q3400-RA XDR Switch Systems User Manual "
    "(docs.nvidia.com/networking/display/XDRSwitchesHWUM) names the systems but its port "
    "layout was not readable from here; the per-ASIC reporting is taken from real tooling "
    "that reads UFM/ibnetdiscover output of Q3400 fabrics (a UFM link converter that "
    "expands one cable into U1..U4 with the same port number, and an ibnetdiscover "
    "docstring showing 'MF0;mamba-2132:Q3400_RA/U2/RT' with 1xXDR links)."
)
"""What the reader assumes about a Q3400, and why it is marked unverified."""

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


def _rate_of(groups: tuple[str, str] | None) -> tuple[str | None, str | None, Any]:
    """(width, rate, Gb/s) from the ``(width, speed name)`` of a trailing ``4xNDR``."""
    if groups is None:
        return None, None, None
    width, name = groups
    return f"{width}x", f"{width}x{name}", ib_speed(f"{width}x{name}")


def _parse_lines(
    path: str, text: str, progress: Progress | None
) -> tuple[dict[str, IbNode], list[tuple[Any, ...]], dict[str, tuple[int, str]], list[str]]:
    """Nodes by GUID, port lines as (guid, port, rguid, rport, rate, line), the first
    reference of each remote GUID (to name a truncated dump), and skipped-line warnings."""
    lines = text.split("\n")
    step = 1 << 16  # progress in steps of ~64k lines, sized in bytes
    step_bytes = len(text) * step // max(1, len(lines))
    reported = 0
    nodes: dict[str, IbNode] = {}
    ports: list[tuple[Any, ...]] = []
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
            append((cur, int(m.group(1)), rguid, int(m.group(5)), r and r.groups(), lineno))
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


def _endpoint(e: NodeName, port: int) -> Endpoint:
    """One end of a link as the reader reports it (numbers for switches, HCA names for hosts)."""
    label, kind = port_label(e, port)
    return Endpoint(e.device, label, kind)


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

    def load(self) -> Snapshot:
        """Parse the dump; malformed or truncated input raises InputFileError."""
        path = str(self.path)
        names = load_node_name_map(self.node_name_map) if self.node_name_map else {}
        names.update(self.guid_names)
        nodes, ports, referenced, warnings = _parse_lines(path, self._read(), self.progress)
        _check_complete(path, nodes, referenced)
        ends = name_nodes(nodes, names, self.guid_names)
        snap = Snapshot(
            source=self.source, origin=path, networks=frozenset({"compute"}), one_plane=True
        )
        snap.notes.extend(warnings)
        internal = self._links(snap, ports, ends)
        if internal:
            snap.notes.append(
                f"{internal} link(s) inside a multi-chip switch system (between its ASICs, "
                "routers or SHARP aggregation nodes) were not compared"
            )
        if any(e.chip.startswith("U") for e in ends.values()):
            snap.notes.append(Q3400_LAYOUT)
        self._devices(snap, nodes, ends, names)
        return snap

    def _links(
        self, snap: Snapshot, ports: list[tuple[Any, ...]], ends: dict[str, NodeName]
    ) -> int:
        """Append one link per cable (printed from both ends); fold per-chip links. Returns
        the number of internal links skipped."""
        path = str(self.path)
        seen: set[tuple[str, int, str, int]] = set()
        rates: dict[Any, tuple[str | None, str | None, Any]] = {}
        multi: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        chips = {g for g, e in ends.items() if e.chip}
        numbers = [str(n) for n in range(1025)]
        internal = 0
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
            ea, eb = ends[guid], ends[rguid]
            if chips and (guid in chips or rguid in chips):
                if internal_link(ea, eb, guid, rguid):
                    internal += 1
                    continue
                multi.setdefault(cable_key(ea, port, eb, rport), []).append(
                    (ea, port, eb, rport, rate, lineno)
                )
                continue
            # The common case, inlined: a plain switch port number or an HCA name.
            if ea.kind == "switch":
                a = Endpoint(ea.device, numbers[port] if port < 1025 else str(port), "number")
            else:
                a = _endpoint(ea, port)
            if eb.kind == "switch":
                b = Endpoint(eb.device, numbers[rport] if rport < 1025 else str(rport), "number")
            elif eb.hca:
                b = Endpoint(eb.device, eb.hca if rport == 1 else f"{eb.hca}/{rport}")
            else:
                b = _endpoint(eb, rport)
            links.append(
                ObservedLink(
                    a, b, speed_gbps=rate[2], width=rate[0], rate=rate[1], where=f"{path}:{lineno}"
                )
            )
        for group in multi.values():
            links.append(_fold(group, path))
        return internal

    def _devices(
        self,
        snap: Snapshot,
        nodes: dict[str, IbNode],
        ends: dict[str, NodeName],
        names: dict[str, str],
    ) -> None:
        """One DeviceSeen per device (internal routers / aggregation nodes excluded), with
        a switch's GUID, and the GUID the map expects when the switch was replaced."""
        path = str(self.path)
        by_name = {name: guid for guid, name in names.items()}
        for node in nodes.values():
            e = ends[node.guid]
            if e.system and e.kind != "switch":
                continue  # part of a switch system, not a device of its own
            seen_dev = snap.devices.get(e.device)
            if seen_dev is None:
                seen_dev = snap.devices[e.device] = DeviceSeen(
                    e.device, e.kind, f"{path}:{node.line}"
                )
            if e.kind != "switch":
                if e.kind == "server":  # adopt writes them to the names file
                    seen_dev.attrs.setdefault("hca_guids", []).append(f"0x{node.guid}")
                continue
            guid = e.system if e.chip else node.guid
            seen_dev.attrs["guid"] = f"0x{guid}"
            label = names.get(node.guid, node.desc)
            for cand in (label, parse_nodedesc(label).host):
                other = by_name.get(cand)
                if cand and other is not None and other != node.guid and other not in nodes:
                    seen_dev.expected["guid"] = f"0x{other}"


def _fold(group: list[tuple[Any, ...]], path: str) -> ObservedLink:
    """One link from the per-chip links of one cable: widths add up (4 × 1xXDR = 4xXDR)."""
    ea, port, eb, rport, rate, lineno = group[0]
    chips = sorted(
        {g[0].chip for g in group if g[0].chip} | {g[2].chip for g in group if g[2].chip}
    )
    if len(group) == 1:
        a, b = _endpoint(ea, port), _endpoint(eb, rport)
        return ObservedLink(
            a, b, speed_gbps=rate[2], width=rate[0], rate=rate[1], where=f"{path}:{lineno}"
        )
    rate_s = folded_rate(r[1] for _, _, _, _, r, _ in group)
    speed = ib_speed(rate_s) if rate_s else None

    def end(e: NodeName, p: int) -> Endpoint:
        label, kind = folded_port_label(e, p)
        return Endpoint(e.device, label, kind)

    return ObservedLink(
        end(ea, port),
        end(eb, rport),
        speed_gbps=speed,
        width=rate_s[: rate_s.index("x") + 1] if rate_s else None,
        rate=rate_s,
        where=f"{path}:{lineno}",
        attrs={"chips": ",".join(chips), "chip_links": len(group)},
    )
