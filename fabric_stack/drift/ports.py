"""Switch port names per OS, read through the switch model's real port layout.

Every spelling is turned into a *cage* and a *lane* (both 1-based), then
into the plan's logical port number ``(cage - 1) × ports_per_cage + lane``,
and checked against the model: a cage beyond the model's cages or a lane
beyond the ports one cage gives at the planned speed cannot exist, and the
engine reports it as ``unknown_port`` (never as a cable to move).

Spellings read (``N`` cage, ``M`` lane / port of the cage):

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

import re

from fabric_stack.drift.plan import PortScheme
from fabric_stack.hardware.switches import CATALOG
from fabric_stack.naming.devices import cumulus_cage_lane


def sonic_lanes_per_cage(model: str) -> int:
    """SerDes lanes per cage in SONiC's port names of catalog key ``model``, from its record
    (0: not a catalog model, or one with no SONiC platform: generic switches have none)."""
    record = CATALOG.get(model)
    sonic = record.sonic if record is not None else None
    return sonic.lanes_per_cage if sonic is not None else 0


_CHIP = re.compile(r"^U(\d+)/(\d+)$", re.I)
_MLNX = re.compile(r"^(?:eth|ib)?(\d+)/(\d+)(?:/(\d+))?$", re.I)
_NVOS = re.compile(r"^sw(\d+)p(\d+)(?:s(\d+))?$", re.I)
_ETH = re.compile(r"^(?:ethernet|et)(\d+)(?:/(\d+))?(?:/(\d+))?$", re.I)
_ETP = re.compile(r"^etp(\d+)([a-h])?$", re.I)
_GENERIC = re.compile(r"^(?:p|port)\s*(\d+)$", re.I)


def max_port(scheme: PortScheme) -> int:
    """The highest logical port the model has at the planned speed (0: unknown, no limit)."""
    if scheme.cages:
        return scheme.cages * scheme.ports_per_cage
    return scheme.radix


def _number(cage: int, lane: int, scheme: PortScheme) -> int | None:
    ppc = scheme.ports_per_cage
    if cage < 1 or lane < 1 or lane > ppc or (scheme.cages and cage > scheme.cages):
        return None
    return (cage - 1) * ppc + lane


def _sonic(lane_index: int, scheme: PortScheme) -> int | None:
    """SONiC ``Ethernet<first lane>`` → logical port, if the port starts on a port boundary."""
    lanes = sonic_lanes_per_cage(scheme.model)
    if not lanes or lanes % scheme.ports_per_cage:
        return None
    per_port = lanes // scheme.ports_per_cage
    cage, offset = divmod(lane_index, lanes)
    if offset % per_port:
        return None  # not the first lane of a port at the planned speed
    return _number(cage + 1, offset // per_port + 1, scheme)


def _within(n: int, scheme: PortScheme) -> int | None:
    top = max_port(scheme)
    return n if n >= 1 and (not top or n <= top) else None


def port_number(raw: str, scheme: PortScheme) -> int | None:
    """Logical port number of ``raw`` on a switch with ``scheme``; ``None`` if it cannot exist."""
    s = raw.strip()
    if s.isdigit():
        return _within(int(s), scheme)
    if m := _CHIP.match(s):
        return _within(int(m.group(2)), scheme)
    if cage_lane := cumulus_cage_lane(s):
        return _number(*cage_lane, scheme)
    if m := _NVOS.match(s):
        return _number(int(m.group(1)), int(m.group(2)), scheme)
    if m := _ETH.match(s):
        parts = [int(g) for g in m.groups() if g is not None]
        if len(parts) == 1:
            if sonic_lanes_per_cage(scheme.model):
                return _sonic(parts[0], scheme)
            return _number(parts[0], 1, scheme)
        if len(parts) == 3:  # modular chassis: slot/cage/lane
            parts = parts[1:]
        return _number(parts[0], parts[1], scheme)
    if m := _MLNX.match(s):
        # MLNX-OS / Onyx: 1/<cage>[/<lane>] (the leading 1 is the chassis slot).
        return _number(int(m.group(2)), int(m.group(3) or 1), scheme)
    if m := _ETP.match(s):
        lane = ord(m.group(2).lower()) - ord("a") + 1 if m.group(2) else 1
        return _number(int(m.group(1)), lane, scheme)
    if m := _GENERIC.match(s):
        return _within(int(m.group(1)), scheme)
    return None
