"""Fabric managers (InfiniBand subnet managers) as cabled parts of the plan.

A UFM appliance or an OpenSM host is a server with an HCA port in each plane; it
needs a leaf port like any other host. In a fabric whose leaves are full (1,024
GPUs on QM9700s at 1:1: 32 downlinks, 32 servers per SU) there is none left, so
the plan must give some server positions to the managers. NVIDIA's DGX SuperPOD
reference architecture for DGX H100 does exactly that: its 4-SU SuperPOD has 127
DGX nodes, not 128, and 4 UFM appliances (Table 7, "Major components of the
4 SU, 127-node DGX SuperPOD"; :data:`SUPERPOD_H100_RA`). Its compute-fabric
cable table (31 nodes / 252 compute+UFM cables for 1 SU, 127 nodes / 1,020 cables
for 4 SU, four NDR200 UFM-to-leaf cables) is UNVERIFIED here: the public
excerpts we could read confirm the 127 nodes and 4 UFM appliances only.

The rule, applied by :func:`fabric_stack.sizing.size.size_fabric`:

1. ``hosts`` managers per plane (``infiniband.subnet_managers``), each with
   ``sm_links`` cables into each plane; none when they run on the switches
   (``sm_location: switch``) or the fabric is not InfiniBand.
2. Their cables land on the rail leaves of one SU (``sm_attach``: the first SU by
   default — it is the one SU growth never touches, so adding SUs re-cables no
   manager; the RA's counts do not depend on which SU gives the position), slot
   ``s`` on the rail-``(s mod rails) + 1`` leaf, at
   the top of the downlink range (port ``down - s div rails``): manager 1 (the
   master) and manager 2 (the standby) land on different leaves whenever there
   are two rails or more.
3. That takes ``ceil(hosts × links / rails)`` server positions of the SU. Where
   the SU has that many free downlinks (a partial SU, or ``su_nodes`` below the
   leaf's downlinks) nothing else changes; otherwise the SU holds fewer servers
   and the servers that no longer fit move to the last SU when it has free
   positions, else are dropped from the plan (the RA's choice: one DGX fewer),
   never moved to a new SU that would cost a full set of leaves and spine ports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabric_stack.errors import CapacityError
from fabric_stack.spec.model import FabricSpec

if TYPE_CHECKING:
    from fabric_stack.sizing.model import SizingPlan

SUPERPOD_H100_RA = (
    "https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/"
    "latest/ (NVIDIA DGX SuperPOD Reference Architecture featuring DGX H100, RA-11333-001; "
    "Table 7: 4 SU, 127-node DGX SuperPOD with 4 UFM appliances)"
)
"""The reference design whose port-freeing rule :mod:`fabric_stack.sizing.managers` applies."""

MANAGER_LINK_ROLE = "manager_leaf"
"""Link role of a manager-host-to-leaf cable (part of the InfiniBand compute fabric)."""

PREFIX = {"ufm": "ufm", "opensm-host": "sm-host"}
"""Device-name prefix of a manager host by kind."""


@dataclass(frozen=True)
class ManagerShape:
    """What the manager rule decided: hosts, cables per plane, where, and at what cost."""

    hosts: int
    """Manager hosts (0 when the SMs run on switches or the fabric is not InfiniBand)."""
    links: int
    """Cables from each host into each plane."""
    attach_su: int
    """SU (1-based) whose rail leaves take the cables; 0 when there are none."""
    positions: int
    """Server positions of that SU given to the managers."""
    removed: int
    """Servers the spec asked for that no longer fit (dropped, as the RA drops a DGX)."""

    @property
    def ports_per_plane(self) -> int:
        """Manager cables (= leaf ports) per plane."""
        return self.hosts * self.links


def plan_manager_shape(plan: SizingPlan) -> ManagerShape:
    """The :class:`ManagerShape` a sizing plan recorded."""
    return ManagerShape(
        plan.managers,
        plan.manager_links,
        plan.manager_su,
        plan.manager_positions,
        plan.servers_removed,
    )


def manager_hosts(spec: FabricSpec) -> int:
    """Manager hosts the plan cables: 0 for switch-embedded SMs or a non-InfiniBand fabric."""
    ib = spec.infiniband
    if spec.fabric != "infiniband" or ib.sm_location == "switch":
        return 0
    return ib.subnet_managers


def manager_name(spec: FabricSpec, index: int) -> str:
    """Device name of manager host ``index`` (1-based): ``ufm-1``, ``sm-host-2``."""
    return f"{PREFIX[spec.infiniband.sm_location]}-{index}"


def manager_slot(slot: int, rails: int, down: int) -> tuple[int, int]:
    """(rail, leaf port) of manager cable ``slot`` (0-based, host-major): rule 2."""
    return slot % rails + 1, down - slot // rails


def place_managers(
    spec: FabricSpec, sizes: list[int], su_nodes: int, down: int
) -> tuple[list[int], ManagerShape]:
    """Rule 3: servers per SU once the managers have their ports, and the shape decided.

    ``sizes`` are the servers per SU before the managers; the result keeps the SU
    count. Raises :class:`CapacityError` (naming ``infiniband.subnet_managers``)
    when the managers would take every position of the SU.
    """
    hosts = manager_hosts(spec)
    links = spec.infiniband.sm_links
    if not hosts or not sizes:
        return sizes, ManagerShape(0, links, 0, 0, 0)
    rails = spec.rails
    positions = math.ceil(hosts * links / rails)
    at = len(sizes) - 1 if spec.infiniband.sm_attach == "last-su" else 0
    cap = min(su_nodes, down - positions)
    if cap < 1:
        raise CapacityError(
            "infiniband.subnet_managers",
            f"{hosts} manager(s) × {links} cable(s) need {positions} server positions of an "
            f"SU whose leaves have {down} downlinks",
            "fewer managers or sm_links, or sm_location: switch",
        )
    out = list(sizes)
    overflow = max(0, out[at] - cap)
    out[at] -= overflow
    last = len(out) - 1
    if overflow and at != last:
        room = su_nodes - out[last]
        moved = min(room, overflow)
        out[last] += moved
        overflow -= moved
    return out, ManagerShape(hosts, links, at + 1, positions, overflow)


def manager_ports_on_rail(shape: ManagerShape, rail: int, rails: int, down: int) -> list[int]:
    """Leaf ports the managers use on the rail-``rail`` leaf of the attach SU (one plane)."""
    out = []
    for slot in range(shape.ports_per_plane):
        r, port = manager_slot(slot, rails, down)
        if r == rail:
            out.append(port)
    return out


def sizing_note(shape: ManagerShape, kind: str, gpus_per_node: int) -> str:
    """One line for the card and the report: what the managers cost, or '' when nothing."""
    if not shape.hosts:
        return ""
    what = "UFM" if kind == "ufm" else "OpenSM host"
    head = (
        f"{shape.hosts} {what}(s) per plane cabled to the rail leaves of SU {shape.attach_su} "
        f"({shape.ports_per_plane} leaf port(s) per plane, {shape.positions} server position(s))"
    )
    if shape.removed:
        return (
            f"{head}: {shape.removed} server position(s) given to the managers, "
            f"{shape.removed * gpus_per_node} GPUs fewer than asked (the DGX SuperPOD RA rule)"
        )
    return head + ": free downlinks, no server removed"


RA_RULE = "NVIDIA DGX SuperPOD RA rule"
"""Why a server position goes to the fabric managers: the reference architecture drops a DGX."""


def managers_took(removed: int, su: int = 0) -> str:
    """Why fewer servers are built than asked, or '' when none was removed.

    ``1 server position(s) in SU 1 given to the fabric managers (NVIDIA DGX SuperPOD RA
    rule)``; ``su`` 0 leaves the SU out (a Pulumi Fabric record does not carry it). The
    card, ``plan``/``apply``, the stack outputs and the design report all say it this way.
    """
    if not removed:
        return ""
    where = f" in SU {su}" if su else ""
    return f"{removed} server position(s){where} given to the fabric managers ({RA_RULE})"


def asked_vs_built(asked: int, built: int, removed: int, su: int = 0) -> str:
    """``504 of the 512 GPUs asked are built: <why>``, or '' when every GPU asked is built."""
    if built == asked:
        return ""
    why = managers_took(removed, su)
    return f"{built:,} of the {asked:,} GPUs asked are built" + (f": {why}" if why else "")
