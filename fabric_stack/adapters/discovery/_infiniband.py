"""What every InfiniBand reader shares: from parsed nodes and port lines to a Snapshot.

``ibnetdiscover`` (plain, ``-g`` and ``-p``), ``iblinkinfo`` and ``ibdiagnet2.lst`` each
parse their own text into the same two things: the nodes by GUID
(:class:`~fabric_stack.naming.ib_nodes.IbNode`, with the system image GUID when the
format carries it) and the port lines (:data:`PortLine`). :func:`ib_snapshot` then names
the nodes (:func:`~fabric_stack.naming.ib_nodes.name_nodes`: node-name map, names file,
NodeDescription), folds multi-chip switch systems, drops the second printing of each
cable and internal links, and records devices and their GUIDs — the same for every
format, so a fabric reads the same whichever tool dumped it.
"""

from __future__ import annotations

import re
from typing import Any

from fabric_stack.drift.model import DeviceSeen, Endpoint, ObservedLink, PortState, Snapshot
from fabric_stack.drift.speeds import ib_speed
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
"""What the readers assume about a Q3400, and why it is marked unverified."""

PortLine = tuple[str, int, str, int, "tuple[str, str] | None", int]
"""One connected port: (GUID, port, remote GUID, remote port, (width digits, speed name)
such as ``("4", "NDR")`` or None when unknown, line number)."""

DownPort = tuple[str, int, int]
"""A port a format reports as down (iblinkinfo ``Down/ Polling``): (GUID, port, line)."""

LANE_NAMES: dict[str, str] = {
    "2.5": "SDR",
    "5.0": "DDR",
    "10.0": "QDR",
    "10.3125": "FDR10",
    "14.0625": "FDR",
    "25.78125": "EDR",
    "53.125": "HDR",
    "106.25": "NDR",
    "212.5": "XDR",
}
"""Lane rate as ``iblinkinfo`` prints it (Gb/s, infiniband-diags' ``ibnd``/``mad_dump_val``
speed strings) → speed name. SDR/DDR/QDR/FDR/EDR follow the InfiniBand specification's
lane rates (the real samples show ``10.0`` for QDR and ``25.78125`` for EDR). HDR
``53.125`` is what infiniband-diags 44.0 prints on ibsim 0.10 (the twin's ``iblinkinfo``;
a simulator, UNVERIFIED on real HDR hardware); NDR ``106.25`` and XDR ``212.5`` are
UNVERIFIED (no sample here, ibsim has no such lanes)."""

_LANE_KEY = re.compile(r"^(\d+)(?:\.(\d*?)0*)?$")


def lane_name(gbps: str) -> str | None:
    """The speed name of a lane rate as iblinkinfo prints it (``25.78125`` → ``EDR``,
    ``10.0`` and ``10`` → ``QDR``); None for one the table does not know."""
    m = _LANE_KEY.match(gbps.strip())
    if m is None:
        return None
    whole, frac = m.group(1), m.group(2) or "0"
    return LANE_NAMES.get(f"{whole}.{frac}")


def _rate_of(groups: tuple[str, str] | None) -> tuple[str | None, str | None, Any]:
    """(width, rate, Gb/s) from the ``(width, speed name)`` of a trailing ``4xNDR``."""
    if groups is None:
        return None, None, None
    width, name = groups
    return f"{width}x", f"{width}x{name}", ib_speed(f"{width}x{name}")


def _endpoint(e: NodeName, port: int) -> Endpoint:
    """One end of a link as the reader reports it (numbers for switches, HCA names for hosts)."""
    label, kind = port_label(e, port)
    return Endpoint(e.device, label, kind)


