"""Latency of the RDMA NICs the server profiles name: the host end of a fabric path.

One figure per NIC model: the back-to-back RDMA latency the vendor quotes (two NICs,
one cable, no switch), so a path's end-to-end latency is this plus each switch's
port-to-port latency (:attr:`fabric_stack.hardware.switches.SwitchModel.port_latency_ns`).
The same ConnectX silicon runs InfiniBand and RoCEv2, so the figure does not change with
the fabric; what differs between candidates is the switches on the path. Every figure
here is UNVERIFIED unless its ``basis`` says it was read from a datasheet.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class NicLatency(BaseModel):
    """Back-to-back RDMA latency of one NIC model, with where it comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nic_model: str = Field(description="NIC model as server profiles name it.")
    latency_ns: int = Field(description="Back-to-back RDMA latency, ns (both NICs).")
    basis: str = Field(description="Source, and UNVERIFIED when not confirmed.")

    @property
    def verified(self) -> bool:
        """False when the basis marks the figure UNVERIFIED."""
        return "UNVERIFIED" not in self.basis


_CX_BASIS = (
    "NVIDIA ConnectX product briefs quote 'sub-600ns' RDMA latency (ConnectX-6 VPI); no "
    "ConnectX-7/-8 figure was read here, the ConnectX-6 one is used: UNVERIFIED"
)

NIC_LATENCIES: dict[str, NicLatency] = {
    n.nic_model.lower(): n
    for n in (
        NicLatency(nic_model="ConnectX-7", latency_ns=600, basis=_CX_BASIS),
        NicLatency(nic_model="ConnectX-8", latency_ns=600, basis=_CX_BASIS),
    )
}
"""NIC model (lower case) → its back-to-back latency."""

UNKNOWN_NIC_NS = 1000
"""Back-to-back latency assumed for a NIC model without a figure (UNVERIFIED)."""


def nic_latency(nic_model: str) -> NicLatency:
    """The NIC's latency record; an UNVERIFIED assumption for a model not listed."""
    found = NIC_LATENCIES.get(nic_model.strip().lower())
    if found is not None:
        return found
    return NicLatency(
        nic_model=nic_model,
        latency_ns=UNKNOWN_NIC_NS,
        basis=f"no figure for {nic_model!r}: {UNKNOWN_NIC_NS} ns assumed, UNVERIFIED",
    )
