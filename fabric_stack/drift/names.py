"""Drift with the site's names: GUIDs and MACs of the names file bind devices, and every
finding names the planned position beside the site's name.

The plan the engine compares with already carries the site's names (the rename step
of :func:`~fabric_stack.topology.build.build_topology`); this module only adds what the
names file knows beyond names: the GUIDs and MACs that identify a device when the
fabric's own name for it is missing or stale.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path

from fabric_stack.drift.identity import is_mac, normalize_mac, unquote
from fabric_stack.drift.model import DriftReport, Endpoint, Finding, Snapshot
from fabric_stack.drift.observation import short_name
from fabric_stack.errors import InputFileError
from fabric_stack.files import inputs
from fabric_stack.spec.model import FabricSpec
from fabric_stack.topology.build import FabricTopology


def bindings(spec: FabricSpec) -> tuple[dict[str, str], dict[str, str]]:
    """(GUID → site name, MAC → site name) from the spec's names file rows."""
    guids: dict[str, str] = {}
    macs: dict[str, str] = {}
    for row in spec.names.rows:
        for g in row.guids:
            guids[g] = row.actual
        for m in row.macs:
            macs[m] = row.actual
    return guids, macs


def bind_macs(snap: Snapshot, macs: dict[str, str]) -> Snapshot:
    """``snap`` with devices a source named only by a MAC (an LLDP chassis id) renamed."""
    if not macs:
        return snap

    def bound(name: str) -> str | None:
        return macs.get(normalize_mac(name)) if is_mac(name) else None

    links = []
    hits = 0
    for link in snap.links:
        a, b = bound(link.a.device), bound(link.b.device)
        if a or b:
            hits += 1
            link = replace(
                link,
                a=replace(link.a, device=a) if a else link.a,
                b=replace(link.b, device=b) if b else link.b,
            )
        links.append(link)
    if hits:
        snap.links = links
        snap.notes.append(f"{hits} link end(s) named by a MAC bound to a device by the names file")
    return snap


PORT_MAP_COLUMNS = ("device", "port", "planned_port")
"""Columns of a port map file (what ``adopt --out`` writes beside the names file)."""


def port_map_path(names_file: str | Path) -> Path:
    """Where the port map of names file ``names.csv`` lives: ``names.ports.csv`` beside it."""
    p = Path(names_file)
    return p.with_name(f"{p.stem}.ports{p.suffix or '.csv'}")


def write_port_map(port_map: dict[tuple[str, str], int]) -> str:
    """A port map CSV: the site's (device, port) → the plan's port number."""
    lines = [",".join(PORT_MAP_COLUMNS)]
    lines += [f"{d},{p},{n}" for (d, p), n in sorted(port_map.items())]
    return "\n".join(lines) + "\n"


def load_port_map(path: str | Path) -> dict[tuple[str, str], int]:
    """The port map in ``path``; a bad line is one InputFileError naming it."""
    p = str(path)
    rows = inputs.csv_reader(inputs.read_text(path), p)
    header = [h.strip().lower() for h in next(rows, [])]
    if tuple(header) != PORT_MAP_COLUMNS:
        raise InputFileError(p, f"expected the header {','.join(PORT_MAP_COLUMNS)}", 1)
    out: dict[tuple[str, str], int] = {}
    for line, raw in enumerate(rows, start=2):
        if not raw or all(not c.strip() for c in raw):
            continue
        if len(raw) != 3 or not raw[2].strip().isdigit() or not raw[0].strip():
            raise InputFileError(
                p, "expected device,port,planned_port (planned_port a port number)", line
            )
        out[(raw[0].strip(), raw[1].strip())] = int(raw[2])
    return out


def port_map_of(spec: FabricSpec) -> dict[tuple[str, str], int]:
    """The port map beside the spec's names file (empty: none there, or no names file)."""
    if not spec.names.file:
        return {}
    path = port_map_path(spec.names.file)
    return load_port_map(path) if path.is_file() else {}


