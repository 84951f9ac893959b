"""Power of one racked device: the server's figure, the switch catalog's, with its basis.

Server figures are maximum system power from NVIDIA's user guides where read, else an
estimate marked UNVERIFIED; ``layout.server_power_kw`` overrides them. Switch figures are
the switch catalog's ``power_w`` (without optics) and carry its UNVERIFIED marks.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric_stack.errors import CatalogError
from fabric_stack.hardware.switches import lookup_switch
from fabric_stack.topology.build import Device, FabricTopology

SERVER_POWER_W: dict[str, tuple[int, str]] = {
    "dgx-h100": (10200, "DGX H100 user guide: 10.2 kW max system power; UNVERIFIED (not read)"),
    "dgx-b200": (14300, "DGX B200 user guide: 14.3 kW max system power; UNVERIFIED (not read)"),
    "hgx-b300": (14500, "estimate for an 8-GPU B300 server; UNVERIFIED"),
    "hgx-8gpu": (10200, "estimate: as a DGX H100; UNVERIFIED"),
    "gb200-nvl72-tray": (1800, "estimate for one NVL72 compute tray; UNVERIFIED"),
}
"""Maximum power per server profile, W, and its source."""

MANAGER_POWER_W = (750, "estimate for a 2U fabric-manager host; UNVERIFIED")
_PER_GPU_W = 1300
"""Estimate per GPU for a profile without a figure (a DGX H100's 10.2 kW / 8, rounded)."""


@dataclass(frozen=True, slots=True)
class DevicePower:
    """A device's power in W and where the figure comes from."""

    watts: int
    basis: str

    @property
    def verified(self) -> bool:
        """False when the figure is an estimate or marked UNVERIFIED."""
        return "UNVERIFIED" not in self.basis


def device_power(topo: FabricTopology, d: Device) -> DevicePower:
    """Power of ``d`` as racked: server, fabric manager or switch (0 W when unknown)."""
    layout = topo.plan.spec.layout
    if d.role == "server":
        if layout.server_power_kw is not None:
            return DevicePower(round(layout.server_power_kw * 1000), "layout.server_power_kw")
        prof = topo.plan.spec.node_profile
        watts, basis = SERVER_POWER_W.get(
            prof.name, (prof.gpus * _PER_GPU_W, f"estimate {_PER_GPU_W} W per GPU; UNVERIFIED")
        )
        return DevicePower(watts, basis)
    if d.role == "manager":
        return DevicePower(*MANAGER_POWER_W)
    if d.network == "compute":
        model = topo.plan.switch_model
    else:
        try:
            model = lookup_switch(d.model, "ethernet")
        except CatalogError:
            return DevicePower(0, f"{d.model}: not in the switch catalog; UNVERIFIED")
    if model.power_w is None:
        return DevicePower(0, f"{model.name}: no power figure; UNVERIFIED")
    return DevicePower(model.power_w, f"{model.name}: {model.power_basis}")


__all__ = ["MANAGER_POWER_W", "SERVER_POWER_W", "DevicePower", "device_power"]
