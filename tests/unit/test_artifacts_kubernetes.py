"""`render kubernetes`: every manifest validated against the upstream CRD schemas in
../shared/schemas/crds (validate.schemas.shared_crds; SOURCES.md there names each commit)."""

from __future__ import annotations

import copy
import ipaddress
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabric_stack.analysis.estimate import estimate_collective, parse_sizes
from fabric_stack.artifacts import kubernetes, kubernetes_bundle
from fabric_stack.artifacts._base import RenderContext, TargetMismatchError
from tests.golden_artifacts import VARIANTS, context, seed_context
from validate.kube import strict_schema
from validate.schemas import shared_crds

CRD_DIR = shared_crds()

_SRIOV = "sriov-network-operator/config/crd/bases/sriovnetwork.openshift.io_"
_NETOP = "network-operator/config/crd/bases/mellanox.com_"
CRD_FILES = {
    "SriovNetworkNodePolicy": f"{_SRIOV}sriovnetworknodepolicies.yaml",
    "SriovNetwork": f"{_SRIOV}sriovnetworks.yaml",
    "SriovIBNetwork": f"{_SRIOV}sriovibnetworks.yaml",
    "SriovNetworkPoolConfig": f"{_SRIOV}sriovnetworkpoolconfigs.yaml",
    "NetworkAttachmentDefinition": (
        "network-attachment-definition-client/artifacts/networks-crd.yaml"
    ),
    "NicClusterPolicy": f"{_NETOP}nicclusterpolicies.yaml",
    "HostDeviceNetwork": f"{_NETOP}hostdevicenetworks.yaml",
    "IPoIBNetwork": f"{_NETOP}ipoibnetworks.yaml",
    "MPIJob": "mpi-operator/manifests/base/kubeflow.org_mpijobs.yaml",
    "NicConfigurationTemplate": (
        "nic-configuration-operator/config/crd/bases/"
        "configuration.net.nvidia.com_nicconfigurationtemplates.yaml"
    ),
}

DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
RESOURCE_NAME = re.compile(r"^[A-Za-z0-9_]+$")


@cache
def validator(kind: str) -> jsonschema.protocols.Validator:
    """A strict validator for ``kind`` from its CRD's v1 openAPIV3Schema."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the MPIJob CRD is 650 KB
    crd = yaml.load((CRD_DIR / CRD_FILES[kind]).read_text(encoding="utf-8"), Loader=loader)
    want = {"MPIJob": "v2beta1"}.get(
        kind,
        "v1alpha1" if crd["metadata"]["name"].endswith((".mellanox.com", ".nvidia.com")) else "v1",
    )
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == want]
    schema = strict_schema(version["schema"]["openAPIV3Schema"], root=True)  # kubeconform's rules
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    cls.check_schema(schema)
    return cls(schema)


def docs(ctx: RenderContext) -> dict[str, list[dict[str, Any]]]:
    """Rendered manifests per file name (YAML streams parsed)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for art in kubernetes_bundle.render(ctx):
        if not art.path.endswith(".yaml"):
            continue
        loaded = [d for d in yaml.safe_load_all(art.content) if d is not None]
        out[art.path.rsplit("/", 1)[1]] = loaded
    return out


def crd_docs(ctx: RenderContext) -> list[dict[str, Any]]:
    """Every manifest that has a CRD."""
    return [d for ds in docs(ctx).values() for d in ds if d["kind"] in CRD_FILES]


SPECS = [
    *VARIANTS.values(),
    {"planes": 2, "nic_gbps": 800, "switch": "q3400"},
    {"fabric": "ethernet", "switch": "sn5600"},
    {"networks": {"compute": {"pkey": "0x8011"}}},
]


@pytest.mark.parametrize(
    "spec", SPECS, ids=["ib", "roce", "roce-2su", "dgx-h100", "ib-2planes", "ethernet", "ib-pkey"]
)
def test_every_manifest_validates_against_its_crd(spec: dict[str, Any]) -> None:
    ctx = context(spec)
    manifests = crd_docs(ctx)
    kinds = {d["kind"] for d in manifests}
    net_kind = "SriovIBNetwork" if ctx.fabric == "infiniband" else "SriovNetwork"
    assert kinds == {
        "SriovNetworkNodePolicy",
        "SriovNetworkPoolConfig",
        net_kind,
        "NetworkAttachmentDefinition",
        "MPIJob",
    } | ({"NicConfigurationTemplate"} if ctx.fabric == "roce" else set())
    _validate_all(manifests)


