"""The site's own switch-to-switch port numbering, learned from its cables.

Once both ends of a leaf↔spine (spine↔core) cable are placed, the plan says which
ports that pair of switches should use and the fabric says which ones it does. Taken
pair by pair in port order, the two lists give a *port map*: (site device, site port)
→ the plan's port number. ``drift`` reads it beside the names file (see
:func:`fabric_stack.drift.names.bind_ports`) and compares in the site's numbering, so
a site that numbers its spine ports its own way gets no finding for it, while a cable
on the wrong switch, or a missing one, still does (the map only renumbers the cables
of a pair the plan cables; the surplus of a pair is left unmapped).

What it cannot see: two cables of the same pair swapped with each other (they are
indistinguishable once the convention is learned from them).
"""

from __future__ import annotations

from typing import Any

from fabric_stack.drift.observation import Observation
from fabric_stack.topology.build import FabricTopology

_UPLINKS = ("leaf_spine", "spine_core")

PortMap = dict[tuple[str, str], int]
"""(site device, site port) → the plan's port number."""


def learn_port_map(
    topo: FabricTopology,
    obs: Observation,
    placed: dict[str, str],
    number: dict[Any, Any],
    tier: dict[str, int],
) -> PortMap:
    """The port map of the placed switches' cables (only ports numbered otherwise).

    ``number``: observed (device, port) → its port number as the plan counts them;
    ``tier``: observed switch → 1 leaf, 2 spine, 3 core (a cable's lower end first)."""
    back = {d.name: d.planned_name for d in topo.devices}
    planned: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for link in topo.links:
        if link.role in _UPLINKS:
            key = (back[link.a_device], back[link.b_device])
            planned.setdefault(key, []).append((link.a_port_number, link.b_port_number))
    seen: dict[tuple[str, str], set[tuple[int, str, str]]] = {}
    for a, pa, b, pb in obs.cables:
        ta, tb = tier.get(a), tier.get(b)
        if ta is None or tb is None:
            continue  # a server's cable: its port is its NIC, never renumbered
        if ta > tb:
            a, pa, b, pb = b, pb, a, pa
        qa, qb = placed.get(a), placed.get(b)
        if qa is None or qb is None:
            continue
        na = number.get((a, pa))
        if na is not None and (qa, qb) in planned:
            # a set: LLDP reports a cable from both of its switches
            seen.setdefault((a, b), set()).add((na, pa, pb))
    out: PortMap = {}
    for (a, b), cables in seen.items():
        want = sorted(planned[(placed[a], placed[b])])
        for (n, pa, pb), (wa, wb) in zip(sorted(cables), want, strict=False):
            nb = number.get((b, pb))
            if n != wa:
                out[(a, pa)] = wa
            if nb != wb:
                out[(b, pb)] = wb
    return out


def convention_note(port_map: PortMap, switches: int) -> str:
    """The report line for a learned port map."""
    devices = len({d for d, _ in port_map})
    return (
        f"the site numbers {len(port_map)} switch-to-switch port(s) on {devices} of "
        f"{switches} placed switches otherwise than the plan: learned from the cables "
        "(written beside the names file as its port map; drift compares in that numbering)"
    )


__all__ = ["PortMap", "convention_note", "learn_port_map"]
