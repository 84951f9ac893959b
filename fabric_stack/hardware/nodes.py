"""Server (node) profiles: GPUs, RDMA NICs and the PCIe switches between them.

GPUDirect RDMA is only fast when a GPU and the NIC that serves it hang off the
same PCIe switch (and so the same NUMA node): traffic then never crosses the
CPU root complex. A profile records that layout so the topology and the
``gpudirect-pcie-locality`` policy can check it.

Pairing convention: GPU *g* is served by the NIC of rail ``g * nics // gpus``
(GPU *i* ↔ NIC *i* on the usual 8-GPU / 8-NIC servers), the mapping NCCL makes
when each GPU's nearest NIC is its own rail's NIC.

A profile may also name its ports as the server's OS and chassis do
(:class:`ServerPort`: RDMA device, netdev, PCIe switch, cage): a DGX H100's rail
NICs are ``mlx5_0, mlx5_3, mlx5_4 …`` on four twin-port OSFP cages, not
``mlx5_0 … mlx5_7``. Without a port list the rail NICs are ``mlx5_<N>`` in rail
order, one optic each. The built-in profiles, with their sources, are in
:mod:`fabric_stack.hardware.server_profiles`.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabric_stack.errors import SpecError
from fabric_stack.naming.devices import nic_name

_MLX = re.compile(r"^mlx\d+_(\d+)$")


class PcieSwitch(BaseModel):
    """One PCIe switch inside a server and the devices below it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="PCIe switch name, e.g. 'pcie0' (letters, digits, '_', '.', '-').",
    )
    numa: int = Field(ge=0, description="NUMA node (CPU socket) the switch hangs off.")
    gpus: tuple[int, ...] = Field(
        default=(), description="GPU indices (0-based) below this switch."
    )
    nics: tuple[int, ...] = Field(
        default=(), description="Compute RDMA NIC indices (0-based, = rail − 1) below this switch."
    )