def _validate_all(manifests: list[dict[str, Any]]) -> None:
    for doc in manifests:
        errors = sorted(validator(doc["kind"]).iter_errors(doc), key=str)
        assert not errors, f"{doc['kind']} {doc['metadata']['name']}: {errors[0].message}"
        assert doc["apiVersion"].endswith(("/v1", "/v1alpha1", "/v2beta1"))
        assert DNS_1123.match(doc["metadata"]["name"])


def netop_context(spec: dict[str, Any], mode: str) -> RenderContext:
    base = context(spec)
    return RenderContext(base.topo, base.intent, {}, {}, mode)


@pytest.mark.parametrize(
    ("spec", "mode"),
    [({}, "ipoib"), ({}, "host-device"), (VARIANTS["roce"], "host-device")],
    ids=["ib-ipoib", "ib-host-device", "roce-host-device"],
)
def test_network_operator_path_validates_against_its_crds(spec: dict[str, Any], mode: str) -> None:
    ctx = netop_context(spec, mode)
    d = docs(ctx)
    net_file = "ipoib-networks.yaml" if mode == "ipoib" else "host-device-networks.yaml"
    assert set(d) == {
        "nic-cluster-policy.yaml",
        net_file,
        "training-pod.yaml",
        "nccl-tests-mpijob.yaml",
    } | ({"nic-configuration-template.yaml"} if ctx.fabric == "roce" else set())
    manifests = [m for ms in d.values() for m in ms if m["kind"] in CRD_FILES]
    _validate_all(manifests)
    (ncp,) = d["nic-cluster-policy.yaml"]
    plugin = "rdmaSharedDevicePlugin" if mode == "ipoib" else "sriovDevicePlugin"
    assert plugin in ncp["spec"] and "multus" in ncp["spec"]["secondaryNetwork"]
    assert ("ipoib" in ncp["spec"]["secondaryNetwork"]) is (mode == "ipoib")
    config = json.loads(ncp["spec"][plugin]["config"])
    entries = config["configList" if mode == "ipoib" else "resourceList"]
    assert len(entries) == len(d[net_file]) == len(ctx.intent.rails)
    (pod,) = d["training-pod.yaml"]
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    prefix = "rdma/" if mode == "ipoib" else "nvidia.com/hostdev_"
    assert sum(k.startswith(prefix) for k in limits) == len(ctx.intent.rails)
    env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
    # Shared RDMA mode: the pod sees every HCA, so the rail devices are named exactly.
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}:1" for i in range(8))


def test_ipoib_is_refused_off_infiniband() -> None:
    with pytest.raises(TargetMismatchError, match="ipoib needs InfiniBand"):
        kubernetes_bundle.render(netop_context(VARIANTS["roce"], "ipoib"))


def test_new_crd_validators_can_fail() -> None:
    ctx = netop_context({}, "ipoib")
    (ncp,) = docs(ctx)["nic-cluster-policy.yaml"]
    bad = copy.deepcopy(ncp)
    del bad["spec"]["rdmaSharedDevicePlugin"]["image"]  # required by the CRD
    assert list(validator("NicClusterPolicy").iter_errors(bad))
    (pool,) = docs(seed_context("infiniband"))["sriov-network-pool-config.yaml"]
    bad_pool = copy.deepcopy(pool)
    bad_pool["spec"]["rdmaMode"] = "private"
    assert list(validator("SriovNetworkPoolConfig").iter_errors(bad_pool))
    (job,) = docs(seed_context("infiniband"))["nccl-tests-mpijob.yaml"]
    bad_job = copy.deepcopy(job)
    bad_job["spec"]["mpiReplicaSpecs"]["Worker"]["replica"] = 2
    assert list(validator("MPIJob").iter_errors(bad_job))


