"""Modules by cage: one per cage with a lit port, at both ends, and their power per device.

Shared by the physical plant (a rack's power budget counts its switches' modules) and the
order (:mod:`fabric_stack.plant.order`); ``runs`` are the plant's cable runs in link order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fabric_stack.hardware.optics import lookup_module
from fabric_stack.plant.ends import host_end, switch_cage
from fabric_stack.topology.build import HOST_ROLES, FabricTopology


class _Spec(Protocol):
    @property
    def a_power_w(self) -> float: ...
    @property
    def b_power_w(self) -> float: ...


class _Run(Protocol):
    @property
    def a_optic(self) -> str: ...
    @property
    def b_optic(self) -> str: ...
    @property
    def spec(self) -> _Spec: ...


@dataclass(frozen=True, slots=True)
class ModuleCount:
    """Modules of one part number at one kind of end in one network."""

    part_number: str
    end: str
    """'server' (a server's or fabric manager's cage) or 'switch'."""
    network: str
    count: int
    power_w: float
    """Power of one module, W."""
    form_factor: str
    source: str
    verified: bool


def _module_info(part: str) -> tuple[str, str, bool]:
    m = lookup_module(part)
    if m is not None:
        return m.form_factor, m.source, m.verified
    return "generic", "no NVIDIA SKU in the catalog: UNVERIFIED", False


def count_modules(
    topo: FabricTopology, runs: Sequence[_Run]
) -> tuple[tuple[ModuleCount, ...], dict[str, float]]:
    """One module per lit cage at both ends, and the module power per device."""
    prof = topo.plan.spec.node_profile
    by_name = {d.name: d for d in topo.devices}
    cages: dict[tuple[str, str], tuple[str, str, str, float]] = {}
    host_cages: dict[tuple[str, str, int, str], str] = {}
    # Port names repeat on every switch: each one's cage is worked out once (#43).
    cage_names: dict[str, str] = {}
    for k, run in zip(topo.links, runs, strict=True):
        if run.a_optic:
            d = by_name[k.a_device]
            if d.role in HOST_ROLES:
                hkey = (d.role, k.a_port, k.speed_gbps, k.network)
                cage = host_cages.get(hkey)
                if cage is None:
                    cage = host_cages[hkey] = host_end(prof, d, k)[1]
                end = "server"
            else:
                cage = cage_names.get(k.a_port)
                if cage is None:
                    cage = cage_names[k.a_port] = switch_cage(k.a_port)
                end = "switch"
            cages.setdefault((k.a_device, cage), (run.a_optic, end, k.network, run.spec.a_power_w))
        if run.b_optic:
            b_cage = cage_names.get(k.b_port)
            if b_cage is None:
                b_cage = cage_names[k.b_port] = switch_cage(k.b_port)
            cages.setdefault(
                (k.b_device, b_cage),
                (run.b_optic, "switch", k.network, run.spec.b_power_w),
            )
    per: Counter[tuple[str, str, str, float]] = Counter(cages.values())
    power: dict[str, float] = {}
    for (dev, _), (_, _, _, watts) in cages.items():
        power[dev] = power.get(dev, 0.0) + watts
    modules = tuple(
        ModuleCount(part, end, net, n, watts, *_module_info(part))
        for (part, end, net, watts), n in per.items()
    )
    return modules, power


__all__ = ["ModuleCount", "count_modules"]