class ServerPort(BaseModel):
    """One network port of a server as its OS and chassis name it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rdma: str = Field(
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="RDMA device name (ibv_devices / NCCL_IB_HCA), e.g. 'mlx5_3'.",
    )
    netdev: str = Field(
        default="",
        pattern=r"^[A-Za-z0-9_.-]*$",
        description=(
            "Linux netdev of the port in its default mode (InfiniBand for DGX compute ports), "
            "e.g. 'ibp64s0'; empty when not known."
        ),
    )
    pcie_switch: str = Field(
        default="", description="PCIe switch (or network module) the port's NIC hangs off."
    )
    cage: str = Field(
        default="",
        description=(
            "Chassis cage the port leaves by, e.g. 'OSFP3'; ports naming the same cage share "
            "one (twin-port) transceiver. Empty: a cage and optic of its own."
        ),
    )
    cage_port: int = Field(default=1, ge=1, le=8, description="Port within the cage (P1, P2).")
    unverified: str = Field(
        default="", description="What about this port could not be confirmed (empty: all of it)."
    )


class NodeProfile(BaseModel):
    """A GPU server model: how many GPUs and NICs, and its PCIe layout."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="dgx-h100", description="Profile name.")
    description: str = Field(default="", description="Free text shown in reports.")
    gpus: int = Field(default=8, ge=1, description="GPUs per server.")
    rdma_nics: int = Field(default=8, ge=1, description="Compute-fabric RDMA NICs per server.")
    nic_model: str = Field(default="ConnectX-7", description="RDMA NIC model.")
    nic_max_gbps: int = Field(
        default=400,
        ge=1,
        description=(
            "Fastest line rate the NIC model runs, Gb/s (ConnectX-7 400, ConnectX-8 800): "
            "nic_gbps above it is refused."
        ),
    )
    compute_ports: tuple[ServerPort, ...] = Field(
        default=(),
        description=(
            "The compute (rail) ports in rail order, plane 1 first; empty: 'mlx5_<N>' in "
            "rail order, one optic per port."
        ),
    )
    storage_ifaces: tuple[ServerPort, ...] = Field(
        default=(), description="The storage ports (storage_ports of them); empty: 'stor<k>'."
    )
    inband_ifaces: tuple[ServerPort, ...] = Field(
        default=(), description="The in-band management ports; empty: 'mgmt<k>'."
    )
    source: str = Field(default="", description="Where the port layout is published.")
    unverified: str = Field(
        default="", description="What about this profile could not be confirmed (empty: none)."
    )
    pcie_switches: tuple[PcieSwitch, ...] = Field(
        description="PCIe switches and what hangs off each."
    )
    storage_ports: int = Field(default=2, ge=0, description="Storage-network ports per server.")
    storage_gbps: int = Field(default=200, ge=1, description="Speed of each storage port, Gb/s.")
    inband_ports: int = Field(default=1, ge=0, description="In-band management ports per server.")
    inband_gbps: int = Field(default=100, ge=1, description="Speed of each in-band port, Gb/s.")
    oob_ports: int = Field(default=1, ge=0, description="Out-of-band (BMC) ports per server.")
    oob_gbps: int = Field(default=1, ge=1, description="Speed of the BMC port, Gb/s.")
    rack_units: int = Field(default=8, ge=1, description="Server height in rack units.")
    compute_cage: Literal["osfp", "qsfp112"] = Field(
        default="osfp",
        description=(
            "Form factor of a compute port's cage: 'osfp' (single-port flat-top OSFP, or a "
            "twin-port flat-top one when two compute ports name the same cage) or 'qsfp112'."
        ),
    )
    access_cage: Literal["osfp", "qsfp112"] = Field(
        default="osfp",
        description="Form factor of the storage and in-band ports' cages (QSFP112 on a "
        "dual-port ConnectX-7 or a BlueField-3).",
    )
    cage_source: str = Field(
        default="assumed: single-port OSFP ConnectX cards for every network (UNVERIFIED)",
        description="Where the cage form factors come from (UNVERIFIED when assumed).",
    )

    @model_validator(mode="after")
    def _check_layout(self) -> NodeProfile:
        seen_gpu: dict[int, str] = {}
        seen_nic: dict[int, str] = {}
        names: set[str] = set()
        for i, sw in enumerate(self.pcie_switches):
            where = f"pcie_switches[{i}]"
            if sw.name in names:
                raise ValueError(f"{where}.name: PCIe switch {sw.name!r} is listed twice")
            names.add(sw.name)
            for g in sw.gpus:
                if not 0 <= g < self.gpus:
                    raise ValueError(
                        f"{where}.gpus: GPU {g} does not exist "
                        f"(this profile has GPUs 0-{self.gpus - 1})"
                    )
                if g in seen_gpu:
                    raise ValueError(f"{where}.gpus: GPU {g} is already under {seen_gpu[g]}")
                seen_gpu[g] = sw.name
            for n in sw.nics:
                if not 0 <= n < self.rdma_nics:
                    raise ValueError(
                        f"{where}.nics: NIC {n} does not exist "
                        f"(this profile has NICs 0-{self.rdma_nics - 1})"
                    )
                if n in seen_nic:
                    raise ValueError(f"{where}.nics: NIC {n} is already under {seen_nic[n]}")
                seen_nic[n] = sw.name
        missing_g = sorted(set(range(self.gpus)) - set(seen_gpu))
        if missing_g:
            raise ValueError(f"pcie_switches: GPU {missing_g[0]} is under no PCIe switch")
        missing_n = sorted(set(range(self.rdma_nics)) - set(seen_nic))
        if missing_n:
            raise ValueError(f"pcie_switches: NIC {missing_n[0]} is under no PCIe switch")
        self._check_ports()
        return self

    def _check_ports(self) -> None:
        """Port lists: whole planes of rails, unique names, and as many ports as counted."""
        n = len(self.compute_ports)
        if n % self.rdma_nics:
            raise ValueError(
                f"compute_ports: {n} ports for {self.rdma_nics} NICs (give one per rail, per plane)"
            )
        for key, ports, want in (
            ("storage_ifaces", self.storage_ifaces, self.storage_ports),
            ("inband_ifaces", self.inband_ifaces, self.inband_ports),
        ):
            if ports and len(ports) != want:
                raise ValueError(f"{key}: {len(ports)} ports listed, the profile counts {want}")
        seen: dict[str, str] = {}
        for key, ports in (
            ("compute_ports", self.compute_ports),
            ("storage_ifaces", self.storage_ifaces),
            ("inband_ifaces", self.inband_ifaces),
        ):
            for i, port in enumerate(ports):
                for name in (port.rdma, port.netdev):
                    if name and name in seen:
                        raise ValueError(
                            f"{key}[{i}]: {name!r} is already the name of {seen[name]}"
                        )
                    if name:
                        seen[name] = f"{key}[{i}]"
        cages: dict[tuple[str, int], int] = {}
        for i, port in enumerate(self.compute_ports):
            nic = i % self.rdma_nics
            if port.pcie_switch and port.pcie_switch != self.switch_of_nic(nic).name:
                raise ValueError(
                    f"compute_ports[{i}].pcie_switch: {port.pcie_switch!r}, but pcie_switches "
                    f"puts NIC {nic} under {self.switch_of_nic(nic).name!r}"
                )
            if port.cage and (port.cage, port.cage_port) in cages:
                raise ValueError(
                    f"compute_ports[{i}]: {port.cage} P{port.cage_port} is already "
                    f"compute_ports[{cages[(port.cage, port.cage_port)]}]"
                )
            cages[(port.cage, port.cage_port)] = i

    def compute_port(self, rail: int, plane: int = 1) -> ServerPort | None:
        """The named port of rail ``rail`` (1-based) on ``plane``; None without a port list."""
        i = (plane - 1) * self.rdma_nics + rail - 1
        return self.compute_ports[i] if i < len(self.compute_ports) else None

    def rdma_name(self, rail: int, plane: int = 1) -> str:
        """RDMA device name of the rail-``rail`` NIC port on ``plane`` (``mlx5_3``)."""
        port = self.compute_port(rail, plane)
        return port.rdma if port is not None else nic_name(rail, plane, self.rdma_nics)

    def compute_cages(self, planes: int = 1) -> int:
        """Server-side compute transceivers per server: one per named cage, else per port."""
        ports = [
            self.compute_port(r, p)
            for p in range(1, planes + 1)
            for r in range(1, self.rdma_nics + 1)
        ]
        named = {p.cage for p in ports if p is not None and p.cage}
        return len(named) + sum(1 for p in ports if p is None or not p.cage)

    def ports_per_cage(self, rdma: str) -> int:
        """Compute ports sharing the cage of port ``rdma`` (1 when it has no cage of record)."""
        port = next((p for p in self.compute_ports if p.rdma == rdma), None)
        if port is None or not port.cage:
            return 1
        return sum(1 for p in self.compute_ports if p.cage == port.cage)

    def cage_of(self, rdma: str) -> str:
        """The cage of compute port ``rdma`` ('' when it has none of record)."""
        return next((p.cage for p in self.compute_ports if p.rdma == rdma), "")

    def rear_panel(self, name: str) -> str:
        """The chassis cage and port of port ``name`` (RDMA or netdev), e.g. 'OSFP4 P2';
        '' when the profile does not say."""
        for port in (*self.compute_ports, *self.storage_ifaces, *self.inband_ifaces):
            if name in (port.rdma, port.netdev) and port.cage:
                return f"{port.cage} P{port.cage_port}"
        return ""

    def netdev(self, rdma: str) -> str:
        """Linux netdev of port ``rdma`` from the profile ('' when the profile does not say)."""
        for port in (*self.compute_ports, *self.storage_ifaces, *self.inband_ifaces):
            if port.rdma == rdma:
                return port.netdev
        return ""

    def access_port(self, network: str, k: int, prefix: str) -> str:
        """Name of port ``k`` (0-based) of an access network: its netdev, else ``<prefix><k+1>``."""
        ports = {"storage": self.storage_ifaces, "inband": self.inband_ifaces}.get(network, ())
        if k < len(ports) and ports[k].netdev:
            return ports[k].netdev
        return f"{prefix}{k + 1}"

    def unverified_notes(self) -> list[str]:
        """Every 'could not confirm' note of the profile and its ports, in order, deduplicated."""
        notes = [self.unverified] if self.unverified else []
        for port in (*self.compute_ports, *self.storage_ifaces, *self.inband_ifaces):
            if port.unverified and port.unverified not in notes:
                notes.append(port.unverified)
        return notes

    def switch_of_gpu(self, gpu: int) -> PcieSwitch:
        """The PCIe switch GPU ``gpu`` hangs off."""
        for sw in self.pcie_switches:
            if gpu in sw.gpus:
                return sw
        raise KeyError(gpu)

    def switch_of_nic(self, nic: int) -> PcieSwitch:
        """The PCIe switch NIC ``nic`` hangs off."""
        for sw in self.pcie_switches:
            if nic in sw.nics:
                return sw
        raise KeyError(nic)

    def nic_for_gpu(self, gpu: int) -> int:
        """The NIC (rail index, 0-based) that serves GPU ``gpu``: see the module docstring."""
        return gpu * self.rdma_nics // self.gpus