def test_strict_validation_rejects_typos_and_bad_enums() -> None:
    # The validator must be able to fail, or the test above proves nothing.
    policy = docs(seed_context("infiniband"))["sriov-node-policies.yaml"][0]
    assert policy["kind"] == "SriovNetworkNodePolicy"
    typo = copy.deepcopy(policy)
    typo["spec"]["linktype"] = typo["spec"].pop("linkType")
    assert any("linktype" in e.message for e in validator(policy["kind"]).iter_errors(typo))
    bad_enum = copy.deepcopy(policy)
    bad_enum["spec"]["linkType"] = "infiniband"
    assert list(validator(policy["kind"]).iter_errors(bad_enum))
    missing = copy.deepcopy(policy)
    del missing["spec"]["numVfs"]
    assert list(validator(policy["kind"]).iter_errors(missing))


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_one_policy_network_and_attachment_per_rail(variant: str) -> None:
    ctx = seed_context(variant)
    d = docs(ctx)
    rails = ctx.intent.rails
    is_ib = ctx.fabric == "infiniband"
    policies = d["sriov-node-policies.yaml"]
    networks = d["sriov-networks.yaml"]
    nads = d["network-attachment-definitions.yaml"]
    assert len(policies) == len(rails) == 8
    pod_nets = kubernetes.networks_of(ctx)  # per rail (IB) or per rail per leaf (routed)
    sus = 1 if is_ib else len({n.su for n in pod_nets})
    assert len(networks) == len(nads) == len(pod_nets) == 8 * sus
    # A DGX H100's PF netdevs from its user guide (rail order); otherwise the per-rail names.
    pfs = (
        ["ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0", "ibp154s0", "ibp192s0", "ibp206s0", "ibp220s0"]
        if variant == "dgx-h100"
        else [f"rail{r}" for r in range(1, 9)]
    )
    for rail, pol in zip(rails, policies, strict=True):
        name = f"rail{rail.rail}"
        assert pol["metadata"]["name"] == name
        spec = pol["spec"]
        assert spec["resourceName"] == name and RESOURCE_NAME.match(spec["resourceName"])
        assert spec["isRdma"] is True
        assert spec["deviceType"] == "netdevice"
        assert spec["linkType"] == ("ib" if is_ib else "eth")
        assert spec["numVfs"] == ctx.spec.gpus_per_node
        assert spec["nicSelector"]["pfNames"] == [f"{pfs[rail.rail - 1]}#0-{spec['numVfs'] - 1}"]
        assert ("mtu" in spec) is (not is_ib)
    for pn, net, nad in zip(pod_nets, networks, nads, strict=True):
        name, res = pn.name, f"rail{pn.rail.rail}"
        assert net["metadata"]["name"] == nad["metadata"]["name"] == name
        assert net["kind"] == ("SriovIBNetwork" if is_ib else "SriovNetwork")
        assert net["spec"]["resourceName"] == res
        assert json.loads(net["spec"]["ipam"]) == pn.ipam
        annot = nad["metadata"]["annotations"]["k8s.v1.cni.cncf.io/resourceName"]
        assert annot == f"{kubernetes.RESOURCE_PREFIX}/{res}"
        conflist = json.loads(nad["spec"]["config"])
        assert conflist["name"] == name
        cni, meta = conflist["plugins"]
        assert cni["type"] == ("ib-sriov" if is_ib else "sriov")
        assert meta == {"type": "rdma"}  # the VF's RDMA device follows it into the pod
        assert json.loads(net["spec"]["metaPlugins"]) == {"type": "rdma"}
        assert ("capabilities" in net["spec"]) is is_ib
        if is_ib:
            assert json.loads(net["spec"]["capabilities"]) == {"infinibandGUID": True}
            assert cni["capabilities"] == {"infinibandGUID": True}
            assert cni["ipam"]["range"] == pn.rail.subnet
        else:  # the leaf's block of the rail subnet
            assert ipaddress.ip_network(cni["ipam"]["range"]).subnet_of(
                ipaddress.ip_network(pn.rail.subnet)
            )
        assert ipaddress.ip_network(cni["ipam"]["range"]).num_addresses >= pn.servers
    ranges = [json.loads(n["spec"]["config"])["plugins"][0]["ipam"]["range"] for n in nads]
    (pool,) = d["sriov-network-pool-config.yaml"]
    assert pool["spec"]["rdmaMode"] == "exclusive"
    # The pool selects the same nodes the policies configure.
    assert pool["spec"]["nodeSelector"]["matchLabels"] == policies[0]["spec"]["nodeSelector"]
    assert len(set(ranges)) == len(ranges)


def test_netdevs_name_the_physical_functions() -> None:
    base = seed_context("roce")
    netdevs = {f"mlx5_{i}": f"ens{i}f0np0" for i in range(8)}
    ctx = RenderContext(base.topo, base.intent, {}, netdevs)
    policies = docs(ctx)["sriov-node-policies.yaml"]
    assert [p["spec"]["nicSelector"]["pfNames"][0] for p in policies] == [
        f"ens{i}f0np0#0-7" for i in range(8)
    ]


def test_dual_plane_names_stay_valid() -> None:
    ctx = context({"planes": 2, "nic_gbps": 800, "switch": "q3400"})
    d = docs(ctx)
    names = [p["metadata"]["name"] for p in d["sriov-node-policies.yaml"]]
    resources = [p["spec"]["resourceName"] for p in d["sriov-node-policies.yaml"]]
    assert len(names) == len(set(names)) == 16
    assert names[8] == "p2-rail1" and resources[8] == "p2_rail1"
    assert all(RESOURCE_NAME.match(r) for r in resources)
    assert all(DNS_1123.match(n) for n in names)
    pfs = [p["spec"]["nicSelector"]["pfNames"][0] for p in d["sriov-node-policies.yaml"]]
    assert pfs[0].startswith("p1-rail1#") and pfs[15].startswith("p2-rail8#")