def bind_ports(snap: Snapshot, port_map: dict[tuple[str, str], int]) -> Snapshot:
    """``snap`` with every switch port the port map names renumbered as the plan counts it
    (the site's own leaf↔spine convention, learned by ``adopt``)."""
    if not port_map:
        return snap

    def mapped(end: Endpoint) -> Endpoint:
        n = port_map.get((short_name(end.device), unquote(end.port)))
        return end if n is None else replace(end, port=str(n))

    links = []
    hits = 0
    for link in snap.links:
        a, b = mapped(link.a), mapped(link.b)
        if a is not link.a or b is not link.b:
            hits += 1
            link = replace(link, a=a, b=b)
        links.append(link)
    if hits:
        snap.links = links
        snap.notes.append(f"{hits} link(s) renumbered by the names file's port map")
    return snap


OTHERS_COLUMNS = ("device", "leaf", "port", "why")
"""Columns of the other-hosts file (login / storage hosts adopt lists, drift leaves out)."""


def others_path(names_file: str | Path) -> Path:
    """Where the other hosts of ``names.csv`` are listed: ``names.others.csv`` beside it."""
    p = Path(names_file)
    return p.with_name(f"{p.stem}.others{p.suffix or '.csv'}")


def write_others(rows: list[tuple[str, str, str, str]]) -> str:
    """The other-hosts CSV (device, leaf, port, why)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(OTHERS_COLUMNS)
    w.writerows(rows)
    return out.getvalue()


def others_of(spec: FabricSpec) -> frozenset[str]:
    """The hosts the other-hosts file beside the spec's names file lists (empty: none)."""
    if not spec.names.file or not (path := others_path(spec.names.file)).is_file():
        return frozenset()
    p = str(path)
    rows = inputs.csv_reader(inputs.read_text(path), p)
    header = tuple(h.strip().lower() for h in next(rows, []))
    if header != OTHERS_COLUMNS:
        raise InputFileError(p, f"expected the header {','.join(OTHERS_COLUMNS)}", 1)
    return frozenset(r[0].strip() for r in rows if r and r[0].strip())


def drop_others(snap: Snapshot, others: frozenset[str]) -> Snapshot:
    """``snap`` without the hosts adopt listed as other hosts (and their cables): they are
    known login / controller / storage hosts, no unexpected device."""
    if not others:
        return snap
    keep = [
        link
        for link in snap.links
        if short_name(link.a.device) not in others and short_name(link.b.device) not in others
    ]
    if len(keep) != len(snap.links):
        snap.notes.append(
            f"{len(snap.links) - len(keep)} link(s) of {len(others)} other host(s) "
            "(login / controller / storage, listed by adopt) left out"
        )
        snap.links = keep
    snap.devices = {d: v for d, v in snap.devices.items() if short_name(d) not in others}
    return snap


def with_planned(report: DriftReport, topo: FabricTopology) -> DriftReport:
    """Every finding's summary with the planned position of each renamed device it names."""
    planned = {d.name: d.planned for d in topo.devices if d.planned and d.planned != d.name}
    if not planned:
        return report
    out: list[Finding] = []
    for f in report.findings:
        names: list[str] = [f.switch] if f.switch else []
        for side in (*f.expected, *f.actual):
            names += [side.a_device, side.b_device]
        mine = {n: planned[n] for n in dict.fromkeys(names) if n in planned}
        if mine:
            beside = ", ".join(f"{n} = {p}" for n, p in mine.items())
            f = f.model_copy(
                update={"summary": f"{f.summary} [planned: {beside}]", "planned": mine}
            )
        out.append(f)
    return report.model_copy(update={"findings": out})


__all__ = [
    "PORT_MAP_COLUMNS",
    "bind_macs",
    "bind_ports",
    "bindings",
    "drop_others",
    "load_port_map",
    "others_of",
    "others_path",
    "port_map_of",
    "port_map_path",
    "with_planned",
    "write_others",
    "write_port_map",
]
