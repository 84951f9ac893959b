"""Switch port names per OS, read through the switch model's real port layout.

Every spelling is turned into a *cage* and a *lane* (both 1-based), then
into the plan's logical port number ``(cage - 1) × ports_per_cage + lane``,
and checked against the model: a cage beyond the model's cages or a lane
beyond the ports one cage gives at the planned speed cannot exist, and the
engine reports it as ``unknown_port`` (never as a cable to move).

The spellings are each switch OS's, read by its module in :mod:`fabric_stack.nos`
(``N`` cage, ``M`` lane / port of the cage):

* bare numbers ``7`` (ibnetdiscover) and chip-qualified ``U2/7`` (a
  multi-ASIC system such as the Q3400, see the ibnetdiscover reader);
* MLNX-OS and Onyx ``1/N``, ``1/N/M``, ``Eth1/N/M``, ``IB1/N/M``;
* Cumulus Linux ``swpN``, ``swpNsM`` (M counted from 0);
* NVOS ``swNpM`` / ``swNpMsK`` (front-panel port N, logical port M; NVIDIA's NVOS
  User Manual for NVLink Switches, "NVLink Interface": ``sw<x>`` is the front-panel
  port, ``p<x>s<x>`` the logical port. That Q3400 InfiniBand switches name ports the
  same way (``sw37p1``) is taken from real UFM tooling and is UNVERIFIED; the plan
  labels Q3400 ports this way, see :func:`fabric_stack.naming.devices.switch_port_label`);
* Arista EOS ``EthernetN/M``, ``EtN/M``, modular ``EthernetS/N/M``, and a bare
  ``EthernetN`` on a model without a SONiC lane table;
* SONiC ``EthernetN`` where N is the first SerDes lane of the port
  (``Ethernet184`` on an SN5600 is cage 24, its first 400G port) and SONiC's
  aliases ``etpN``, ``etpNa``/``etpNb``…; the lanes per cage come from the catalog
  record's SONiC platform (:attr:`fabric_stack.hardware.switches.SonicPlatform.lanes_per_cage`,
  see :func:`sonic_lanes_per_cage`);
* generic ``pN`` / ``portN``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from fabric_stack.drift.plan import PortScheme
from fabric_stack.hardware.switches import CATALOG
from fabric_stack.nos import PortRef
from fabric_stack.nos.cumulus import CUMULUS
from fabric_stack.nos.eos import EOS
from fabric_stack.nos.generic import GENERIC
from fabric_stack.nos.mlnx_os import MLNX_OS, parse_ib_number
from fabric_stack.nos.nvos import NVOS
from fabric_stack.nos.sonic import SONIC


def sonic_lanes_per_cage(model: str) -> int:
    """SerDes lanes per cage in SONiC's port names of catalog key ``model``, from its record
    (0: not a catalog model, or one with no SONiC platform: generic switches have none)."""
    record = CATALOG.get(model)
    sonic = record.sonic if record is not None else None
    return sonic.lanes_per_cage if sonic is not None else 0


_NUMBERED = ("ibnetdiscover", "chip", "generic")
"""Spellings that state the logical port number itself (bounded by the model only)."""


@lru_cache(maxsize=64)
def _readers(model: str) -> tuple[Callable[[str], PortRef | None], ...]:
    """The switch OSes' port readers in the order they are tried on catalog model ``model``.
    A bare ``EthernetN`` is SONiC's first SerDes lane on a model with a SONiC lane table,
    else an EOS cage."""
    sonic_first = bool(sonic_lanes_per_cage(model))
    eth = (SONIC.parse_port, EOS.parse_port) if sonic_first else (EOS.parse_port,)
    return (
        parse_ib_number,
        CUMULUS.parse_port,
        NVOS.parse_port,
        *eth,
        MLNX_OS.parse_port,
        SONIC.parse_port,
        GENERIC.parse_port,
    )


def max_port(scheme: PortScheme) -> int:
    """The highest logical port the model has at the planned speed (0: unknown, no limit)."""
    if scheme.cages:
        return scheme.cages * scheme.ports_per_cage
    return scheme.radix


def _sonic(lane_index: int, scheme: PortScheme) -> int | None:
    """SONiC ``Ethernet<first lane>`` → logical port, if the port starts on a port boundary
    (of its cage's layout: a mixed leaf's uplink cages split coarser)."""
    lanes = sonic_lanes_per_cage(scheme.model)
    cage, offset = divmod(lane_index, lanes) if lanes else (0, 0)
    ports = scheme.lanes(cage + 1)
    if not lanes or lanes % ports:
        return None
    per_port = lanes // ports
    if offset % per_port:
        return None  # not the first lane of a port at the planned speed
    return scheme.number(cage + 1, offset // per_port + 1)


def _within(n: int, scheme: PortScheme) -> int | None:
    top = max_port(scheme)
    if n < 1 or (top and n > top) or (scheme.up_cage and scheme.label(n) is None):
        return None  # beyond the model, or a lane inside a mixed leaf's uplink port
    return n


def port_number(raw: str, scheme: PortScheme) -> int | None:
    """Logical port number of ``raw`` on a switch with ``scheme``; ``None`` if it cannot exist.

    Each switch OS module reads its own spellings (:meth:`fabric_stack.nos.SwitchOs.parse_port`);
    the first that recognises ``raw`` says what it names, and the model's layout bounds it.
    """
    s = raw.strip()
    for read in _readers(scheme.model):
        ref = read(s)
        if ref is None:
            continue
        if ref.spelling in _NUMBERED:
            return _within(ref.number, scheme)
        if ref.serdes >= 0:
            return _sonic(ref.serdes, scheme)
        return scheme.number(ref.cage, ref.lane)
    return None
