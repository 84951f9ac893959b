"""Pod IPAM of `render kubernetes`: which network a pod's rail VF attaches, with which range.

One rule for every path (SR-IOV, host-device, IPoIB), so the pods, the MPIJob, the
networks and the allocation check (:mod:`.k8s_allocation`) all read the same list
(:func:`pod_networks`):

* **Routed underlay** (RoCE/Ethernet, ``host_addressing: leaf-subnet``): a rail is no
  longer one subnet. Each leaf owns one block of it (:class:`~fabric_stack.underlay.plan.RailBlock`)
  and is its gateway, so a pod's VF on rail *k* of a server in SU *s* must get an address
  in *that leaf's* block, with the leaf as gateway and a route to the rest of the rail
  subnet through it, exactly like the host NIC (:mod:`.hosts`). Whereabouts cannot choose a
  range by node, so there is one network per rail **per leaf**, named ``railK-suS``: the
  block, with the gateway and every server's own rail address excluded, plus ``gateway``
  and ``routes``. A pod in SU *s* attaches the ``-suS`` networks and selects the nodes of
  SU *s* by the ``fabric-stack/su`` label that ``render k8s-topology`` writes
  (:data:`fabric_stack.topology.scheduler_labels.SU`).
* **InfiniBand**: no routed underlay and no planned host address in the rail subnets, so one
  network per rail over the rail's whole subnet, every node (``su`` is None).
* **p2p31** hosts: every host port owns a /31 with the leaf; no address is left for a pod
  and the leaf would need a route per pod address, which nothing renders. The kubernetes
  target does not apply there (:func:`no_pod_addresses`): ``render kubernetes`` exits 2
  with that reason and ``render all`` skips it, instead of handing pods the hosts' /31s.

Whereabouts IPAM keys (``range``, ``exclude``, ``gateway``, ``routes``, ``range_start``,
``range_end``): ``IPAMConfig`` in k8snetworkplumbingwg/whereabouts ``pkg/types/types.go``
at 3a262bd0cd87 (2026-06-02). Whereabouts does not skip the gateway by itself
(``IterateForAssignment`` in ``pkg/allocate/allocate.go`` at the same commit skips only
reserved and excluded addresses), hence the gateway in ``exclude``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from ipaddress import IPv4Network, collapse_addresses
from typing import Any

from fabric_stack.artifacts._base import RenderContext
from fabric_stack.intent.model import RailIntent
from fabric_stack.topology.scheduler_labels import SU
from fabric_stack.underlay.plan import RailBlock

RailKey = Callable[[RenderContext, RailIntent], tuple[str, str]]
"""(object name, device-plugin resource) of a rail, as :mod:`.kubernetes` names it."""


@dataclass(frozen=True, slots=True)
class PodNetwork:
    """One pod rail network: its name, rail, SU (None: every node) and whereabouts IPAM."""

    name: str
    rail: RailIntent
    su: int | None
    leaf: str | None
    ipam: dict[str, Any]
    hosts: tuple[str, ...]
    """The servers' own addresses in the range (excluded; the allocation check proves it)."""
    servers: int
    """Servers that attach this network (under the leaf, or the whole cluster)."""

    @property
    def gateway(self) -> str | None:
        """The leaf gateway pods route through (None on InfiniBand)."""
        gw = self.ipam.get("gateway")
        return str(gw) if gw else None


def routed(ctx: RenderContext) -> bool:
    """True when rails are routed per leaf (RoCE/Ethernet): pod networks are per leaf."""
    return ctx.fabric != "infiniband"


def no_pod_addresses(ctx: RenderContext) -> str | None:
    """Why pods cannot get rail addresses on this plan (p2p31 hosts), or None."""
    if routed(ctx) and ctx.underlay.settings.host_addressing == "p2p31":
        return (
            "underlay.host_addressing is p2p31: every host port is a /31 with its leaf, no "
            "address is left for a pod"
        )
    return None


