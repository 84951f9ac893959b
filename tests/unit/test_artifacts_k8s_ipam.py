"""Pod IPAM on the routed rails: one network per rail per leaf, from the underlay plan, used by
the pods and MPIJobs (per SU), with the rdma meta-plugin; p2p31 refuses the target."""

from __future__ import annotations

import json
from ipaddress import IPv4Address, IPv4Network
from typing import Any

import pytest
import yaml

from fabric_stack.artifacts import applies, render_artifacts
from fabric_stack.artifacts import kubernetes_bundle as kubernetes
from fabric_stack.artifacts._base import TargetMismatchError
from fabric_stack.artifacts.k8s_allocation import allocate
from tests.golden_artifacts import context, seed_context
from tests.unit.test_artifacts_kubernetes import validator

NADS = "kubernetes/network-attachment-definitions.yaml"
NETS = "kubernetes/sriov-networks.yaml"


def _docs(ctx: Any, path: str) -> list[dict[str, Any]]:
    art = next(a for a in kubernetes.render(ctx) if a.path == path)
    return [d for d in yaml.safe_load_all(art.content) if d is not None]


def _excluded(ipam: dict[str, Any]) -> set[str]:
    return {str(a) for e in ipam["exclude"] for a in IPv4Network(e)}


def test_one_attachment_per_rail_per_leaf_matching_the_underlay() -> None:
    ctx = seed_context("roce-2su")
    u = ctx.underlay
    nads = _docs(ctx, NADS)
    assert len(nads) == len(u.blocks) == 16  # 8 rails x 2 SUs
    by_name = {d["metadata"]["name"]: d for d in nads}
    for block in u.blocks:
        nad = by_name[f"rail{block.rail}-su{block.su}"]
        validator("NetworkAttachmentDefinition").validate(nad)  # the upstream CRD schema
        conf = json.loads(nad["spec"]["config"])
        assert [p["type"] for p in conf["plugins"]] == ["sriov", "rdma"]  # RDMA for the pod
        ipam = conf["plugins"][0]["ipam"]
        assert ipam["type"] == "whereabouts" and ipam["range"] == block.subnet
        assert ipam["gateway"] == block.gateway
        hosts = {h.address for h in u.hosts_of(block.leaf) if h.rail == block.rail}
        assert _excluded(ipam) == hosts | {block.gateway}
        (route,) = ipam["routes"]
        assert route["gw"] == block.gateway
        same_rail = [b for b in u.blocks if b.rail == block.rail and b.plane == block.plane]
        assert all(IPv4Network(b.subnet).subnet_of(IPv4Network(route["dst"])) for b in same_rail)
        first = allocate(nad["metadata"]["name"], ipam, 3).addresses
        # The defect: the first pods took .1 (gateway), .2 and .3 (hosts).
        assert IPv4Address(first[0]) > max(IPv4Address(h) for h in hosts)


def test_sriov_networks_carry_the_rdma_meta_plugin_and_per_leaf_ipam() -> None:
    ctx = seed_context("roce-2su")
    for net in _docs(ctx, NETS):
        validator("SriovNetwork").validate(net)
        assert json.loads(net["spec"]["metaPlugins"]) == {"type": "rdma"}
        assert "exclude" in json.loads(net["spec"]["ipam"])
    eth = context({"fabric": "ethernet", "switch": "sn5600"})
    assert all("metaPlugins" not in n["spec"] for n in _docs(eth, NETS))  # no RDMA device


def test_pods_and_mpijobs_attach_their_su_networks_and_select_its_nodes() -> None:
    ctx = seed_context("roce-2su")
    jobs = _docs(ctx, "kubernetes/nccl-tests-mpijob.yaml")
    pods = _docs(ctx, "kubernetes/training-pod.yaml")
    names = [j["metadata"]["name"].rsplit("-", 1)[1] for j in jobs]
    # One job per SU on its networks, then the two over every SU on the host network (#46).
    assert names == ["su1", "su2", "allreduce", "alltoall"]
    jobs = jobs[:2]
    for su, (job, pod) in enumerate(zip(jobs, pods, strict=True), start=1):
        validator("MPIJob").validate(job)
        worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
        for meta, spec in ((worker["metadata"], worker["spec"]), (pod["metadata"], pod["spec"])):
            nets = meta["annotations"]["k8s.v1.cni.cncf.io/networks"].split(",")
            assert nets == [f"rail{r}-su{su}" for r in range(1, 9)]
            assert spec["nodeSelector"] == {"fabric-stack/su": str(su)}
    readme = next(a for a in kubernetes.render(ctx) if a.path == "kubernetes/README.md")
    assert "rail1-su1" in readme.content and "labels.sh" in readme.content


def test_ethernet_pods_run_nccl_over_the_rails_from_the_env_file_rule() -> None:
    ctx = context({"fabric": "ethernet", "switch": "sn5600"})
    (pod, *_) = _docs(ctx, "kubernetes/training-pod.yaml")
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    assert env["NCCL_SOCKET_IFNAME"] == "=" + ",".join(f"net{i}" for i in range(1, 9))
    host = next(a for a in render_artifacts("nccl", ctx)).content
    keys = [ln.split("=", 1)[0] for ln in host.splitlines() if ln and not ln.startswith("#")]
    assert list(env) == keys  # the same variables, in the same order


def test_p2p31_does_not_apply_and_says_why() -> None:
    ctx = context({"fabric": "roce", "switch": "sn5600", "underlay": {"host_addressing": "p2p31"}})
    assert not applies("kubernetes", ctx)
    with pytest.raises(TargetMismatchError, match="p2p31"):
        kubernetes.render(ctx)
    assert not any(a.path.startswith("kubernetes/") for a in render_artifacts("all", ctx))


def test_infiniband_keeps_one_network_per_rail_for_every_node() -> None:
    ctx = seed_context("infiniband")
    nads = _docs(ctx, NADS)
    assert [d["metadata"]["name"] for d in nads] == [f"rail{r}" for r in range(1, 9)]
    (pod,) = _docs(ctx, "kubernetes/training-pod.yaml")
    assert "nodeSelector" not in pod["spec"]
