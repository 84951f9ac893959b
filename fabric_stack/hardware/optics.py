"""Pluggable modules by the cage they go in: which part, its power, and the source of both.

A cable end takes a module when its medium is fibre (DAC, ACC and RJ45 ends take none).
Which module depends on the *cage* at that end, not on the link:

* a Quantum-2 / Spectrum-4 switch cage is a finned-top twin-port OSFP: ``MMA4Z00-NS``
  (multimode) or ``MMS4X00-NS`` (single-mode), one per cage, serving both its ports;
* a DGX H100/H200 compute cage is a *flat-top* twin-port OSFP serving two rails (NVIDIA's
  cable overview names the flat-top twin-port OSFP "for linking DGX H100"), one per cage;
* a ConnectX-7 single-port OSFP card takes the flat-top single-port ``MMA4Z00-NS400``;
* a ConnectX-8 SuperNIC's OSFP cage at 800G XDR takes a single-mode RHS (flat-top) OSFP
  module whose SKU NVIDIA's pages read here do not name: ``GENERIC-OSFP-RHS-800G-DR4``,
  UNVERIFIED (its record says what was checked);
* a dual-port ConnectX-7 QSFP112 card (DGX storage / in-band) or a BlueField-3 takes a
  QSFP112 module per port (``MMA1Z00-NS400`` at 400G and, on a 1:2 splitter, 200G).

A switch end's module follows that end's *switch model* and the split its cage runs at the
link's speed (:func:`switch_module`, the one rule; the plant only reads it):

* a Quantum-2 QM9700 / Spectrum-4 SN5600 cage (100G-PAM4 twin-port OSFP) takes the same
  twin-port module whether it runs 2 × 400G or, on an SN5600, one unsplit 800G port: NVIDIA
  links two twin-port modules "forming an 800Gb/s link" switch to switch (LinkX 100G-PAM4
  user guide, section "Transceivers and Fiber Details - 100G-PAM4"; MMA4Z00-NS400-T
  "Connectivity Scenarios", case 1 "Switch-to-switch at 800Gb/s");
* a Quantum-X800 Q3400 cage (200G-PAM4 XDR, twin-port IHS OSFP) takes an XDR 1.6T twin-port
  single-mode module at 800G; at 400G (NDR) no XDR module serves, because "200G-PAM4-based
  transceivers cannot downshift to 100G-PAM4" (LinkX XDR part-number list, "Important
  notes"), so the cage needs an NDR 100G-PAM4 twin-port module, which NVIDIA's pages read
  here do not list for the Q3400: that record is UNVERIFIED.

Speeds the catalog has no SKU for get a ``GENERIC-…`` part marked UNVERIFIED, so an order
never silently lacks the module. Every :class:`Module` carries its source; ``verified`` is
False when the SKU or the power figure was not confirmed in NVIDIA's documentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabric_stack.hardware.switches import CATALOG

CageKind = Literal["switch", "osfp-twin", "osfp", "qsfp112", "rj45"]
"""What a cable end plugs into: a switch's finned twin-port OSFP cage, a server's flat-top
twin-port OSFP cage (DGX H100), a single-port OSFP, a QSFP112 port, or RJ45 copper."""

_DOCS = "docs.nvidia.com/networking/display"
_CAGES = f"{_DOCS}/cableovpub/connectors+and+cages"
_PAM4_100G = (
    f"{_DOCS}/400g100gpam4ovpub/transceivers-and-fiber-details-100g-pam4: 'Twin-port "
    "transceivers can be linked to each other forming an 800Gb/s link' (one module per "
    "cage for an unsplit 800G switch-to-switch port, two straight fibres)"
)
_XDR_LIST = f"{_DOCS}/800g200gpam4list"


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
            "Spectrum-4 cages); 15 W: MMA4Z00-NS-T overview 'remain at 15 Watts'; also the "
            f"module of an unsplit 800G cage: {_PAM4_100G}",
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
            "overview 'remain at 17 Watts'; also the module of an unsplit 800G cage: "
            f"{_PAM4_100G}",
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
            "GENERIC-OSFP-RHS-800G-DR4",
            "OSFP single-port RHS flat-top (ConnectX-8, XDR)",
            16.0,
            f"{_XDR_LIST}, 'Important notes': ConnectX-8 cages (B300, GB300, ConnectX-8 PCIe "
            "cards) take RHS (flat-top) OSFP plugs, XDR optics are single-mode only; "
            f"{_DOCS}/connectx8firmwarev40440208/changes+and+new+features, 'Link Speed': "
            "800Gb/s XDR IB or 2 x 400GbE ('800GbE link speed is not supported on a single "
            "port'). No NVIDIA SKU for the ConnectX-8's 800G OSFP module was found in the "
            "LinkX pages read (800g200gpam4list, 400g100gpam4ovpub, cableovpub): SKU and "
            "16 W UNVERIFIED",
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

XDR_MODULES: dict[tuple[str, int], Module] = {
    ("smf", 800): _m(
        "MMS4A00-XM",
        "OSFP twin-port IHS finned-top (XDR 2x800G)",
        25.0,
        f"{_XDR_LIST}: XDR 200G-PAM4 twin-port OSFP single-mode transceivers for Quantum-X800 "
        "Q3400 air-cooled (IHS) cages, 2x800G switch to switch; no multimode XDR optics "
        "('Not used for XDR: Multimode transceivers'). SKU MMS4A00-XM and 25 W UNVERIFIED "
        "(not read on its own page)",
        False,
    ),
    ("mmf", 400): _m(
        "MMA4Z00-NS",
        "OSFP twin-port finned-top (NDR, in an XDR cage)",
        15.0,
        f"{_XDR_LIST}, 'Important notes': '200G-PAM4-based transceivers cannot downshift to "
        "100G-PAM4', so a Q3400 port run at NDR 400G needs an NDR 100G-PAM4 twin-port "
        "module (IHS/finned tops fit the Q3400's air-cooled cages, same page); that NVIDIA "
        "supports MMA4Z00-NS in a Q3400 cage is UNVERIFIED",
        False,
    ),
    ("smf", 400): _m(
        "MMS4X00-NS",
        "OSFP twin-port finned-top (NDR, in an XDR cage)",
        17.0,
        f"{_XDR_LIST}, 'Important notes': XDR 200G-PAM4 modules cannot downshift to NDR, so "
        "a Q3400 port at 400G needs an NDR twin-port module; that NVIDIA supports MMS4X00-NS "
        "in a Q3400 cage is UNVERIFIED",
        False,
    ),
}
"""Modules of a Quantum-X800 (XDR) switch cage, by (medium, port speed)."""

PAM4_100G_CAGE_MODELS = frozenset({"qm9700", "sn5600"})
"""Switch models whose cages are Quantum-2/Spectrum-4 100G-PAM4 twin-port OSFPs."""
XDR_CAGE_MODELS = frozenset({"q3400"})
"""Switch models whose cages are Quantum-X800 200G-PAM4 (XDR) twin-port OSFPs."""


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


def switch_module(
    model: str, medium: str, speed_gbps: int, to_switch: bool = True
) -> Module | None:
    """The module a cage of switch ``model`` (catalog key) takes for a fibre of ``medium``
    whose port runs at ``speed_gbps`` (None: the rule has no record; the caller falls back
    to the cable family's part).

    The cage's split follows from the model's port mode at that speed (an SN5600 cage is
    1 × 800G, 2 × 400G or 4 × 200G); a speed the model has no mode for has no module.
    An unsplit 800G port of a 100G-PAM4 cage has a sourced module only switch to switch
    (``to_switch``): to a host it falls back to the family's (generic) part.
    """
    sw = CATALOG.get(model)
    if sw is None or medium not in ("mmf", "smf"):
        return None
    split = next((m.ports_per_cage for m in sw.modes if m.speed_gbps == speed_gbps), 0)
    if not split:
        return None
    if model in XDR_CAGE_MODELS:
        if speed_gbps == 800:
            return XDR_MODULES[("smf", 800)]
        return XDR_MODULES.get((medium, speed_gbps))
    if model in PAM4_100G_CAGE_MODELS and (speed_gbps == 400 or (speed_gbps == 800 and to_switch)):
        # One twin-port module per cage, split 2 × 400G or one 800G port alike.
        return MODULES["MMS4X00-NS" if medium == "smf" else "MMA4Z00-NS"]
    return None


def module_for(
    kind: CageKind,
    medium: str,
    speed_gbps: int,
    catalog_part: str,
    model: str = "",
    to_switch: bool = True,
) -> Module | None:
    """The module at an end of ``kind`` for a cable of ``medium`` (None: no module).

    ``catalog_part`` is the module the cable family names for that end (empty for generic
    fibre); the end's hardware decides whether that part, its flat-top twin or a QSFP112
    variant is what fits. ``model`` is a switch end's catalog key: its cage decides first
    (:func:`switch_module`; ``to_switch``: the other end is a switch too).
    """
    if medium not in ("mmf", "smf") or kind == "rj45":
        return None
    if kind == "switch" and model:
        found = switch_module(model, medium, speed_gbps, to_switch)
        if found is not None:
            return found
    single = medium == "smf"
    if kind == "osfp-twin":
        return MODULES["MMS4X00-NS-FLT" if single else "MMA4Z00-NS-FLT"]
    if kind == "qsfp112" and not single and speed_gbps in (200, 400):
        return MODULES["MMA1Z00-NS400"]
    if kind != "qsfp112" and catalog_part in MODULES:
        return MODULES[catalog_part]
    return generic_module(kind, speed_gbps, "DR" if single else "SR")


__all__ = [
    "MODULES",
    "PAM4_100G_CAGE_MODELS",
    "XDR_CAGE_MODELS",
    "XDR_MODULES",
    "CageKind",
    "Module",
    "generic_module",
    "lookup_module",
    "module_for",
    "switch_module",
]
