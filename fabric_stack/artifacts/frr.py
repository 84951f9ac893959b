"""`render frr`: ``frr/<switch>.conf`` for every leaf, spine and core of a RoCE/Ethernet plan.

Each file is a complete FRR integrated config (zebra + bgpd) for the routed
underlay of :func:`fabric_stack.underlay.plan.plan_underlay`: the loopback (= router-id),
eBGP with the plan's ASN, one neighbour per fabric port (``interface`` peers for
BGP unnumbered, or the peer's /31 address), ``bestpath as-path multipath-relax``
so paths through different spine ASNs are ECMP, ``maximum-paths``, and the
rail subnets the leaf originates. The twin runs these files unchanged except
for file paths (see :mod:`fabric_stack.twin.ops_frr`).

Leaf-subnet addressing puts the leaf's gateway on ``vlan<rail VLAN>``: a VLAN
local to that leaf bridging its host ports of that rail (the NOS creates the
bridge: NVUE ``nv set bridge``/SONiC ``VLAN_MEMBER``; FRR only addresses it).
The VLAN never leaves the leaf: routing starts at the gateway. Its MTU is the NOS's
too: FRR has no interface ``mtu`` command (FRR 8.4.4's ``vtysh --dryrun`` answers
``% Unknown command:  mtu 9000``; the zebra guide's "Interface Commands",
https://docs.frrouting.org/en/stable-8.4/zebra.html, lists none), so no file here sets
it but the NOS's own: NVUE ``link mtu`` on ``vlan<VID>`` (:mod:`.cumulus`),
SONiC's ``VLAN|Vlan<VID>`` ``mtu`` (:mod:`.sonic`), ``ip link set mtu`` in the twin.

Syntax: FRR 8.4 user guide, BGP (https://docs.frrouting.org/en/stable-8.4/bgp.html):
``neighbor PEER interface``, ``bgp bestpath as-path multipath-relax``,
``maximum-paths``, ``neighbor PEER bfd``; ``frr defaults datacenter`` (fast
timers, no eBGP policy requirement) from the same guide's "Basic commands".
"""

from __future__ import annotations

from fabric_stack.artifacts._base import Artifact, RenderContext, require_routed
from fabric_stack.artifacts.frr_conf import frr_conf
from fabric_stack.underlay.plan import SwitchUnderlay

TARGET = "frr"

__all__ = ["TARGET", "files", "render", "require_routed"]


def switches(ctx: RenderContext) -> list[SwitchUnderlay]:
    """Leaves, spines and cores in plan order."""
    return list(ctx.underlay.switches.values())


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes, without rendering them."""
    require_routed(ctx)
    return [f"frr/{s.name}.conf" for s in switches(ctx)]


def render(ctx: RenderContext) -> list[Artifact]:
    """One ``frr/<switch>.conf`` per fabric switch: its switch config serialized
    (:func:`.frr_conf.frr_conf`)."""
    require_routed(ctx)
    by_name = {sw.name: sw for sw in ctx.compute_switches()}
    return [
        Artifact(TARGET, f"frr/{s.name}.conf", frr_conf(ctx.switch_config(by_name[s.name]), TARGET))
        for s in switches(ctx)
    ]
