"""`render kubernetes`: RDMA networking for training pods (SR-IOV Network Operator + Multus).

Files (under ``kubernetes/``):

* ``sriov-node-policies.yaml`` — one ``SriovNetworkNodePolicy`` per rail NIC:
  VFs on that rail's physical function, advertised as resource ``<prefix>/railN``
  (``isRdma: true`` on RDMA fabrics, ``linkType: ib`` on InfiniBand).
* ``sriov-networks.yaml`` — one ``SriovNetwork`` (Ethernet/RoCE) or
  ``SriovIBNetwork`` (InfiniBand) per rail: the operator renders the Multus
  ``NetworkAttachmentDefinition`` from it (CNI ``sriov`` or ``ib-sriov``), with
  whereabouts IPAM on the rail's planned subnet.
* ``network-attachment-definitions.yaml`` — the same attachments written out, for
  clusters that manage NADs themselves. Apply this **or** ``sriov-networks.yaml``,
  not both (the operator owns the NADs it renders).
* ``training-pod.yaml`` — a sample pod asking for every rail (Multus annotation +
  one VF per rail resource), all GPUs of a node, and ``IPC_LOCK`` for RDMA memory
  registration.

The manifests are validated in the tests against the CRD schemas shipped in
``tests/data/crds/``.
"""

from __future__ import annotations

import json
from typing import Any

from ..intent import RailIntent
from . import k8s_ipam, sources
from ._base import GENERATED_BY, Artifact, RenderContext, netdev_of, yaml_documents
from .nccl import ROCE_V2_IPV4_GID_INDEX, traffic_class

TARGET = "kubernetes"

OPERATOR_NAMESPACE = "sriov-network-operator"
"""Namespace the SR-IOV Network Operator watches for policies and networks (upstream default)."""

WORKLOAD_NAMESPACE = "default"
"""Namespace of the training pods and their NetworkAttachmentDefinitions."""

RESOURCE_PREFIX = "openshift.io"
"""The operator's device-plugin resource prefix (its RESOURCE_PREFIX default)."""

MELLANOX_VENDOR = "15b3"
"""PCI vendor id of NVIDIA (Mellanox) ConnectX NICs."""

SRIOV_CAPABLE_LABEL = "feature.node.kubernetes.io/network-sriov.capable"
"""Node label (set by Node Feature Discovery) the operator's examples select on."""

TRAINING_IMAGE = "nvcr.io/nvidia/pytorch:24.07-py3"
"""Sample image: NGC PyTorch ships NCCL, the RDMA user space and nccl-tests' dependencies."""


def rail_key(ctx: RenderContext, rail: RailIntent) -> tuple[str, str]:
    """(object name, device-plugin resource name) of a rail: ('rail1', 'rail1').

    On plane 2 of a dual-plane fabric: ('p2-rail1', 'p2_rail1').

    Resource names are limited to letters, digits and '_' by the operator.
    """
    if ctx.plan.planes > 1:
        return f"p{rail.plane}-rail{rail.rail}", f"p{rail.plane}_rail{rail.rail}"
    return f"rail{rail.rail}", f"rail{rail.rail}"


def _ipam(rail: RailIntent) -> dict[str, Any]:
    return {"type": "whereabouts", "range": rail.subnet}


def _link_type(ctx: RenderContext) -> str:
    return "ib" if ctx.fabric == "infiniband" else "eth"


def _num_vfs(ctx: RenderContext) -> int:
    # One VF per GPU of the server: up to gpus_per_node pods can each take a VF on
    # every rail (a full-node pod needs one per rail).
    return ctx.spec.gpus_per_node


def _nic_of(ctx: RenderContext, rail: RailIntent) -> str:
    return ctx.rail_nics()[(rail.plane - 1) * ctx.plan.rails + rail.rail - 1]


