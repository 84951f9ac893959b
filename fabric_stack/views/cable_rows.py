"""The cable rows of the ``csv`` and ``json`` cabling exports: columns, which cables an
export holds, the plant's physical columns, and the writers (split from
:mod:`fabric_stack.views.exports`, which re-exports every public name here).

The writers build the text from fragments: a device's name and place are encoded once per
device, a port name once per name, the plant's columns once per shared run spec, and every
repeated fragment is checked for control characters once, so a 131,072-GPU plan's ~1M rows
are written without a second pass over the text (#43, bench/bench_tiers.py).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from json.encoder import encode_basestring
from operator import attrgetter
from typing import Any, Literal

from fabric_stack.errors import SpecError
from fabric_stack.plant import CableRun, plant_of
from fabric_stack.plant.plan import RunSpec
from fabric_stack.text.printable import CONTROL_CHARS, has_controls
from fabric_stack.topology.build import FABRIC_ROLES, FabricTopology, Link

RoleFilter = Literal["compute", "storage", "inband", "oob", "all"]
"""Which cables an export holds: one network, or all of them."""

ROLE_FILTERS: tuple[str, ...] = ("all", "compute", "storage", "inband", "oob")
"""Accepted ``--role`` values."""

CSV_COLUMNS: tuple[str, ...] = (
    "cable_id",
    "role",
    "network",
    "a_device",
    "a_port",
    "a_port_number",
    "a_rack",
    "a_position",
    "b_device",
    "b_port",
    "b_port_number",
    "b_rack",
    "b_position",
    "speed_gbps",
    "rail",
    "su",
    "pod",
    "plane",
    "medium",
    "a_optic",
    "b_optic",
    "cable_type",
    "length_m",
    "part_number",
    "label_a",
    "label_b",
)
"""Columns of the cabling CSV, in order (also the keys of each JSON link). ``medium``,
the optics and ``cable_type`` are the physical plant's choice for the cable's length
(:func:`fabric_stack.plant.plant_of`); ``length_m`` is the length to order."""


def select_links(topo: FabricTopology, role: str = "all") -> Iterator[Link]:
    """Cables of one network (``compute`` = node–leaf, leaf–spine, spine–core) or all."""
    if role == "all":
        return iter(topo.links)
    if role == "compute":
        return topo.links_of(*FABRIC_ROLES)
    if role in ("storage", "inband", "oob"):
        return topo.links_of(role)
    raise SpecError("--role", f"unknown role {role!r}", "one of " + ", ".join(ROLE_FILTERS))


_COPPER_TYPE = {"dac": "passive copper DAC", "acc": "active copper cable (ACC)"}


def physical(k: Link, run: CableRun) -> tuple[str, str, str, str]:
    """(medium, a_optic, b_optic, cable_type) of a cable as the plant chose it (the BOM's
    cable line, :attr:`RunSpec.description`): a copper cable has no optics; a fibre names the
    module each end's cage takes."""
    kind = run.spec.description or k.cable_type
    if run.medium in _COPPER_TYPE:
        return run.medium, "", "", kind
    return run.medium, run.a_optic or k.a_optic, run.b_optic or k.b_optic, kind


def _selected(topo: FabricTopology, role: str) -> tuple[Sequence[Link], Sequence[CableRun]]:
    """The selected links and their physical runs, as two sequences in link order."""
    runs = plant_of(topo).runs
    if role == "all":
        return topo.links, runs
    select_links(topo, role)  # an unknown role is refused here
    roles = set(FABRIC_ROLES) if role == "compute" else {role}
    pairs = [(k, run) for k, run in zip(topo.links, runs, strict=True) if k.role in roles]
    return [k for k, _ in pairs], [run for _, run in pairs]


