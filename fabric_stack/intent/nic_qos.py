"""The lossless RoCEv2 settings of a server's rail NICs, typed, from the same ``roce`` spec as
the switches' :class:`~fabric_stack.intent.switch_config.QosConfig` and ``NCCL_IB_TC``.

:func:`build_nic_qos` is the one place the host side is decided: ``render hosts`` writes it
as ``mlnx_qos``/``cma_roce_tos`` commands, ``render kubernetes`` as the NIC configuration
operator's ``roceOptimized.qos``, and the ``roce-host-consistency`` policy compares it with
every compute switch and the NCCL traffic class. The cable length per NIC is the planned run
of the NIC's cable (:mod:`fabric_stack.plant`), rounded up to a whole metre.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabric_stack.spec.model import FabricSpec


@dataclass(frozen=True, slots=True)
class NicQos:
    """What every rail NIC of a RoCE server is set to (host-side overrides included)."""

    trust: str
    """``dscp`` (classify on the ToS NCCL sets) or ``pcp`` (the NIC's default, lossy here)."""
    pfc_priorities: tuple[int, ...]
    """Priorities the NIC sends and honours PFC on."""
    roce_priority: int
    """The priority RoCE data maps to (the spec's first PFC priority, as on the switches)."""
    roce_dscp: int
    """DSCP of RoCE data."""
    cnp_dscp: int
    """DSCP of the congestion notifications the NIC sends (DCQCN notification point)."""
    cnp_priority: int
    """Priority CNPs are sent on."""
    ecn: bool
    """DCQCN on the RoCE priority: reaction point (rate cut on CNP) and notification point."""
    tos: int
    """RDMA-CM default ToS of the RDMA device (= ``NCCL_IB_TC``): DSCP << 2."""
    global_pause: bool
    """802.3x link pause; off, because PFC and global pause exclude each other."""
    mtu: int
    """The rail interfaces' MTU (below the switches' 9216)."""

    @property
    def pfc_vector(self) -> str:
        """PFC enable per priority 0-7, as ``mlnx_qos --pfc`` and the operator's ``pfc`` take
        it (``0,0,0,1,0,0,0,0``)."""
        return ",".join("1" if p in self.pfc_priorities else "0" for p in range(8))


def build_nic_qos(spec: FabricSpec) -> NicQos:
    """The rail NICs' lossless settings: ``roce`` with its ``overrides.host`` applied."""
    roce = spec.roce
    host = roce.for_role("host")
    return NicQos(
        trust="dscp" if host["dscp_trust"] else "pcp",
        pfc_priorities=tuple(host["pfc_priorities"]),
        roce_priority=roce.roce_priority,
        roce_dscp=roce.roce_dscp,
        cnp_dscp=roce.cnp_dscp,
        cnp_priority=roce.cnp_priority,
        ecn=bool(host["ecn"]),
        tos=roce.tos_byte,
        global_pause=False,
        mtu=spec.networks.compute.mtu or 9000,
    )


def nccl_ib_tc(spec: FabricSpec) -> int:
    """``NCCL_IB_TC`` of ``nccl/roce.env`` and the pods: the IP ToS byte NCCL puts on its QPs,
    which must be the NICs' RDMA-CM ToS (DSCP in the upper six bits, ECN bits 0)."""
    return spec.roce.roce_dscp << 2
