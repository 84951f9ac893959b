"""InfiniBand node names: what a node of a subnet is called, and how multi-chip switches fold.

The one place for these rules, shared by the side that reads a fabric (the
``ibnetdiscover`` drift reader, :mod:`fabric_stack.adapters.discovery.ibnetdiscover`)
and the side that plays one (the twin, :mod:`fabric_stack.twin.ibnet`, which writes the
node ids and NodeDescriptions the reader then reads back). The NodeDescription forms
themselves are :mod:`fabric_stack.naming.nodedesc`.

**Identity is the node GUID**, never the description: 89 HCAs that all say
``MT25408 ConnectX Mellanox Technologies`` are 89 devices. A node is named, in order,
by the node-name map, by its NodeDescription when that names a host
(``host mlx5_N``, ``host HCA-N``, ``MF0;host:MODEL/Un``) or is unique in the dump, and
otherwise by ``<description> <guid>`` (:func:`name_nodes`).

**Multi-chip systems.** Switch nodes that share a system image GUID are one device (a
Quantum-X800 Q3400 reports each of its four ASICs as its own switch, ``…Q3400_RA/U1`` …
``/U4``; a director chassis its line and spine chips). Their ports are chip-qualified
(``U2/149``, :func:`port_label`), links between two chips of one system are internal
(:func:`internal_link`), and the per-chip links of one cable (the same port number on
every chip, to the same far end: :func:`cable_key`) fold into one link whose width is
the sum of the chips' widths (:func:`folded_rate`).

**Kinds.** ``Switch`` nodes are switches, ``Rt`` nodes routers, a CA whose description
says ``Aggregation Node`` a SHARP aggregation node; only other CAs are servers. A
router or aggregation node sharing the system image GUID of a switch is part of that
switch (it takes the switch's name; its link is internal).

**Unnamed HCAs of one host.** The HCAs of one server share its system image GUID
(``arthurtumanyan-small_topo_file.txt`` lines 28 and 40: ``r-dcs96 HCA-1`` / ``HCA-2``
both ``0xec0d9a03007d7d0a``). A CA whose description names no host (a factory NodeDesc
such as ``MT4129 ConnectX7   Mellanox Technologies``) and whose system image GUID other
CAs share is named with them: after the host a sibling's description names when exactly
one is named, else ``<description> <system image GUID>``; its port is labelled by its own
node GUID (``hca-<guid>``: nothing says which NIC of the host it is; adopt infers that
from the leaf it is cabled to). A CA alone on its system image GUID keeps the rule above
(the NDR DGX sample's 69 factory HCAs each carry their own).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from fabric_stack.naming.nodedesc import parse_nodedesc

LabelKind = Literal["number", "name", "unresolved"]
"""How a port label was made: a switch port number, an HCA name, or neither."""

NODE_PREFIX = {"Switch": "S", "Ca": "H", "Rt": "R"}
"""The letter ibnetdiscover puts before a node's GUID in its id (``S-fc6a1c0300e4a1c0``)."""

_CHIP_SUFFIX = re.compile(r"/U\d+$")


def node_id(guid: str, kind: str) -> str:
    """A node's id as ibnetdiscover (and ibsim) spell it: ``S-<guid>``, ``H-<guid>``, ``R-…``."""
    return f"{NODE_PREFIX[kind]}-{int(guid, 16):016x}"


@dataclass(slots=True)
class IbNode:
    """One node block of a dump: kind (Switch/Ca/Rt), GUID, NodeDescription, line, system."""

    kind: str
    guid: str
    desc: str
    line: int
    sysimg: str = ""


@dataclass(slots=True)
class NodeName:
    """How one node's ports are named: device, kind, chip label (multi-chip), HCA name."""

    device: str
    kind: str
    chip: str = ""
    hca: str = ""
    system: str = ""


def name_nodes(
    nodes: Mapping[str, IbNode], names: Mapping[str, str], forced: Iterable[str] = ()
) -> dict[str, NodeName]:
    """Each node's device name, kind, chip label and HCA (see the module docstring).

    ``names`` maps GUIDs to names (node-name map, names file); a GUID in ``forced``
    (a names file) names its host even when the NodeDescription names one.
    """
    forced = frozenset(forced)
    desc_count = Counter(n.desc for n in nodes.values())
    switch_systems: dict[str, list[IbNode]] = {}
    for n in nodes.values():
        if n.kind == "Switch" and n.sysimg:
            switch_systems.setdefault(n.sysimg, []).append(n)
    hosts_of_system = _ca_systems(nodes, switch_systems)
    ends: dict[str, NodeName] = {}
    for system, chips in switch_systems.items():
        if len(chips) > 1:
            _name_system(system, chips, names, ends)
    for n in nodes.values():
        if n.guid in ends:
            continue
        own = parse_nodedesc(n.desc)
        mapped = names.get(n.guid)
        parsed = own if mapped is None or mapped == n.desc else parse_nodedesc(mapped)
        inside = n.kind != "Switch" and n.sysimg in switch_systems
        if n.kind == "Switch":
            device = names.get(n.guid) or own.host or unique_name(n, desc_count)
            ends[n.guid] = NodeName(device, "switch", system=n.sysimg)
        elif n.kind == "Rt" or own.router:
            ends[n.guid] = NodeName(
                names.get(n.guid) or unique_name(n, desc_count),
                "router",
                system=n.sysimg if inside else "",
            )
        elif own.aggregation:
            ends[n.guid] = NodeName(
                names.get(n.guid) or unique_name(n, desc_count),
                "aggregation_node",
                system=n.sysimg if inside else "",
            )
        elif not parsed.host and n.guid not in names and n.sysimg in hosts_of_system:
            host = hosts_of_system[n.sysimg] or f"{n.desc.strip()} {n.sysimg}".strip()
            ends[n.guid] = NodeName(host, "server", hca=f"hca-{n.guid}")
            continue
        else:
            host = (
                names[n.guid]
                if n.guid in forced
                else parsed.host or names.get(n.guid) or unique_name(n, desc_count)
            )
            ends[n.guid] = NodeName(host, "server", hca=parsed.hca or own.hca)
    # A router or aggregation node inside a multi-chip switch system takes the system's name.
    for n in nodes.values():
        e = ends[n.guid]
        if e.system and e.kind != "switch":
            chips = switch_systems[e.system]
            owner = ends[chips[0].guid]
            e.device, e.chip = owner.device, f"{e.kind}"
    return ends


