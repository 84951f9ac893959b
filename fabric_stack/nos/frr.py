"""FRR, the routing suite on the Ethernet switches (Cumulus Linux, SONiC, the twin).

FRR has no port grammar of its own: it names the Linux netdevs of the OS it runs on. The
plan's labels are those netdevs on Cumulus (``swp1s0``), which is what ``render frr``
writes; ``render sonic`` renames them to SONiC's (:mod:`fabric_stack.nos.sonic`). So the
FRR grammar here is the kernel's ``swp`` spelling, the one its files carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from fabric_stack.nos.cumulus import cumulus_cage_lane
from fabric_stack.nos.declare import PlatformDefaults, PortRef, SwitchOs, for_name


@dataclass(frozen=True, slots=True)
class FrrDefaults(PlatformDefaults):
    """The FRR release and profile the rendered files are written for."""

    version: str = "8.4"
    """``frr version`` line: the release whose ``vtysh --dryrun`` accepts the files."""
    profile: str = "datacenter"
    """``frr defaults``: fast timers, no eBGP policy requirement."""
    peer_group: str = "FABRIC"
    """The peer group every fabric neighbour belongs to."""


FRR_DEFAULTS = FrrDefaults(source="FRR 8.4 user guide, BGP and Basic commands")
"""FRR's defaults as the renderers use them."""


class Frr(SwitchOs):
    """FRR: Linux netdev names as the host NOS spells them (``swpN``/``swpNsM``); ``!``."""

    name = "frr"
    comment = "!"
    defaults = FRR_DEFAULTS
    split_template = "swp{cage}s{lane0}"
    whole_template = "swp{cage}"

    def parse_port(self, name: str) -> PortRef | None:
        """A netdev name in the ``swp`` spelling."""
        cage_lane = cumulus_cage_lane(name)
        return PortRef("frr", *cage_lane) if cage_lane else None


FRR = cast(Frr, for_name(Frr.name))
"""The one instance (also registered)."""
