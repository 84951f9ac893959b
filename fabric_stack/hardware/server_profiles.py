"""The built-in server profiles: real port names, cages and NICs, each with its source.

A profile names every compute (rail) port as the server's OS does (RDMA device
and netdev), says which PCIe switch and chassis cage it uses, and which storage
and in-band ports the server has. Facts are from the vendor documents named in
each profile's ``source``; what could not be confirmed is said in ``unverified``
(profile-wide) or on the port, and every output that uses the names repeats it
as ``UNVERIFIED``.

Why the default is the generic ``hgx-8gpu`` and not ``dgx-h100``: the seed card
says only "8-GPU servers", and the names every plan has always used
(``mlx5_0 … mlx5_7`` in rail order, one optic per port) are the vendor-neutral
convention of an HGX board in an OEM chassis. A DGX H100 names its rails
``mlx5_0, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11``; making that
the default would rename every NIC of every existing plan and stack. Ask for a
real server with ``--node-profile dgx-h100`` (``node_profile:`` in YAML,
``fabric:nodeProfile`` in stack config).

Not shipped: DGX B300 / GB300 compute trays (no network-ports table found).
"""

from __future__ import annotations

from fabric_stack.hardware.nodes import (
    NodeProfile,
    PcieSwitch,
    ServerPort,
    generic_profile,
    paired_layout,
)

_H100_GUIDE = (
    "NVIDIA DGX H100/H200 User Guide, 1.2 'Network Connections, Cables, and Adaptors', "
    "1.2.3 'Network Modules' (Table 6: OSFP port, ConnectX device, network module/CPU, GPU, "
    "netdev, RDMA device); DGX BasePOD Deployment Guide, 'DGX H200/H100 System Network Ports' "
    "(slot 1/2 port use) and 'Compute network / IB Interfaces Configuration' (compute NIC PCI "
    "buses 18, 40, 4f, 5e, 9a, c0, ce, dc)"
)

_H100_STORAGE_NOTE = (
    "storage/in-band netdev and RDMA names derived from the PCI bus order (slot 1 = bus 0x29, "
    "slot 2 = bus 0xaa), not read from a table"
)

_H100_CAGES = (
    "NVIDIA DGX H100/H200 User Guide, 'Network Connections, Cables, and Adaptors': four "
    "twin-port OSFP cages for the eight compute ports, two dual-port ConnectX-7 QSFP112 cards "
    "for storage and in-band; NVIDIA cable overview (docs.nvidia.com/networking/display/"
    "cableovpub/connectors+and+cages): the flat-top twin-port OSFP is the one 'for linking "
    "DGX H100'. QSFP112 form factor of the storage cards UNVERIFIED (guide not read here)"
)

_BF3_CAGES = (
    "BlueField-3 takes QSFP112 only (docs.nvidia.com/networking/display/MMA4Z00NS400T/"
    "Connectivity+Scenarios, note); compute ports as single-port OSFP ConnectX-7 cards"
)

_H100_PCIE_NOTE = (
    "which GPU pairs share a PCIe switch is assumed (0-1, 2-3, 4-5, 6-7); the guide's table "
    "gives each GPU's and NIC's CPU / network module, which the NUMA nodes follow"
)


def _dgx_rail_ports(note: str = "") -> tuple[ServerPort, ...]:
    """The eight DGX H100/H200 compute ports in rail (GPU) order, from the user guide's Table 6.

    Rail *i* is GPU *i-1*'s NIC: GPU 0 → OSFP4 P2 (ibp24s0, mlx5_0), GPU 1 → OSFP3 P2
    (ibp64s0, mlx5_3) … GPU 7 → OSFP1 P1 (ibp220s0, mlx5_11). Four twin-port OSFP cages,
    two ports each.
    """
    rows = (  # (rdma, netdev, cage, cage port) for GPU 0..7
        ("mlx5_0", "ibp24s0", "OSFP4", 2),
        ("mlx5_3", "ibp64s0", "OSFP3", 2),
        ("mlx5_4", "ibp79s0", "OSFP3", 1),
        ("mlx5_5", "ibp94s0", "OSFP4", 1),
        ("mlx5_6", "ibp154s0", "OSFP1", 2),
        ("mlx5_9", "ibp192s0", "OSFP2", 2),
        ("mlx5_10", "ibp206s0", "OSFP2", 1),
        ("mlx5_11", "ibp220s0", "OSFP1", 1),
    )
    return tuple(
        ServerPort(
            rdma=rdma,
            netdev=netdev,
            pcie_switch=f"pcie{gpu // 2}",
            cage=cage,
            cage_port=cport,
            unverified=note,
        )
        for gpu, (rdma, netdev, cage, cport) in enumerate(rows)
    )


