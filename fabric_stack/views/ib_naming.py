"""One port-naming convention for the InfiniBand files, and the ibdiagnet / CVT side files.

The three InfiniBand artifacts name the same port the way their tool reads it:
``ibdiagnet -t`` wants ``P<n>`` (the logical port number ibnetdiscover prints),
UFM's Cable Validation Tool wants ``<cage>/<lane>`` on a switch and the host's
interface number on an HCA, and the switch CLI prints ``1/<cage>/<lane>``. They
cannot share one spelling, so they share one *convention* — the logical port
number ``n`` and the RDMA device name — and every file states the mapping in its
header (:func:`port_naming_header`).

Also here: the HCA system types a ``.topo`` names (:func:`host_hcas`,
:func:`hca_type`), their IBNL definitions for ``ibdiagnet --out_ibnl_dir``
(:func:`ibnl`) and the CVT ``hca_mapping`` file (:func:`hca_mapping_csv`). HCA
device names always come from the link list (the topology names them with
:func:`fabric_stack.naming.devices.nic_name` or the server profile), never from a formula
here.

Sources: IBNL grammar — ibutils 1.5.7.1 ``ibdm/ibnl_parser.yy`` / ``ibnl_scanner.ll``
(``TOPSYSTEM``, ``NODE CA <ports> <device> <name>``, ``<port> -> <system port>``;
names may hold ``/``; the scanner has no comment token, so IBNL files carry no
header). CVT ``hca_mapping``: "Optional Files", NVIDIA UFM Cable Validation Tool
1.5.0 (``port,hca-name``; default ``1 → mlx5_0 … 8 → mlx5_7``).
"""

from __future__ import annotations

import re

from fabric_stack.hardware.nodes import mlx_index
from fabric_stack.topology.build import MANAGER_ROLE, FabricTopology

IBNL_GRAMMAR = (
    "ibutils 1.5.7.1 ibdm/ibdm/ibnl_parser.yy and ibnl_scanner.ll (as vendored in "
    "https://github.com/Cai900205/test, infiniband/src/test_IN/app/ibutils-1.5.7.1)"
)
"""Where the IBNL syntax rendered here comes from."""

CVT_HCA_MAPPING = "https://docs.nvidia.com/networking/display/cablevalidationtool150/optional+files"
"""UFM Cable Validation Tool 1.5.0, Optional Files: the ``hca_mapping`` CSV (port,hca-name)."""

HCA_DEVICE_IDS: dict[str, str] = {"ConnectX-7": "MT4129", "ConnectX-8": "MT4131"}
"""IBNL device name per NIC family: the PCI device id (ConnectX-7 0x1021 = 4129,
ConnectX-8 0x1023 = 4131). Informational for ibdm (it matches systems by type and
port names); UNVERIFIED for ConnectX-8."""

_DEV_INDEX = re.compile(r"(\d+)$")


def _dev_key(dev: str) -> tuple[str, int]:
    m = _DEV_INDEX.search(dev)
    return (dev[: m.start()], int(m.group(1))) if m else (dev, -1)


def host_hcas(topo: FabricTopology) -> dict[str, list[str]]:
    """Every InfiniBand host (GPU server or fabric manager) → its HCA devices, in
    interface order (natural sort: mlx5_0, mlx5_3, … mlx5_10), from the link list."""
    out: dict[str, set[str]] = {}
    for link in topo.links:
        if link.role in ("node_leaf", MANAGER_ROLE):
            out.setdefault(link.a_device, set()).add(link.a_port)
    return {host: sorted(devs, key=_dev_key) for host, devs in out.items()}


def hca_type(devices: list[str]) -> str:
    """ibdm system type of a host with these HCA devices: ``HCA_mlx5_<last index>``
    (``HCA_mlx5_7``; a DGX H100, whose last rail NIC is mlx5_11, ``HCA_mlx5_11``), else
    ``HCA_<count>`` for other device names."""
    idx = [mlx_index(d) for d in devices]
    if idx and all(i is not None for i in idx):
        return f"HCA_mlx5_{max(i for i in idx if i is not None)}"
    return f"HCA_{len(devices)}"