def _ca_systems(
    nodes: Mapping[str, IbNode], switch_systems: Mapping[str, list[IbNode]]
) -> dict[str, str]:
    """System image GUID shared by two or more CAs → the one host their descriptions
    name ('' when none or several do); see the module docstring."""
    cas: dict[str, list[IbNode]] = {}
    for n in nodes.values():
        if n.kind == "Ca" and n.sysimg and n.sysimg not in switch_systems:
            cas.setdefault(n.sysimg, []).append(n)
    out: dict[str, str] = {}
    for system, members in cas.items():
        if len(members) < 2:
            continue
        named = {parse_nodedesc(m.desc).host for m in members} - {""}
        out[system] = named.pop() if len(named) == 1 else ""
    return out


def _name_system(
    system: str, chips: list[IbNode], names: Mapping[str, str], ends: dict[str, NodeName]
) -> None:
    """Name the chips of one multi-chip switch system (one device, chip-qualified ports)."""
    chips.sort(key=lambda c: (parse_nodedesc(c.desc).chip or 1 << 20, c.guid))
    first = chips[0]
    device = _CHIP_SUFFIX.sub("", names.get(first.guid, "")) or parse_nodedesc(first.desc).host
    if not device:
        device = f"{first.desc} {system}".strip()
    for c in chips:
        chip = parse_nodedesc(c.desc).chip
        label = f"U{chip}" if chip else f"c{c.guid[-4:]}"
        ends[c.guid] = NodeName(device, "switch", chip=label, system=system)


def unique_name(n: IbNode, desc_count: Mapping[str, int]) -> str:
    """The description when only this node has it, else ``<description> <guid>``."""
    desc = n.desc.strip()
    if desc and desc_count[n.desc] == 1:
        return desc
    return f"{desc} {n.guid}".strip()


def port_label(e: NodeName, port: int) -> tuple[str, LabelKind]:
    """(label, how it was named) of port ``port`` of a node: a switch's number (chip-qualified
    on a multi-chip system: ``U2/149``), an HCA's name (``mlx5_0``, ``mlx5_0/2`` beyond port
    1), else ``port<n>`` (unresolved)."""
    if e.kind == "switch":
        return (f"{e.chip}/{port}" if e.chip else str(port)), "number"
    if e.kind == "server" and e.hca:
        return (e.hca if port == 1 else f"{e.hca}/{port}"), "name"
    return f"port{port}", "unresolved"


def folded_port_label(e: NodeName, port: int) -> tuple[str, LabelKind]:
    """(label, how it was named) of one end of a folded cable: the front-panel port number,
    not chip-qualified (every chip carries the same number), or the HCA."""
    if e.kind == "switch":
        return str(port), "number"
    return (e.hca, "name") if e.hca else (f"port{port}", "unresolved")


def internal_link(a: NodeName, b: NodeName, a_guid: str, b_guid: str) -> bool:
    """True for a link between two ASICs (or a router / SHARP node) of one system."""
    return bool(a.system) and a.system == b.system and a_guid != b_guid


def cable_key(
    a: NodeName, port: int, b: NodeName, rport: int
) -> tuple[str, int, str, str, int, str]:
    """What the per-chip links of one cable share: both devices, port numbers and HCAs
    (a host end's port number left out), lower device first."""
    pa, pb = (0 if a.hca else port), (0 if b.hca else rport)
    if a.device > b.device:
        return (b.device, pb, b.hca, a.device, pa, a.hca)
    return (a.device, pa, a.hca, b.device, pb, b.hca)


def folded_rate(rates: Iterable[str | None]) -> str | None:
    """The rate of a cable from its per-chip links' rates: widths add up (4 × ``1xXDR`` =
    ``4xXDR``); None when one is unknown or the lane speeds differ."""
    lanes = 0
    name = ""
    for rate in rates:
        if rate is None:
            return None
        w, _, n = rate.partition("x")
        lanes += int(w)
        name = n if not name or name == n else "mixed"
    return f"{lanes}x{name}" if lanes and name != "mixed" else None


__all__ = [
    "NODE_PREFIX",
    "IbNode",
    "LabelKind",
    "NodeName",
    "cable_key",
    "folded_port_label",
    "folded_rate",
    "internal_link",
    "name_nodes",
    "node_id",
    "port_label",
    "unique_name",
]
