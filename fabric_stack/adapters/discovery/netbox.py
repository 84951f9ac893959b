"""NetBox (or Nautobot) cables: the CSV export, or the REST API's JSON list.

CSV columns (NetBox's cable import/export): ``side_a_device, side_a_type,
side_a_name, side_b_device, side_b_type, side_b_name, type, status, label,
color, length, length_unit`` (others such as site or tenant are ignored).
REST: a list of cables (or a page ``{"results": [...]}``) with
``a_terminations`` / ``b_terminations`` lists of ``{object_type:
"dcim.interface", object: {name, device: {name}}}``.

Only interface-to-interface cables are compared; a cable ending on a
front/rear port or a circuit is counted in the notes. A DCIM is a record of
intent, not the fabric: findings say what to edit in NetBox.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabric_stack.adapters.discovery._common import Progress, csv_table, read_json
from fabric_stack.drift.model import DeviceSeen, Endpoint, ObservedLink, Snapshot
from fabric_stack.errors import InputFileError

REQUIRED = ("side_a_device", "side_a_name", "side_b_device", "side_b_name")
"""CSV columns without which a row is not a cable."""

HEADER_ALIASES = {
    "device a": "side_a_device",
    "termination a": "side_a_name",
    "device b": "side_b_device",
    "termination b": "side_b_name",
    "side a": "side_a_device",
    "side b": "side_b_device",
    "status": "status",
    "type": "type",
    "label": "label",
    "length": "length",
    "length unit": "length_unit",
}
"""Column titles of NetBox's cable *list view* Export (the table's verbose names) → the
import-format columns. UNVERIFIED against a real export (none was found; see
../shared/realdata/SOURCES.md): taken from NetBox's CableTable column names."""


def canonical_header(header: list[str]) -> list[str]:
    """Map list-view Export titles (``Device A``, ``Termination A`` …) onto import columns."""
    if any(h in REQUIRED for h in header):
        return header
    return [HEADER_ALIASES.get(h.strip().lower(), h) for h in header]


_MEDIUM = (
    ("mmf", "mmf"),
    ("smf", "smf"),
    ("cat", "copper"),
    ("dac", "copper"),
    ("mrj21", "copper"),
)


def medium_of(cable_type: str) -> str:
    """NetBox cable type → the plan's medium (``mmf-om4`` → ``mmf``); unknown types unchanged."""
    t = cable_type.strip().lower()
    for prefix, medium in _MEDIUM:
        if t.startswith(prefix):
            return medium
    return t


def _attrs(status: str, cable_type: str, label: str, length: str, unit: str) -> dict[str, Any]:
    out: dict[str, Any] = {"status": status.lower() or None, "label": label or None}
    if cable_type:
        out["medium"] = medium_of(cable_type)
        out["type"] = cable_type
    if length:
        out["length"] = f"{length} {unit}".strip()
    return out


def _interface_type(t: str) -> bool:
    return t in ("", "dcim.interface", "interface") or t.strip().lower() in (
        "",
        "dcim.interface",
        "interface",
    )


class NetboxCsvReader:
    """A NetBox cable CSV export. The whole export is in scope (every planned cable)."""

    source = "netbox"

    def __init__(self, path: str | Path, progress: Progress | None = None) -> None:
        self.path = Path(path)
        self.progress = progress

    def load(self) -> Snapshot:
        """Read the CSV; a missing column or a ragged row raises InputFileError."""
        snap = Snapshot(source=self.source, origin=str(self.path), physical=False)
        raw_header, rows = csv_table(self.path, ())
        header = canonical_header(raw_header)
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise InputFileError(
                str(self.path),
                f"missing column {missing[0]!r} (the header has: {', '.join(raw_header)}; "
                "expected NetBox's cable import columns or its list-view Export titles "
                "Device A, Termination A, Device B, Termination B)",
                1,
            )
        col = {h: i for i, h in enumerate(header)}
        ia, ina, ib, inb = (col[c] for c in REQUIRED)
        optional = (
            "side_a_type",
            "side_b_type",
            "status",
            "type",
            "label",
            "length",
            "length_unit",
        )
        ita, itb, ist, ity, ila, ile, ilu = (col.get(c) for c in optional)
        skipped: list[str] = []
        path = str(self.path)
        medium_cache: dict[str, str] = {}
        devices = snap.devices
        for lineno, row in rows:

            def cell(i: int | None, row: list[str] = row) -> str:
                return row[i].strip() if i is not None else ""

            if not (_interface_type(cell(ita)) and _interface_type(cell(itb))):
                skipped.append(f"{path}:{lineno} ({cell(ita)} - {cell(itb)})")
                continue
            a = Endpoint(row[ia].strip(), row[ina].strip())
            b = Endpoint(row[ib].strip(), row[inb].strip())
            if not (a.device and a.port and b.device and b.port):
                if not any(c.strip() for c in row):
                    continue
                raise InputFileError(
                    path, "a cable row needs both devices and both interface names", lineno
                )
            status = cell(ist)
            ctype = cell(ity)
            attrs: dict[str, Any] = {"status": status.lower() or None, "label": cell(ila) or None}
            if ctype:
                medium = medium_cache.get(ctype)
                if medium is None:
                    medium = medium_cache[ctype] = medium_of(ctype)
                attrs["medium"] = medium
                attrs["type"] = ctype
            length = cell(ile)
            if length:
                attrs["length"] = f"{length} {cell(ilu)}".strip()
            where = f"{path}:{lineno}"
            snap.links.append(
                ObservedLink(a, b, state=status or "connected", where=where, attrs=attrs)
            )
            if a.device not in devices:
                devices[a.device] = DeviceSeen(a.device, where=where)
            if b.device not in devices:
                devices[b.device] = DeviceSeen(b.device, where=where)
        _note_skipped(snap, skipped)
        if self.progress is not None:
            self.progress(self.path.stat().st_size)
        return snap