def _with_runs(topo: FabricTopology, role: str) -> Iterable[tuple[Link, CableRun]]:
    """The selected links with their physical runs (the plant is derived once per topology)."""
    runs = plant_of(topo).runs
    if role == "all":
        # The pairs themselves, not a generator over them: one frame resume less per cable.
        return zip(topo.links, runs, strict=True)
    select_links(topo, role)  # an unknown role is refused here
    roles = set(FABRIC_ROLES) if role == "compute" else {role}
    return ((k, run) for k, run in zip(topo.links, runs, strict=True) if k.role in roles)


def _places(topo: FabricTopology) -> dict[str, tuple[str, int]]:
    return {d.name: (d.rack, d.position) for d in topo.devices}


def link_rows(topo: FabricTopology, role: str = "all") -> Iterator[tuple[Any, ...]]:
    """The cabling rows (values in :data:`CSV_COLUMNS` order), one per cable."""
    place = _places(topo)
    for k, run in _with_runs(topo, role):
        ar, ap = place.get(k.a_device, ("", 0))
        br, bp = place.get(k.b_device, ("", 0))
        medium, a_optic, b_optic, cable_type = physical(k, run)
        yield (
            k.id,
            k.role,
            k.network,
            k.a_device,
            k.a_port,
            k.a_port_number,
            ar,
            ap or "",
            k.b_device,
            k.b_port,
            k.b_port_number,
            br,
            bp or "",
            k.speed_gbps,
            k.rail or "",
            k.su or "",
            k.pod or "",
            k.plane or "",
            medium,
            a_optic,
            b_optic,
            cable_type,
            f"{run.length_m:g}",
            run.part_number,
            run.label_a,
            run.label_b,
        )


