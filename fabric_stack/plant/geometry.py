"""Where racks stand, where a port is, and how long the tray route between two ports is.

Pure geometry over the spec's :class:`~fabric_stack.spec.layout.LayoutSettings`. Every
rack's place depends only on its own SU (or its own kind, plane and number for the
network-core racks) and on the spec's SU size, never on how many SUs there are: that is
what keeps an existing cable's length stable when the fabric grows.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from fabric_stack.spec.layout import LayoutSettings
from fabric_stack.topology.build import Device

RU_M = 0.04445
"""One rack unit, metres (EIA-310)."""

_CORE_RACK = re.compile(r"^(?:p(\d+)-)?(spine|core)-rack(\d+)$")
_MGMT_RACK = re.compile(r"^mgmt-rack(\d+)$")
_SU_RACK = re.compile(r"^su(\d+)-(?:rack(\d+)|net(\d*))$")


@dataclass(frozen=True, slots=True)
class RackPlace:
    """A rack's place on the floor: row (negative in front of the SUs), column, grid name."""

    name: str
    kind: str
    """compute, network, spine, core, mgmt or other."""
    row: int
    column: int
    grid: str
    """TIA-606-style grid location: ``R01-03`` (SU rows), ``N02-01`` (network-core rows)."""


@dataclass(frozen=True, slots=True)
class Hall:
    """The layout with the figures every placement needs, computed once."""

    layout: LayoutSettings
    su_racks: int
    """Racks of a full SU: its compute racks and its network rack."""
    rows_per_su: int
    net_slot: int
    """The (first) network rack's slot among the SU's racks."""
    net_racks: int = 1
    """Network racks per SU: ``suN-net``, then ``suN-net2`` … beside it when one rack cannot
    hold the SU's leaves (:mod:`fabric_stack.topology.racking`)."""

    def place(self, slot_row: int, column: int, name: str, kind: str) -> RackPlace:
        """A rack at (row, column), with its grid name."""
        if slot_row >= 0:
            grid = f"R{slot_row + 1:02d}-{column + 1:02d}"
        else:
            grid = f"N{-slot_row:02d}-{column + 1:02d}"
        return RackPlace(name, kind, slot_row, column, grid)


def plan_hall(layout: LayoutSettings, su_nodes: int, net_racks: int = 1) -> Hall:
    """The hall for SUs of ``su_nodes`` servers (the spec's SU size, not the last SU's) with
    ``net_racks`` network racks each (side by side)."""
    compute = max(1, math.ceil(su_nodes / layout.servers_per_rack))
    racks = compute + net_racks
    rows = math.ceil(racks / layout.racks_per_row)
    slot = compute // 2 if layout.su_network_rack == "middle" else compute
    return Hall(layout, racks, rows, slot, net_racks)


def su_rack_place(hall: Hall, name: str, su: int, slot: int, kind: str) -> RackPlace:
    """Rack in slot ``slot`` of SU ``su``: SU rows follow one another from the front."""
    per_row = hall.layout.racks_per_row
    row = (su - 1) * hall.rows_per_su + slot // per_row
    return hall.place(row, slot % per_row, name, kind)


def compute_slot(hall: Hall, rack_index: int) -> int:
    """Slot of the SU's ``rack_index``-th compute rack (0-based): the network racks' slots
    are skipped."""
    return rack_index if rack_index < hall.net_slot else rack_index + hall.net_racks


def core_rack_place(hall: Hall, name: str, plane: int, kind: str, number: int) -> RackPlace:
    """A spine, core or management rack: one row per kind and plane in front of the SUs,
    management first, then spines and cores of plane 1, 2, ...; each grows along its row."""
    row = 1 if kind == "mgmt" else 2 * max(1, plane) + (0 if kind == "spine" else 1)
    return hall.place(-row, number - 1, name, kind)


def place_rack(hall: Hall, device: Device) -> RackPlace:
    """The place of the rack holding ``device``.

    GPU servers are placed from their SU and index (so renamed racks stay put); other
    devices from their planned rack name. A rack of no known shape stands in an ``other``
    row in front of the network-core rows, by its name's order of appearance (not stable
    under growth: give such devices a rack of the plan's own names).
    """
    if device.role == "server" and device.su:
        rack_index = (device.index - 1) // hall.layout.servers_per_rack
        return su_rack_place(
            hall, device.rack, device.su, compute_slot(hall, rack_index), "compute"
        )
    m = _SU_RACK.match(device.rack)
    if m and m.group(2) is None:
        extra = int(m.group(3) or 1) - 1
        return su_rack_place(hall, device.rack, int(m.group(1)), hall.net_slot + extra, "network")
    if m:
        idx = compute_slot(hall, int(m.group(2)) - 1)
        return su_rack_place(hall, device.rack, int(m.group(1)), idx, "compute")
    m = _CORE_RACK.match(device.rack)
    if m:
        return core_rack_place(hall, device.rack, int(m.group(1) or 1), m.group(2), int(m.group(3)))
    m = _MGMT_RACK.match(device.rack)
    if m:
        return core_rack_place(hall, device.rack, 0, "mgmt", int(m.group(1)))
    return hall.place(-99, 0, device.rack, "other")


def port_height_m(position: int, height_u: int) -> float:
    """Height of a device's ports above the rack floor: the middle of its rack units."""
    return (max(1, position) - 1 + height_u / 2) * RU_M


def route_m(
    layout: LayoutSettings,
    a: RackPlace,
    b: RackPlace,
    a_height: float,
    b_height: float,
) -> float:
    """The tray route between two ports, metres, before slack and rounding.

    Within a rack: the vertical run between the two ports. Between racks: up from each
    port to the tray (``tray_height_mm`` above the rack top), along the row and across the
    rows; with ``cross_rows: row_end`` a cable changing rows runs to the row's end first.
    """
    if a.name == b.name and a.kind != "other":
        return abs(a_height - b_height)
    top = layout.rack_units * RU_M + layout.tray_height_mm / 1000
    up = (top - a_height) + (top - b_height)
    pitch = layout.rack_pitch_mm / 1000
    across = abs(a.row - b.row) * layout.row_pitch_mm / 1000
    if a.row != b.row and layout.cross_rows == "row_end":
        along = (a.column + b.column + 1) * pitch
    else:
        along = abs(a.column - b.column) * pitch
    return up + along + across


__all__ = [
    "RU_M",
    "Hall",
    "RackPlace",
    "compute_slot",
    "core_rack_place",
    "place_rack",
    "plan_hall",
    "port_height_m",
    "route_m",
    "su_rack_place",
]
