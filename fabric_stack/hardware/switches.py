"""Switch catalog: the real switch models fabric-stack can plan with.

A switch is described by its front-panel cages and the logical-port modes
those cages support. The radix that matters for sizing is the number of
*logical* ports at the speed the fabric runs (an 800G twin-port cage split
2 × 400G gives two ports), so every lookup goes through :func:`port_mode`.

Port counts, cages and rack units were checked against the vendors' user
manuals and the NetBox device-type library; the ``source`` field names the
document. The power figures could not be confirmed against a datasheet from
here and say so in ``power_basis``: check them before a power budget relies on
them. Optics add to switch power (see the BOM).

One record per model holds *every* per-model fact the other modules need, each
with its source: the port-label family of its OS (``os_family``, the templates are
:data:`fabric_stack.naming.devices.PORT_LABEL_TEMPLATES`), the operating systems it
is planned for, its SONiC platform (HwSKU per port speed and SerDes lanes per cage:
``render sonic`` and the drift reader), its NetBox device type (the inventory), and
its ibdm system type (the ``.topo`` export). Nothing else keeps a table keyed by
catalog key, so a copy of a record under a new key (``model_copy(update={"key":
…})``) keeps every fact. ``tests/unit/test_switch_models.py`` checks that each
entry declares what its protocol and operating systems need.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabric_stack.errors import CatalogError

FabricKind = Literal["infiniband", "roce", "ethernet"]
"""The three compute-fabric technologies fabric-stack plans."""

FABRIC_KINDS: tuple[FabricKind, ...] = ("infiniband", "roce", "ethernet")
"""Every compute-fabric technology, in the order help and tables list them."""

Protocol = Literal["infiniband", "ethernet"]
"""Link-layer protocol a switch speaks (RoCE and TCP both run on Ethernet switches)."""

OsFamily = Literal["mlnx-os", "nvos", "cumulus", "generic"]
"""Port-label family of the switch OS (how the plan spells a port: ``1/3/2``, ``sw3p2``,
``swp3s1``, ``p5``); one template each in
:data:`fabric_stack.naming.devices.PORT_LABEL_TEMPLATES`."""

SwitchOs = Literal["mlnx-os", "nvos", "cumulus", "sonic"]
"""An operating system a catalog model is planned to run (what the render targets need)."""


class PortMode(BaseModel):
    """One way to run the switch's cages: a port speed and how many ports each cage gives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    speed_gbps: int = Field(description="Logical port speed in Gb/s.")
    ports_per_cage: int = Field(description="Logical ports one cage provides at this speed.")
    lane_name: str = Field(description="Speed name as the switch OS prints it, e.g. 'NDR', '400G'.")


class SonicSku(BaseModel):
    """The SONiC HwSKU that runs a model's cages at one port speed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    speed_gbps: int = Field(description="Logical port speed the HwSKU splits the cages into.")
    hwsku: str = Field(description="HwSKU directory name under the platform, e.g. 'ACS-SN5600'.")
    basis: str = Field(description="How the HwSKU was confirmed (port_config.ini read or not).")


class SonicPlatform(BaseModel):
    """What SONiC needs to know about a model: platform, lanes per cage, HwSKU per speed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    platform: str = Field(description="SONiC platform string, e.g. 'x86_64-nvidia_sn5600-r0'.")
    lanes_per_cage: int = Field(
        ge=1,
        description="SerDes lanes per cage in SONiC's port names (Ethernet<first lane>): the "
        "lane table `render sonic` writes and the drift reader parses.",
    )
    hwskus: tuple[SonicSku, ...] = Field(description="HwSKU per supported port speed.")
    breakout_modes: tuple[str, ...] = Field(
        default=(),
        description="The cages' dynamic port breakout modes as the platform's platform.json "
        "names them (`2x400G[200G,…]`): what BREAKOUT_CFG may say; empty when not read.",
    )
    source: str = Field(description="Where the platform, lanes and HwSKUs come from.")

    def hwsku(self, speed_gbps: int) -> str | None:
        """The HwSKU for ports at ``speed_gbps`` (None: no HwSKU known at that speed)."""
        return next((s.hwsku for s in self.hwskus if s.speed_gbps == speed_gbps), None)


