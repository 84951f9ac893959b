"""Cables and transceivers: NVIDIA/Mellanox SKUs, their length steps and reach, with sources.

A :class:`CableFamily` is one kind of cable (a passive DAC, an active copper cable, a fibre
with its transceivers) for one speed and one kind of ends (switch↔switch or
server↔switch). Its ``lengths`` are the lengths the vendor sells; its reach is the longest
of them, or the transceivers' reach for fibre. :func:`families_for` lists the families
that can carry a link, cheapest medium first (DAC, ACC, multimode fibre, single-mode
fibre): the plant takes the first whose reach covers the run.

Each family names its source; a SKU, length step or reach that could not be confirmed
against NVIDIA's documentation is marked UNVERIFIED (in ``verified=False`` and in the
``source`` text), as the switch power figures are. Speeds without a catalog SKU (e.g. 100G
in-band links, 1G out-of-band copper) get a generic family whose part number says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabric_stack.hardware.optics import PAM4_100G_CAGE_MODELS, XDR_CAGE_MODELS

Medium = Literal["dac", "acc", "mmf", "smf", "copper"]
"""The cable's medium: passive copper, active copper, multimode / single-mode fibre, RJ45."""

EndKind = Literal["switch", "host"]
"""What the a-end plugs into (the b-end is always a switch)."""

_DOCS = "docs.nvidia.com/networking/display"


@dataclass(frozen=True, slots=True)
class Transceiver:
    """An optical module: its SKU, how many links one module carries, reach and source."""

    part: str
    links: int
    reach_m: int
    source: str
    verified: bool


@dataclass(frozen=True, slots=True)
class CableFamily:
    """One orderable cable family for one speed and kind of a-end."""

    key: str
    medium: Medium
    speed_gbps: int
    a_end: EndKind
    stem: str
    """Part number stem; :meth:`part` appends the length code."""
    lengths: tuple[float, ...]
    links_per_cable: int
    """Links one cable carries (2 for a twin-port DAC or a 1:2 splitter)."""
    source: str
    verified: bool
    a_optic: Transceiver | None = None
    b_optic: Transceiver | None = None
    reach_m: float = 0.0
    """Longest run the medium carries; 0 means the longest length sold."""
    splitter: bool = False
    """A 1:2 splitter: one twin-port switch end, two single-port ends that may go to two
    servers. A two-link cable that is no splitter has one twin-port cage at each end, so
    both its links join the same two cages."""
    cables_per_link: int = 1
    """Cables one link needs: 2 for an unsplit 800G port of a 100G-PAM4 twin-port cage,
    whose module's two 400G halves each take their own straight fibre (the BOM orders
    links × this; the plant's run stays one per link)."""

    @property
    def description(self) -> str:
        """What the cable is, as the BOM lists it (medium, ends, SKU stem)."""
        what = {
            "dac": "passive copper DAC",
            "acc": "active copper ACC",
            "mmf": "MPO-12/APC OM4 multimode fibre",
            "smf": "MPO-12/APC OS2 single-mode fibre",
            "copper": "RJ45 patch cord",
        }[self.medium]
        if self.splitter:
            what = f"1:2 splitter {what}"
        elif self.links_per_cable == 2:
            what = f"twin-port {what}"
        if self.cables_per_link > 1:
            what = f"{self.cables_per_link} x straight {what} per {self.speed_gbps}G link"
        return f"{what} ({self.stem.rstrip('-')})"

    @property
    def reach(self) -> float:
        """The longest run this family carries, in metres."""
        return self.reach_m or self.lengths[-1]

    def part(self, length_m: float) -> str:
        """The SKU of this family at ``length_m`` (one of :attr:`lengths`)."""
        if self.stem.startswith("GENERIC"):
            return f"{self.stem}-{_fmt(length_m)}M"
        return f"{self.stem}{_length_code(length_m)}"


def _fmt(length_m: float) -> str:
    return f"{length_m:g}".replace(".", "P")


def _length_code(length_m: float) -> str:
    """NVIDIA's length code: 1 m → ``001``, 1.5 m → ``01A``, 0.5 m → ``00A``, 10 m → ``010``.

    From the MCP7Y00-Nxxx ordering table (N001 1 m, N01A 1.5 m, N02A 2.5 m, N003 3 m); the
    0.5 m code ``00A`` follows the same rule and is UNVERIFIED.
    """
    whole = int(length_m)
    if length_m - whole >= 0.5:
        return f"{whole:02d}A"
    return f"{whole:03d}"


