"""Drift writes back to NetBox (``fabric-stack drift --netbox URL --write-status``).

What the fabric reported (the physical sources: ibnetdiscover, LLDP, EOS…) becomes each
planned cable's NetBox ``status``: ``connected`` when the fabric shows it as planned,
``planned`` when it is missing or lands elsewhere (NetBox 4.7.3 ``LinkStatusChoices``:
connected, planned, decommissioning). Each finding becomes a journal entry on the devices
it names (``extras/journal-entries``; kind ``danger`` for a missing or miswired cable or a
missing device, ``warning`` otherwise: NetBox's ``JournalEntryKindChoices``), its text
naming the finding's kind, summary and fix and ending in the finding's stable id, so a
second run adds nothing. Only objects the stack owns are touched: tagged ``fabric-stack``
and carrying a ``fabric_kind`` custom field (``Cable`` for cables), which is how the
NetBox inventory marks what it wrote (:mod:`.store`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fabric_stack.adapters.inventory.netbox.client import NetBoxApi
from fabric_stack.adapters.inventory.netbox.mapping import TAG, cf_of
from fabric_stack.drift.model import DriftReport, Finding, Snapshot
from fabric_stack.topology.model import Link

ABSENT = ("missing_link", "wrong_peer")
"""Finding kinds that say a planned cable is not there as planned."""

DANGER = (*ABSENT, "missing_device")
"""Finding kinds written as ``danger`` journal entries (the rest are ``warning``)."""

MARK = "fabric-stack finding "
"""What every journal entry ends with, before the finding id (how a rerun finds it)."""


@dataclass(frozen=True, slots=True)
class WriteBack:
    """What ``--write-status`` changed in NetBox."""

    cables: int
    """Cables whose status was set."""
    entries: int
    """Journal entries added."""
    unchanged: int
    """Owned cables already at their status."""


def fabric_sources(snapshots: Iterable[Snapshot]) -> set[str]:
    """Names of the sources that read the fabric itself (not a DCIM or an inventory)."""
    return {s.source for s in snapshots if s.physical}


def _ends(f: Finding) -> set[frozenset[tuple[str, str]]]:
    return {
        frozenset(((s.a_device, s.a_port), (s.b_device, s.b_port)))
        for s in f.expected
        if s.a_port and s.b_port
    }


def cable_statuses(
    links: Sequence[Link], report: DriftReport, sources: set[str], seen: set[str]
) -> dict[str, str]:
    """Planned cable name → NetBox status from the fabric's findings: ``planned`` when a
    fabric source reports it missing or miswired (or a device of it missing), ``connected``
    when a fabric source saw both its devices and reports nothing against it. A cable no
    fabric source looked at is left out (its status stays)."""
    absent: set[frozenset[tuple[str, str]]] = set()
    gone: set[str] = set()
    for f in report.findings:
        if f.source not in sources:
            continue
        if f.kind in ABSENT:
            absent |= _ends(f)
        elif f.kind == "missing_device":
            gone |= {s.a_device for s in f.expected}
    out: dict[str, str] = {}
    for link in links:
        if link.a_device in gone or link.b_device in gone or link.key() in absent:
            out[link.id] = "planned"
        elif link.a_device in seen and link.b_device in seen:
            out[link.id] = "connected"
    return out


def journal_text(f: Finding) -> str:
    """The journal entry of a finding (Markdown: NetBox renders journal comments)."""
    return f"**{f.kind}** ({f.source}): {f.summary}\n\nFix: {f.fix}\n\n{MARK}{f.id}"


def journal_entries(report: DriftReport, sources: set[str]) -> dict[str, list[Finding]]:
    """Device → the fabric sources' findings that name it (a finding's switch and the
    devices of its expected and actual sides)."""
    out: dict[str, list[Finding]] = {}
    for f in report.findings:
        if f.source not in sources:
            continue
        names = {f.switch} | {s.a_device for s in (*f.expected, *f.actual)}
        names |= {s.b_device for s in (*f.expected, *f.actual)}
        for name in sorted(names - {""}):
            out.setdefault(name, []).append(f)
    return out


def _owned(obj: Mapping[str, Any], kind: str | None = None) -> bool:
    tags = {t.get("slug") if isinstance(t, Mapping) else t for t in obj.get("tags") or []}
    got = cf_of(obj).get("fabric_kind")
    return TAG in tags and bool(got) and (kind is None or got == kind)


def write_back(
    api: NetBoxApi,
    statuses: Mapping[str, str],
    entries: Mapping[str, list[Finding]],
    site: int | None = None,
) -> WriteBack:
    """Set the owned cables' statuses and add the missing journal entries (see the module)."""
    scope: dict[str, Any] = {"site_id": site} if site is not None else {}
    query = {**scope, "cf_fabric_kind": "Cable", "fields": "id,status,tags,custom_fields"}
    cables = api.select("dcim/cables", query)
    patch, same = [], 0
    for c in cables:
        want = statuses.get(str(cf_of(c).get("fabric_name")))
        if not _owned(c, "Cable") or want is None:
            continue
        st = c.get("status")
        if (st.get("value") if isinstance(st, Mapping) else st) == want:
            same += 1
        else:
            patch.append({"id": c["id"], "status": want})
    if patch:
        api.update("dcim/cables", patch)
    added = _journal(api, scope, entries)
    return WriteBack(cables=len(patch), entries=added, unchanged=same)


def _journal(api: NetBoxApi, scope: Mapping[str, Any], entries: Mapping[str, list[Finding]]) -> int:
    if not entries:
        return 0
    names = sorted(entries)
    devices: list[dict[str, Any]] = []
    for i in range(0, len(names), 80):
        devices += api.select(
            "dcim/devices",
            {**scope, "name": names[i : i + 80], "fields": "id,name,tags,custom_fields"},
        )
    owned = {str(d["name"]): int(d["id"]) for d in devices if _owned(d)}
    if not owned:
        return 0
    ids = sorted(owned.values())
    have: set[tuple[int, str]] = set()
    for i in range(0, len(ids), 80):
        for e in api.select(
            "extras/journal-entries",
            {"assigned_object_type": "dcim.device", "assigned_object_id": ids[i : i + 80]},
        ):
            text = str(e.get("comments") or "")
            if MARK in text:
                have.add((int(e.get("assigned_object_id") or 0), text.rsplit(MARK, 1)[1].strip()))
    new = [
        {
            "assigned_object_type": "dcim.device",
            "assigned_object_id": owned[name],
            "kind": "danger" if f.kind in DANGER else "warning",
            "comments": journal_text(f),
            "tags": [{"slug": TAG}],
        }
        for name, found in sorted(entries.items())
        if name in owned
        for f in found
        if (owned[name], f.id) not in have
    ]
    if new:
        api.create("extras/journal-entries", new)
    return len(new)


__all__ = [
    "WriteBack",
    "cable_statuses",
    "fabric_sources",
    "journal_entries",
    "journal_text",
    "write_back",
]
