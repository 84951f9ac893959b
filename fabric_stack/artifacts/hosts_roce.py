"""`render hosts` on RoCEv2: the NIC side of the lossless profile, one script per server.

``hosts/<server>.roce-qos.sh`` sets every rail NIC of the server to what the switches and
``nccl/roce.env`` assume (:class:`~fabric_stack.intent.nic_qos.NicQos`, one decision for all
three): global pause off, DSCP trust, RoCE's DSCP on its priority, PFC on that priority only
with the planned cable length of the NIC's cable, DCQCN (ECN) on that priority, and the
RDMA-CM default ToS (= ``NCCL_IB_TC``). The tools are the ones NVIDIA documents for ConnectX
with MLNX_OFED/DOCA-OFED: ``mlnx_qos`` and ``cma_roce_tos`` (:data:`sources.MLNX_QOS`), the ECN
sysfs (:data:`sources.MLNX_ECN`) and ``ethtool -A``.

No ConnectX is reachable here: the scripts are checked by ``sh -n`` and shellcheck only, so
every command is UNVERIFIED on hardware (the file says so).
"""

from __future__ import annotations

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    netdev_of,
    netdev_warning,
)
from fabric_stack.intent.nic_qos import NicQos, build_nic_qos
from fabric_stack.text.numbers import whole_metres
from fabric_stack.underlay.plan import HostPort

TARGET = "hosts"

SUFFIX = "roce-qos.sh"
"""File name suffix of the per-server NIC QoS script."""

ROCE_PORT = 1
"""The RDMA port of a single-port rail device (``cma_roce_tos -p`` default)."""


def nic_cable_m(ctx: RenderContext, h: HostPort) -> int:
    """The planned cable length of a rail NIC's cable, whole metres (rounded up)."""
    return whole_metres(ctx.cable_lengths[(h.leaf, h.leaf_port)])


def nic_commands(ctx: RenderContext, q: NicQos, h: HostPort) -> list[str]:
    """The shell lines that set one rail NIC (netdev and RDMA device of ``h``) to ``q``."""
    dev = netdev_of(ctx, h.nic)
    prio, on = q.roce_priority, "1" if q.ecn else "0"
    return [
        f"# rail {h.rail}{f' plane {h.plane}' if ctx.plan.planes > 1 else ''}: {h.nic} ({dev}), "
        "cable to "
        f"{h.leaf}:{h.leaf_port}, planned {nic_cable_m(ctx, h)} m",
        f"ethtool -A {dev} autoneg off rx off tx off",
        f"mlnx_qos -i {dev} --trust {q.trust}",
        f"mlnx_qos -i {dev} --dscp2prio set,{q.roce_dscp},{prio}",
        f"mlnx_qos -i {dev} --dscp2prio set,{q.cnp_dscp},{q.cnp_priority}",
        f"mlnx_qos -i {dev} --pfc {q.pfc_vector} --cable_len {nic_cable_m(ctx, h)}",
        f"echo {on} > /sys/class/net/{dev}/ecn/roce_rp/enable/{prio}",
        f"echo {on} > /sys/class/net/{dev}/ecn/roce_np/enable/{prio}",
        f"cma_roce_tos -d {h.nic} -p {ROCE_PORT} -t {q.tos}",
    ]


def header(ctx: RenderContext, server: str, q: NicQos) -> list[str]:
    """The script's comment block: what it sets, from where, and what is unverified."""
    return [
        GENERATED_BY.format(target=TARGET),
        f"Lossless RoCEv2 on the rail NICs of {server}: the host side of the switches'",
        f"profile. Global pause off (PFC and 802.3x pause exclude each other); trust {q.trust};",
        f"DSCP {q.roce_dscp} -> priority {q.roce_priority} (RoCE), DSCP {q.cnp_dscp} -> priority "
        f"{q.cnp_priority} (CNP);",
        f"PFC {q.pfc_vector} (priorities 0-7) sized for the planned cable; DCQCN (ECN) "
        f"{'enabled' if q.ecn else 'DISABLED'} on priority {q.roce_priority};",
        f"RDMA-CM default ToS {q.tos} = DSCP {q.roce_dscp} << 2 = NCCL_IB_TC in nccl/roce.env.",
        "Run as root after the rail interfaces are up (hosts/<server>.sh), once per boot.",
        f"Source: {sources.MLNX_QOS} (mlnx_qos, cma_roce_tos)",
        f"Source: {sources.MLNX_ECN} (ecn/<protocol>/enable/<priority>)",
        f"Source: {sources.RDMA_CM_CONFIGFS} (default_roce_tos)",
        "UNVERIFIED on hardware: no ConnectX here; checked by sh -n and shellcheck only.",
        "The ECN protocol directory names roce_rp/roce_np are the mlx5 driver's (UNVERIFIED).",
        *([warning] if (warning := netdev_warning(ctx)) else []),
    ]


def render_server(ctx: RenderContext, server: str, q: NicQos) -> str:
    """The NIC QoS script of one server."""
    lines = ["#!/bin/sh", *(f"# {line}" for line in header(ctx, server, q)), "set -eu"]
    for h in ctx.underlay.hosts_of(server):
        lines += nic_commands(ctx, q, h)
    return "\n".join(lines) + "\n"


def files(ctx: RenderContext, servers: list[str]) -> list[str]:
    """The scripts :func:`render` writes (none unless the fabric is RoCEv2)."""
    return [f"hosts/{s}.{SUFFIX}" for s in servers] if ctx.fabric == "roce" else []


def render(ctx: RenderContext, servers: list[str]) -> list[Artifact]:
    """One NIC QoS script per server of a RoCEv2 plan (none on other fabrics)."""
    if ctx.fabric != "roce":
        return []
    q = build_nic_qos(ctx.spec)
    return [
        Artifact(TARGET, path, render_server(ctx, s, q))
        for path, s in zip(files(ctx, servers), servers, strict=True)
    ]