def _dgx_storage(note: str) -> tuple[tuple[ServerPort, ...], tuple[ServerPort, ...]]:
    """(storage, in-band) ports: port 1 of slot 1 and 2 for storage, port 2 of slot 1 in-band.

    The DGX BasePOD guide uses port 1 of both dual-port cards for InfiniBand storage and
    bonds port 2 of both for in-band management and Ethernet storage.
    """
    storage = (
        ServerPort(
            rdma="mlx5_1", netdev="enp41s0f0np0", cage="slot1", cage_port=1, unverified=note
        ),
        ServerPort(
            rdma="mlx5_7", netdev="enp170s0f0np0", cage="slot2", cage_port=1, unverified=note
        ),
    )
    inband = (
        ServerPort(
            rdma="mlx5_2", netdev="enp41s0f1np1", cage="slot1", cage_port=2, unverified=note
        ),
    )
    return storage, inband


_DGX_PCIE = paired_layout(8, 8, 2)
"""Four PCIe switches, GPUs 2k, 2k+1 and their NICs on switch k; switches 0-1 on CPU 0."""

HGX_8GPU = NodeProfile(
    name="hgx-8gpu",
    description=(
        "Generic 8-GPU HGX server (H100/H200-class board): 8 × ConnectX-7 400G compute "
        "NICs named mlx5_0 … mlx5_7 in rail order, one optic each; four PCIe switches with "
        "two GPU/NIC pairs each; two sockets. The default"
    ),
    gpus=8,
    rdma_nics=8,
    nic_model="ConnectX-7",
    nic_max_gbps=400,
    pcie_switches=_DGX_PCIE,
    storage_ports=2,
    storage_gbps=200,
    inband_ports=1,
    inband_gbps=100,
    rack_units=8,
    source=(
        "vendor-neutral: the mlx5 driver numbers devices in PCI order, and an OEM chassis "
        "that puts the eight rail NICs first gets mlx5_0 … mlx5_7; ConnectX-7 maximum "
        "400 Gb/s (ConnectX-7 adapter user manual)"
    ),
)
"""The default profile: names are the neutral convention, not one vendor's server."""

HGX_8GPU_CX8 = HGX_8GPU.model_copy(
    update={
        "name": "hgx-8gpu-cx8",
        "description": (
            "Generic 8-GPU HGX server with 8 × ConnectX-8 800G compute NICs, mlx5_0 … "
            "mlx5_7 in rail order; the default when nic_gbps is above 400"
        ),
        "nic_model": "ConnectX-8",
        "nic_max_gbps": 800,
        "source": "vendor-neutral, as hgx-8gpu; ConnectX-8 SuperNIC maximum 800 Gb/s",
    }
)
"""The generic 8-GPU server for 800G plans that name no profile."""

DGX_H100 = NodeProfile(
    name="dgx-h100",
    description=(
        "NVIDIA DGX H100: 8 × H100 SXM, 8 × ConnectX-7 400G compute ports on four "
        "twin-port OSFP cages (two network modules), two dual-port ConnectX-7 for storage "
        "and in-band; two sockets"
    ),
    gpus=8,
    rdma_nics=8,
    nic_model="ConnectX-7",
    nic_max_gbps=400,
    pcie_switches=_DGX_PCIE,
    compute_ports=_dgx_rail_ports(),
    storage_ifaces=_dgx_storage(_H100_STORAGE_NOTE)[0],
    inband_ifaces=_dgx_storage(_H100_STORAGE_NOTE)[1],
    storage_ports=2,
    storage_gbps=200,
    inband_ports=1,
    inband_gbps=100,
    rack_units=8,
    access_cage="qsfp112",
    cage_source=_H100_CAGES,
    source=_H100_GUIDE,
    unverified=_H100_PCIE_NOTE,
)
"""DGX H100 with the user guide's port names."""

DGX_H200 = DGX_H100.model_copy(
    update={
        "name": "dgx-h200",
        "description": (
            "NVIDIA DGX H200: 8 × H200 SXM, network layout as DGX H100 (one user guide and "
            "one network-ports table cover both systems)"
        ),
        "source": _H100_GUIDE
        + "; the guide and the BasePOD chapter are titled 'DGX H100/H200' and give one table",
    }
)
"""DGX H200: the DGX H100 network layout (same guide, same table)."""

_B200_NOTE = (
    "DGX B200 network-ports table not found: compute RDMA/netdev names and OSFP cage of each "
    "rail assumed as on DGX H100"
)

