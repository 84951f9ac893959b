"""Pod IPAM on the routed rails: whereabouts ranges per rail per leaf, from the underlay plan."""

from __future__ import annotations

import json
from ipaddress import IPv4Address, IPv4Network
from typing import Any

import yaml

from fabric_stack.artifacts import kubernetes_bundle as kubernetes
from fabric_stack.artifacts.k8s_ipam import PATH
from tests.golden_artifacts import context, seed_context
from tests.unit.test_artifacts_kubernetes import validator


def _nads(ctx: Any) -> list[dict[str, Any]]:
    art = next(a for a in kubernetes.render(ctx) if a.path == PATH)
    return [d for d in yaml.safe_load_all(art.content) if d is not None]


def test_one_attachment_per_rail_per_leaf_matching_the_underlay() -> None:
    ctx = seed_context("roce-2su")
    u = ctx.underlay
    nads = _nads(ctx)
    assert len(nads) == len(u.blocks) == 16  # 8 rails x 2 SUs
    by_name = {d["metadata"]["name"]: d for d in nads}
    for block in u.blocks:
        nad = by_name[f"rail{block.rail}-su{block.su}"]
        validator("NetworkAttachmentDefinition").validate(nad)  # the real CRD schema
        assert nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"] == (
            f"openshift.io/rail{block.rail}"
        )
        ipam = json.loads(nad["spec"]["config"])["ipam"]
        assert ipam["type"] == "whereabouts" and ipam["range"] == block.subnet
        assert ipam["gateway"] == block.gateway
        hosts = {h.address for h in u.hosts_of(block.leaf) if h.rail == block.rail}
        assert {e.removesuffix("/32") for e in ipam["exclude"]} == hosts | {block.gateway}
        # The route covers every other leaf's block of the same rail, via this leaf.
        (route,) = ipam["routes"]
        assert route["gw"] == block.gateway
        rail = IPv4Network(route["dst"])
        same_rail = [b for b in u.blocks if b.rail == block.rail and b.plane == block.plane]
        assert len(same_rail) == 2
        assert all(IPv4Network(b.subnet).subnet_of(rail) for b in same_rail)
        # What whereabouts may hand out: inside the block, never a host's or the gateway's.
        free = [
            a
            for a in IPv4Network(block.subnet).hosts()
            if str(a) not in hosts and a != IPv4Address(block.gateway)
        ]
        # The block is sized for a full leaf (64 downlinks x 2 + 3 > 128: a /24, issue #27),
        # whatever the SU holds today: /24 minus gateway and 16 servers.
        assert len(free) == 237
        assert len(free) >= len(hosts) * u.settings.pod_addresses_per_port


def test_capacity_notes_follow_the_reserved_pod_addresses() -> None:
    art = next(a for a in kubernetes.render(seed_context("roce")) if a.path == PATH)
    # The block is sized for a full leaf (/24, issue #27): 16 servers x 8 VFs fit (237 free).
    assert "not every VF" not in art.content and "WARNING" not in art.content
    ctx = context({"fabric": "roce", "switch": "sn5600", "underlay": {"pod_addresses_per_port": 8}})
    art = next(a for a in kubernetes.render(ctx) if a.path == PATH)
    # /24 per leaf: 16 x (1 + 8) + 3 = 147 addresses.
    assert "< 128" not in art.content and "WARNING" not in art.content


def test_p2p31_leaves_no_pod_addresses_and_infiniband_has_no_file() -> None:
    ctx = context({"fabric": "roce", "switch": "sn5600", "underlay": {"host_addressing": "p2p31"}})
    assert _nads(ctx) == []
    art = next(a for a in kubernetes.render(ctx) if a.path == PATH)
    assert "p2p31" in art.content and "no ranges are written" in art.content
    assert PATH not in kubernetes.files(seed_context("infiniband"))
    assert PATH not in [a.path for a in kubernetes.render(seed_context("infiniband"))]
