"""Pluggable modules by the cage they go in: which part, its power, and the source of both.

A cable end takes a module when its medium is fibre (DAC, ACC and RJ45 ends take none).
Which module depends on the *cage* at that end, not on the link:

* a Quantum-2 / Spectrum-4 switch cage is a finned-top twin-port OSFP: ``MMA4Z00-NS``
  (multimode) or ``MMS4X00-NS`` (single-mode), one per cage, serving both its ports;
* a DGX H100/H200 compute cage is a *flat-top* twin-port OSFP serving two rails (NVIDIA's
  cable overview names the flat-top twin-port OSFP "for linking DGX H100"), one per cage;
* a ConnectX-7 single-port OSFP card takes the flat-top single-port ``MMA4Z00-NS400``;
* a dual-port ConnectX-7 QSFP112 card (DGX storage / in-band) or a BlueField-3 takes a
  QSFP112 module per port (``MMA1Z00-NS400`` at 400G and, on a 1:2 splitter, 200G).

Speeds the catalog has no SKU for get a ``GENERIC-…`` part marked UNVERIFIED, so an order
never silently lacks the module. Every :class:`Module` carries its source; ``verified`` is
False when the SKU or the power figure was not confirmed in NVIDIA's documentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CageKind = Literal["switch", "osfp-twin", "osfp", "qsfp112", "rj45"]
"""What a cable end plugs into: a switch's finned twin-port OSFP cage, a server's flat-top
twin-port OSFP cage (DGX H100), a single-port OSFP, a QSFP112 port, or RJ45 copper."""

_DOCS = "docs.nvidia.com/networking/display"
_CAGES = f"{_DOCS}/cableovpub/connectors+and+cages"


@dataclass(frozen=True, slots=True)
class Module:
    """One orderable transceiver: SKU, form factor, power and source."""

    part: str
    form_factor: str
    power_w: float
    """Maximum power of one module, W (at the speed it runs)."""
    source: str
    verified: bool


def _m(part: str, ff: str, watts: float, source: str, verified: bool) -> Module:
    return Module(part, ff, watts, source, verified)


MODULES: dict[str, Module] = {
    m.part: m
    for m in (
        _m(
            "MMA4Z00-NS",
            "OSFP twin-port finned-top",
            15.0,
            f"{_DOCS}/800GMMA4Z00NS/Overview (twin-port 2x400G SR4, finned, for Quantum-2 and "
            "Spectrum-4 cages); 15 W: MMA4Z00-NS-T overview 'remain at 15 Watts'",
            True,
        ),
        _m(
            "MMA4Z00-NS-FLT",
            "OSFP twin-port flat-top",
            15.0,
            f"{_CAGES}: flat-top twin-port 2x400G OSFP 'for linking DGX H100', same internals "
            "as the finned MMA4Z00-NS; the SKU suffix -FLT is UNVERIFIED (read on the DAC "
            "MCP4Y10 overview, not on a transceiver page)",
            False,
        ),
        _m(
            "MMS4X00-NS",
            "OSFP twin-port finned-top",
            17.0,
            f"{_DOCS}/800gmms4x00ns/overview (twin-port 2x400G DR8, 100 m); 17 W: MMS4X00-NS-T "
            "overview 'remain at 17 Watts'",
            True,
        ),
        _m(
            "MMS4X00-NS-FLT",
            "OSFP twin-port flat-top",
            17.0,
            f"{_CAGES}: flat-top twin-port OSFP for DGX H100; single-mode flat-top SKU UNVERIFIED",
            False,
        ),
        _m(
            "MMA4Z00-NS400",
            "OSFP single-port flat-top",
            9.0,
            f"{_DOCS}/MMA4Z00NS400T/Connectivity+Scenarios: 400G SR4 flat-top OSFP for "
            "ConnectX-7, 9 W max (6.5 W at 200G); read for the -T (Ethernet) SKU, the "
            "InfiniBand SKU name is UNVERIFIED",
            False,
        ),
        _m(
            "MMS4X00-NS400",
            "OSFP single-port flat-top",
            10.0,
            "single-port OSFP 400G DR4 for ConnectX-7: SKU and power UNVERIFIED (not read)",
            False,
        ),
        _m(
            "MMA1Z00-NS400",
            "QSFP112",
            9.0,
            f"{_DOCS}/MMA1Z00NS400T/Overview: 400G SR4 QSFP112 for ConnectX-7/QSFP112 and "
            "BlueField-3, 9 W max at 400G (5 W at 200G on a 1:2 splitter); read for the -T "
            "(Ethernet) SKU, the InfiniBand SKU name is UNVERIFIED",
            False,
        ),
    )
}
"""The modules of record, by SKU."""


_GENERIC: dict[str, Module] = {}


def generic_module(kind: CageKind, speed_gbps: int, reach: str) -> Module:
    """A module for a speed the catalog has no SKU for: named as such and UNVERIFIED."""
    twin = kind in ("switch", "osfp-twin")
    ff = "OSFP-TWIN" if twin else "QSFP" if kind == "qsfp112" else "OSFP"
    part = f"GENERIC-{ff}-{speed_gbps}G-{reach}"
    if part not in _GENERIC:
        watts = 15.0 if twin else 9.0
        what = {"OSFP-TWIN": "OSFP twin-port", "QSFP": "QSFP", "OSFP": "OSFP single-port"}[ff]
        _GENERIC[part] = _m(
            part,
            f"{what} (generic)",
            watts,
            f"no NVIDIA SKU in the catalog for a {speed_gbps}G {reach} {what} module; power "
            f"{watts:g} W assumed: UNVERIFIED",
            False,
        )
    return _GENERIC[part]


def lookup_module(part: str) -> Module | None:
    """The module of record or generic module named ``part`` (None: not a module)."""
    return MODULES.get(part) or _GENERIC.get(part)


def module_for(kind: CageKind, medium: str, speed_gbps: int, catalog_part: str) -> Module | None:
    """The module at an end of ``kind`` for a cable of ``medium`` (None: no module).

    ``catalog_part`` is the module the cable family names for that end (empty for generic
    fibre); the end's hardware decides whether that part, its flat-top twin or a QSFP112
    variant is what fits.
    """
    if medium not in ("mmf", "smf") or kind == "rj45":
        return None
    single = medium == "smf"
    if kind == "osfp-twin":
        return MODULES["MMS4X00-NS-FLT" if single else "MMA4Z00-NS-FLT"]
    if kind == "qsfp112" and not single and speed_gbps in (200, 400):
        return MODULES["MMA1Z00-NS400"]
    if kind != "qsfp112" and catalog_part in MODULES:
        return MODULES[catalog_part]
    return generic_module(kind, speed_gbps, "DR" if single else "SR")


__all__ = ["MODULES", "CageKind", "Module", "generic_module", "lookup_module", "module_for"]
