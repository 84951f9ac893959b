"""`render nccl`: the NCCL environment of the fabric, one commented ``KEY=value`` per variable.

``nccl/<fabric>.env`` works as ``/etc/nccl.conf`` (NCCL reads ``KEY=value``
lines and ``#`` comments), as ``NCCL_CONF_FILE``, or sourced by a job script
(``set -a; . nccl/roce.env; set +a``). Only full-line comments are used, so it is
also a valid ``docker run --env-file``.

Values come from the plan: the rail NICs in rail order, the in-band management
port for NCCL's bootstrap sockets, the RoCE DSCP for the traffic class, the SHARP
switch for CollNet. Each variable carries a comment saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    comment_block,
    netdev_of,
)
from fabric_stack.intent.nic_qos import build_nic_qos, nccl_ib_tc

TARGET = "nccl"

ROCE_V2_IPV4_GID_INDEX = 3
"""ConnectX GID table: index 3 is the RoCE v2 GID of the port's IPv4 address (0-1 are v1/v2
link-local, 2 is RoCE v1 IPv4)."""


def traffic_class(dscp: int) -> int:
    """The IP ToS byte NCCL_IB_TC must carry for ``dscp``: DSCP in the upper six bits."""
    return dscp << 2  # the rule nccl_ib_tc applies to the spec's roce_dscp


@dataclass(frozen=True, slots=True)
class NcclVar:
    """One NCCL variable: name, value and the comment saying why."""

    key: str
    value: str
    why: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PodScope:
    """Where the variables are for when not a bare-metal host: a pod's view of the rails.

    ``rail_ifnames``: the pod's rail interfaces in rail order; ``k8s_rdma``: how the pod got
    them (SR-IOV VFs in exclusive RDMA mode, or the host's PFs/HCAs in shared mode)."""

    k8s_rdma: str
    rail_ifnames: tuple[str, ...]


POD_BOOTSTRAP_IFNAME = "eth0"
"""The pod's primary (cluster network) interface: NCCL's bootstrap sockets on RDMA fabrics."""


def nccl_vars(ctx: RenderContext, pod: PodScope | None = None) -> list[NcclVar]:
    """Every NCCL variable of the fabric, for a host (``pod`` None) or a pod.

    The one rule for ``nccl/<fabric>.env`` and the pods' env (kubernetes target): the rails
    carry the collectives on every fabric (RDMA HCAs, or socket interfaces on plain
    Ethernet); only the names differ inside a pod. In file order: :func:`_nic_selection`,
    :func:`_bootstrap_socket`, :func:`_cross_nic`, :func:`_roce_settings` (RoCE),
    :func:`_sharp` (InfiniBand with SHARP).
    """
    out: list[NcclVar] = []
    _nic_selection(ctx, out, pod)
    _bootstrap_socket(ctx, out, pod)
    _cross_nic(out)
    _roce_settings(ctx, out)
    _sharp(ctx, out)
    return out


def _var(out: list[NcclVar], why: list[str], key: str, value: object) -> None:
    out.append(NcclVar(key, str(value), tuple(why)))


def render_env(ctx: RenderContext) -> str:
    """The env file text: :func:`_header`, then :func:`nccl_vars` for a host, then the RoCE
    host NIC prerequisites (:func:`_roce_host_note`)."""
    nics = ctx.rail_nics()
    lines = [_header(ctx, nics)]
    lines += ["\n" + comment_block(list(v.why)) + f"{v.key}={v.value}\n" for v in nccl_vars(ctx)]
    lines += _roce_host_note(ctx)
    return "".join(lines)


def _header(ctx: RenderContext, nics: list[str]) -> str:
    """What the file is for and how to use it."""
    spec = ctx.spec
    title = {"infiniband": "InfiniBand", "roce": "RoCEv2", "ethernet": "Ethernet (TCP sockets)"}[
        ctx.fabric
    ]
    return comment_block(
        [
            f"NCCL environment for {spec.name}: {title}, {len(nics)} rail NIC(s) per server at "
            f"{ctx.plan.link_gbps}G.",
            GENERATED_BY.format(target=TARGET),
            "Use as /etc/nccl.conf, via NCCL_CONF_FILE, or `set -a; . <this file>; set +a`",
            "in the job. For bare-metal or host-network jobs: the kubernetes target's pods get",
            "the same variables from the same rule with the pod's own device and interface names.",
            f"Variables: {sources.NCCL_ENV}",
            *ctx.profile_notes(),
        ]
    )


def _nic_selection(ctx: RenderContext, out: list[NcclVar], pod: PodScope | None) -> None:
    """The rail NICs NCCL uses: RDMA HCAs, or socket interfaces on plain Ethernet."""
    nics = ctx.rail_nics()
    if ctx.fabric in ("infiniband", "roce"):
        if pod is not None and pod.k8s_rdma == "sriov":
            # Exclusive RDMA mode: the pod sees only its own VFs' devices, whose mlx5_N names
            # are not the host's, so the prefix is exact there.
            _var(
                out,
                ["The pod's VF RDMA devices (exclusive mode: the pod sees only its own)."],
                "NCCL_IB_HCA",
                "mlx5",
            )
            return
        hca = ",".join(f"{n}:1" for n in nics)
        _var(
            out,
            [
                f"The {len(nics)} compute (rail) NICs in rail order, exact names ('=' prefix)",
                "and port 1:",
                "a bare 'mlx5' prefix would also match the storage and management NICs, and NCCL",
                "would then spread collectives over them.",
            ],
            "NCCL_IB_HCA",
            f"={hca}",
        )
        return
    if pod is not None:
        ifnames = ",".join(pod.rail_ifnames)
        where = ["The pod's rail interfaces (Multus attachments, in rail order)."]
    else:
        ifnames = ",".join(netdev_of(ctx, n) for n in nics)
        where = [
            "Interface names from --netdevs, else the plan's per-rail names (rename to match)."
        ]
    _var(out, ["No RDMA on a plain Ethernet fabric: NCCL uses TCP sockets."], "NCCL_IB_DISABLE", 1)
    _var(
        out,
        [
            "Collective traffic over the compute (rail) interfaces, exact names ('=' prefix).",
            *where,
        ],
        "NCCL_SOCKET_IFNAME",
        f"={ifnames}",
    )


def _bootstrap_socket(ctx: RenderContext, out: list[NcclVar], pod: PodScope | None) -> None:
    """RDMA fabrics: bootstrap sockets on the in-band management network (a pod's eth0)."""
    if ctx.fabric not in ("infiniband", "roce"):
        return
    if pod is not None:
        _var(
            out,
            ["Bootstrap sockets on the pod's cluster network interface, never on a rail."],
            "NCCL_SOCKET_IFNAME",
            f"={POD_BOOTSTRAP_IFNAME}",
        )
        return
    inband = ctx.inband_port()
    inband_net = ctx.spec.networks.inband
    _var(
        out,
        [
            "Bootstrap and out-of-band sockets on the in-band management network",
            f"(port '{inband}' in the plan: VLAN {inband_net.vlan}, {inband_net.subnet}),",
            "never on docker0/lo or a rail. Replace with the host's netdev name if the OS",
            "names that port differently.",
        ],
        "NCCL_SOCKET_IFNAME",
        f"={inband}",
    )


def _cross_nic(out: list[NcclVar]) -> None:
    """Keep channel i on NIC i (rail-optimized)."""
    _var(
        out,
        [
            "Rail-optimized fabric: keep ring/tree channel i on NIC i of every server, so traffic",
            "stays on one rail (one leaf hop) instead of crossing rails through the spines.",
        ],
        "NCCL_CROSS_NIC",
        0,
    )


def _roce_settings(ctx: RenderContext, out: list[NcclVar]) -> None:
    """RoCE: GID index and traffic class."""
    if ctx.fabric != "roce":
        return
    roce = ctx.spec.roce
    tc = nccl_ib_tc(ctx.spec)  # roce-host-consistency checks it is the NICs' RDMA-CM ToS
    prio = roce.roce_priority
    _var(
        out,
        [
            f"RoCE v2 over IPv4: GID index {ROCE_V2_IPV4_GID_INDEX} on ConnectX",
            "(check: show_gids). NCCL >= 2.21 can detect it (default -1); pinning it stops",
            "a RoCE v1 or link-local GID being chosen.",
        ],
        "NCCL_IB_GID_INDEX",
        ROCE_V2_IPV4_GID_INDEX,
    )
    _var(
        out,
        [
            f"Traffic class = DSCP << 2: DSCP {roce.roce_dscp} -> {tc}. The switches trust",
            f"DSCP and map {roce.roce_dscp} to the lossless priority {prio} (PFC + ECN);",
            "the two low (ECN) bits stay 0, the NIC sets ECT itself when DCQCN is on.",
            "Without it RoCE lands in the lossy class.",
        ],
        "NCCL_IB_TC",
        tc,
    )


def _roce_host_note(ctx: RenderContext) -> list[str]:
    """RoCE: the host NIC prerequisites (not NCCL variables), as a trailing comment."""
    if ctx.fabric != "roce":
        return []
    q = build_nic_qos(ctx.spec)
    return [
        "\n"
        + comment_block(
            [
                f"Host NIC prerequisites (not NCCL variables): trust {q.trust}, PFC "
                f"{q.pfc_vector} (priority",
                f"{q.roce_priority} only), DCQCN on that priority, global pause off, RDMA-CM "
                f"ToS {q.tos}, on",
                "every rail NIC: render hosts writes hosts/<server>.roce-qos.sh (mlnx_qos,",
                "cma_roce_tos), render kubernetes nic-configuration-template.yaml (NVIDIA NIC",
                f"configuration operator). Rail interfaces at MTU {q.mtu} (switches 9216).",
            ]
        )
    ]


def _sharp(ctx: RenderContext, out: list[NcclVar]) -> None:
    """InfiniBand with SHARP on: CollNet offload and streaming aggregation."""
    if ctx.fabric != "infiniband" or not ctx.spec.infiniband.sharp:
        return
    _var(
        out,
        [
            "SHARP is on in the plan: let NCCL offload all-reduce to the switches via CollNet.",
            "Needs NVIDIA's NCCL RDMA/SHARP plugin (libnccl-net.so) and the SHARP Aggregation",
            f"Manager running next to the master SM. Plugin: {sources.NCCL_SHARP_PLUGIN}",
        ],
        "NCCL_COLLNET_ENABLE",
        1,
    )
    _var(
        out,
        [
            "SHARP streaming aggregation (SAT) for large messages, where all-reduce bandwidth",
            "matters; low-latency aggregation alone covers only small messages.",
        ],
        "SHARP_COLL_ENABLE_SAT",
        1,
    )


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    return [f"nccl/{ctx.fabric}.env"]


def render(ctx: RenderContext) -> list[Artifact]:
    """``nccl/<fabric>.env``."""
    return [Artifact(TARGET, files(ctx)[0], render_env(ctx))]
