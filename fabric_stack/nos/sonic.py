"""SONiC on Spectrum-4 (SN5600): ``Ethernet<first SerDes lane>`` and the ``etp<cage><a|b…>``
aliases, and the SN5600 platform defaults ``render sonic`` merges its rows onto.

A port's name is the first of its SerDes lanes: on an SN5600 (8 lanes per cage) cage 24's
first 400G port is ``Ethernet184``; the lanes per cage come from the catalog record's
SONiC platform (:attr:`fabric_stack.hardware.switches.SonicPlatform.lanes_per_cage`), so
the layout must carry them (:attr:`~fabric_stack.nos.declare.PortLayout.lanes_per_cage`).

Dynamic port breakout (a leaf whose cages do not all split alike): SONiC names each cage by
its parent port (platform.json's key, ``Ethernet<first lane of the cage>``) and its mode by
one of the cage's ``breakout_modes`` (``2x400G[200G,…]``: ports × default speed, then the
other speeds a port of that mode may run at). ``BREAKOUT_CFG|<parent>`` holds the cage's
mode and ``hwsku.json`` its default at first boot. The grammar is SONiC's ``BRKOUT_PATTERN``
(src/sonic-config-engine/portconfig.py, sonic-net/sonic-buildimage@086b03bd70f9), single-
group modes only (no ``2x200G(4)+1x400G(4)``: no SN5600 cage offers one). Ports of a mode
are named as :func:`sonic_port` names them, which is what ``BreakoutCfg.get_config`` of the
same file derives (validate/sonic_defaults.py checks every rendered port against it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import cast

from fabric_stack.nos.declare import PlatformDefaults, PortLayout, PortRef, SwitchOs, for_name
from fabric_stack.text.numbers import whole_metres

_ETH = re.compile(r"^(?:ethernet|et)(\d+)$", re.I)
_ETP = re.compile(r"^etp(\d+)([a-h])?$", re.I)
_MODE = re.compile(r"^(\d{1,6})x(\d{1,6})G(?:\[((?:\d{1,6}G,?)*)\])?$")
"""One group of SONiC's ``BRKOUT_PATTERN`` (portconfig.py) with speeds in G and no
``(lanes)`` suffix: ``<ports>x<default speed>G[<other speeds>]``."""


@dataclass(frozen=True, slots=True)
class SonicDefaults(PlatformDefaults):
    """The SN5600 SONiC defaults ``render sonic`` relies on, and how it names its own rows."""

    lossless_pgs: tuple[int, ...] = (3, 4)
    """Priority groups SONiC's SN5600 defaults already make lossless (``BUFFER_PG <port>|3-4``
    profile ``NULL`` in dynamic mode): ``generate_pg_profiles`` of
    device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128/buffers_defaults_objects.j2,
    sonic-net/sonic-buildimage@086b03bd70f9 (ACS-SN5600's file is identical);
    validate/sonic_defaults.py checks it against the rendered template of every HwSKU used."""
    default_tables: tuple[str, ...] = (
        "BUFFER_POOL",
        "BUFFER_PROFILE",
        "BUFFER_PORT_INGRESS_PROFILE_LIST",
        "BUFFER_PORT_EGRESS_PROFILE_LIST",
        "BUFFER_PG",
        "BUFFER_QUEUE",
    )
    """Tables SONiC renders from the HwSKU's ``buffers_dynamic.json.j2`` that ``config load``
    of our file keeps: we add rows but never restate or change a default row."""
    generic_default_tables: tuple[str, ...] = (
        "CABLE_LENGTH",
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
        "LOSSLESS_TRAFFIC_PATTERN",
        "DSCP_TO_TC_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE",
        "PORT_QOS_MAP",
        "SCHEDULER",
        "QUEUE",
        "WRED_PROFILE",
    )
    """Tables SONiC's generic templates fill (files/build_templates/buffers_config.j2 and
    qos_config.j2; neither is in ../shared/schemas: UNVERIFIED)."""
    routing_mode: str = "split-unified"
    """``docker_routing_config_mode``: FRR reads one integrated ``frr.conf`` (``render sonic``)."""
    buffer_model: str = "dynamic"
    """buffermgrd sizes lossless headroom from ``CABLE_LENGTH``."""
    qos_map: str = "ROCE"
    """Name of every QoS map the renderer writes (beside SONiC's ``AZURE`` ones)."""
    device_type: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType(
            {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}
        )
    )
    """Fabric role → DEVICE_METADATA type (SONiC's T0/T1/T2 names)."""
    pg_profile_cable_lengths_m: Mapping[str, tuple[int, ...]] = field(
        default_factory=lambda: MappingProxyType(
            {
                "ACS-SN5600": (5, 40, 300),
                "Mellanox-SN5600-O128": (5, 40, 300),
                "Mellanox-SN5600-V256": (5, 40, 300),
                "Mellanox-SN5600-C256S1": (5, 40, 250, 300, 1000),
                "Mellanox-SN5600-C224O8": (5, 40, 250, 1000),
            }
        )
    )
    """Per HwSKU, the cable lengths of its lossless headroom table, metres, every speed having
    a row for each (``device/mellanox/x86_64-nvidia_sn5600-r0/<HwSKU>/pg_profile_lookup.ini``,
    sonic-net/sonic-buildimage@086b03bd70f9; tests/unit/test_roce_host_side.py reads them from
    ../shared/schemas). buffermgrd's static model looks the port's (speed, cable) up there;
    the dynamic model computes the headroom from the length itself."""

    def cable_length(self, run_m: float, hwsku: str) -> int:
        """``CABLE_LENGTH`` of a port whose planned cable is ``run_m`` long, metres: the
        shortest length of ``hwsku``'s headroom table that covers the run (so the static
        buffer model finds its row too); a run past the table (or an HwSKU without one) is
        rounded up to a whole metre, which only the dynamic model (ours) sizes."""
        whole = whole_metres(run_m)
        table = self.pg_profile_cable_lengths_m.get(hwsku, ())
        return next((c for c in table if c >= whole), whole)


