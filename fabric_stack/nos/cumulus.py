"""NVIDIA Cumulus Linux (NVUE) on Spectrum switches: ``swp<cage>`` / ``swp<cage>s<lane - 1>``.

Also the VLAN interface (SVI) spelling, and the platform defaults ``render cumulus``
relies on: the QoS profile every port takes, the PFC cable lengths it accepts, the
ASICs with adaptive routing and NVUE's ECMP limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from fabric_stack.nos.declare import PlatformDefaults, PortRef, SwitchOs, for_name
from fabric_stack.text.numbers import whole_metres

CUMULUS_PORT = re.compile(r"^swp(\d+)(?:s(\d+))?$", re.I)
"""A Cumulus port label: ``swp<cage>`` or ``swp<cage>s<lane - 1>`` (the one spelling)."""


@dataclass(frozen=True, slots=True)
class CumulusDefaults(PlatformDefaults):
    """What Cumulus Linux 5.x supplies that ``render cumulus`` relies on."""

    qos_profile: str = "default-global"
    """The NVUE QoS profile that applies to every port (the RoCE profile configures it)."""
    cable_length_range_m: tuple[int, int] = (1, 100000)
    """``nv set qos pfc <profile> cable-length 1-100000`` (NVUE reference, QoS): whole metres."""
    adaptive_routing_asics: tuple[str, ...] = ("Spectrum-2", "Spectrum-3", "Spectrum-4")
    """ASICs with adaptive routing in Cumulus Linux (5.6+: Spectrum-4; Spectrum-2/3 beta)."""
    ebgp_multipath_max: int = 128
    """NVUE reference: ``multipaths ebgp`` accepts 1-128 (the spec allows up to 256)."""

    def cable_length(self, run_m: float) -> int:
        """PFC headroom cable length, metres, of a port whose planned cable is ``run_m`` long:
        rounded up to a whole metre (a shorter figure under-sizes the headroom and drops
        lossless traffic; a longer one only costs buffer), within NVUE's range."""
        low, high = self.cable_length_range_m
        return min(high, max(low, whole_metres(run_m)))


CUMULUS_DEFAULTS = CumulusDefaults(source="Cumulus Linux 5.12 user guide and NVUE reference")
"""Cumulus Linux's platform defaults."""


def cumulus_cage_lane(label: str) -> tuple[int, int] | None:
    """(cage, lane), both 1-based, of a Cumulus port label (``swp5s1`` → (5, 2)); else None."""
    m = CUMULUS_PORT.match(label)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)) + 1 if m.group(2) is not None else 1


def vlan_interface(vid: int) -> str:
    """The netdev of VLAN ``vid``'s SVI (``vlan101``): where a leaf's rail gateway lives, as
    NVUE names it and FRR (and the twin's ``ip``) address it."""
    return f"vlan{vid}"


class Cumulus(SwitchOs):
    """Cumulus Linux / NVUE: ``swpN`` and ``swpNsM`` (M from 0); ``#`` comments."""

    name = "cumulus"
    families = ("cumulus",)
    comment = "#"
    defaults = CUMULUS_DEFAULTS
    split_template = "swp{cage}s{lane0}"
    whole_template = "swp{cage}"

    def parse_port(self, name: str) -> PortRef | None:
        """``swpN`` (lane 1) or ``swpNsM`` (lane M + 1), any case."""
        cage_lane = cumulus_cage_lane(name)
        return PortRef("cumulus", *cage_lane) if cage_lane else None

    def parse_label(self, label: str) -> PortRef | None:
        """The plan's label read back (the same spelling as :meth:`parse_port`)."""
        return self.parse_port(label)

    def ufm_port(self, label: str, number: int, ports_per_cage: int) -> str:
        """Ethernet switches: UFM's P2P file takes the interface name the NOS prints."""
        return label


CUMULUS = cast(Cumulus, for_name(Cumulus.name))
"""The one instance (also registered)."""
