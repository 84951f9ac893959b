"""MLNX-OS / Onyx on InfiniBand (Quantum-2) switches, and the names OpenSM, UFM and
ibnetdiscover give their ports.

The plan labels a port ``1/<cage>/<lane>`` on a split cage (``1/<cage>`` otherwise; the
leading 1 is the chassis slot), as ``show interfaces ib`` prints it. The InfiniBand tools
name the same port by its 1-based logical number (``ibnetdiscover``, OpenSM), on a
multi-ASIC system chip-qualified (``U2/7``, see the ibnetdiscover reader), and UFM's
cable-validation P2P file by ``<cage>/<lane>`` (:meth:`SwitchOs.ufm_port`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from fabric_stack.nos.declare import PlatformDefaults, PortRef, SwitchOs, for_name

_MLNX = re.compile(r"^(?:eth|ib)?(\d+)/(\d+)(?:/(\d+))?$", re.I)
_CHIP = re.compile(r"^U(\d+)/(\d+)$", re.I)


@dataclass(frozen=True, slots=True)
class InfinibandDefaults(PlatformDefaults):
    """An InfiniBand switch OS supplies no lossless-Ethernet defaults: the subnet manager
    (``render opensm``/``render infiniband``) holds the fabric's settings."""


def parse_ib_number(name: str) -> PortRef | None:
    """ibnetdiscover's bare logical number (``7``) or a chip-qualified one (``U2/7``)."""
    if name.isdigit():
        return PortRef("ibnetdiscover", number=int(name))
    if m := _CHIP.match(name):
        return PortRef("chip", number=int(m.group(2)))
    return None


class MlnxOs(SwitchOs):
    """MLNX-OS / Onyx: ``1/<cage>/<lane>``, ``Eth1/…``, ``IB1/…``; ``##`` comments."""

    name = "mlnx-os"
    families = ("mlnx-os",)
    comment = "##"
    defaults = InfinibandDefaults(source="MLNX-OS / Onyx user manual (interfaces ib)")
    split_template = "1/{cage}/{lane}"
    whole_template = "1/{cage}"

    def parse_port(self, name: str) -> PortRef | None:
        """``1/N``, ``1/N/M``, ``Eth1/N/M``, ``IB1/N/M`` (the leading 1 is the chassis slot)."""
        if m := _MLNX.match(name):
            return PortRef("mlnx", int(m.group(2)), int(m.group(3) or 1))
        return None


MLNX_OS = cast(MlnxOs, for_name(MlnxOs.name))
"""The one instance (also registered)."""