def rail_subnet(ctx: RenderContext, block: RailBlock) -> str:
    """The whole rail subnet a block belongs to (every leaf's block of that rail and plane)."""
    compute = next(n for n in ctx.topo.networks if n.name == "compute")
    idx = (block.plane - 1) * ctx.plan.rails + block.rail - 1 if block.plane else block.rail - 1
    return compute.subnets[idx]


def block_ipam(ctx: RenderContext, block: RailBlock, hosts: list[str]) -> dict[str, Any]:
    """The whereabouts IPAM of one leaf block: free addresses only, leaf gateway, rail route."""
    return {
        "type": "whereabouts",
        "range": block.subnet,
        # Collapsed to the fewest CIDRs (whereabouts takes CIDRs in exclude) so the list
        # stays short; the allocation check expands them again.
        "exclude": [
            str(n) for n in collapse_addresses(IPv4Network(a) for a in (block.gateway, *hosts))
        ],
        "gateway": block.gateway,
        "routes": [{"dst": rail_subnet(ctx, block), "gw": block.gateway}],
    }


def _block_networks(ctx: RenderContext, rail_key: RailKey) -> list[PodNetwork]:
    rails = {(r.rail, r.plane): r for r in ctx.intent.rails}
    out = []
    for block in ctx.underlay.blocks:
        rail = rails[(block.rail, block.plane)]
        ports = [
            h
            for h in ctx.underlay.hosts_of(block.leaf)
            if h.rail == block.rail and h.plane == block.plane
        ]
        hosts = [h.address for h in ports]
        out.append(
            PodNetwork(
                name=f"{rail_key(ctx, rail)[0]}-su{block.su}",
                rail=rail,
                su=block.su,
                leaf=block.leaf,
                ipam=block_ipam(ctx, block, hosts),
                hosts=tuple(hosts),
                servers=len({h.server for h in ports}),
            )
        )
    return out


def pod_networks(ctx: RenderContext, rail_key: RailKey) -> list[PodNetwork]:
    """Every pod rail network of the plan, in underlay block (or rail) order.

    Raises nothing on p2p31: callers check :func:`no_pod_addresses` first (the target's
    applicability does).
    """
    # Every pod and MPIJob of an SU asks for the whole list: derived once per context (it
    # was rebuilt per SU, quadratic: 330 CPU-s of `render all` at 32,768 GPUs).
    key = ("pod_networks", rail_key)
    if key not in ctx.memo:
        ctx.memo[key] = _pod_networks(ctx, rail_key)
    return list(ctx.memo[key])


def _pod_networks(ctx: RenderContext, rail_key: RailKey) -> list[PodNetwork]:
    if routed(ctx):
        return _block_networks(ctx, rail_key)
    return [
        PodNetwork(
            name=rail_key(ctx, r)[0],
            rail=r,
            su=None,
            leaf=None,
            ipam={"type": "whereabouts", "range": r.subnet},
            hosts=(),
            servers=ctx.plan.nodes,
        )
        for r in ctx.intent.rails
    ]


def su_groups(ctx: RenderContext, rail_key: RailKey) -> dict[int | None, list[PodNetwork]]:
    """Pod networks grouped by SU, rail order within (one group, key None, on InfiniBand).

    A pod (or an MPIJob's workers) attaches one group and selects that SU's nodes.
    """
    groups: dict[int | None, list[PodNetwork]] = {}
    for net in pod_networks(ctx, rail_key):
        groups.setdefault(net.su, []).append(net)
    for nets in groups.values():
        nets.sort(key=lambda n: (n.rail.plane, n.rail.rail))
    return dict(sorted(groups.items(), key=lambda kv: -1 if kv[0] is None else kv[0]))


def node_selector(su: int | None) -> dict[str, str]:
    """The nodeSelector of a pod attaching SU ``su``'s networks (empty: every node)."""
    return {} if su is None else {SU: str(su)}
