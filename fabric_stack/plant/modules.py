"""Modules by cage: one per cage with a lit port, at both ends, and their power per device.

Shared by the physical plant (a rack's power budget counts its switches' modules) and the
order (:mod:`fabric_stack.plant.order`); ``runs`` are the plant's cable runs in link order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fabric_stack.hardware.optics import Module, lookup_module
from fabric_stack.plant.ends import host_end, switch_cage
from fabric_stack.topology.build import HOST_ROLES, FabricTopology


class _Spec(Protocol):
    @property
    def a_optic(self) -> str: ...
    @property
    def b_optic(self) -> str: ...
    @property
    def a_power_w(self) -> float: ...
    @property
    def b_power_w(self) -> float: ...
    @property
    def a_module(self) -> Module | None: ...
    @property
    def b_module(self) -> Module | None: ...


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


def _module_info(part: str, record: Module | None) -> tuple[str, str, bool]:
    # The run's own record first: one SKU can be sourced in one cage and UNVERIFIED in
    # another (an NDR module in a Q3400 cage), and the two count as separate lines.
    m = record if record is not None and record.part == part else lookup_module(part)
    if m is not None:
        return m.form_factor, m.source, m.verified
    return "generic", "no NVIDIA SKU in the catalog: UNVERIFIED", False


def count_modules(
    topo: FabricTopology, runs: Sequence[_Run]
) -> tuple[tuple[ModuleCount, ...], dict[str, float]]:
    """One module per lit cage at both ends, and the module power per device."""
    a_cages, b_cages = link_cages(topo)
    return tally_modules(topo, runs, a_cages, b_cages)


def link_cages(topo: FabricTopology) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Each link's a-end and b-end cage as (device, cage), in link order."""
    prof = topo.plan.spec.node_profile
    by_name = {d.name: d for d in topo.devices}
    host_cages: dict[tuple[str, str, int, str], str] = {}
    # Port names repeat on every switch: each one's cage is worked out once (#43).
    cage_names: dict[str, str] = {}
    a_cages: list[tuple[str, str]] = []
    b_cages: list[tuple[str, str]] = []
    for k in topo.links:
        d = by_name[k.a_device]
        if d.role in HOST_ROLES:
            hkey = (d.role, k.a_port, k.speed_gbps, k.network)
            cage = host_cages.get(hkey)
            if cage is None:
                cage = host_cages[hkey] = host_end(prof, d, k)[1]
        else:
            cage = cage_names.get(k.a_port)
            if cage is None:
                cage = cage_names[k.a_port] = switch_cage(k.a_port)
        b_cage = cage_names.get(k.b_port)
        if b_cage is None:
            b_cage = cage_names[k.b_port] = switch_cage(k.b_port)
        a_cages.append((k.a_device, cage))
        b_cages.append((k.b_device, b_cage))
    return a_cages, b_cages


def tally_modules(
    topo: FabricTopology,
    runs: Sequence[_Run],
    a_cages: Sequence[tuple[str, str]],
    b_cages: Sequence[tuple[str, str]],
) -> tuple[tuple[ModuleCount, ...], dict[str, float]]:
    """Modules of the runs whose ends sit in ``a_cages``/``b_cages`` (in link order, as
    :func:`link_cages` gives them; the plant has them already): one per lit cage, and the
    module power per device."""
    hosts = {d.name for d in topo.devices if d.role in HOST_ROLES}
    _Key = tuple[str, str, str, float, Module | None]
    cages: dict[tuple[str, str], _Key] = {}
    setdefault = cages.setdefault
    for k, run, a_cage, b_cage in zip(topo.links, runs, a_cages, b_cages, strict=True):
        spec = run.spec
        if run.a_optic:
            # A host's end (a server's or a fabric manager's cage) counts as a server end.
            end = "server" if k.a_device in hosts else "switch"
            setdefault(a_cage, (run.a_optic, end, k.network, spec.a_power_w, spec.a_module))
        if run.b_optic:
            setdefault(b_cage, (run.b_optic, "switch", k.network, spec.b_power_w, spec.b_module))
    per: Counter[_Key] = Counter(cages.values())
    power: dict[str, float] = {}
    for (dev, _), (_, _, _, watts, _) in cages.items():
        power[dev] = power.get(dev, 0.0) + watts
    modules = tuple(
        ModuleCount(part, end, net, n, watts, *_module_info(part, record))
        for (part, end, net, watts, record), n in per.items()
    )
    return modules, power


__all__ = ["ModuleCount", "count_modules", "link_cages", "tally_modules"]
