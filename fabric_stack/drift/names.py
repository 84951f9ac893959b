"""Drift with the site's names: GUIDs and MACs of the names file bind devices, and every
finding names the planned position beside the site's name.

The plan the engine compares with already carries the site's names (the rename step
of :func:`~fabric_stack.topology.build.build_topology`); this module only adds what the
names file knows beyond names: the GUIDs and MACs that identify a device when the
fabric's own name for it is missing or stale.
"""

from __future__ import annotations

from dataclasses import replace

from fabric_stack.drift.identity import is_mac, normalize_mac
from fabric_stack.drift.model import DriftReport, Finding, Snapshot
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


__all__ = ["bind_macs", "bindings", "with_planned"]