def interface_numbers(devices: list[str]) -> dict[str, int]:
    """A host's interface number per HCA device, as the P2P sheet and hca_mapping.csv use
    it: ``mlx5_N`` is N + 1 (the CVT's default map, 1 → mlx5_0), other names count up."""
    idx = [mlx_index(d) for d in devices]
    if all(i is not None for i in idx):
        return {d: (i or 0) + 1 for d, i in zip(devices, idx, strict=True)}
    return {d: n for n, d in enumerate(devices, start=1)}


def host_types(topo: FabricTopology) -> dict[str, str]:
    """Host name → its HCA system type."""
    return {host: hca_type(devs) for host, devs in host_hcas(topo).items()}


def hca_systems(topo: FabricTopology) -> dict[str, list[str]]:
    """Each HCA system type used → its device list (one IBNL file each)."""
    out: dict[str, list[str]] = {}
    for devs in host_hcas(topo).values():
        out.setdefault(hca_type(devs), devs)
    return dict(sorted(out.items()))


def ibnl(system_type: str, devices: list[str], nic_model: str) -> str:
    """IBNL definition of one HCA system type: one single-port CA node per device,
    its port 1 exported as the system port ``<device>/P1`` (what the ``.topo`` names)."""
    dev_id = next((v for k, v in HCA_DEVICE_IDS.items() if k in nic_model), "MT4129")
    out = [f"\nTOPSYSTEM {system_type}\n"]
    for dev in devices:
        out.append(f"\nNODE CA 1 {dev_id} {dev}\n    1 -> {dev}/P1\n")
    return "".join(out) + "\n"


def server_hcas(topo: FabricTopology) -> list[str]:
    """HCA devices of a GPU server, in interface order (every server has the same)."""
    hcas = host_hcas(topo)
    server = next((d.name for d in topo.devices if d.role == "server"), "")
    return hcas.get(server, ["mlx5_0"])


def hca_mapping_csv(devices: list[str]) -> str:
    """CVT ``hca_mapping``: interface number (the P2P file's host port) → RDMA device."""
    nums = interface_numbers(devices)
    return "port,hca-name\n" + "".join(f"{nums[d]},{d}\n" for d in devices)


def _cage(n: int, per_cage: int) -> str:
    cage, lane = divmod(n - 1, per_cage)
    return f"{cage + 1}/{lane + 1}" if per_cage > 1 else str(cage + 1)


def port_naming_header(topo: FabricTopology) -> list[str]:
    """The mapping every InfiniBand file states in its header (comment lines, no '#')."""
    plan = topo.plan
    ppc = plan.ports_per_cage
    n = plan.leaf_down + 1  # the first leaf uplink: a concrete example
    cage = _cage(n, ppc)
    lane = f", lane = (n - 1) mod {ppc} + 1" if ppc > 1 else ""
    first = server_hcas(topo)
    nums = interface_numbers(first)
    return [
        "Port naming (one convention for the .topo, ib-node-name-map and ufm-p2p.csv):",
        f"  switch port = logical port n (1-{plan.radix}, as ibnetdiscover prints it):",
        f"    .topo 'P<n>'; P2P '<cage>/<lane>' with cage = (n - 1) div {ppc} + 1{lane};",
        f"    switch CLI '1/<cage>/<lane>'. Example: P{n} = {cage} = 1/{cage}.",
        "  HCA port = RDMA device name: .topo '<device>/P1' (node description",
        "    '<host> <device>'); P2P interface number as hca_mapping.csv maps it",
        f"    (this plan: {nums[first[0]]} = {first[0]}"
        + (f", {nums[first[-1]]} = {first[-1]}" if len(first) > 1 else "")
        + ").",
    ]
