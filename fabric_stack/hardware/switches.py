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
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.errors import CatalogError

FabricKind = Literal["infiniband", "roce", "ethernet"]
"""The three compute-fabric technologies fabric-stack plans."""

Protocol = Literal["infiniband", "ethernet"]
"""Link-layer protocol a switch speaks (RoCE and TCP both run on Ethernet switches)."""


class PortMode(BaseModel):
    """One way to run the switch's cages: a port speed and how many ports each cage gives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    speed_gbps: int = Field(description="Logical port speed in Gb/s.")
    ports_per_cage: int = Field(description="Logical ports one cage provides at this speed.")
    lane_name: str = Field(description="Speed name as the switch OS prints it, e.g. 'NDR', '400G'.")


class SwitchModel(BaseModel):
    """A switch model as published: cages, port modes, power and form factor."""

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
    os_family: Literal["mlnx-os", "nvos", "cumulus", "generic"] = Field(
        description="Port-naming convention of the switch OS."
    )
    source: str = Field(description="Where the figures come from.")

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
            source="NVIDIA QM9700/QM9790 1U NDR 400Gb/s InfiniBand Switch Systems User Manual",
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
            source="NVIDIA Quantum-X800 Q3400 InfiniBand Switch datasheet",
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
            source="NVIDIA Spectrum-4 SN5000 2U Switch Systems Hardware User Manual",
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
        source="user supplied radix × speed",
    )


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
