"""Cabling exports: the link list as files technicians and NVIDIA's tools read.

Every export reads :attr:`FabricTopology.links` (one record per cable, a-end
on the lower tier) and writes **one row per cable, never both directions**,
except the ``.topo`` file, whose format lists each system's own ports (so a
cable appears in the sections of both systems it joins, as ``ibdiagnet -w``
writes it).

Formats
-------
``links_csv``   every column of the link record plus rack and position of both
                ends (from the devices); the technician's pull list.
``links_json``  ``{"links": [...]}``; each link has at least ``a_device,
                a_port, b_device, b_port, speed_gbps, role`` — a stable
                contract other tools may rely on — plus the other columns.
``topo_file``   ibdiagnet / ibdm topology file for ``ibdiagnet -t FILE``
                (InfiniBand compute links only). One section per system::

                    MQM9700 su1-r1-leaf
                        P1 -4x-100G-> HCA_mlx5_7 su1-node01 mlx5_0/P1

                    HCA_mlx5_7 su1-node01
                        mlx5_0/P1 -4x-100G-> MQM9700 su1-r1-leaf P1

                A blank line ends a section. Switch ports are logical port
                numbers ``P<n>`` (what ibnetdiscover prints). A server is one
                system named after its host name; each HCA is a node named by
                its RDMA device, so its port is ``mlx5_N/P1`` — the node
                description convention ``"<hostname> mlx5_N"``. System names
                hold no ``/`` or blanks (the ibdm parser splits on them).
``ufm_p2p``     UFM Cable Validation Tool point-to-point sheet: ``A-Node Name,
                A-Type, A-Port, Z-Node Name, Z-Type, Z-Port``. Hosts give the
                HCA interface number (1 → mlx5_0, the tool's default HCA map);
                InfiniBand switch ports are ``<cage>/<split>`` or ``<cage>``.
``avd_csv``     Arista AVD-style topology CSV (``Node Type,Node,...``), one
                row per cable, with each cable's length, medium, part number and
                end labels (what avd#7075 asks for).

``links_csv``, ``links_json`` and ``avd_csv`` carry the physical plant (length, medium,
part number, TIA-606-style labels); the ``.topo`` and UFM P2P formats are fixed by the
tools that read them and stay as they are.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from json.encoder import encode_basestring
from operator import attrgetter
from typing import Any, Literal

from fabric_stack.errors import FabricStackError, SpecError
from fabric_stack.hardware.switches import SwitchModel, lookup_switch, port_mode
from fabric_stack.nos import for_family
from fabric_stack.plant import CableRun, plant_of
from fabric_stack.plant.plan import RunSpec
from fabric_stack.sizing.size import SizingPlan
from fabric_stack.sizing.tiers import uplink_layout_number
from fabric_stack.text.printable import CONTROL_CHARS, has_controls
from fabric_stack.topology.build import FABRIC_ROLES, HOST_ROLES, Device, FabricTopology, Link
from fabric_stack.views.ib_naming import (
    host_hcas,
    host_types,
    interface_numbers,
    port_naming_header,
)

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

P2P_COLUMNS: tuple[str, ...] = (
    "A-Node Name",
    "A-Type",
    "A-Port",
    "Z-Node Name",
    "Z-Type",
    "Z-Port",
)
"""Columns of the UFM cable-validation point-to-point sheet."""

AVD_COLUMNS: tuple[str, ...] = (
    "Node Type",
    "Node",
    "Serial Number",
    "Node Interface",
    "Peer Type",
    "Peer Node",
    "Peer Serial Number",
    "Peer Interface",
    "Node Interface Enabled",
    "Cable Length (m)",
    "Cable Medium",
    "Part Number",
    "Node Label",
    "Peer Label",
)
"""Columns of the Arista AVD-style topology CSV."""

_IB_LANE_GBPS: dict[str, int] = {"HDR": 50, "NDR": 100, "NDR200": 100, "XDR": 200}


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


def _require_ib(topo: FabricTopology, what: str) -> None:
    fabric = topo.plan.spec.fabric
    if fabric != "infiniband":
        raise FabricStackError(
            f"{what}: .topo files describe InfiniBand fabrics for ibdiagnet, but this fabric "
            f"is {fabric} (use --format csv, json or p2p)"
        )


def ib_width(topo: FabricTopology) -> str:
    """Width and lane speed of the compute links as ibdiagnet writes them, e.g. ``4x-100G``."""
    return ib_width_at(topo.plan.switch_model, topo.plan.link_gbps)


def ib_width_at(model: SwitchModel, speed: int) -> str:
    """Width and lane speed of a ``speed`` link on ``model`` (its mode's lane name)."""
    lane_name = next((m.lane_name for m in model.modes if m.speed_gbps == speed), "")
    lane = _IB_LANE_GBPS.get(lane_name, max(1, speed // 4))
    return f"{max(1, speed // lane)}x-{lane}G"


def ib_system_type(topo: FabricTopology, role: str = "leaf") -> str:
    """ibdm system type of the fabric switches of tier ``role``: the switch model record's
    ``ib_system_type`` (``MQM9700`` for a QM9700), ``SW_<radix>`` for a model without one
    (generic switches)."""
    plan = topo.plan
    radix = {"spine": plan.spine_radix, "core": plan.core_radix}.get(role, plan.radix)
    return plan.tier_model(role).ib_system_type or f"SW_{radix}"


def topo_file(topo: FabricTopology) -> str:
    """ibdiagnet topology file of the InfiniBand compute fabric (see the module docstring).

    Raises :class:`FabricStackError` for RoCE / Ethernet fabrics.
    """
    _require_ib(topo, "cabling --format topo")
    sw_type = ib_system_type(topo)
    types = host_types(topo)
    order_of = {h: {dev: i for i, dev in enumerate(devs)} for h, devs in host_hcas(topo).items()}
    arrow = f" -{ib_width(topo)}-> "
    plan = topo.plan
    # Per-tier models and speeds (issue #43): each switch its tier's type, each link its
    # speed's width; a fabric of one model at one speed writes exactly what it always did.
    sw_types = {
        d.name: ib_system_type(topo, d.role) for d in topo.switches("leaf", "spine", "core")
    }
    arrows = {
        (m, s): f" -{ib_width_at(plan.tier_model(m), s)}-> "
        for m in ("leaf", "spine")
        for s in {plan.link_gbps, plan.uplink_gbps}
        if s in plan.tier_model(m).speeds()
    }
    # Per system: (sort key, line). Hosts sort by HCA interface order, switches by port number.
    lines: dict[str, list[tuple[int, str]]] = defaultdict(list)
    per_tier, one_arrow, one_type = plan.spec.per_tier, arrow, sw_type
    for k in topo.links_of(*FABRIC_ROLES):
        if per_tier:
            tier = "leaf" if k.role in ("node_leaf", "manager_leaf") else "spine"
            arrow = arrows.get((tier, k.speed_gbps), one_arrow)
            sw_type = sw_types[k.b_device]
        b_port = f"P{k.b_port_number}"
        if k.a_device in types:
            a_port = f"{k.a_port}/P1"
            a_type = types[k.a_device]
            a_key = order_of[k.a_device][k.a_port]
        else:
            a_port = f"P{k.a_port_number}"
            a_type = sw_types[k.a_device] if per_tier else sw_type
            a_key = k.a_port_number
        lines[k.a_device].append((a_key, f"    {a_port}{arrow}{sw_type} {k.b_device} {b_port}"))
        lines[k.b_device].append(
            (k.b_port_number, f"    {b_port}{arrow}{a_type} {k.a_device} {a_port}")
        )
    out = [
        f"# ibdiagnet topology file for {plan.spec.name}: {plan.gpus:,} GPUs, "
        f"{plan.switch_model.name} at {plan.link_gbps}G, {plan.tiers} tiers"
        + (_tiers_note(plan) if per_tier else ""),
        "# Generated by fabric-stack from the port-level plan; check a live fabric with:",
        "#   ibdiagnet -t <this file> --out_ibnl_dir <dir with IBNL files for "
        f"{', '.join([*sorted(set(sw_types.values())), *sorted(set(types.values()))])}>",
        "# (render infiniband writes the HCA ones under infiniband/ibnl/).",
        "# Hosts (GPU servers, fabric managers) are systems named by host name.",
        *(f"# {line}" for line in port_naming_header(topo)),
        *(f"# {n}" for n in _profile_notes(topo)),
        "",
    ]
    order = [d for d in topo.devices if d.role in ("leaf", "spine", "core")]
    order += [d for d in topo.devices if d.role in HOST_ROLES]
    for d in order:
        ports = lines.get(d.name)
        if not ports:
            continue
        ports.sort()
        out.append(f"{types.get(d.name) or sw_types.get(d.name, one_type)} {d.name}")
        out.extend(line for _, line in ports)
        out.append("")
    return "\n".join(out)


def _tiers_note(plan: SizingPlan) -> str:
    """``; uplinks 400G, spines Q3400-RA, cores …``: the per-tier part of the header."""
    text = f"; uplinks {plan.uplink_gbps}G, spines {plan.spine_model.name}"
    return text + (f", cores {plan.core_model.name}" if plan.tiers == 3 else "")


# --------------------------------------------------------------------------- UFM P2P


def _profile_notes(topo: FabricTopology) -> list[str]:
    """``UNVERIFIED (<profile>): …`` for what the server profile could not confirm."""
    prof = topo.plan.spec.node_profile
    return [f"UNVERIFIED ({prof.name}): {note}." for note in prof.unverified_notes()]


def _p2p_port(
    dev: Device, port: str, number: int, ppc: dict[str, int], os_family: str, iface: dict[str, int]
) -> str:
    if dev.role in HOST_ROLES:
        # The host's interface number, as the CVT's hca_mapping file maps it (1-based).
        return str(iface[port]) if port in iface else port
    # The switch OS says how UFM names its port: ``<cage>/<lane>`` on InfiniBand switches,
    # the interface name the NOS prints (``swp1s0``) on Ethernet ones.
    return for_family(os_family).ufm_port(port, number, ppc.get(dev.name, 1))


def ufm_p2p(topo: FabricTopology, role: str = "compute") -> str:
    """UFM cable-validation point-to-point CSV (:data:`P2P_COLUMNS`), one row per cable."""
    by_name = {d.name: d for d in topo.devices}
    plan = topo.plan
    ppc: dict[str, int] = {}
    fam: dict[str, str] = {}
    access_cache: dict[tuple[str, int], tuple[int, str]] = {}
    ifaces = {h: interface_numbers(devs) for h, devs in host_hcas(topo).items()}
    for link in select_links(topo, role):
        for dev_name in (link.a_device, link.b_device):
            d = by_name[dev_name]
            if d.role in HOST_ROLES or dev_name in ppc:
                continue
            if d.network == "compute":
                ppc[dev_name] = plan.tier_ports_per_cage(d.role)
                fam[dev_name] = plan.tier_model(d.role).os_family
            else:
                key = (d.model, link.speed_gbps)
                if key not in access_cache:
                    m = lookup_switch(d.model, "ethernet")
                    access_cache[key] = (port_mode(m, link.speed_gbps).ports_per_cage, m.os_family)
                ppc[dev_name], fam[dev_name] = access_cache[key]

    def kind(d: Device) -> str:
        return "Host" if d.role in HOST_ROLES else "Switch"

    rows = []
    # A mixed leaf's uplink cages (issue #43) are named in the uplink layout.
    up_ppc: dict[str, int] = {}
    for k in select_links(topo, role):
        a, b = by_name[k.a_device], by_name[k.b_device]
        a_number, a_ppc = k.a_port_number, ppc
        if plan.mixed_leaf and k.role == "leaf_spine":
            up = up_ppc[a.name] = plan.leaf_up_ports_per_cage
            a_number, a_ppc = uplink_layout_number(a_number, plan.ports_per_cage, up), up_ppc
        rows.append(
            (
                k.a_device,
                kind(a),
                _p2p_port(
                    a,
                    k.a_port,
                    a_number,
                    a_ppc,
                    fam.get(a.name, ""),
                    ifaces.get(a.name, {}) if k.network == "compute" else {},
                ),
                k.b_device,
                kind(b),
                _p2p_port(b, k.b_port, k.b_port_number, ppc, fam.get(b.name, ""), {}),
            )
        )
    body = _csv(P2P_COLUMNS, rows)
    if plan.spec.fabric != "infiniband" or role not in ("compute", "all"):
        return body
    # The port-naming convention, stated where the technician reads the sheet. Whether the
    # CVT skips '#' lines in a CSV sheet is UNVERIFIED: strip them if it rejects the file.
    head = [*port_naming_header(topo), "Host interface numbers: see hca_mapping.csv."]
    return "".join(f"# {line}\n" for line in head) + body


def avd_csv(topo: FabricTopology, role: str = "all") -> str:
    """Arista AVD-style topology CSV (:data:`AVD_COLUMNS`), one row per cable, a-end first."""
    by_name = {d.name: d for d in topo.devices}
    rows = [
        (
            by_name[k.a_device].role,
            k.a_device,
            "",
            k.a_port,
            by_name[k.b_device].role,
            k.b_device,
            "",
            k.b_port,
            "True",
            f"{run.length_m:g}",
            run.medium,
            run.part_number,
            run.label_a,
            run.label_b,
        )
        for k, run in _with_runs(topo, role)
    ]
    return _csv(AVD_COLUMNS, rows)


EXPORTS = {
    "csv": links_csv,
    "json": links_json,
    "p2p": ufm_p2p,
    "avd": avd_csv,
}
"""Exports that take a role filter, by ``--format`` name (``topo`` is compute-only)."""


__all__ = [
    "AVD_COLUMNS",
    "CSV_COLUMNS",
    "P2P_COLUMNS",
    "ROLE_FILTERS",
    "avd_csv",
    "link_rows",
    "links_csv",
    "links_csv_lines",
    "links_json",
    "links_json_lines",
    "select_links",
    "topo_file",
    "ufm_p2p",
]