_NS = Transceiver(
    "MMA4Z00-NS",
    2,
    50,
    f"{_DOCS}/800GMMA4Z00NS: twin-port OSFP 2x400G multimode 2xSR4, 50 m, two MPO-12/APC",
    True,
)
_NS400 = Transceiver(
    "MMA4Z00-NS400",
    1,
    50,
    f"{_DOCS}/MMA4Z00NS400T: single-port OSFP 400G multimode, 50 m over OM4 (flat top, "
    "ConnectX-7); read for the -T (Ethernet) SKU, the InfiniBand SKU name is UNVERIFIED",
    False,
)
_DR8 = Transceiver(
    "MMS4X00-NS",
    2,
    100,
    f"{_DOCS}/mms4x00-ns-800gbps-twin-port-osfp-2x400gb-s-single-mode-dr8-100m.pdf: "
    "twin-port OSFP 2x400G single-mode DR8, 100 m",
    True,
)
_DR4 = Transceiver(
    "MMS4X00-NS400",
    1,
    100,
    "single-port OSFP 400G single-mode DR4 for ConnectX-7: UNVERIFIED (SKU not read)",
    False,
)

_XDR = Transceiver(
    "MMS4A00-XM",
    2,
    100,
    f"{_DOCS}/800g200gpam4list: XDR 200G-PAM4 twin-port OSFP single-mode, 2x800G switch to "
    "switch; SKU and reach UNVERIFIED (see fabric_stack/hardware/optics.py XDR_MODULES)",
    False,
)
CX8_OSFP_800 = "GENERIC-OSFP-RHS-800G-DR4"
"""The module of a ConnectX-8 SuperNIC's OSFP cage at 800G XDR: no NVIDIA SKU found (see
:data:`fabric_stack.hardware.optics.MODULES` for what was checked), so a generic part."""
_CX8 = Transceiver(
    CX8_OSFP_800,
    1,
    100,
    f"{_DOCS}/800g200gpam4list 'Important notes': ConnectX-8 cages take RHS (flat-top) OSFP "
    "single-mode XDR modules; SKU UNVERIFIED (not found in the pages read)",
    False,
)

_MMF_LENGTHS = (3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0)
_SMF_LENGTHS = (*_MMF_LENGTHS, 60.0, 70.0, 80.0, 100.0)
_FIBRE_STEPS = "length steps UNVERIFIED (the ordering table was not read)"