def node_policy(ctx: RenderContext, rail: RailIntent) -> dict[str, Any]:
    """The SriovNetworkNodePolicy of one rail NIC."""
    name, resource = rail_key(ctx, rail)
    vfs = _num_vfs(ctx)
    spec: dict[str, Any] = {
        "resourceName": resource,
        "nodeSelector": {SRIOV_CAPABLE_LABEL: "true"},
        "numVfs": vfs,
        "nicSelector": {
            "vendor": MELLANOX_VENDOR,
            "pfNames": [f"{netdev_of(ctx, _nic_of(ctx, rail))}#0-{vfs - 1}"],
        },
        "deviceType": "netdevice",
        "isRdma": ctx.fabric in ("infiniband", "roce"),
        "linkType": _link_type(ctx),
    }
    if ctx.fabric != "infiniband":
        spec["mtu"] = ctx.spec.networks.compute.mtu or 9000
    return {
        "apiVersion": "sriovnetwork.openshift.io/v1",
        "kind": "SriovNetworkNodePolicy",
        "metadata": {"name": name, "namespace": OPERATOR_NAMESPACE},
        "spec": spec,
    }


def cni_config(ctx: RenderContext, rail: RailIntent) -> dict[str, Any]:
    """The CNI configuration of a rail attachment (what the operator would render)."""
    name, _ = rail_key(ctx, rail)
    if ctx.fabric == "infiniband":
        conf: dict[str, Any] = {
            "cniVersion": "1.0.0",
            "name": name,
            "type": "ib-sriov",
            "link_state": "enable",
        }
        if int(rail.pkey, 16) & 0x7FFF != 0x7FFF:
            conf["pkey"] = rail.pkey
    else:
        # VLAN 0: the leaf port carries the rail VLAN untagged, so the VF sends untagged frames.
        conf = {
            "cniVersion": "1.0.0",
            "name": name,
            "type": "sriov",
            "vlan": 0,
            "link_state": "enable",
        }
    conf["ipam"] = _ipam(rail)
    return conf


def sriov_network(ctx: RenderContext, rail: RailIntent) -> dict[str, Any]:
    """The SriovNetwork / SriovIBNetwork of a rail."""
    name, resource = rail_key(ctx, rail)
    spec: dict[str, Any] = {
        "resourceName": resource,
        "networkNamespace": WORKLOAD_NAMESPACE,
        "linkState": "enable",
        "ipam": json.dumps(_ipam(rail), separators=(",", ":")),
    }
    if ctx.fabric == "infiniband":
        kind = "SriovIBNetwork"
        if int(rail.pkey, 16) & 0x7FFF != 0x7FFF:
            spec["pkey"] = rail.pkey
    else:
        kind = "SriovNetwork"
        spec["vlan"] = 0
    return {
        "apiVersion": "sriovnetwork.openshift.io/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": OPERATOR_NAMESPACE},
        "spec": spec,
    }


def attachment(ctx: RenderContext, rail: RailIntent) -> dict[str, Any]:
    """The Multus NetworkAttachmentDefinition of a rail."""
    name, resource = rail_key(ctx, rail)
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {
            "name": name,
            "namespace": WORKLOAD_NAMESPACE,
            "annotations": {"k8s.v1.cni.cncf.io/resourceName": f"{RESOURCE_PREFIX}/{resource}"},
        },
        "spec": {"config": json.dumps(cni_config(ctx, rail), separators=(",", ":"))},
    }


def pod_env(ctx: RenderContext) -> list[dict[str, str]]:
    """NCCL variables for a pod whose rails are SR-IOV VFs (names differ from the host's)."""
    env = [
        {"name": "NCCL_SOCKET_IFNAME", "value": "=eth0"},
        {"name": "NCCL_CROSS_NIC", "value": "0"},
    ]
    if ctx.fabric in ("infiniband", "roce"):
        env.insert(0, {"name": "NCCL_IB_HCA", "value": "mlx5"})
    else:
        env.insert(0, {"name": "NCCL_IB_DISABLE", "value": "1"})
    if ctx.fabric == "roce":
        env.append({"name": "NCCL_IB_GID_INDEX", "value": str(ROCE_V2_IPV4_GID_INDEX)})
        env.append({"name": "NCCL_IB_TC", "value": str(traffic_class(ctx.spec.roce.roce_dscp))})
    if ctx.fabric == "infiniband" and ctx.spec.infiniband.sharp:
        env.append({"name": "NCCL_COLLNET_ENABLE", "value": "1"})
    return env