def _cables(doc: Any, path: str) -> tuple[list[Any], str]:
    """The cables of a REST answer: a list, a page ``{"results": …}``, or one cable object."""
    if isinstance(doc, list):
        return doc, "$"
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        return doc["results"], "$.results"
    if isinstance(doc, dict) and any(
        k in doc for k in ("a_terminations", "termination_a", "termination_a_type")
    ):
        return [doc], "$"
    raise InputFileError(
        path, "expected a list of cables, a page with 'results', or one cable object", "$"
    )


def _note_skipped(snap: Snapshot, skipped: list[str]) -> None:
    """One warning line for the cables not compared, naming where the first ones are."""
    if skipped:
        shown = "; ".join(skipped[:3]) + ("; …" if len(skipped) > 3 else "")
        snap.notes.append(
            f"warning: {len(skipped)} cable(s) not between two interfaces were not compared: "
            f"{shown}"
        )


def _sides(cable: dict[str, Any], path: str, jp: str) -> list[list[Endpoint]] | str:
    """Both sides' interface ends, or the termination type of a cable that ends elsewhere.

    NetBox ≥3.3 lists ``a_terminations`` / ``b_terminations`` (``object_type`` and
    ``object``; the ansible module returns them without ``object``); NetBox ≤3.2 and
    Nautobot have one ``termination_a`` / ``termination_b`` with ``termination_a_type``.
    """
    sides: list[list[Endpoint]] = []
    for side in ("a", "b"):
        if f"{side}_terminations" in cable:
            terms = cable.get(f"{side}_terminations")
            where = f"{jp}.{side}_terminations"
            if not isinstance(terms, list) or not terms:
                raise InputFileError(path, f"cable without {side}_terminations", where)
            pairs = [
                (t.get("object_type", "") if isinstance(t, dict) else "", t, f"{where}[{j}]")
                for j, t in enumerate(terms)
            ]
        elif f"termination_{side}" in cable or f"termination_{side}_type" in cable:
            t = cable.get(f"termination_{side}")
            pairs = [(cable.get(f"termination_{side}_type", ""), t, f"{jp}.termination_{side}")]
        else:
            raise InputFileError(
                path, f"cable without {side}_terminations or termination_{side}", jp
            )
        ends = []
        for otype, t, tjp in pairs:
            if not _interface_type(str(otype or "")):
                return str(otype)  # a front/rear port, console port, circuit…: not compared
            obj = t.get("object", t) if isinstance(t, dict) else None
            if not isinstance(obj, dict) or not _name(obj) or not _name(obj.get("device")):
                raise InputFileError(path, "interface termination without a name and device", tjp)
            ends.append(Endpoint(_name(obj.get("device")), _name(obj)))
        sides.append(ends)
    return sides


def _name(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("name") or obj.get("display") or "")
    return str(obj or "")


class NetboxJsonReader:
    """NetBox REST ``/api/dcim/cables/`` JSON (a list, or a page with ``results``)."""

    source = "netbox"

    def __init__(self, path: str | Path, progress: Progress | None = None) -> None:
        self.path = Path(path)
        self.progress = progress

    def load(self) -> Snapshot:
        """Read the JSON; a cable without terminations raises InputFileError with its path."""
        doc = read_json(self.path, self.progress)
        items, base = _cables(doc, str(self.path))
        snap = Snapshot(source=self.source, origin=str(self.path), physical=False)
        skipped: list[str] = []
        for i, cable in enumerate(items):
            jp = base if base == "$" and isinstance(doc, dict) else f"{base}[{i}]"
            if not isinstance(cable, dict):
                raise InputFileError(str(self.path), "expected a cable object", jp)
            sides = _sides(cable, str(self.path), jp)
            if isinstance(sides, str):
                skipped.append(f"{self.path}:{jp} ({sides})")
                continue
            status = cable.get("status")
            status_s = str(status.get("value") if isinstance(status, dict) else status or "")
            ctype = cable.get("type") or ""
            length = cable.get("length")
            length_s = f"{length:g}" if isinstance(length, int | float) else str(length or "")
            unit = cable.get("length_unit")
            unit_s = str((unit.get("value") if isinstance(unit, dict) else unit) or "")
            pairs = (
                list(zip(*sides, strict=True))
                if len(sides[0]) == len(sides[1])
                else [(x, y) for x in sides[0] for y in sides[1]]
            )
            for a, b in pairs:
                snap.links.append(
                    ObservedLink(
                        a,
                        b,
                        state=status_s or "connected",
                        where=f"{self.path}:{jp}",
                        attrs=_attrs(
                            status_s, str(ctype), str(cable.get("label") or ""), length_s, unit_s
                        ),
                    )
                )
                for d in (a.device, b.device):
                    snap.devices.setdefault(d, DeviceSeen(d, where=f"{self.path}:{jp}"))
        _note_skipped(snap, skipped)
        return snap
