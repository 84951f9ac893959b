"""The plan's words for a suspect: its cables, its rail HCAs, and the commands that confirm.

The drift command is `fabric-stack drift` with the spec options the user gave
`accept` (so it compares with the same plan) and the discovery source of the
fabric: ``ibnetdiscover`` output on InfiniBand, ``lldpctl -f json0`` files on
Ethernet and RoCE (the readers `drift` has, see its --help).
"""

from __future__ import annotations

from collections.abc import Iterable

from fabric_stack.acceptance.placement import AcceptContext
from fabric_stack.topology.build import Link, Nic


def cable_text(link: Link) -> str:
    """``'su1-node05:mlx5_2 <-> su1-r3-leaf:1/5/1'``."""
    return f"{link.a_device}:{link.a_port} <-> {link.b_device}:{link.b_port}"


def rail_cable(ctx: AcceptContext, server: str, device: str) -> Link | None:
    """The plan's cable from ``server``'s rail NIC ``device`` to its leaf."""
    for i in ctx.index.by_device.get(server, []):
        link = ctx.index.links[i]
        if link.role == "node_leaf" and link.a_device == server and link.a_port == device:
            return link
    return None


def uplinks(ctx: AcceptContext, leaf: str) -> list[Link]:
    """The plan's leaf → spine cables of ``leaf``."""
    out = []
    for i in ctx.index.by_device.get(leaf, []):
        link = ctx.index.links[i]
        if link.role == "leaf_spine" and link.a_device == leaf:
            out.append(link)
    return out


def server_nics(ctx: AcceptContext, server: str | None = None) -> list[Nic]:
    """Rail NICs of ``server`` (the first server when None), plane then rail order."""
    if server is None:
        server = next(d.name for d in ctx.topo.devices if d.role == "server")
    nics = [n for n in ctx.topo.nics if n.node == server]
    return sorted(nics, key=lambda n: (n.plane, n.rail))


def rendered_ib_hca(nics: Iterable[Nic]) -> str:
    """NCCL_IB_HCA as `fabric-stack render nccl` writes it: exact names, port 1."""
    return "=" + ",".join(f"{n.name}:1" for n in nics)


def hca_names(value: str) -> list[str]:
    """Device names of an NCCL_IB_HCA value (``=``/``^`` prefix and ``:port`` dropped)."""
    return [x.split(":")[0] for x in value.lstrip("=^").split(",") if x]


def drift_check(ctx: AcceptContext, subject: str) -> str:
    """The drift command that confirms a cable-level suspicion about ``subject``."""
    if ctx.topo.plan.spec.fabric == "infiniband":
        return (
            f"`ibnetdiscover > fabric.ibnet; {ctx.drift} --ibnetdiscover fabric.ibnet`: a "
            f"missing, miswired or wrong-speed finding on {subject} confirms it"
        )
    return (
        f"`{ctx.drift} --lldp DIR` (DIR: `lldpctl -f json0` of every host and switch): a "
        f"missing, miswired or wrong-speed finding on {subject} confirms it"
    )


def nic_check(device: str, host: str) -> str:
    """How to look at one NIC port's link on its host."""
    return (
        f"on {host}: `ibstat {device}` (State Active, Rate at the planned speed) and the port's "
        "FEC and BER counters (`mlxlink -d <its PCI address> -c`, NVIDIA MFT)"
    )


def rail_label(nics: Iterable[Nic]) -> str:
    """'rails 5-8' / 'rail 3' for a run of NICs."""
    rails = sorted({n.rail for n in nics})
    if not rails:
        return "no rail"
    if len(rails) == 1:
        return f"rail {rails[0]}"
    if rails == list(range(rails[0], rails[-1] + 1)):
        return f"rails {rails[0]}-{rails[-1]}"
    return "rails " + ", ".join(map(str, rails))


__all__ = [
    "cable_text",
    "drift_check",
    "hca_names",
    "nic_check",
    "rail_cable",
    "rail_label",
    "rendered_ib_hca",
    "server_nics",
    "uplinks",
]
