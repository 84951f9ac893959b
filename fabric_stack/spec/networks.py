"""The four separate networks of a GPU cluster and how each is attached.

Compute (collectives), storage, in-band management and out-of-band management
must not be able to starve one another. The usual way is distinct switches;
a shared switch is acceptable only with distinct VLANs and never on the
compute fabric. The spec records what the architect *intends*; the
``network-separation`` policy judges it (so a bad intent is a policy
violation, not an input error).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fabric_stack.errors import CatalogError, SpecError
from fabric_stack.hardware.switches import SwitchModel, lookup_switch, port_mode, radix_at

if TYPE_CHECKING:
    from fabric_stack.hardware.nodes import NodeProfile

NetworkName = Literal["compute", "storage", "inband", "oob"]
"""The network roles every node port is assigned to."""

Attach = Literal["dedicated", "compute", "storage", "inband", "oob"]
"""Which switches carry a network: its own ('dedicated') or another network's."""

NETWORK_TITLES: dict[str, str] = {
    "compute": "Compute (collectives)",
    "storage": "Storage",
    "inband": "In-band management",
    "oob": "Out-of-band management",
}


def _subnet_text(value: Any) -> Any:
    """Only text (or a network) is a subnet: pydantic would read ``false`` as 0.0.0.0/32."""
    if not isinstance(value, str | IPv4Network):
        raise ValueError(f"{str(value)[:40]!r} is not an IPv4 subnet like 10.200.0.0/16")
    return value


class ComputeNetwork(BaseModel):
    """Addressing of the compute fabric: one subnet (and, on Ethernet, one VLAN) per rail."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subnet: IPv4Network = Field(
        default=IPv4Network("10.64.0.0/12"),
        description="Supernet split into one equal subnet per rail (and plane).",
    )
    rail_vlans: tuple[int, ...] | None = Field(
        default=None,
        description=(
            "RoCE/Ethernet only: VLAN id per rail (rail 1 first). Default 101, 102, …; "
            "ignored on InfiniBand, which uses partition keys instead."
        ),
    )
    pkey: str = Field(
        default="0x7fff", description="InfiniBand partition key of the compute traffic."
    )
    mtu: int | None = Field(
        default=None,
        description="Host MTU. Default 4096 (IB MTU) on InfiniBand, 9000 on RoCE/Ethernet.",
    )

    _subnet = field_validator("subnet", mode="before")(_subnet_text)

    @field_validator("rail_vlans")
    @classmethod
    def _unique_vlans(cls, v: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if v is None:
            return v
        seen: set[int] = set()
        for i, vid in enumerate(v):
            if not 1 <= vid <= 4094:
                raise ValueError(f"rail {i + 1} VLAN {vid} is outside 1-4094")
            if vid in seen:
                raise ValueError(
                    f"VLAN {vid} is given to two rails (rail {i + 1} repeats it); "
                    "every rail needs its own VLAN"
                )
            seen.add(vid)
        return v


class AccessNetwork(BaseModel):
    """Storage, in-band or OOB network: VLAN, subnet, and the switches that carry it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vlan: int = Field(ge=1, le=4094, description="VLAN id.")
    subnet: IPv4Network = Field(description="IPv4 subnet for the node ports of this network.")
    attach: Attach = Field(
        default="dedicated",
        description=(
            "'dedicated': its own switches (sized per SU); or the name of another network whose "
            "switches carry it as a separate VLAN. 'compute' puts it on the compute fabric, "
            "which the network-separation policy forbids."
        ),
    )
    switch: str = Field(description="Switch model for dedicated access switches.")
    mtu: int = Field(default=9000, ge=576, le=9216, description="Host MTU.")

    _subnet = field_validator("subnet", mode="before")(_subnet_text)

    @field_validator("switch")
    @classmethod
    def _known_switch(cls, v: str) -> str:
        # `size` must refuse the model every later command would (they look it up).
        from fabric_stack.errors import CatalogError
        from fabric_stack.hardware.switches import lookup_switch

        try:
            lookup_switch(v)
        except CatalogError as exc:
            raise ValueError(f"{exc.problem} ({exc.valid})") from None
        return v