def training_pod(ctx: RenderContext) -> dict[str, Any]:
    """A sample pod with every rail attached and every GPU of one server."""
    names = [rail_key(ctx, r) for r in ctx.intent.rails]
    limits: dict[str, Any] = {"nvidia.com/gpu": ctx.spec.gpus_per_node}
    limits.update({f"{RESOURCE_PREFIX}/{res}": 1 for _, res in names})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{ctx.spec.name}-nccl-sample",
            "namespace": WORKLOAD_NAMESPACE,
            "annotations": {"k8s.v1.cni.cncf.io/networks": ",".join(n for n, _ in names)},
        },
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "trainer",
                    "image": TRAINING_IMAGE,
                    "command": ["sleep", "infinity"],
                    "env": pod_env(ctx),
                    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                    "resources": {"limits": limits, "requests": dict(limits)},
                }
            ],
        },
    }


def render(ctx: RenderContext) -> list[Artifact]:
    """The four manifest files (see the module docstring)."""
    fab = {"infiniband": "InfiniBand", "roce": "RoCEv2", "ethernet": "Ethernet"}[ctx.fabric]
    gen = GENERATED_BY.format(target=TARGET)
    rails = list(ctx.intent.rails)
    policies = yaml_documents(
        [
            f"SR-IOV node policies for {ctx.spec.name} ({fab}): one per rail NIC, "
            f"{_num_vfs(ctx)} VFs each.",
            gen,
            "pfNames is the netdev of the rail's physical function (from --netdevs, else the",
            "plan's per-rail name: rename to what `rdma link` / `ip link` show on the servers).",
            f"CRD: {sources.SRIOV_OPERATOR} (config/crd/bases)",
        ],
        [
            (
                [f"{r.name}: {_nic_of(ctx, r)} on every server -> leaves {', '.join(r.leaves)}"],
                node_policy(ctx, r),
            )
            for r in rails
        ],
    )
    kind = "SriovIBNetwork" if ctx.fabric == "infiniband" else "SriovNetwork"
    cni = "ib-sriov" if ctx.fabric == "infiniband" else "sriov"
    networks = yaml_documents(
        [
            f"{kind} per rail for {ctx.spec.name}: the operator renders a Multus",
            f"attachment (CNI '{cni}') named after the rail in namespace {WORKLOAD_NAMESPACE}.",
            gen,
            "Apply this file OR network-attachment-definitions.yaml, not both.",
            f"IPAM: whereabouts on the rail's planned subnet ({sources.WHEREABOUTS}).",
        ],
        [
            (
                [
                    f"{r.name}: subnet {r.subnet}"
                    + (f", VLAN {r.vlan} untagged on the leaf" if r.vlan else "")
                ],
                sriov_network(ctx, r),
            )
            for r in rails
        ],
    )
    nads = yaml_documents(
        [
            f"Multus NetworkAttachmentDefinitions per rail for {ctx.spec.name} (CNI '{cni}'),",
            "as the SR-IOV operator would render them from sriov-networks.yaml.",
            gen,
            "Apply this file OR sriov-networks.yaml, not both.",
            f"CRD: {sources.NAD_SPEC}",
        ],
        [([f"{r.name}: subnet {r.subnet}"], attachment(ctx, r)) for r in rails],
    )
    pod = yaml_documents(
        [
            f"Sample training pod for {ctx.spec.name}: every rail attached (Multus annotation),",
            f"one VF per rail resource, all {ctx.spec.gpus_per_node} GPUs of a server, IPC_LOCK so",
            "RDMA can pin memory.",
            gen,
            "Inside the pod the VFs are new mlx5_N devices: NCCL_IB_HCA=mlx5 lets NCCL pick",
            "them by PCIe locality (with the RDMA subsystem in exclusive netns mode,",
            "`rdma system set netns exclusive`, the pod sees only its own VFs); the pod's",
            "eth0 carries NCCL's bootstrap sockets.",
        ],
        [(["The pod."], training_pod(ctx))],
    )
    contents = (policies, networks, nads, pod)
    out = [
        Artifact(TARGET, f"kubernetes/{n}", c) for n, c in zip(FILE_NAMES, contents, strict=True)
    ]
    # Routed-rail pod IPAM (per rail per leaf), kept in its own module.
    return out + k8s_ipam.render(ctx, rail_key, WORKLOAD_NAMESPACE, RESOURCE_PREFIX)


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    return [f"kubernetes/{name}" for name in FILE_NAMES] + k8s_ipam.files(ctx)


FILE_NAMES = (
    "sriov-node-policies.yaml",
    "sriov-networks.yaml",
    "network-attachment-definitions.yaml",
    "training-pod.yaml",
)
"""The four manifest files, in render order."""
