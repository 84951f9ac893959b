"""SR-IOV path of `render kubernetes` (shared helpers too): VFs per rail, SR-IOV Network Operator.

* ``sriov-network-pool-config.yaml`` — ``SriovNetworkPoolConfig`` with
  ``rdmaMode: exclusive``: each pod sees only the RDMA devices of its own VFs
  (in the default shared mode it sees every HCA of the host, storage ports
  included, and ``NCCL_IB_HCA=mlx5`` would pick those up).
* ``sriov-node-policies.yaml`` — one ``SriovNetworkNodePolicy`` per rail NIC:
  VFs on that rail's physical function (``pfNames`` from :func:`netdev_of`),
  advertised as resource ``<prefix>/railN`` (``isRdma: true`` on RDMA fabrics,
  ``linkType: ib`` on InfiniBand).
* ``sriov-networks.yaml`` — one ``SriovNetwork`` (Ethernet/RoCE) per rail **per leaf**
  (``railK-suS``: the routed underlay gives each leaf its own block of the rail), or one
  ``SriovIBNetwork`` (InfiniBand) per rail: the operator renders the Multus
  ``NetworkAttachmentDefinition`` from it (CNI ``sriov`` or ``ib-sriov``), with
  whereabouts IPAM from :mod:`.k8s_ipam` (the leaf's block minus its gateway and hosts,
  routed via the leaf), the ``rdma`` meta-plugin chained on RDMA fabrics (it moves the
  VF's RDMA device into the pod's namespace, as the pool's exclusive mode requires) and,
  on InfiniBand, the ``infinibandGUID`` capability.
* ``network-attachment-definitions.yaml`` — the same attachments written out, for
  clusters that manage NADs themselves. Apply this **or** ``sriov-networks.yaml``,
  not both (the operator owns the NADs it renders).
"""

from __future__ import annotations

import json
from typing import Any

from fabric_stack.artifacts import k8s_allocation, k8s_ipam, sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    RenderContext,
    netdev_of,
    netdevs_are_placeholders,
    yaml_documents,
)
from fabric_stack.artifacts.k8s_ipam import PodNetwork
from fabric_stack.intent.model import RailIntent
from fabric_stack.topology.scheduler_labels import SU as SU_LABEL

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


RDMA_META_PLUGIN: dict[str, Any] = {"type": "rdma"}
"""The rdma CNI meta-plugin (k8snetworkplumbingwg/rdma-cni): moves the VF's RDMA device into
the pod network namespace; needs the RDMA subsystem in exclusive mode (the pool config)."""

IB_GUID_CAPABILITY: dict[str, bool] = {"infinibandGUID": True}
"""ib-sriov CNI runtime capability: the pod's VF GUID can come from the network annotation
(or from ib-kubernetes); the SriovIBNetwork CRD documents it as '{"infinibandGUID": true}'."""


def meta_plugins(ctx: RenderContext) -> list[dict[str, Any]]:
    """The meta-plugins chained after the VF plugin: ``rdma`` on RDMA fabrics only (plain
    Ethernet VFs have no RDMA device for it to move: ``isRdma`` is false there)."""
    return [dict(RDMA_META_PLUGIN)] if ctx.fabric in ("infiniband", "roce") else []


def _link_type(ctx: RenderContext) -> str:
    return "ib" if ctx.fabric == "infiniband" else "eth"


def num_vfs(ctx: RenderContext) -> int:
    """VFs per rail NIC (``numVfs``): the most pods per node one rail network can serve."""
    # One VF per GPU of the server: up to gpus_per_node pods can each take a VF on
    # every rail (a full-node pod needs one per rail).
    return ctx.spec.gpus_per_node


def nic_of(ctx: RenderContext, rail: RailIntent) -> str:
    """The RDMA device (``mlx5_N``) of ``rail`` on every server."""
    return ctx.rail_nics()[(rail.plane - 1) * ctx.plan.rails + rail.rail - 1]