class Networks(BaseModel):
    """VLAN and subnet plan of the four networks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    compute: ComputeNetwork = Field(default_factory=ComputeNetwork, description="Compute fabric.")
    storage: AccessNetwork = Field(
        default=AccessNetwork(vlan=200, subnet=IPv4Network("10.200.0.0/16"), switch="sn5600"),
        description="Storage network (NFS/parallel FS, checkpoints).",
    )
    inband: AccessNetwork = Field(
        default=AccessNetwork(
            vlan=300, subnet=IPv4Network("10.30.0.0/16"), switch="sn5600", mtu=1500
        ),
        description="In-band management (SSH, Kubernetes, image pulls).",
    )
    oob: AccessNetwork = Field(
        default=AccessNetwork(
            vlan=400, subnet=IPv4Network("10.40.0.0/16"), switch="sn2201", mtu=1500
        ),
        description="Out-of-band management (BMC).",
    )

    @model_validator(mode="before")
    @classmethod
    def _merge_defaults(cls, data: Any) -> Any:
        # A partial override ({storage: {attach: compute}}) keeps that network's
        # other defaults instead of demanding every field again.
        if not isinstance(data, dict):
            return data
        merged = dict(data)
        for name in ("storage", "inband", "oob"):
            value = merged.get(name)
            if isinstance(value, dict):
                default = cls.model_fields[name].get_default()
                merged[name] = {**default.model_dump(), **value}
        return merged

    @model_validator(mode="after")
    def _distinct_subnets(self) -> Networks:
        nets = [("compute", self.compute.subnet)] + [
            (k, v.subnet) for k, v in self.access().items()
        ]
        for i, (a, net_a) in enumerate(nets):
            for b, net_b in nets[i + 1 :]:
                if net_a.overlaps(net_b):
                    raise ValueError(
                        f"{b}.subnet: {net_b} overlaps {a}.subnet {net_a} "
                        "(every network needs its own address range)"
                    )
        return self

    def access(self) -> dict[str, AccessNetwork]:
        """The three non-compute networks by name, in a fixed order."""
        return {"storage": self.storage, "inband": self.inband, "oob": self.oob}


# --------------------------------------------------------------------------- build rules
# The rules below are shared by the spec check (validate_spec refuses a spec that breaks
# one, so every command fails the same way) and the topology builder (which applies them).


def access_ports(profile: NodeProfile) -> dict[str, tuple[int, int, str]]:
    """Per access network: (ports per server, Gb/s per port, server port-name prefix)."""
    return {
        "storage": (profile.storage_ports, profile.storage_gbps, "stor"),
        "inband": (profile.inband_ports, profile.inband_gbps, "mgmt"),
        "oob": (profile.oob_ports, profile.oob_gbps, "bmc"),
    }


def attach_carriers(access: Mapping[str, AccessNetwork]) -> dict[str, str]:
    """Which network's switches carry each access network (an attach chain is refused).

    A network attached to another must land on one with dedicated switches (or on
    compute): ``storage → inband → oob`` would leave nobody sizing inband's switches.
    """
    carrier_of: dict[str, str] = {}
    for name, net in access.items():
        target = net.attach if net.attach != "dedicated" else name
        if target != name and target != "compute" and access[target].attach != "dedicated":
            raise SpecError(
                f"networks.{name}.attach",
                f"{target!r} is itself carried by {access[target].attach!r}",
                f"attach {name} to a network with dedicated switches",
            )
        carrier_of[name] = target
    return carrier_of


@dataclass(frozen=True, slots=True)
class AccessSwitch:
    """An access switch model at the speed of its network's server ports."""

    model: SwitchModel
    down: int
    """Server-facing ports per switch."""
    ports_per_cage: int
    radix: int
    """Logical ports at the network's speed."""


def access_switch(name: str, speed: int, net: str) -> AccessSwitch:
    """The Ethernet switch model ``name`` at ``speed`` Gb/s for network ``net``.

    Raises :class:`SpecError` on ``networks.<net>.switch`` for an unknown model or one
    without ports at that speed.
    """
    try:
        model = lookup_switch(name, "ethernet")
        mode = port_mode(model, speed)
    except CatalogError as exc:
        raise SpecError(f"networks.{net}.switch", exc.problem, exc.valid) from None
    radix = radix_at(model, speed)
    # Dedicated access switches keep half their ports for uplinks (non-blocking),
    # except 1G OOB switches whose uplinks are separate 100G ports.
    down = radix if speed <= 1 else radix // 2
    return AccessSwitch(model, down, mode.ports_per_cage, radix)


def rail_subnets(net: IPv4Network, parts: int) -> list[IPv4Network]:
    """``net`` split into ``parts`` equal rail subnets (refused below /30 per rail)."""
    bits = max(0, (parts - 1).bit_length())
    if net.prefixlen + bits > 30:
        raise SpecError(
            "networks.compute.subnet",
            f"{net} is too small to split into {parts} rail subnets",
            "use a larger supernet, e.g. a /12",
        )
    return list(net.subnets(prefixlen_diff=bits))[:parts]


def check_networks(networks: Networks, profile: NodeProfile, rail_subnet_count: int) -> None:
    """Every network rule a topology build applies, in the order the build applies them."""
    access = networks.access()
    carrier_of = attach_carriers(access)
    ports = access_ports(profile)
    for carrier, net in access.items():
        if any(carrier_of[n] == carrier for n in access):
            access_switch(net.switch, ports[carrier][1], carrier)
    rail_subnets(networks.compute.subnet, rail_subnet_count)
