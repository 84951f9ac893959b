"""What a source observed, independent of the source: devices and cables, for ``adopt``.

:func:`observation_from_snapshot` turns any drift reader's
:class:`~fabric_stack.drift.model.Snapshot` into an :class:`Observation` (names
shortened to host names, GUIDs and chassis MACs kept); a live source (NetBox's API,
UFM) can build one directly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from fabric_stack.drift.identity import is_mac, normalize_guid, normalize_mac, unquote
from fabric_stack.drift.model import Snapshot
from fabric_stack.naming.nodedesc import mf0_host


@dataclass(slots=True)
class ObservedDevice:
    """A device the fabric reports: its name, kind (server/switch/''), GUIDs and MACs."""

    name: str
    kind: str = ""
    guids: list[str] = field(default_factory=list)
    macs: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Observation:
    """What a source saw, independent of the source: devices and cables (device, port)."""

    source: str
    origin: str
    devices: dict[str, ObservedDevice] = field(default_factory=dict)
    cables: list[tuple[str, str, str, str]] = field(default_factory=list)
    inferred_nics: set[tuple[str, str]] = field(default_factory=set)
    """(host, switch) cables whose NIC name was inferred from the switch's other hosts
    (:mod:`~fabric_stack.drift.adopt_hcas`): no vote for the switch's rail."""
    rates: Counter[str] = field(default_factory=Counter)
    """Link rate (``4xNDR``) → cables the source reports at it (empty: no rates)."""


@lru_cache(maxsize=1 << 17)
def short_name(raw: str) -> str:
    """The host name in a raw device name: MLNX-OS NodeDesc and FQDN stripped, lower case."""
    s = unquote(raw)
    if (host := mf0_host(s)) is not None:
        s = host
    s = s.strip()
    if "." in s and not s.replace(".", "").isdigit():
        s = s.split(".", 1)[0]
    return s.lower()


def observation_from_snapshot(snap: Snapshot) -> Observation:
    """An :class:`Observation` of a drift reader's snapshot (names shortened, GUIDs kept)."""
    obs = Observation(snap.source, snap.origin)
    for raw, seen in snap.devices.items():
        name = short_name(raw)
        dev = obs.devices.setdefault(name, ObservedDevice(name))
        dev.kind = dev.kind or (seen.kind if seen.kind in ("server", "switch") else "")
        for key in ("guid", "hca_guids"):
            val = seen.attrs.get(key)
            for g in val if isinstance(val, list) else [val] if val else []:
                dev.guids.append(normalize_guid(str(g)))
    for raw, mac in snap.chassis_macs.items():
        dev = obs.devices.setdefault(short_name(raw), ObservedDevice(short_name(raw)))
        if is_mac(mac) and normalize_mac(mac) not in dev.macs:
            dev.macs.append(normalize_mac(mac))
    # Each device and port label recurs on many links: shorten / unquote each once.
    names: dict[str, str] = {}
    ports: dict[str, str] = {}
    devices, append = obs.devices, obs.cables.append
    for link in snap.links:
        ra, rb = link.a.device, link.b.device
        a = names.get(ra)
        if a is None:
            a = names[ra] = short_name(ra)
            if a not in devices:
                devices[a] = ObservedDevice(a)
        b = names.get(rb)
        if b is None:
            b = names[rb] = short_name(rb)
            if b not in devices:
                devices[b] = ObservedDevice(b)
        pa, pb = link.a.port, link.b.port
        qa = ports.get(pa)
        if qa is None:
            qa = ports[pa] = unquote(pa)
        qb = ports.get(pb)
        if qb is None:
            qb = ports[pb] = unquote(pb)
        append((a, qa, b, qb))
        if link.rate:
            obs.rates[link.rate] += 1
    return obs


__all__ = ["Observation", "ObservedDevice", "observation_from_snapshot", "short_name"]