SONIC_DEFAULTS = SonicDefaults(source="sonic-net/sonic-buildimage@086b03bd70f9 (SN5600 HwSKUs)")
"""SONiC's SN5600 platform defaults."""


@lru_cache(maxsize=4096)  # a few hundred distinct ports, asked for once per switch
def sonic_port(per_cage: int, number: int, ppc: int) -> tuple[str, str, str]:
    """(name, lanes, alias) of logical port ``number``: ``Ethernet<first lane>``, ``etp<cage><x>``,
    on a platform with ``per_cage`` SerDes lanes per cage and ``ppc`` ports per cage."""
    cage, lane = divmod(number - 1, ppc)
    width = per_cage // ppc
    first = cage * per_cage + lane * width
    alias = f"etp{cage + 1}" + (chr(ord("a") + lane) if ppc > 1 else "")
    return f"Ethernet{first}", ",".join(str(first + i) for i in range(width)), alias


@dataclass(frozen=True, slots=True)
class BreakoutMode:
    """A cage's breakout mode as platform.json spells it, parsed."""

    name: str
    """The mode as written (the BREAKOUT_CFG value)."""
    ports: int
    """Ports the cage splits into."""
    default_gbps: int
    """Speed of each port when none is set."""
    speeds_gbps: frozenset[int]
    """Every speed a port of the mode may run at (the default included)."""


def parse_breakout_mode(name: str) -> BreakoutMode | None:
    """``2x400G[200G,100G]`` → ports 2, default 400G, speeds {400, 200, 100}; None when the
    name is not one single-group mode of SONiC's grammar."""
    m = _MODE.match(name)
    if m is None:
        return None
    others = {int(s.removesuffix("G")) for s in (m.group(3) or "").split(",") if s}
    default = int(m.group(2))
    return BreakoutMode(name, int(m.group(1)), default, frozenset({default, *others}))


def breakout_mode(modes: Sequence[str], ports_per_cage: int, speed_gbps: int) -> str | None:
    """The platform's mode that splits a cage into ``ports_per_cage`` ports able to run at
    ``speed_gbps`` (a mode whose default speed it is first), or None when none does."""
    fits = [
        m
        for m in map(parse_breakout_mode, modes)
        if m is not None and m.ports == ports_per_cage and speed_gbps in m.speeds_gbps
    ]
    fits.sort(key=lambda m: m.default_gbps != speed_gbps)
    return fits[0].name if fits else None


def sonic_parent(per_cage: int, cage: int) -> str:
    """The parent port of 1-based ``cage`` (platform.json's key, BREAKOUT_CFG's)."""
    return f"Ethernet{(cage - 1) * per_cage}"


def hwsku_json(modes: Mapping[str, str]) -> dict[str, dict[str, dict[str, str]]]:
    """``hwsku.json`` giving each parent port its default breakout mode (the first-boot
    split; sonic-config-engine reads it with platform.json in ``parse_platform_json_file``)."""
    return {"interfaces": {p: {"default_brkout_mode": m} for p, m in modes.items()}}


class Sonic(SwitchOs):
    """SONiC: ``Ethernet<first lane>`` (needs the lane table), aliases ``etpN[a-h]``; ``#``."""

    name = "sonic"
    comment = "#"
    defaults = SONIC_DEFAULTS

    def port_name(self, number: int, layout: PortLayout) -> str:
        """``Ethernet<first SerDes lane>`` of logical port ``number``."""
        if not layout.lanes_per_cage:
            raise ValueError("SONiC port names need the platform's lanes per cage")
        return sonic_port(layout.lanes_per_cage, number, layout.ports_per_cage)[0]

    def parse_port(self, name: str) -> PortRef | None:
        """``EthernetN``/``EtN`` (first SerDes lane N) or an alias ``etpN``/``etpNa``…"""
        if m := _ETH.match(name):
            return PortRef("sonic", serdes=int(m.group(1)))
        if m := _ETP.match(name):
            lane = ord(m.group(2).lower()) - ord("a") + 1 if m.group(2) else 1
            return PortRef("sonic-alias", int(m.group(1)), lane)
        return None

    def parse_label(self, label: str) -> PortRef | None:
        """SONiC names are never plan labels (the plan labels SN5600 ports as Cumulus does)."""
        return None


SONIC = cast(Sonic, for_name(Sonic.name))
"""The one instance (also registered)."""