CABLE_FAMILIES: tuple[CableFamily, ...] = (
    CableFamily(
        "dac-400-switch",
        "dac",
        400,
        "switch",
        "MCP4Y10-N",
        (0.5, 1.0, 1.5, 2.0),
        2,
        f"{_DOCS}/mcp4y10nxxx2x400pub: twin-port 2x400G OSFP passive DAC, 0.5/1/1.5/2 m",
        True,
    ),
    CableFamily(
        "dac-400-host",
        "dac",
        400,
        "host",
        "MCP7Y00-N",
        (1.0, 1.5, 2.0, 2.5, 3.0),
        2,
        f"{_DOCS}/mcp7y00nxxx800pub/ordering+information: 800G twin-port OSFP to 2x400G "
        "OSFP passive DAC splitter, 1/1.5/2/2.5/3 m",
        True,
        splitter=True,
    ),
    CableFamily(
        "acc-400-switch",
        "acc",
        400,
        "switch",
        "MCA4J80-N",
        (3.0, 4.0, 5.0),
        2,
        f"{_DOCS}/mcp7y00nxxx800pub/use+cases: 'Active Copper Cables (ACC) are also "
        "available for lengths of 4 and 5-meters'; SKU MCA4J80 and its 3 m step UNVERIFIED",
        False,
    ),
    CableFamily(
        "acc-400-host",
        "acc",
        400,
        "host",
        "MCA7J60-N",
        (4.0, 5.0),
        2,
        f"{_DOCS}/mca7j60nxxx800pub/overview: 1:2 ACC splitter (2x 400G) MCA7J60 to single-port "
        "OSFP ends (QSFP112 ends are MCA7J65/MCA7J75); 4 and 5 m steps UNVERIFIED",
        False,
        splitter=True,
    ),
    CableFamily(
        "mmf-400-switch",
        "mmf",
        400,
        "switch",
        "MFP7E10-N",
        _MMF_LENGTHS,
        1,
        f"{_DOCS}/MMA4Z00NS400T/Connectivity+Scenarios: straight 4-channel MPO-12/APC "
        f"crossover fibre MFP7E10, 50 m reach; {_FIBRE_STEPS}",
        False,
        _NS,
        _NS,
        50,
    ),
    CableFamily(
        "mmf-400-host",
        "mmf",
        400,
        "host",
        "MFP7E10-N",
        _MMF_LENGTHS,
        1,
        f"{_DOCS}/MMA4Z00NS400T/Connectivity+Scenarios: MFP7E10 to a 400G OSFP; {_FIBRE_STEPS}",
        False,
        _NS400,
        _NS,
        50,
    ),
    CableFamily(
        "smf-400-switch",
        "smf",
        400,
        "switch",
        "MFP7E30-N",
        _SMF_LENGTHS,
        1,
        f"single-mode MPO-12/APC fibre MFP7E30 for DR8 (100 m): SKU and {_FIBRE_STEPS}",
        False,
        _DR8,
        _DR8,
        100,
    ),
    CableFamily(
        "smf-400-host",
        "smf",
        400,
        "host",
        "MFP7E30-N",
        _SMF_LENGTHS,
        1,
        f"single-mode MPO-12/APC fibre MFP7E30 for DR4 (100 m): SKU and {_FIBRE_STEPS}",
        False,
        _DR4,
        _DR8,
        100,
    ),
    CableFamily(
        "mmf-800-switch",
        "mmf",
        800,
        "switch",
        "MFP7E10-N",
        _MMF_LENGTHS,
        1,
        f"{_DOCS}/MMA4Z00NS400T/Connectivity+Scenarios, case 1 'Switch-to-switch at 800Gb/s "
        "or to two switches at 400Gb/s': a twin-port OSFP (MMA4Z00-NS) takes two straight "
        "4-channel MPO-12/APC fibres MFP7E10, one per 400G SR4 half, 50 m; "
        f"{_DOCS}/400g100gpam4ovpub/transceivers-and-fiber-details-100g-pam4: 'Twin-port "
        "transceivers can be linked to each other forming an 800Gb/s link'; "
        f"{_FIBRE_STEPS}",
        False,
        _NS,
        _NS,
        50,
        cables_per_link=2,
    ),
    CableFamily(
        "smf-800-switch",
        "smf",
        800,
        "switch",
        "MFP7E30-N",
        _SMF_LENGTHS,
        1,
        f"{_DOCS}/800gmms4x00nst/overview: 'Twin-Port transceivers require ordering two "
        "fibers' (MMS4X00-NS DR8, two MPO-12/APC ports); "
        f"{_DOCS}/mms4x00ns400/overview: straight single-mode crossover fibre MFP7E30, "
        f"100 m; {_FIBRE_STEPS}",
        False,
        _DR8,
        _DR8,
        100,
        cables_per_link=2,
    ),
    CableFamily(
        "mmf-200-host",
        "mmf",
        200,
        "host",
        "MFP7E20-N",
        _MMF_LENGTHS,
        2,
        f"{_DOCS}/MMA4Z00NS400T/Connectivity+Scenarios: 1:2 splitter fibre MFP7E20 (200G "
        f"per leg, 50 m), two legs per cable; {_FIBRE_STEPS}",
        False,
        _NS400,
        _NS,
        50,
        splitter=True,
    ),
)
"""The catalog, cheapest medium first within each (speed, a-end)."""

_XDR_FIBRE = (
    f"{_DOCS}/800g200gpam4list, 'Important notes': 'The same single mode, straight and 1:2 "
    "splitter crossover fiber cables are used for both XDR and NDR/400GbE' (MFP7E30, "
    f"{_DOCS}/mms4x00ns400/overview) and 'Not used for XDR: Multimode transceivers'; an XDR "
    "800G port is one 4-channel 200G-PAM4 half of a twin-port module ('2x800G-to-2x800G "
    f"links for switch-to-switch'), so one straight fibre per link; 100 m reach and "
    f"{_FIBRE_STEPS}"
)

XDR_CABLE_FAMILIES: tuple[CableFamily, ...] = (
    CableFamily(
        "smf-800-switch-xdr",
        "smf",
        800,
        "switch",
        "MFP7E30-N",
        _SMF_LENGTHS,
        1,
        _XDR_FIBRE + " UNVERIFIED",
        False,
        _XDR,
        _XDR,
        100,
    ),
    CableFamily(
        "smf-800-host-xdr",
        "smf",
        800,
        "host",
        "MFP7E30-N",
        _SMF_LENGTHS,
        1,
        _XDR_FIBRE + " UNVERIFIED; to a ConnectX-8 OSFP ('2x800G-to-two 400G links to "
        "ConnectX-8', same page)",
        False,
        _CX8,
        _XDR,
        100,
    ),
)
"""800G families of a Quantum-X800 (XDR, 200G-PAM4) cage: single-mode only, one fibre per
link. :func:`family_for_cages` puts them in place of the 100G-PAM4 ones."""

