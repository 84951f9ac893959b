"""Server (node) profiles: GPUs, RDMA NICs and the PCIe switches between them.

GPUDirect RDMA is only fast when a GPU and the NIC that serves it hang off the
same PCIe switch (and so the same NUMA node): traffic then never crosses the
CPU root complex. A profile records that layout so the topology and the
``gpudirect-pcie-locality`` policy can check it.

Pairing convention: GPU *g* is served by the NIC of rail ``g * nics // gpus``
(GPU *i* ↔ NIC *i* on the usual 8-GPU / 8-NIC servers), the mapping NCCL makes
when each GPU's nearest NIC is its own rail's NIC.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


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


class NodeProfile(BaseModel):
    """A GPU server model: how many GPUs and NICs, and its PCIe layout."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="dgx-h100", description="Profile name.")
    description: str = Field(default="", description="Free text shown in reports.")
    gpus: int = Field(default=8, ge=1, description="GPUs per server.")
    rdma_nics: int = Field(default=8, ge=1, description="Compute-fabric RDMA NICs per server.")
    nic_model: str = Field(default="ConnectX-7", description="RDMA NIC model.")
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
        return self

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


def _paired_layout(
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


DGX_H100 = NodeProfile(
    name="dgx-h100",
    description=(
        "8 × H100 SXM (HGX H100 8-GPU), 8 × ConnectX-7 400G for the compute fabric; "
        "four PCIe Gen5 switches, each with two GPUs and their two NICs; two sockets"
    ),
    gpus=8,
    rdma_nics=8,
    nic_model="ConnectX-7",
    pcie_switches=_paired_layout(8, 8, 2),
    storage_ports=2,
    storage_gbps=200,
    inband_ports=1,
    inband_gbps=100,
    oob_ports=1,
    oob_gbps=1,
    rack_units=8,
)
"""DGX H100 / HGX H100 8-GPU class server: the default profile."""

DGX_B200 = NodeProfile(
    name="dgx-b200",
    description=(
        "8 × B200 (HGX B200 8-GPU), 8 × ConnectX-7 400G compute NICs; "
        "four PCIe switches with two GPU/NIC pairs each; two sockets"
    ),
    gpus=8,
    rdma_nics=8,
    nic_model="ConnectX-7",
    pcie_switches=_paired_layout(8, 8, 2),
    rack_units=10,
)
"""DGX B200 / HGX B200 class server."""

HGX_B300 = NodeProfile(
    name="hgx-b300",
    description=(
        "8 × B300 (HGX B300 8-GPU), 8 × ConnectX-8 SuperNIC 800G (dual-plane capable); "
        "each GPU and its SuperNIC share the ConnectX-8's built-in PCIe switch"
    ),
    gpus=8,
    rdma_nics=8,
    nic_model="ConnectX-8",
    pcie_switches=_paired_layout(8, 8, 1),
    rack_units=10,
)
"""HGX B300 class server with ConnectX-8 SuperNICs (one PCIe switch per GPU/NIC pair)."""

PROFILES: dict[str, NodeProfile] = {p.name: p for p in (DGX_H100, DGX_B200, HGX_B300)}
"""Built-in node profiles by name."""


def generic_profile(gpus: int, nics: int) -> NodeProfile:
    """A profile for servers not in :data:`PROFILES`: every GPU shares a switch with its NIC."""
    return NodeProfile(
        name=f"generic-{gpus}gpu-{nics}nic",
        description=f"{gpus} GPUs and {nics} RDMA NICs, one PCIe switch per NIC (assumed)",
        gpus=gpus,
        rdma_nics=nics,
        pcie_switches=_paired_layout(gpus, nics, 1),
    )