def paired_layout(
    gpus: int, nics: int, per_switch: int, sockets: int = 2
) -> tuple[PcieSwitch, ...]:
    """GPUs and NICs spread over PCIe switches so each GPU shares a switch with its NIC."""
    switches = max(1, nics // per_switch)
    out = []
    for s in range(switches):
        nic_ids = tuple(n for n in range(nics) if n * switches // nics == s)
        gpu_ids = tuple(g for g in range(gpus) if (g * nics // gpus) in nic_ids)
        out.append(
            PcieSwitch(name=f"pcie{s}", numa=s * sockets // switches, gpus=gpu_ids, nics=nic_ids)
        )
    return tuple(out)


def generic_profile(gpus: int, nics: int, nic_gbps: int = 400) -> NodeProfile:
    """A profile for servers no built-in describes: every GPU shares a switch with its NIC.

    The NIC is the ConnectX generation that runs ``nic_gbps`` (ConnectX-7 up to 400G,
    ConnectX-8 above): the generic profile assumes a NIC, never a slower one than asked.
    """
    cx8 = nic_gbps > 400
    return NodeProfile(
        name=f"generic-{gpus}gpu-{nics}nic",
        description=f"{gpus} GPUs and {nics} RDMA NICs, one PCIe switch per NIC (assumed)",
        gpus=gpus,
        rdma_nics=nics,
        nic_model="ConnectX-8" if cx8 else "ConnectX-7",
        nic_max_gbps=800 if cx8 else 400,
        pcie_switches=paired_layout(gpus, nics, 1),
    )


def check_nic_speed(profile: NodeProfile, nic_gbps: int) -> None:
    """The profile's NIC runs ``nic_gbps`` (ConnectX-7: 400G at most), else a SpecError.

    :func:`fabric_stack.spec.model.validate_spec` calls it (every command, every stack) rather
    than the spec model, so a record that already holds such a spec still loads and the
    ``link-speed-match`` policy judges it.
    """
    if nic_gbps > profile.nic_max_gbps:
        raise SpecError(
            "nic_gbps",
            f"{nic_gbps} Gb/s is more than the {profile.nic_model} of node profile "
            f"{profile.name!r} runs",
            f"at most {profile.nic_max_gbps} Gb/s; lower nic_gbps or pick a profile with a "
            "faster NIC, e.g. hgx-b300 for 800G",
        )


def check_plane_ports(profile: NodeProfile, planes: int) -> None:
    """A profile that names its ports names one per rail and plane (a ValueError on planes)."""
    named = len(profile.compute_ports)
    if named and named < profile.rdma_nics * planes:
        raise ValueError(
            f"planes: profile {profile.name!r} names {named} compute ports, {planes} planes "
            f"need {profile.rdma_nics * planes} (one per rail and plane; or planes: 1)"
        )


def mlx_index(rdma: str) -> int | None:
    """N of an ``mlx5_N`` device name (None for any other name)."""
    m = _MLX.match(rdma)
    return int(m.group(1)) if m else None