GENERIC_FIBRE = (
    "GENERIC-MPO12-OM4",
    "no NVIDIA SKU in the catalog for this speed: generic OM4 MPO-12/APC fibre, 50 m reach "
    "assumed (UNVERIFIED)",
)
GENERIC_COPPER = (
    "GENERIC-CAT6A",
    "generic Cat6A RJ45 patch cord; 100 m channel (TIA-568 twisted-pair channel length)",
)
_GENERIC_LENGTHS = (1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 15.0, 20.0, 30.0, 50.0)


def generic_family(speed_gbps: int, a_end: EndKind, medium: str) -> CableFamily:
    """The generic family for a link the catalog has no SKU for (marked in its source)."""
    if medium == "copper":
        stem, source = GENERIC_COPPER
        return CableFamily(
            f"copper-{speed_gbps}-{a_end}",
            "copper",
            speed_gbps,
            a_end,
            stem,
            (*_GENERIC_LENGTHS, 100.0),
            1,
            source,
            True,
        )
    stem, source = GENERIC_FIBRE
    return CableFamily(
        f"mmf-{speed_gbps}-{a_end}-generic",
        "mmf",
        speed_gbps,
        a_end,
        stem,
        _GENERIC_LENGTHS,
        1,
        source,
        False,
    )


_BY_LINK: dict[tuple[int, str], tuple[CableFamily, ...]] = {}
for _f in CABLE_FAMILIES:
    _BY_LINK[(_f.speed_gbps, _f.a_end)] = (*_BY_LINK.get((_f.speed_gbps, _f.a_end), ()), _f)


def families_for(speed_gbps: int, a_end: EndKind, medium: str) -> tuple[CableFamily, ...]:
    """Families that can carry a link, cheapest medium first (a generic one when none).

    ``medium`` is the builder's class for the link (``mmf``, ``smf``, ``copper``): copper
    RJ45 links stay copper; fibre links may become DAC or ACC when the run is short.
    """
    if medium == "copper":
        return (generic_family(speed_gbps, a_end, medium),)
    found = _BY_LINK.get((speed_gbps, a_end))
    return found if found else (generic_family(speed_gbps, a_end, medium),)


_BY_KEY: dict[str, CableFamily] = {f.key: f for f in (*CABLE_FAMILIES, *XDR_CABLE_FAMILIES)}
_XDR_BY_END: dict[str, CableFamily] = {f.a_end: f for f in XDR_CABLE_FAMILIES}


def cables_per_link(key: str) -> int:
    """Cables one link of family ``key`` needs (1 for a generic family)."""
    fam = _BY_KEY.get(key)
    return fam.cables_per_link if fam is not None else 1


def family_for_cages(fam: CableFamily, models: tuple[str, str]) -> CableFamily:
    """``fam``, or the family the ends' cages need in its place at 800G.

    ``models`` are the ends' switch catalog keys ('' for a host). An 800G fibre to an XDR
    cage is single-mode and one straight fibre per link (:data:`XDR_CABLE_FAMILIES`). The
    two-fibre 800G families are sourced for 100G-PAM4 twin-port cages (SN5600) at both
    ends only: a switch whose cage the catalog does not know (a generic model) keeps the
    generic UNVERIFIED fibre. Copper and other speeds keep ``fam``.
    """
    if fam.speed_gbps != 800 or fam.medium not in ("mmf", "smf"):
        return fam
    if any(m in XDR_CAGE_MODELS for m in models):
        return _XDR_BY_END.get(fam.a_end, fam)
    if fam.cables_per_link > 1 and not all(m in PAM4_100G_CAGE_MODELS for m in models):
        return generic_family(fam.speed_gbps, fam.a_end, "mmf")
    return fam


__all__ = [
    "CABLE_FAMILIES",
    "CX8_OSFP_800",
    "XDR_CABLE_FAMILIES",
    "CableFamily",
    "EndKind",
    "Medium",
    "Transceiver",
    "cables_per_link",
    "families_for",
    "family_for_cages",
    "generic_family",
]