DGX_B200 = NodeProfile(
    name="dgx-b200",
    description=(
        "NVIDIA DGX B200: 8 × B200, 4 × OSFP ports for 8 × ConnectX-7 single-port 400G "
        "compute cards, 2 × BlueField-3 dual-port for storage and in-band; two sockets"
    ),
    gpus=8,
    rdma_nics=8,
    nic_model="ConnectX-7",
    nic_max_gbps=400,
    pcie_switches=_DGX_PCIE,
    compute_ports=_dgx_rail_ports(_B200_NOTE),
    storage_ifaces=_dgx_storage("storage/in-band RDMA names assumed as on DGX H100")[0],
    inband_ifaces=_dgx_storage("storage/in-band RDMA names assumed as on DGX H100")[1],
    rack_units=10,
    access_cage="qsfp112",
    cage_source=_BF3_CAGES,
    source=(
        "NVIDIA DGX B200 User Guide, 'Introduction to NVIDIA DGX B200 Systems' (component "
        "table: 4 × OSFP for 8 × ConnectX-7 single-port, up to 400 Gb/s; 2 × BlueField-3 "
        "dual-port; 10U); Base Command Manager 11 'Troubleshooting' (Ubuntu names "
        "enp41s0f1np1 / enp170s0f1np1 on DGX B200)"
    ),
    unverified=_H100_PCIE_NOTE,
)
"""DGX B200: component table confirmed; per-port names assumed as DGX H100 (UNVERIFIED)."""

HGX_B300 = NodeProfile(
    name="hgx-b300",
    description=(
        "8 × B300 (HGX B300 8-GPU), 8 × ConnectX-8 SuperNIC 800G (dual-plane capable); "
        "each GPU and its SuperNIC share the ConnectX-8's built-in PCIe switch"
    ),
    gpus=8,
    rdma_nics=8,
    nic_model="ConnectX-8",
    nic_max_gbps=800,
    pcie_switches=paired_layout(8, 8, 1),
    rack_units=10,
    source="NVIDIA HGX B300 platform: eight ConnectX-8 SuperNICs, 800 Gb/s each",
    unverified=(
        "port names not sourced: mlx5_0 … mlx5_7 in rail order and one optic per port assumed"
    ),
)
"""HGX B300 class server with ConnectX-8 SuperNICs (one PCIe switch per GPU/NIC pair)."""

_GB200_NOTE = "GPU↔NIC pairing (left bay on CPU 0), netdev names and cages not in the source table"

GB200_NVL72_TRAY = NodeProfile(
    name="gb200-nvl72-tray",
    description=(
        "NVIDIA GB200 NVL72 compute tray: 2 Grace CPUs, 4 B200 GPUs, 4 ConnectX-7 400G "
        "compute ports (left and right bay OSFP P3/P4), 2 BlueField-3 for storage and in-band"
    ),
    gpus=4,
    rdma_nics=4,
    nic_model="ConnectX-7",
    nic_max_gbps=400,
    pcie_switches=(
        PcieSwitch(name="grace0", numa=0, gpus=(0, 1), nics=(0, 1)),
        PcieSwitch(name="grace1", numa=1, gpus=(2, 3), nics=(2, 3)),
    ),
    compute_ports=tuple(
        ServerPort(rdma=r, pcie_switch=f"grace{i // 2}", unverified=_GB200_NOTE)
        for i, r in enumerate(("mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"))
    ),
    storage_ifaces=(
        ServerPort(rdma="mlx5_2", unverified=_GB200_NOTE),
        ServerPort(rdma="mlx5_6", unverified=_GB200_NOTE),
    ),
    inband_ifaces=(ServerPort(rdma="mlx5_3", unverified=_GB200_NOTE),),
    rack_units=1,
    access_cage="qsfp112",
    cage_source=_BF3_CAGES,
    source=(
        "NVIDIA Mission Control, North-South Networking deployment guide for DGX GB200/GB300 "
        "NVL72 (2.3.0), 'Compute Tray Network Ports' table (Left/Right Bay OSFP P3/P4 = "
        "mlx5_0, mlx5_1, mlx5_4, mlx5_5; BlueField-3 P1/P2 = mlx5_2, mlx5_3, mlx5_6 …); "
        "Multi-Node NVLink tuning guide (4 GPUs and ConnectX-7 per compute tray)"
    ),
    unverified=_GB200_NOTE,
)
"""One GB200 NVL72 compute tray as a 4-GPU server (the NVLink domain is not modelled)."""

PROFILES: dict[str, NodeProfile] = {
    p.name: p
    for p in (HGX_8GPU, HGX_8GPU_CX8, DGX_H100, DGX_H200, DGX_B200, HGX_B300, GB200_NVL72_TRAY)
}
"""Built-in node profiles by name."""

DEFAULT_PROFILE = "hgx-8gpu"
"""The profile of an 8-GPU, 8-rail spec that names none (see the module docstring)."""


def default_profile(gpus_per_node: int, rails: int, nic_gbps: int) -> NodeProfile:
    """The profile of a spec that names none: the generic 8-GPU HGX, else a generic one."""
    if gpus_per_node == 8 and rails == 8:
        return HGX_8GPU if nic_gbps <= 400 else HGX_8GPU_CX8
    return generic_profile(gpus_per_node, rails, nic_gbps)
