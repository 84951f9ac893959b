"""Spec section ``underlay``: address pools and choices of the routed RoCE/Ethernet underlay.

Kept in its own module so :mod:`fabric_stack.spec.model` only gains one field. The
defaults follow the published L3 AI back-end designs (see :mod:`fabric_stack.underlay.plan`):
eBGP everywhere (RFC 7938), BGP unnumbered fabric links, one subnet per rail per
leaf with the leaf as gateway.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

PRIVATE_ASN_FIRST = 4_200_000_000
"""First 4-byte private ASN (RFC 6996 §5: 4200000000-4294967294)."""
PRIVATE_ASN_LAST = 4_294_967_294
"""Last 4-byte private ASN (RFC 6996)."""


def _subnet_text(value: Any) -> Any:
    # Only text (or a network) is a subnet: pydantic would read ``false`` as 0.0.0.0/32.
    if not isinstance(value, (str, IPv4Network)):
        raise ValueError(f"{str(value)[:40]!r} is not an IPv4 subnet like 10.254.0.0/16")
    return value


class UnderlaySettings(BaseModel):
    """Pools and choices of the routed underlay (RoCE/Ethernet compute fabric only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    loopbacks: IPv4Network = Field(
        default=IPv4Network("10.255.0.0/16"),
        description="Pool of switch loopbacks (one /32 each; also the BGP router-id).",
    )
    p2p: IPv4Network = Field(
        default=IPv4Network("10.254.0.0/16"),
        description="Pool of /31 pairs for fabric links when fabric_links is 'p2p31'.",
    )
    fabric_links: Literal["unnumbered", "p2p31"] = Field(
        default="unnumbered",
        description="Leaf-spine-core links: BGP unnumbered (IPv6 link-local, RFC 5549) or /31s.",
    )
    host_addressing: Literal["leaf-subnet", "p2p31"] = Field(
        default="leaf-subnet",
        description=(
            "Rail NIC addressing: one subnet per rail per leaf with the leaf as gateway, "
            "or one /31 per host port. Both come from networks.compute.subnet."
        ),
    )
    pod_addresses_per_port: int = Field(
        default=1,
        ge=0,
        le=64,
        description=(
            "leaf-subnet only: addresses reserved in the leaf's block per host rail port for "
            "pods (SR-IOV VFs on that rail; whereabouts hands them out). 1 fits one "
            "full-node training pod per server, the rail-optimized norm; raise it for "
            "several pods per server on one rail."
        ),
    )
    asn_base: int = Field(
        default=PRIVATE_ASN_FIRST,
        ge=PRIVATE_ASN_FIRST,
        le=PRIVATE_ASN_LAST,
        description="First ASN of the plan (4-byte private range, RFC 6996).",
    )
    maximum_paths: int = Field(default=64, ge=1, le=256, description="BGP ECMP paths.")
    bfd: bool = Field(default=False, description="BFD on every fabric BGP session.")
    route_table_base: int = Field(
        default=100,
        ge=1,
        le=250,
        description="Host routing table of rail NIC k (1-based) is route_table_base + k.",
    )

    _subnets = field_validator("loopbacks", "p2p", mode="before")(_subnet_text)

    @model_validator(mode="after")
    def _distinct_pools(self) -> UnderlaySettings:
        if self.fabric_links == "p2p31" and self.p2p.overlaps(self.loopbacks):
            raise ValueError(
                f"p2p: {self.p2p} overlaps underlay.loopbacks {self.loopbacks} "
                "(every pool needs its own range)"
            )
        return self


def pool_overlaps(underlay: UnderlaySettings, others: dict[str, IPv4Network]) -> str | None:
    """The first overlap of an underlay pool with another network, as an error line, or None."""
    pools = {"underlay.loopbacks": underlay.loopbacks}
    if underlay.fabric_links == "p2p31":
        pools["underlay.p2p"] = underlay.p2p
    for name, pool in pools.items():
        for other, net in others.items():
            if pool.overlaps(net):
                return f"{name}: {pool} overlaps {other} {net} (every pool needs its own range)"
    return None