def test_non_default_pkey_reaches_the_ib_network() -> None:
    ctx = context({"networks": {"compute": {"pkey": "0x8011"}}})
    d = docs(ctx)
    # The upstream SriovIBNetwork has no pkey field: the file says to use the NADs instead.
    assert all("pkey" not in n["spec"] for n in d["sriov-networks.yaml"])
    net_file = next(
        a for a in kubernetes_bundle.render(ctx) if a.path.endswith("/sriov-networks.yaml")
    )
    assert (
        "WARNING" in net_file.content and "network-attachment-definitions.yaml" in net_file.content
    )
    assert {
        json.loads(n["spec"]["config"])["plugins"][0]["pkey"]
        for n in d["network-attachment-definitions.yaml"]
    } == {"0x8011"}
    default = docs(seed_context("infiniband"))
    assert all("pkey" not in n["spec"] for n in default["sriov-networks.yaml"])


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_training_pod_asks_for_every_rail(variant: str) -> None:
    ctx = seed_context(variant)
    d = docs(ctx)
    pod = d["training-pod.yaml"][0]  # one per SU on the routed underlay
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    assert DNS_1123.match(pod["metadata"]["name"])
    first_su = kubernetes.networks_of(ctx)[0].su
    nads = [n.name for n in kubernetes.networks_of(ctx) if n.su == first_su]
    assert pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"].split(",") == nads
    assert (
        pod["metadata"]["namespace"]
        == d["network-attachment-definitions.yaml"][0]["metadata"]["namespace"]
    )
    (container,) = pod["spec"]["containers"]
    assert container["name"] and container["image"]
    assert "IPC_LOCK" in container["securityContext"]["capabilities"]["add"]
    limits = container["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == ctx.spec.gpus_per_node
    for pol in d["sriov-node-policies.yaml"]:
        assert limits[f"{kubernetes.RESOURCE_PREFIX}/{pol['spec']['resourceName']}"] == 1
    assert container["resources"]["requests"] == limits
    (mount,) = container["volumeMounts"]
    assert mount["mountPath"] == "/dev/shm"
    (vol,) = [v for v in pod["spec"]["volumes"] if v["name"] == mount["name"]]
    assert vol["emptyDir"]["medium"] == "Memory"
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["NCCL_IB_HCA"] == "mlx5"
    if variant.startswith("roce"):
        assert env["NCCL_IB_TC"] == "104" and env["NCCL_IB_GID_INDEX"] == "3"
    else:
        assert "NCCL_IB_TC" not in env


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_acceptance_job_expects_the_plans_bus_bandwidth(variant: str) -> None:
    ctx = seed_context(variant)
    job = docs(ctx)["nccl-tests-mpijob.yaml"][0]  # one per SU on the routed underlay
    su = kubernetes.networks_of(ctx)[0].su
    servers = kubernetes_bundle.group_servers(ctx, su)
    # The job's own servers (#46): its SU's on the routed underlay, every server on InfiniBand.
    hosts = [d.name for d in ctx.topo.devices if d.role == "server" and su in (None, d.su)]
    est = estimate_collective(ctx.topo, "all_reduce", parse_sizes("8G"), job_hosts=hosts)
    expected = est.points[-1].busbw_gbs
    assert job["metadata"]["annotations"]["fabric-stack/expected-busbw-gbs"] == f"{expected:g}"
    spec = job["spec"]
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == servers
    per_su = [
        j
        for j in docs(ctx)["nccl-tests-mpijob.yaml"]
        if not j["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"].get("hostNetwork")
    ]
    assert sum(j["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] for j in per_su) == len(
        [d for d in ctx.topo.devices if d.role == "server"]
    )
    assert spec["slotsPerWorker"] == ctx.spec.gpus_per_node
    script = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"][2]
    assert f"-np {servers * ctx.spec.gpus_per_node} " in script
    assert f"(got + 0 >= {round(expected * 0.9, 1):g})" in script
    pod = docs(ctx)["training-pod.yaml"][0]
    # Workers ask for what the sample pod asks for (every rail, every GPU, /dev/shm).
    assert worker["template"]["spec"]["volumes"] == pod["spec"]["volumes"]
    assert (
        worker["template"]["spec"]["containers"][0]["resources"]
        == pod["spec"]["containers"][0]["resources"]
    )


def test_acceptance_check_fails_below_the_floor(tmp_path: Path) -> None:
    # Run the launcher's pass/fail tail on a fake nccl-tests output (the awk is real).
    import subprocess

    ctx = seed_context("infiniband")
    (job,) = docs(ctx)["nccl-tests-mpijob.yaml"]
    script = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0][
        "command"
    ][2]
    tail = script.split("\n", 2)[2]  # drop `set` and the mpirun line
    floor = round(float(job["metadata"]["annotations"]["fabric-stack/expected-busbw-gbs"]) * 0.9, 1)
    for got, code in ((floor + 1, 0), (floor - 1, 1)):
        out = tmp_path / "nccl.out"
        out.write_text(f"# Avg bus bandwidth    : {got:.3f} \n", encoding="utf-8")
        res = subprocess.run(
            ["bash", "-c", tail.replace("/tmp/nccl.out", str(out))],
            capture_output=True,
            check=False,
        )
        assert res.returncode == code, res.stderr


def test_readme_names_the_prerequisites() -> None:
    text = {a.path: a.content for a in kubernetes_bundle.render(seed_context("infiniband"))}[
        "kubernetes/README.md"
    ]
    for needle in (
        "Multus",
        "SR-IOV Network Operator",
        "GPU Operator",
        "GPUDirect RDMA",
        "MPI Operator",
    ):
        assert needle in text
    assert "placeholders" in text  # no --netdevs: the README says the names are not real
    base = seed_context("infiniband")
    named = RenderContext(base.topo, base.intent, {}, {f"mlx5_{i}": f"ibp{i}s0" for i in range(8)})
    text = {a.path: a.content for a in kubernetes_bundle.render(named)}["kubernetes/README.md"]
    assert "placeholders" not in text and "`ibp3s0`" in text


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_yaml_round_trip(variant: str) -> None:
    for art in kubernetes_bundle.render(seed_context(variant)):
        if not art.path.endswith(".yaml"):
            continue
        loaded = [d for d in yaml.safe_load_all(art.content) if d is not None]
        again = list(yaml.safe_load_all(yaml.safe_dump_all(loaded, sort_keys=False)))
        assert again == loaded, art.path


def test_profile_netdevs_feed_the_one_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    # Server profiles that record their ports' netdevs (NodeProfile.netdev) name the PFs;
    # --netdevs still wins over the profile.
    from fabric_stack.artifacts._base import netdev_of
    from fabric_stack.hardware.nodes import NodeProfile

    monkeypatch.setattr(NodeProfile, "netdev", lambda self, rdma: f"ibp{rdma[-1]}s0", raising=False)
    ctx = context({})
    policies = docs(ctx)["sriov-node-policies.yaml"]
    assert policies[2]["spec"]["nicSelector"]["pfNames"] == ["ibp2s0#0-7"]
    assert "placeholders" not in kubernetes_bundle.render(ctx)[-1].content
    given = RenderContext(ctx.topo, ctx.intent, {}, {"mlx5_2": "ens9f0"})
    assert netdev_of(given, "mlx5_2") == "ens9f0" and netdev_of(given, "mlx5_3") == "ibp3s0"


def test_three_tier_roce_jobs_cross_the_cores_with_their_expectations() -> None:
    # A 3-tier RoCE plan (8 pods of one 4-server SU): the whole-cluster jobs span every pod,
    # so their all-reduce and all-to-all cross the cores (#46); each carries the estimate
    # for its own servers, per SU and across the pods.
    ctx = context({"fabric": "roce", "switch": "generic-16x400", "gpus": 256, "su_nodes": 4})
    assert ctx.topo.plan.tiers == 3 and ctx.topo.plan.pods > 1
    jobs = docs(ctx)["nccl-tests-mpijob.yaml"]
    every = [d.name for d in ctx.topo.devices if d.role == "server"]
    cross = {
        j["metadata"]["name"]: j
        for j in jobs
        if j["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"].get("hostNetwork")
    }
    assert {n.rsplit("-", 1)[-1] for n in cross} == {"allreduce", "alltoall"}
    for name, job in cross.items():
        coll = "all_reduce" if name.endswith("allreduce") else "alltoall"
        est = estimate_collective(ctx.topo, coll, parse_sizes("8G"), job_hosts=every)
        ann = job["metadata"]["annotations"]
        assert ann["fabric-stack/expected-busbw-gbs"] == f"{est.points[-1].busbw_gbs:g}"
        assert "crosses the spines and the cores" in ann["fabric-stack/scope"]
        assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == len(every)
    per_su = [j for j in jobs if j["metadata"]["name"] not in cross]
    assert len(per_su) == ctx.topo.plan.sus
