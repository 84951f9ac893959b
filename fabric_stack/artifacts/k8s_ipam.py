"""Routed-rail pod IPAM for `render kubernetes`: whereabouts ranges from the underlay plan.

On a routed RoCE/Ethernet underlay a rail is no longer one subnet: each leaf owns
one block of it (:class:`fabric_stack.underlay.plan.RailBlock`) and is the gateway for
it. A pod's VF on rail *k* of a server in SU *s* must therefore get an address in
*its leaf's* block, with that leaf as gateway and a route to the rest of the rail
subnet through it, exactly like the host NIC (:mod:`.hosts`). Whereabouts cannot
choose a range by node, so ``kubernetes/rail-ipam.yaml`` holds one Multus
``NetworkAttachmentDefinition`` per rail **per leaf** (``rail1-su1`` …): a pod
in SU *s* attaches ``railN-suS``. Each range is the leaf's block with the
gateway and the servers' own rail addresses excluded (whereabouts ``exclude``),
plus ``gateway`` and ``routes`` (whereabouts ``IPAMConfig``: range, exclude,
gateway, routes; https://github.com/k8snetworkplumbingwg/whereabouts
``pkg/types/types.go``).

The block has room for ``underlay.pod_addresses_per_port`` pod addresses per
server besides the host's own (default 1: one full-node pod per server); when the
VFs outnumber that, the file says so per attachment.

With ``underlay.host_addressing: p2p31`` every host port owns a /31 and there is
no spare address for a pod: the file says so and carries no ranges.

The module is separate from :mod:`.kubernetes` (which only calls :func:`render`
and :func:`files`); it takes the rail naming from its caller so both agree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from ipaddress import IPv4Network
from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import GENERATED_BY, Artifact, RenderContext, yaml_documents
from fabric_stack.intent.model import RailIntent
from fabric_stack.underlay.plan import RailBlock

PATH = "kubernetes/rail-ipam.yaml"
RailKey = Callable[[RenderContext, RailIntent], tuple[str, str]]
"""(object name, device-plugin resource) of a rail, as :mod:`.kubernetes` names it."""


def files(ctx: RenderContext) -> list[str]:
    """The path :func:`render` writes: none on InfiniBand (no IP underlay)."""
    return [] if ctx.fabric == "infiniband" else [PATH]


def rail_subnet(ctx: RenderContext, block: RailBlock) -> str:
    """The whole rail subnet a block belongs to (every leaf's block of that rail and plane)."""
    compute = next(n for n in ctx.topo.networks if n.name == "compute")
    idx = (block.plane - 1) * ctx.plan.rails + block.rail - 1 if block.plane else block.rail - 1
    return compute.subnets[idx]


def ipam(ctx: RenderContext, block: RailBlock) -> dict[str, Any]:
    """The whereabouts IPAM of one leaf block: free addresses only, leaf gateway, rail route."""
    hosts = [h.address for h in ctx.underlay.hosts_of(block.leaf) if h.rail == block.rail]
    return {
        "type": "whereabouts",
        "range": block.subnet,
        "exclude": [f"{a}/32" for a in (block.gateway, *hosts)],
        "gateway": block.gateway,
        "routes": [{"dst": rail_subnet(ctx, block), "gw": block.gateway}],
    }


def capacity(ctx: RenderContext, block: RailBlock) -> int:
    """Pod addresses a block leaves: its usable addresses minus the gateway and the hosts."""
    hosts = sum(1 for h in ctx.underlay.hosts_of(block.leaf) if h.rail == block.rail)
    return IPv4Network(block.subnet).num_addresses - 2 - 1 - hosts


def render(
    ctx: RenderContext, rail_key: RailKey, namespace: str, resource_prefix: str
) -> list[Artifact]:
    """``kubernetes/rail-ipam.yaml`` (nothing on InfiniBand)."""
    if not files(ctx):
        return []
    head = [
        f"Pod IPAM per rail per leaf for {ctx.spec.name}: on the routed underlay each leaf",
        "owns one block of every rail subnet and is its gateway, so a pod in SU S attaches",
        "the rail's '-suS' network (one NetworkAttachmentDefinition per rail per leaf).",
        "Use these instead of the per-rail attachments of network-attachment-definitions.yaml.",
        GENERATED_BY.format(target="kubernetes"),
        f"IPAM: whereabouts range/exclude/gateway/routes ({sources.WHEREABOUTS},",
        "  pkg/types/types.go IPAMConfig)",
    ]
    if ctx.underlay.settings.host_addressing == "p2p31":
        head += [
            "underlay.host_addressing is p2p31: every host port owns a /31 and no address is",
            "left for a pod, so no ranges are written. Use leaf-subnet for pod networking.",
        ]
        return [Artifact("kubernetes", PATH, yaml_documents(head, []))]
    rails = {(r.rail, r.plane): r for r in ctx.intent.rails}
    vfs = ctx.spec.gpus_per_node  # VFs per rail NIC (one per GPU), as in the node policies
    reserved = ctx.underlay.settings.pod_addresses_per_port
    docs = []
    for block in ctx.underlay.blocks:
        rail = rails[(block.rail, block.plane)]
        name, resource = rail_key(ctx, rail)
        name = f"{name}-su{block.su}"
        pool = ipam(ctx, block)
        conf: dict[str, Any] = {"cniVersion": "1.0.0", "name": name, "type": "sriov", "vlan": 0}
        conf["link_state"] = "enable"
        conf["ipam"] = pool
        servers = len(pool["exclude"]) - 1
        free = capacity(ctx, block)
        note = [f"{name}: {block.subnet} behind {block.leaf} (gateway {block.gateway}), {free}"]
        note.append(f"pod addresses for {servers} servers x {vfs} VFs.")
        if free < servers * vfs:
            note.append(
                f"{free} < {servers * vfs}: not every VF can hold an address at once; the "
                f"block reserves {reserved} per server (underlay.pod_addresses_per_port)."
            )
        nad = {
            "apiVersion": "k8s.cni.cncf.io/v1",
            "kind": "NetworkAttachmentDefinition",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "annotations": {"k8s.v1.cni.cncf.io/resourceName": f"{resource_prefix}/{resource}"},
            },
            "spec": {"config": json.dumps(conf, separators=(",", ":"))},
        }
        docs.append((note, nad))
    return [Artifact("kubernetes", PATH, yaml_documents(head, docs))]