class NetBoxDeviceType(BaseModel):
    """A model's device type as the NetBox community device-type library names it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    manufacturer: str = Field(description="Manufacturer name in the library (e.g. 'Nvidia').")
    model: str = Field(description="Device-type model name in the library (e.g. 'Q3400-RA').")
    slug: str = Field(description="Device-type slug in the library (e.g. 'nvidia-q3400-ra').")
    part_number: str = Field(default="", description="Part number, when the library has one.")
    source: str = Field(description="The library file the names were read from.")


class SwitchModel(BaseModel):
    """A switch model as published: cages, port modes, power and form factor, and every
    per-model fact the renderers, the inventory and the drift readers need."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(description="Catalog key, lower case (what `--switch` accepts).")
    name: str = Field(description="Marketing name.")
    vendor: str = Field(description="Manufacturer.")
    protocol: Protocol = Field(description="Link layer the switch speaks.")
    asic: str = Field(description="Switch ASIC / generation.")
    cages: int = Field(description="Front-panel cages (OSFP, QSFP, RJ45...).")
    cage_type: str = Field(description="Cage form factor.")
    modes: tuple[PortMode, ...] = Field(description="Supported logical-port modes, fastest first.")
    rack_units: int = Field(description="Height in rack units.")
    power_w: int | None = Field(description="Power draw in W without optics (see power_basis).")
    power_basis: str = Field(description="What power_w means (typical/max, with what cables).")
    cooling: str = Field(description="Air or liquid cooled, airflow.")
    os_family: OsFamily = Field(
        description="Port-label family of the switch OS the plan names ports after."
    )
    operating_systems: tuple[SwitchOs, ...] = Field(
        description="Operating systems the model is planned for (what its records must "
        "declare: SONiC needs `sonic`); empty for a generic switch."
    )
    sonic: SonicPlatform | None = Field(
        description="SONiC platform facts; None when the model is not planned for SONiC."
    )
    netbox_device_type: NetBoxDeviceType | None = Field(
        description="Device type in the NetBox community library; None says why in "
        "`netbox_note` (NetBox then gets a type named after the model)."
    )
    netbox_note: str = Field(
        default="", description="Why there is no library device type (when it is None)."
    )
    ib_system_type: str | None = Field(
        description="ibdm system type (IBNL name) of an InfiniBand switch in a `.topo` file; "
        "None for Ethernet switches and generic ones (the export then writes SW_<radix>)."
    )
    source: str = Field(description="Where the figures come from.")
    port_latency_ns: int | None = Field(
        default=None,
        description="Port-to-port (cut-through) latency of one switch, ns; None: no figure "
        "found (the collective model then uses its assumed per-switch step).",
    )
    latency_basis: str = Field(
        default="no published figure found: UNVERIFIED",
        description="Where port_latency_ns comes from, and whether it was confirmed.",
    )
    adaptive_routing: bool = Field(
        default=False,
        description="The ASIC can route per packet by queue depth (InfiniBand AR, "
        "Spectrum-X adaptive routing); whether it is on depends on the plan.",
    )
    in_network_reduction: str = Field(
        default="",
        description="In-network reduction engine the switch has (e.g. 'SHARPv3'); empty: none.",
    )

    @model_validator(mode="after")
    def _declared(self) -> SwitchModel:
        if self.netbox_device_type is None and not self.netbox_note:
            raise ValueError(f"{self.key}: no NetBox device type and no netbox_note saying why")
        if ("sonic" in self.operating_systems) != (self.sonic is not None):
            raise ValueError(f"{self.key}: SONiC among operating_systems needs sonic facts")
        return self

    @property
    def native_speed_gbps(self) -> int:
        """The fastest logical-port speed the switch supports."""
        return self.modes[0].speed_gbps

    def speeds(self) -> list[int]:
        """All logical-port speeds, fastest first."""
        return [m.speed_gbps for m in self.modes]


_UNVERIFIED = "{}; UNVERIFIED (not confirmed against the datasheet)"


def _mode(speed: int, per_cage: int, name: str) -> PortMode:
    return PortMode(speed_gbps=speed, ports_per_cage=per_cage, lane_name=name)


def _library(model: str, slug: str, part: str = "") -> NetBoxDeviceType:
    return NetBoxDeviceType(
        manufacturer="Nvidia",
        model=model,
        slug=slug,
        part_number=part,
        source=f"{_NETBOX_LIBRARY}/{model}.yaml (read 2026-11-30)",
    )