def node_policy(ctx: RenderContext, rail: RailIntent) -> dict[str, Any]:
    """The SriovNetworkNodePolicy of one rail NIC."""
    name, resource = rail_key(ctx, rail)
    vfs = num_vfs(ctx)
    spec: dict[str, Any] = {
        "resourceName": resource,
        "nodeSelector": {SRIOV_CAPABLE_LABEL: "true"},
        "numVfs": vfs,
        "nicSelector": {
            "vendor": MELLANOX_VENDOR,
            "pfNames": [f"{netdev_of(ctx, nic_of(ctx, rail))}#0-{vfs - 1}"],
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


def pool_config(ctx: RenderContext) -> dict[str, Any]:
    """The SriovNetworkPoolConfig that puts the RDMA subsystem of every SR-IOV node in
    exclusive mode (the operator reboots the nodes to apply it)."""
    return {
        "apiVersion": "sriovnetwork.openshift.io/v1",
        "kind": "SriovNetworkPoolConfig",
        "metadata": {"name": f"{ctx.spec.name}-rdma-exclusive", "namespace": OPERATOR_NAMESPACE},
        "spec": {
            "maxUnavailable": 1,
            "rdmaMode": "exclusive",
            "nodeSelector": {"matchLabels": {SRIOV_CAPABLE_LABEL: "true"}},
        },
    }


def cni_config(ctx: RenderContext, net: PodNetwork) -> dict[str, Any]:
    """The CNI configuration list of a pod rail network (what the operator would render):
    the SR-IOV plugin with whereabouts IPAM, then the rdma meta-plugin (RDMA fabrics)."""
    rail = net.rail
    if ctx.fabric == "infiniband":
        conf: dict[str, Any] = {
            "type": "ib-sriov",
            "link_state": "enable",
            "capabilities": dict(IB_GUID_CAPABILITY),
        }
        if _partitioned(rail):
            conf["pkey"] = rail.pkey
    else:
        # VLAN 0: the leaf port carries the rail VLAN untagged, so the VF sends untagged frames.
        conf = {"type": "sriov", "vlan": 0, "link_state": "enable"}
    conf["ipam"] = dict(net.ipam)
    return {"cniVersion": "1.0.0", "name": net.name, "plugins": [conf, *meta_plugins(ctx)]}


def sriov_network(ctx: RenderContext, net: PodNetwork) -> dict[str, Any]:
    """The SriovNetwork / SriovIBNetwork of a pod rail network."""
    rail = net.rail
    _, resource = rail_key(ctx, rail)
    spec: dict[str, Any] = {
        "resourceName": resource,
        "networkNamespace": WORKLOAD_NAMESPACE,
        "linkState": "enable",
        "ipam": _json(net.ipam),
    }
    # metaPlugins is spliced into the rendered CNI plugin list (the CRD: "MetaPluginsConfig
    # configuration to be used in order to chain metaplugins to the sriov interface
    # returned by the operator"), so one object is written bare, as its examples do.
    if plugins := meta_plugins(ctx):
        spec["metaPlugins"] = ",".join(_json(p) for p in plugins)
    if ctx.fabric == "infiniband":
        # No pkey here: the upstream SriovIBNetwork CRD has no such field
        # (k8snetworkplumbingwg/sriov-network-operator config/crd/bases at 249e20012); a
        # partition other than the default goes in the NAD's ib-sriov config (pkey_note).
        kind = "SriovIBNetwork"
        spec["capabilities"] = _json(IB_GUID_CAPABILITY)
    else:
        kind = "SriovNetwork"
        spec["vlan"] = 0
    return {
        "apiVersion": "sriovnetwork.openshift.io/v1",
        "kind": kind,
        "metadata": {"name": net.name, "namespace": OPERATOR_NAMESPACE},
        "spec": spec,
    }


def attachment(ctx: RenderContext, net: PodNetwork) -> dict[str, Any]:
    """The Multus NetworkAttachmentDefinition of a pod rail network."""
    _, resource = rail_key(ctx, net.rail)
    return {
        "apiVersion": "k8s.cni.cncf.io/v1",
        "kind": "NetworkAttachmentDefinition",
        "metadata": {
            "name": net.name,
            "namespace": WORKLOAD_NAMESPACE,
            "annotations": {"k8s.v1.cni.cncf.io/resourceName": f"{RESOURCE_PREFIX}/{resource}"},
        },
        "spec": {"config": _json(cni_config(ctx, net))},
    }


def _json(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


def pf_names_note(ctx: RenderContext) -> list[str]:
    """Header lines saying where the PF netdev names come from (and if they are placeholders)."""
    if netdevs_are_placeholders(ctx):
        return [
            "WARNING: PF netdev names are the plan's placeholders (rail1, rail2 …): they match",
            "nothing unless the servers rename their rail interfaces so. Give the real names",
            "(`ip -br link`, `rdma link`) with `render --netdevs nic,netdev CSV`.",
        ]
    return ["PF netdev names from --netdevs (or the server profile)."]


def sriov_files(ctx: RenderContext) -> list[tuple[str, str]]:
    """(file name, YAML) of the SR-IOV path, in apply order."""
    fab = {"infiniband": "InfiniBand", "roce": "RoCEv2", "ethernet": "Ethernet"}[ctx.fabric]
    gen = GENERATED_BY.format(target=TARGET)
    rails = list(ctx.intent.rails)
    pool = yaml_documents(
        [
            f"RDMA subsystem in exclusive mode on the SR-IOV nodes of {ctx.spec.name}: a pod",
            "sees only the RDMA devices of its own VFs (shared mode, the default, shows every",
            "HCA of the host to every pod, storage ports included). Applying it reboots the",
            "selected nodes, maxUnavailable at a time.",
            gen,
            f"Source: {sources.SRIOV_RDMA_GUIDE}",
            f"CRD: {sources.SRIOV_OPERATOR} (config/crd/bases)",
        ],
        [(["The pool config."], pool_config(ctx))],
    )
    policies = yaml_documents(
        [
            f"SR-IOV node policies for {ctx.spec.name} ({fab}): one per rail NIC, "
            f"{num_vfs(ctx)} VFs each.",
            gen,
            *pf_names_note(ctx),
            f"CRD: {sources.SRIOV_OPERATOR} (config/crd/bases)",
            *ctx.profile_notes(),
        ],
        [
            (
                [f"{r.name}: {nic_of(ctx, r)} on every server -> leaves {', '.join(r.leaves)}"],
                node_policy(ctx, r),
            )
            for r in rails
        ],
    )
    kind = "SriovIBNetwork" if ctx.fabric == "infiniband" else "SriovNetwork"
    cni = "ib-sriov" if ctx.fabric == "infiniband" else "sriov"
    rdma = " then the 'rdma' meta-plugin" if meta_plugins(ctx) else ""
    guid = " and the infinibandGUID capability" if ctx.fabric == "infiniband" else ""
    nets = networks_of(ctx)
    networks = yaml_documents(
        [
            f"{kind} per {per_what(ctx)} for {ctx.spec.name}: the operator renders a Multus",
            f"attachment (CNI '{cni}'{rdma}{guid}) of the same name in namespace",
            f"{WORKLOAD_NAMESPACE}.",
            gen,
            "Apply this file OR network-attachment-definitions.yaml, not both.",
            *pkey_note(ctx),
            *ipam_head(ctx),
            f"Source: {sources.RDMA_CNI}",
        ],
        [(network_note(ctx, n, num_vfs(ctx)), sriov_network(ctx, n)) for n in nets],
    )
    nads = yaml_documents(
        [
            f"Multus NetworkAttachmentDefinitions per {per_what(ctx)} for {ctx.spec.name}",
            f"(CNI '{cni}'{rdma}), as the SR-IOV operator would render them from",
            "sriov-networks.yaml.",
            gen,
            "Apply this file OR sriov-networks.yaml, not both.",
            *ipam_head(ctx),
            f"CRD: {sources.NAD_SPEC}",
        ],
        [(network_note(ctx, n, num_vfs(ctx)), attachment(ctx, n)) for n in nets],
    )
    return list(zip(SRIOV_FILES, (pool, policies, networks, nads), strict=True))


def pkey_note(ctx: RenderContext) -> list[str]:
    """WARNING lines when a rail uses a non-default partition the SriovIBNetwork cannot set."""
    keyed = [r for r in ctx.intent.rails if ctx.fabric == "infiniband" and _partitioned(r)]
    if not keyed:
        return []
    return [
        f"WARNING: rails {', '.join(r.name for r in keyed)} use a non-default partition",
        "key, and the upstream SriovIBNetwork CRD has no pkey field: the NADs the operator",
        "renders from this file put pods in the default partition. Apply",
        "network-attachment-definitions.yaml instead (its ib-sriov config sets pkey).",
    ]


def _partitioned(rail: RailIntent) -> bool:
    return int(rail.pkey, 16) & 0x7FFF != 0x7FFF


def networks_of(ctx: RenderContext) -> list[PodNetwork]:
    """Every pod rail network of the plan (:func:`.k8s_ipam.pod_networks`, this module's names)."""
    return k8s_ipam.pod_networks(ctx, rail_key)


def per_what(ctx: RenderContext) -> str:
    """What one network object covers: a rail, or a rail under one leaf (routed underlay)."""
    return "rail per leaf" if k8s_ipam.routed(ctx) else "rail"


def ipam_head(ctx: RenderContext) -> list[str]:
    """Header lines saying how the pod ranges are cut and which pods attach them."""
    if not k8s_ipam.routed(ctx):
        return [f"IPAM: whereabouts over the rail's planned subnet ({sources.WHEREABOUTS})."]
    return [
        "Routed underlay: each leaf owns one block of every rail subnet and is its gateway,",
        "so there is one network per rail per leaf (railK-suS); a pod on a node of SU S",
        f"attaches the -suS networks and selects those nodes by the label {SU_LABEL}",
        "(render k8s-topology writes it: labels.sh).",
        "IPAM: whereabouts range = the leaf's block, exclude = its gateway and every server's",
        "own rail address, gateway + route to the rail subnet via the leaf",
        f"({sources.WHEREABOUTS}, pkg/types/types.go IPAMConfig at 3a262bd0cd87).",
    ]


def network_note(ctx: RenderContext, net: PodNetwork, pods_per_server: int) -> list[str]:
    """The comment above one network, with its simulated allocation (raises on a collision:
    :func:`.k8s_allocation.check_networks`)."""
    (alloc,) = k8s_allocation.check_networks([net], pods_per_server)
    where = f"{net.ipam['range']}"
    if net.leaf:
        where += f" behind {net.leaf} (gateway {net.gateway}), SU {net.su}"
    demand = len(alloc.addresses) + alloc.refused
    lines = [f"{net.name}: {where}."]
    given = f"{alloc.addresses[0]}..{alloc.addresses[-1]}" if alloc.addresses else "no address"
    lines.append(
        f"Simulated whereabouts allocation for {net.servers} server(s) x {pods_per_server} "
        f"pod(s): {len(alloc.addresses)} given ({given}), none a gateway's, host's or "
        "another pod's."
    )
    if alloc.refused:
        lines.append(
            f"{alloc.refused} of {demand} refused (range exhausted: whereabouts fails those "
            "pods); underlay.pod_addresses_per_port sizes the block."
        )
    return lines


def pod_resources(ctx: RenderContext, nets: list[PodNetwork]) -> dict[str, int]:
    """Device resources a full-node pod asks for on the SR-IOV path: one VF per rail."""
    return {f"{RESOURCE_PREFIX}/{rail_key(ctx, n.rail)[1]}": 1 for n in nets}


SRIOV_FILES = (
    "sriov-network-pool-config.yaml",
    "sriov-node-policies.yaml",
    "sriov-networks.yaml",
    "network-attachment-definitions.yaml",
)
"""The SR-IOV path's files, in apply order."""