def _csv(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


_QUOTABLE = re.compile(r'[",\r\n]')
"""Characters that may make ``csv.writer`` quote a field (a superset: such a field is handed
to the writer itself)."""

_UNSAFE = re.compile(f'[",\\r\\n{CONTROL_CHARS}]')
"""A field to quote (:data:`_QUOTABLE`) or one that holds a control character."""


def _cell(value: object) -> str:
    """One CSV field exactly as :func:`_csv`'s writer writes it (``None`` and ``""`` empty)."""
    text = "" if value is None else str(value)
    if _QUOTABLE.search(text) is None:
        return text
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([text, ""])
    return buf.getvalue()[:-2]  # the field without the empty one after it and the newline


class _Cells:
    """Fields of an export, each checked once: written as the CSV writer writes them, and
    ``clean`` while none holds a control character."""

    def __init__(self) -> None:
        self.clean = True
        self.words: dict[str, str] = {}

    def cell(self, value: object) -> str:
        """``value`` as a CSV field, noting a control character in it."""
        text = "" if value is None else str(value)
        if _UNSAFE.search(text) is None:
            return text
        self.clean = self.clean and not has_controls(text)
        return _cell(text)

    def word(self, text: str) -> str:
        """A field that repeats (role, network, port name): checked once per distinct text."""
        cell = self.words.get(text)
        if cell is None:
            cell = self.words[text] = self.cell(text)
        return cell


def _csv_tail(cells: _Cells, k: Link, run: CableRun) -> str:
    """The plant's columns of a row, ``medium`` to ``part_number``."""
    fields = (*physical(k, run), f"{run.length_m:g}", run.part_number)
    return ",".join(cells.cell(f) for f in fields)


def _tail_is_the_specs(spec: RunSpec) -> bool:
    """Whether :func:`physical` reads nothing of the link for runs of ``spec``."""
    return bool(spec.description) and (
        spec.medium in _COPPER_TYPE or bool(spec.a_optic and spec.b_optic)
    )


def _plain(texts: Iterable[str]) -> bool:
    """Whether no text of ``texts`` needs quoting or escaping: one pass over them joined,
    not a search per text. False for any unprintable character (a tab, a non-breaking
    space too: such texts take the checked path, which writes the same)."""
    blob = "".join(texts)
    return blob.isprintable() and '"' not in blob and "," not in blob


def _row_texts(links: Sequence[Link], runs: Sequence[CableRun]) -> Iterator[str]:
    """The fields every row has its own of: cable id and the two labels."""
    yield from map(attrgetter("id"), links)
    yield from map(attrgetter("label_a"), runs)
    yield from map(attrgetter("label_b"), runs)


def links_csv(topo: FabricTopology, role: str = "all") -> str:
    """Cabling CSV: :data:`CSV_COLUMNS`, one row per cable (a-end = lower tier); the same
    text as ``csv.writer`` over :func:`link_rows` (a unit test compares the two)."""
    return "".join(links_csv_lines(topo, role)[0])


def links_csv_lines(topo: FabricTopology, role: str = "all") -> tuple[list[str], bool]:
    """:func:`links_csv` as its lines (the header first), and whether every field was
    checked to hold no control character (the usual case: the text may then be printed
    without escaping, :func:`fabric_stack.cli.console.echo_checked`)."""
    # Written as text from fragments, like links_json: a device's name and place are
    # encoded once per device, a port name once per name, the plant's columns once per
    # route spec (or (spec, optics, cable type) when the spec leaves them to the link);
    # a row is one f-string (#43: ~1M rows at 131k GPUs). The cable ids and labels, each
    # a row's own, are checked in one pass over them all; only when one needs quoting or
    # escaping is each checked on its own.
    links, runs = _selected(topo, role)
    cells = _Cells()
    side: dict[str, tuple[str, str]] = {
        d.name: (cells.cell(d.name) + ",", f",{cells.cell(d.rack)},{d.position or ''},")
        for d in topo.devices
    }
    words, word = cells.words, cells.word
    by_spec: dict[int, str] = {}
    by_link: dict[tuple[int, str, str, str], str] = {}
    ids, labels_a, labels_b = (
        map(attrgetter("id"), links),
        map(attrgetter("label_a"), runs),
        map(attrgetter("label_b"), runs),
    )
    if not _plain(_row_texts(links, runs)):
        ids, labels_a, labels_b = (map(cells.cell, texts) for texts in (ids, labels_a, labels_b))
    parts = [",".join(cells.cell(c) for c in CSV_COLUMNS) + "\n"]
    append = parts.append
    for k, run, cid, la, lb in zip(links, runs, ids, labels_a, labels_b, strict=True):
        spec = run.spec
        tail = by_spec.get(id(spec))
        if tail is None:
            tail = by_spec[id(spec)] = _csv_tail(cells, k, run) if _tail_is_the_specs(spec) else ""
        if not tail:
            tkey = (id(spec), k.a_optic, k.b_optic, k.cable_type)
            tail = by_link.get(tkey) or by_link.setdefault(tkey, _csv_tail(cells, k, run))
        a = side.get(k.a_device) or (cells.cell(k.a_device) + ",", ",,,")
        b = side.get(k.b_device) or (cells.cell(k.b_device) + ",", ",,,")
        append(
            f"{cid},{words.get(k.role) or word(k.role)},{words.get(k.network) or word(k.network)},"
            f"{a[0]}{words.get(k.a_port) or word(k.a_port)},{k.a_port_number}{a[1]}"
            f"{b[0]}{words.get(k.b_port) or word(k.b_port)},{k.b_port_number}{b[1]}"
            f"{k.speed_gbps},{k.rail or ''},{k.su or ''},{k.pod or ''},{k.plane or ''},"
            f"{tail},{la},{lb}\n"
        )
    return parts, cells.clean


def links_json(topo: FabricTopology, role: str = "all") -> str:
    """``{"links": [...]}`` with one object per cable, keys in :data:`CSV_COLUMNS` order.

    Each link carries at least ``a_device, a_port, b_device, b_port,
    speed_gbps, role`` (the stable contract). Written one link per line so a
    diff of two plans reads cable by cable; empty values are ``null``.
    """
    return "".join(links_json_lines(topo, role)[0])


def links_json_lines(topo: FabricTopology, role: str = "all") -> tuple[list[str], bool]:
    """:func:`links_json` as its lines, and whether every fragment was checked to hold no
    control character (as :func:`links_csv_lines`)."""
    # Written as text, not through a dict per link: device fields are encoded once per
    # device and the plant's columns once per (route, optics, cable type), so the export
    # with the plant costs no more than the one before it (bench/bench_topology.py). The
    # text is what json.dumps writes for the same keys in the same order (a unit test
    # compares the two). Encoded fragments are checked once each; the per-link strings
    # (id, ports, labels) in one pass over them all.
    links, runs = _selected(topo, role)
    if not links:
        return ['{"links": []}\n'], True
    enc = json.JSONEncoder(ensure_ascii=False).encode
    s = encode_basestring
    side: dict[str, tuple[str, str, str]] = {}
    for d in topo.devices:
        rack, pos = (s(d.rack) if d.rack else "null"), d.position or "null"
        side[d.name] = (
            s(d.name),
            f'{rack}, "a_position": {pos}',
            f'{rack}, "b_position": {pos}',
        )
    clean = not any(has_controls(a + b) for a, b, _ in side.values())
    clean = clean and _plain_json(links, runs)
    unplaced = ("", 'null, "a_position": null', 'null, "b_position": null')
    tails: dict[tuple[int, str, str, str], str] = {}
    words: dict[str, str] = {}
    parts = ['{"links": [\n']
    append = parts.append
    for k, run in zip(links, runs, strict=True):
        tkey = (id(run.spec), k.a_optic, k.b_optic, k.cable_type)
        tail = tails.get(tkey)
        if tail is None:
            tail = tails[tkey] = _json_tail(k, run, enc)
            clean = clean and not has_controls(tail)
        role_net = words.get(k.role + "/" + k.network)
        if role_net is None:
            role_net = words[k.role + "/" + k.network] = (
                f'"role": {s(k.role)}, "network": {s(k.network)}'
            )
            clean = clean and not has_controls(role_net)
        an, aplace, _ = side.get(k.a_device, unplaced)
        bn, _, bplace = side.get(k.b_device, unplaced)
        if not (an and bn):
            an, bn = an or s(k.a_device), bn or s(k.b_device)
            clean = clean and not has_controls(an + bn)
        append(
            f'{{"cable_id": {s(k.id)}, {role_net}, "a_device": {an}, "a_port": {s(k.a_port)}, '
            f'"a_port_number": {k.a_port_number}, "a_rack": {aplace}, '
            f'"b_device": {bn}, "b_port": {s(k.b_port)}, "b_port_number": {k.b_port_number}, '
            f'"b_rack": {bplace}, "speed_gbps": {k.speed_gbps}, '
            f'"rail": {k.rail or "null"}, "su": {k.su or "null"}, "pod": {k.pod or "null"}, '
            f'"plane": {k.plane or "null"}, {tail}, "label_a": {s(run.label_a)}, '
            f'"label_b": {s(run.label_b)}}},\n'
        )
    parts[-1] = parts[-1][:-2] + "\n]}\n"
    return parts, clean


def _json_tail(k: Link, run: CableRun, enc: Callable[[object], str]) -> str:
    """The plant's keys of a JSON link, ``"medium"`` to ``"part_number"``."""
    medium, a_optic, b_optic, cable_type = physical(k, run)
    fields = {
        "medium": medium,
        "a_optic": a_optic,
        "b_optic": b_optic,
        "cable_type": cable_type,
        "length_m": run.length_m,
        "part_number": run.part_number,
    }
    return enc(fields)[1:-1]


def _plain_json(links: Sequence[Link], runs: Sequence[CableRun]) -> bool:
    """Whether the strings each link has its own of (id, ports, labels) are all printable:
    encoded, they then hold no control character. One pass over them all."""
    ports = chain(map(attrgetter("a_port"), links), map(attrgetter("b_port"), links))
    return "".join(chain(_row_texts(links, runs), ports)).isprintable()


# --------------------------------------------------------------------------- .topo