# The catalog's switches as the community device-type library names them, so a NetBox that
# imported the library's types uses those very device types, and one that did not gets types
# the library import later recognises by slug (SN2201 keeps its older slug mellanox-sn2201).
# Heights agree with the catalog. The library's interface templates (QM9700 "P0.0", SN5600
# "swp1", Q3400 "sw1p1") are not applied: interfaces are named as the plan names the ports.
_NETBOX_LIBRARY = "github.com/netbox-community/devicetype-library, device-types/Nvidia"

_SN5600_DIR = "sonic-net/sonic-buildimage device/mellanox/x86_64-nvidia_sn5600-r0/"
_BY_NAME = "HwSKU directory name only (its port_config.ini not read): UNVERIFIED"

_QUANTUM2_LATENCY = (
    "'a port-to-port latency of under 150 nanoseconds' for the Quantum-2 ASIC "
    "(router-switch.com, 'NVIDIA Quantum-2 QM9700 vs Spectrum-4 SN5400'); other third-party "
    "pages give ~330 ns (yobitel.com, 'NVIDIA Quantum-2') and the QM9700 user manual read here "
    "states none: UNVERIFIED"
)
_SPECTRUM4_LATENCY = (
    "no Spectrum-4 port-to-port figure found in NVIDIA's SN5000 documentation or public "
    "pages searched (NVIDIA says only 'true, port-to-port, cut-through latency'): the model's "
    "assumed per-switch step applies, UNVERIFIED"
)

SN5600_SONIC = SonicPlatform(
    platform="x86_64-nvidia_sn5600-r0",
    lanes_per_cage=8,
    hwskus=(
        SonicSku(speed_gbps=800, hwsku="ACS-SN5600", basis=_BY_NAME),
        SonicSku(
            speed_gbps=400,
            hwsku="Mellanox-SN5600-O128",
            basis="port_config.ini read (128 × 400G)",
        ),
        SonicSku(speed_gbps=200, hwsku="Mellanox-SN5600-V256", basis=_BY_NAME),
        SonicSku(speed_gbps=100, hwsku="Mellanox-SN5600-C256S1", basis=_BY_NAME),
    ),
    # platform.json `breakout_modes` of Ethernet0 … Ethernet504 (every OSFP cage alike),
    # sonic-net/sonic-buildimage@086b03bd70f9 device/mellanox/x86_64-nvidia_sn5600-r0/.
    breakout_modes=(
        "1x800G[400G,200G,100G,50G,40G,25G,10G]",
        "2x400G[200G,100G,50G,40G,25G,10G]",
        "4x200G[100G,50G,25G,10G]",
    ),
    source=(
        f"{_SN5600_DIR}Mellanox-SN5600-O128/port_config.ini lists Ethernet0 lanes 0-3 alias "
        "etp1a, Ethernet4 lanes 4-7 etp1b, Ethernet8 etp2a … Ethernet508 etp64b: 8 lanes per "
        "OSFP cage, the port named after its first lane (and Ethernet512 etp65, the 25G SFP28 "
        "port outside the 64 planned cages)"
    ),
)
"""The SN5600's SONiC platform (``render sonic`` and the drift reader's SONiC names)."""


