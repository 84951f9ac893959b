"""A cable end's hardware: which physical cage it plugs into and what kind of cage that is.

The module count of a bill of materials is one per *cage* with a lit port, at both ends
(:mod:`fabric_stack.plant.order`), so both ends need their physical cage:

* a switch port's cage is its front-panel cage (``1/8`` for the split port ``1/8/2``);
* a server's compute port sits in the cage its profile names (a DGX H100's ``mlx5_0`` and
  ``mlx5_5`` share ``OSFP4``); a port the profile gives no cage, and every storage or
  in-band port (one QSFP112 or OSFP cage per port of a dual-port card), is its own cage.

The cage *kind* picks the module (:func:`fabric_stack.hardware.optics.module_for`) and
which cables can be installed there (a splitter's single-port ends cannot go in a
twin-port server cage that carries two rails to two leaves).
"""

from __future__ import annotations

import re

from fabric_stack.hardware.nodes import NodeProfile
from fabric_stack.hardware.optics import CageKind
from fabric_stack.naming.devices import cage_of
from fabric_stack.topology.build import HOST_ROLES, Device, FabricTopology
from fabric_stack.topology.model import Link

_SWP_SPLIT = re.compile(r"(swp\d+)s\d+")
_NVOS = re.compile(r"(sw\d+)p\d+")


def switch_cage(port: str) -> str:
    """The cage a switch port sits in (the grammars of :data:`fabric_stack.naming.devices.
    PORT_LABEL_TEMPLATES`): ``1/8`` for the split port ``1/8/2``, ``swp8`` for ``swp8s1``,
    ``sw8`` for NVOS's ``sw8p2``, the port itself when it is not split."""
    if port.startswith("swp"):
        m = _SWP_SPLIT.fullmatch(port)
        return m.group(1) if m else port
    if port.startswith("sw"):
        m = _NVOS.fullmatch(port)
        return m.group(1) if m else port
    return port.rsplit("/", 1)[0] if port.count("/") == 2 else port


def host_end(prof: NodeProfile, d: Device, k: Link) -> tuple[CageKind, str]:
    """(cage kind, cage name) of link ``k``'s a-end on host ``d`` (a server or a manager)."""
    if k.speed_gbps <= 1:
        return "rj45", k.a_port
    if d.role != "server":
        return "osfp", k.a_port  # a fabric manager's HCA port: a single-port card (assumed)
    if k.network == "compute":
        cage = prof.cage_of(k.a_port)
        if cage and prof.ports_per_cage(k.a_port) > 1:
            return "osfp-twin", cage
        return prof.compute_cage, cage or k.a_port
    return prof.access_cage, k.a_port


def end_label_port(prof: NodeProfile, d: Device, port: str) -> str:
    """A host port as a cable label names it: the OS name with the rear-panel cage and port
    of the profile beside it (``mlx5_0 (OSFP4 P2)``), the OS name alone when unknown."""
    if d.role != "server":
        return port
    rear = prof.rear_panel(port)
    return f"{port} ({rear})" if rear else port


def lit_compute_cages(topo: FabricTopology) -> tuple[int, int]:
    """Compute cages with a lit port: (server side, switch side), whatever plugs in them.

    What the sizing card counts as transceivers (it assumes a module in every lit cage);
    the order may plug a DAC instead, so this is the check of the link list, not a count
    of modules to buy.
    """
    plan = topo.plan
    by_name = {d.name: d for d in topo.devices}
    prof = plan.spec.node_profile
    server: set[tuple[str, str]] = set()
    switch: set[tuple[str, int]] = set()
    for k in topo.links:
        if k.network != "compute":
            continue
        a = by_name[k.a_device]
        if a.role in HOST_ROLES:
            cage = (prof.cage_of(k.a_port) if a.role == "server" else "") or k.a_port
            server.add((k.a_device, cage))
        else:
            ppc = plan.tier_ports_per_cage(a.role)  # each tier's model at its speed
            switch.add((k.a_device, cage_of(k.a_port_number, ppc)[0]))
        ppc = plan.tier_ports_per_cage(by_name[k.b_device].role)
        switch.add((k.b_device, cage_of(k.b_port_number, ppc)[0]))
    return len(server), len(switch)


__all__ = ["end_label_port", "host_end", "lit_compute_cages", "switch_cage"]