def ib_snapshot(
    source: str,
    path: str,
    nodes: dict[str, IbNode],
    ports: list[PortLine],
    names: dict[str, str],
    guid_names: dict[str, str],
    notes: list[str] | None = None,
    down: list[DownPort] | None = None,
) -> Snapshot:
    """The snapshot of one InfiniBand subnet from its parsed nodes and port lines.

    ``names`` maps GUIDs to names (node-name map and names file); ``guid_names`` (the
    names file) wins over a NodeDescription that names a host. ``down`` ports become
    port states (link down), so drift can say a planned cable's port is dark.
    """
    ends = name_nodes(nodes, names, guid_names)
    snap = Snapshot(source=source, origin=path, networks=frozenset({"compute"}), one_plane=True)
    snap.notes.extend(notes or ())
    internal = _links(snap, path, ports, ends)
    if internal:
        snap.notes.append(
            f"{internal} link(s) inside a multi-chip switch system (between its ASICs, "
            "routers or SHARP aggregation nodes) were not compared"
        )
    if any(e.chip.startswith("U") for e in ends.values()):
        snap.notes.append(Q3400_LAYOUT)
    _devices(snap, path, nodes, ends, names)
    for guid, port, lineno in down or ():
        e = ends[guid]
        snap.port_states.append(PortState(_endpoint(e, port), False, None, f"{path}:{lineno}"))
    return snap


def _links(snap: Snapshot, path: str, ports: list[PortLine], ends: dict[str, NodeName]) -> int:
    """Append one link per cable (printed from both ends); fold per-chip links. Returns
    the number of internal links skipped."""
    seen: set[tuple[str, int, str, int]] = set()
    rates: dict[Any, tuple[str | None, str | None, Any]] = {}
    multi: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    chips = {g for g, e in ends.items() if e.chip}
    numbers = [str(n) for n in range(1025)]
    internal = 0
    links = snap.links
    for guid, port, rguid, rport, rate_groups, lineno in ports:
        if guid < rguid or (guid == rguid and port <= rport):
            key = (guid, port, rguid, rport)
        else:
            key = (rguid, rport, guid, port)
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
        # Positional (speed, width, rate, state, where): keywords cost ~100k parses here.
        links.append(ObservedLink(a, b, rate[2], rate[0], rate[1], "up", f"{path}:{lineno}"))
    for group in multi.values():
        links.append(_fold(group, path))
    return internal


def _devices(
    snap: Snapshot,
    path: str,
    nodes: dict[str, IbNode],
    ends: dict[str, NodeName],
    names: dict[str, str],
) -> None:
    """One DeviceSeen per device (internal routers / aggregation nodes excluded), with
    a switch's GUID, and the GUID the map expects when the switch was replaced."""
    by_name = {name: guid for guid, name in names.items()}
    for node in nodes.values():
        e = ends[node.guid]
        if e.system and e.kind != "switch":
            continue  # part of a switch system, not a device of its own
        seen_dev = snap.devices.get(e.device)
        if seen_dev is None:
            seen_dev = snap.devices[e.device] = DeviceSeen(e.device, e.kind, f"{path}:{node.line}")
        if e.kind != "switch":
            if e.kind == "server" and is_guid(node.guid):  # adopt writes them to the names file
                seen_dev.attrs.setdefault("hca_guids", []).append(f"0x{node.guid}")
            continue
        guid = e.system if e.chip else node.guid
        if is_guid(guid):
            seen_dev.attrs["guid"] = f"0x{guid}"
        label = names.get(node.guid, node.desc)
        for cand in (label, parse_nodedesc(label).host):
            other = by_name.get(cand)
            if cand and other is not None and other != node.guid and other not in nodes:
                seen_dev.expected["guid"] = f"0x{other}"


def is_guid(key: str) -> bool:
    """True for a real node GUID (16 hex digits), not a stand-in key such as ``lid:4``."""
    return len(key) == 16 and not key.strip("0123456789abcdef")


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


__all__ = [
    "LANE_NAMES",
    "Q3400_LAYOUT",
    "DownPort",
    "PortLine",
    "ib_snapshot",
    "is_guid",
    "lane_name",
]