CATALOG: dict[str, SwitchModel] = {
    m.key: m
    for m in (
        SwitchModel(
            key="qm9700",
            name="NVIDIA Quantum-2 QM9700",
            vendor="NVIDIA",
            protocol="infiniband",
            asic="Quantum-2 (NDR)",
            cages=32,
            cage_type="OSFP twin-port (2 × NDR 400G per cage)",
            modes=(_mode(400, 2, "NDR"), _mode(200, 4, "NDR200")),
            rack_units=1,
            power_w=747,
            power_basis=_UNVERIFIED.format("typical with passive cables"),
            cooling="air, P2C or C2P",
            os_family="mlnx-os",
            operating_systems=("mlnx-os",),
            sonic=None,
            netbox_device_type=_library("QM9700", "nvidia-qm9700"),
            # The system type MLNX-OS puts in its NodeDescription ("MF0;<name>:MQM9700/U1").
            ib_system_type="MQM9700",
            source="NVIDIA QM9700/QM9790 1U NDR 400Gb/s InfiniBand Switch Systems User Manual",
            port_latency_ns=150,
            latency_basis=_QUANTUM2_LATENCY,
            adaptive_routing=True,
            in_network_reduction="SHARPv3",
        ),
        SwitchModel(
            key="q3400",
            name="NVIDIA Quantum-X800 Q3400-RA",
            vendor="NVIDIA",
            protocol="infiniband",
            asic="Quantum-3 (XDR)",
            cages=72,
            cage_type="OSFP twin-port (2 × XDR 800G per cage)",
            modes=(_mode(800, 2, "XDR"), _mode(400, 2, "NDR")),
            rack_units=4,
            power_w=5000,
            power_basis=_UNVERIFIED.format("approximate maximum"),
            cooling="air",
            # Q3400-RA runs NVOS, not MLNX-OS: Q3200-RA/Q3400-RA XDR Switch Systems User Manual,
            # section "NVOS" (docs.nvidia.com/networking/display/xdrswitcheshwum/nvos).
            os_family="nvos",
            operating_systems=("nvos",),
            sonic=None,
            netbox_device_type=_library("Q3400-RA", "nvidia-q3400-ra", "920-9B36F-00RX-8S0"),
            # UNVERIFIED: a real Q3400-RA router NodeDescription reads "MF0;<name>:Q3400_RA/U2/RT"
            # (../shared/realdata/ibnetdiscover), so the .topo name may need to be Q3400_RA.
            ib_system_type="Q3400",
            source="NVIDIA Quantum-X800 Q3400 InfiniBand Switch datasheet",
            adaptive_routing=True,
            in_network_reduction="SHARPv4",
        ),
        SwitchModel(
            key="sn5600",
            name="NVIDIA Spectrum-4 SN5600",
            vendor="NVIDIA",
            protocol="ethernet",
            asic="Spectrum-4",
            cages=64,
            cage_type="OSFP 800GbE (split 2 × 400G or 4 × 200G/100G)",
            modes=(
                _mode(800, 1, "800G"),
                _mode(400, 2, "400G"),
                _mode(200, 4, "200G"),
                _mode(100, 4, "100G"),
            ),
            rack_units=2,
            power_w=1275,
            power_basis=_UNVERIFIED.format("approximate typical"),
            cooling="air, P2C or C2P",
            os_family="cumulus",
            # Ports are labelled the Cumulus way (swp<cage>s<lane>); `render sonic` renames
            # them to SONiC's lane-based names from the platform's lane table.
            operating_systems=("cumulus", "sonic"),
            sonic=SN5600_SONIC,
            netbox_device_type=_library("SN5600", "nvidia-sn5600"),
            ib_system_type=None,
            source="NVIDIA Spectrum-4 SN5000 2U Switch Systems Hardware User Manual",
            latency_basis=_SPECTRUM4_LATENCY,
            # Spectrum-X adaptive routing: `render cumulus` enables it on Spectrum ASICs
            # (fabric_stack/artifacts/cumulus.py, NVUE `nv set router adaptive-routing`).
            adaptive_routing=True,
        ),
        SwitchModel(
            key="sn2201",
            name="NVIDIA Spectrum SN2201",
            vendor="NVIDIA",
            protocol="ethernet",
            asic="Spectrum",
            cages=48,
            cage_type="RJ45 1GbE (+ 4 × QSFP28 100G uplinks, not planned here)",
            modes=(_mode(1, 1, "1G"),),
            rack_units=1,
            power_w=98,
            power_basis=_UNVERIFIED.format("approximate typical"),
            cooling="air",
            os_family="cumulus",
            operating_systems=("cumulus",),
            sonic=None,
            netbox_device_type=_library("SN2201", "mellanox-sn2201"),
            ib_system_type=None,
            source="NVIDIA SN2201 1GbE out-of-band management switch datasheet",
        ),
    )
}
"""Every named switch model, keyed by lower-case catalog key."""

_GENERIC = re.compile(r"^generic[-:]?(\d{1,7})x(\d{1,7})g?$")  # bounded: no huge ints


