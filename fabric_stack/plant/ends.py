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
from fabric_stack.topology.build import Device
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


__all__ = ["end_label_port", "host_end", "switch_cage"]