def generic_switch(radix: int, speed_gbps: int, protocol: Protocol = "ethernet") -> SwitchModel:
    """A catalog entry for a switch described only by radix × speed (no power figure)."""
    return SwitchModel(
        key=f"generic-{radix}x{speed_gbps}",
        name=f"Generic {radix} × {speed_gbps}G switch",
        vendor="generic",
        protocol=protocol,
        asic="unspecified",
        cages=radix,
        cage_type=f"{speed_gbps}G single-port cage",
        modes=(_mode(speed_gbps, 1, f"{speed_gbps}G"),),
        rack_units=1,
        power_w=None,
        power_basis="unknown",
        cooling="unspecified",
        os_family="generic",
        operating_systems=(),
        sonic=None,
        netbox_device_type=None,
        netbox_note="not in the device-type library: NetBox gets a type named after the model",
        ib_system_type=None,
        source="user supplied radix × speed",
    )


def default_switch_for(fabric: FabricKind, speed_gbps: int) -> SwitchModel:
    """The catalog switch a fabric is planned on at ``speed_gbps`` when none is named.

    InfiniBand runs on the NVIDIA Quantum switch whose native speed is the link speed
    (QM9700 at 400G, Q3400 at 800G), else the slowest-native one that serves it; RoCEv2 and
    Ethernet on the Spectrum switch that serves the speed. A clear error when none does.
    """
    proto: Protocol = "infiniband" if fabric == "infiniband" else "ethernet"
    fits = [
        m
        for m in CATALOG.values()
        if m.protocol == proto and speed_gbps in m.speeds() and m.cages >= 32
    ]
    if not fits:
        raise CatalogError(
            "switch",
            f"no catalog {fabric} switch serves {speed_gbps}G",
            f"name one: generic-<radix>x{speed_gbps}",
        )
    return min(fits, key=lambda m: (m.native_speed_gbps != speed_gbps, m.native_speed_gbps))


def known_switch_names() -> list[str]:
    """Catalog keys plus the generic form, for help and error messages."""
    return [*CATALOG, "generic-<radix>x<speed>"]


def lookup_switch(name: str, protocol: Protocol | None = None) -> SwitchModel:
    """Find a switch model by catalog key (case-insensitive) or ``generic-RxS``.

    ``protocol`` only matters for generic switches, which can be either.
    """
    key = name.strip().lower().replace("_", "-")
    key = key.removeprefix("nvidia-").removeprefix("nvidia ")
    if key in CATALOG:
        return CATALOG[key]
    m = _GENERIC.match(key)
    if m:
        radix, speed = int(m.group(1)), int(m.group(2))
        if radix < 4 or radix > 1024 or speed < 1:
            raise CatalogError(
                "switch",
                f"generic radix {radix} × {speed}G is not plausible",
                "radix 4..1024, speed ≥ 1 Gb/s",
            )
        return generic_switch(radix, speed, protocol or "ethernet")
    raise CatalogError(
        "switch",
        f"unknown switch model {name[:60]!r}",
        "one of " + ", ".join(known_switch_names()),
    )


def port_mode(model: SwitchModel, speed_gbps: int) -> PortMode:
    """The mode that runs ``model``'s cages at ``speed_gbps``; a clear error if none does."""
    for mode in model.modes:
        if mode.speed_gbps == speed_gbps:
            return mode
    speeds = ", ".join(f"{s}G" for s in model.speeds())
    raise CatalogError(
        "nic_gbps",
        f"{model.name} has no {speed_gbps}G ports",
        f"it serves {speeds}",
    )


def radix_at(model: SwitchModel, speed_gbps: int) -> int:
    """Number of logical ports ``model`` has at ``speed_gbps``."""
    return model.cages * port_mode(model, speed_gbps).ports_per_cage


def unverified_figures(model: SwitchModel) -> list[tuple[str, str]]:
    """(figure, value as printed) of ``model`` that the catalog marks UNVERIFIED.

    Today that is the power figure of every named model (see the module docstring);
    the design report lists each one as an open item.
    """
    out: list[tuple[str, str]] = []
    if model.power_w is not None and "UNVERIFIED" in model.power_basis:
        out.append(("power", f"{model.power_w:,} W"))
    return out


UNVERIFIED_FIGURES: dict[str, list[tuple[str, str]]] = {
    key: figs for key, m in CATALOG.items() if (figs := unverified_figures(m))
}
"""Catalog key → its unverified figures: the catalog's unverified list."""
