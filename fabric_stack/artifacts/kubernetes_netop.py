"""NVIDIA Network Operator path of `render kubernetes` (``render --k8s-rdma host-device|ipoib``).

For full-node training pods that do not need VFs:

* ``host-device`` (any fabric): each pod gets the rail **physical functions**
  themselves. ``nic-cluster-policy.yaml`` deploys the SR-IOV network device
  plugin with one resource per rail, selecting that rail's PF by netdev name
  (``pfNames``) with ``isRdma`` (the plugin then mounts the PF's RDMA device
  files into the pod), plus Multus and the CNI plugins;
  ``host-device-networks.yaml`` has one ``HostDeviceNetwork`` per rail (the
  operator renders a NAD with CNI ``host-device``). This is the shape of NVIDIA's
  own example (``example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr-ocp-hostdev.yaml``).
* ``ipoib`` (InfiniBand only): pods share the host's HCAs. ``nic-cluster-policy.yaml``
  deploys the **RDMA shared device plugin** with one resource per rail
  (``selectors.ifNames`` = the rail's PF netdev, ``rdmaHcaMax`` pods per HCA),
  Multus, the CNI plugins and the IPoIB CNI; ``ipoib-networks.yaml`` has one
  ``IPoIBNetwork`` per rail with ``master`` = the PF netdev (NVIDIA's
  ``…_nicclusterpolicy_cr-ipoib.yaml`` example).

The RDMA subsystem stays in the default shared mode here (the Network Operator does
not switch it), so a pod sees every HCA of its host: the pod's ``NCCL_IB_HCA``
names the rail devices exactly (``=mlx5_0,…``) so storage ports are never used.
IPAM is whereabouts with the same pod networks as the SR-IOV path (:mod:`.k8s_ipam`:
one per rail per leaf on the routed underlay, one per rail on InfiniBand; the operator
deploys nv-ipam, not whereabouts: install whereabouts yourself, see the README).
"""

from __future__ import annotations

import json
from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import GENERATED_BY, RenderContext, netdev_of, yaml_documents
from fabric_stack.artifacts.k8s_ipam import PodNetwork
from fabric_stack.artifacts.kubernetes import (
    MELLANOX_VENDOR,
    TARGET,
    WORKLOAD_NAMESPACE,
    ipam_head,
    network_note,
    networks_of,
    nic_of,
    per_what,
    pf_names_note,
    rail_key,
)
from fabric_stack.intent.model import RailIntent

NETWORK_OPERATOR_REPOSITORY = "nvcr.io/nvidia/mellanox"
"""Registry path of the Network Operator's component images (release example CRs)."""

NETWORK_OPERATOR_VERSION = "network-operator-v26.4.1"
"""Image tag of every component: Network Operator release v26.4.1 (its example CRs use it;
override with `render --software network-operator=<tag>`)."""

HOSTDEV_PREFIX = "nvidia.com"
"""Resource prefix of the host-device resources (NVIDIA's example: nvidia.com/hostdev)."""

RDMA_SHARED_PREFIX = "rdma"
"""Resource prefix the RDMA shared device plugin advertises (rdma/<resourceName>)."""

RDMA_HCA_MAX = 63
"""Pods that may share one HCA through the RDMA shared device plugin (NVIDIA's example)."""


def _image(ctx: RenderContext, name: str) -> dict[str, str]:
    version = ctx.document.software.get("network-operator", NETWORK_OPERATOR_VERSION)
    return {"image": name, "repository": NETWORK_OPERATOR_REPOSITORY, "version": version}


def _hostdev_resource(ctx: RenderContext, rail: RailIntent) -> str:
    return "hostdev_" + rail_key(ctx, rail)[1]


def nic_cluster_policy(ctx: RenderContext) -> dict[str, Any]:
    """The NicClusterPolicy of the chosen mode (the operator reconciles one, this name)."""
    rails = list(ctx.intent.rails)
    spec: dict[str, Any] = {}
    if ctx.k8s_rdma == "ipoib":
        config = {
            "configList": [
                {
                    "resourceName": rail_key(ctx, r)[1],
                    "rdmaHcaMax": RDMA_HCA_MAX,
                    "selectors": {"ifNames": [netdev_of(ctx, nic_of(ctx, r))]},
                }
                for r in rails
            ]
        }
        spec["rdmaSharedDevicePlugin"] = {
            **_image(ctx, "k8s-rdma-shared-dev-plugin"),
            "config": json.dumps(config, separators=(",", ":")),
        }
    else:
        config = {
            "resourceList": [
                {
                    "resourcePrefix": HOSTDEV_PREFIX,
                    "resourceName": _hostdev_resource(ctx, r),
                    "selectors": {
                        "vendors": [MELLANOX_VENDOR],
                        "pfNames": [netdev_of(ctx, nic_of(ctx, r))],
                        "isRdma": ctx.fabric != "ethernet",
                    },
                }
                for r in rails
            ]
        }
        spec["sriovDevicePlugin"] = {
            **_image(ctx, "sriov-network-device-plugin"),
            "config": json.dumps(config, separators=(",", ":")),
        }
    secondary: dict[str, Any] = {
        "cniPlugins": _image(ctx, "plugins"),
        "multus": _image(ctx, "multus-cni"),
    }
    if ctx.k8s_rdma == "ipoib":
        secondary["ipoib"] = _image(ctx, "ipoib-cni")
    spec["secondaryNetwork"] = secondary
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": "NicClusterPolicy",
        "metadata": {"name": "nic-cluster-policy"},
        "spec": spec,
    }


def rail_network(ctx: RenderContext, net: PodNetwork) -> dict[str, Any]:
    """The HostDeviceNetwork or IPoIBNetwork of one pod rail network (cluster-scoped; NAD
    of the same name in the workload namespace)."""
    rail = net.rail
    spec: dict[str, Any] = {"networkNamespace": WORKLOAD_NAMESPACE}
    if ctx.k8s_rdma == "ipoib":
        kind = "IPoIBNetwork"
        spec["master"] = netdev_of(ctx, nic_of(ctx, rail))
    else:
        kind = "HostDeviceNetwork"
        spec["resourceName"] = _hostdev_resource(ctx, rail)
    spec["ipam"] = json.dumps(net.ipam, separators=(",", ":"))
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": kind,
        "metadata": {"name": net.name},
        "spec": spec,
    }


def netop_resources(ctx: RenderContext, nets: list[PodNetwork]) -> dict[str, int]:
    """Device resources a full-node pod attaching ``nets`` asks for on this path."""
    if ctx.k8s_rdma == "ipoib":
        return {f"{RDMA_SHARED_PREFIX}/{rail_key(ctx, n.rail)[1]}": 1 for n in nets}
    return {f"{HOSTDEV_PREFIX}/{_hostdev_resource(ctx, n.rail)}": 1 for n in nets}


def pods_per_server(ctx: RenderContext) -> int:
    """Pods per node one rail network can serve: a whole PF is one pod's (host-device);
    ``rdmaHcaMax`` pods share an HCA (IPoIB, RDMA shared device plugin)."""
    return RDMA_HCA_MAX if ctx.k8s_rdma == "ipoib" else 1


def netop_files(ctx: RenderContext) -> list[tuple[str, str]]:
    """(file name, YAML) of the Network Operator path, in apply order."""
    gen = GENERATED_BY.format(target=TARGET)
    mode = ctx.k8s_rdma
    what = (
        "RDMA shared device plugin (one resource per rail HCA) + IPoIB CNI"
        if mode == "ipoib"
        else "SR-IOV network device plugin handing out each rail's whole PF + host-device CNI"
    )
    policy = yaml_documents(
        [
            f"NVIDIA Network Operator NicClusterPolicy for {ctx.spec.name} ({mode}): {what},",
            "Multus and the CNI plugins. Host drivers (DOCA-OFED) are not deployed from here.",
            gen,
            *pf_names_note(ctx),
            f"Images: {NETWORK_OPERATOR_REPOSITORY}/<component>:"
            f"{ctx.document.software.get('network-operator', NETWORK_OPERATOR_VERSION)}.",
            f"Source: {sources.NETWORK_OPERATOR}",
            f"Source: {sources.RDMA_SHARED_DP if mode == 'ipoib' else sources.SRIOV_DP}",
        ],
        [(["The cluster policy."], nic_cluster_policy(ctx))],
    )
    kind = "IPoIBNetwork" if mode == "ipoib" else "HostDeviceNetwork"
    networks = yaml_documents(
        [
            f"{kind} per {per_what(ctx)} for {ctx.spec.name}: the operator renders a Multus",
            f"attachment of the same name in namespace {WORKLOAD_NAMESPACE}.",
            gen,
            *ipam_head(ctx),
            f"CRD: {sources.NETWORK_OPERATOR} (config/crd/bases)",
        ],
        [
            (
                [f"{nic_of(ctx, n.rail)}:", *network_note(ctx, n, pods_per_server(ctx))],
                rail_network(ctx, n),
            )
            for n in networks_of(ctx)
        ],
    )
    return [("nic-cluster-policy.yaml", policy), (netop_file(ctx), networks)]


def netop_file(ctx: RenderContext) -> str:
    """File name of the per-rail networks on this path."""
    return "ipoib-networks.yaml" if ctx.k8s_rdma == "ipoib" else "host-device-networks.yaml"


__all__ = [
    "netop_files",
    "netop_resources",
    "nic_cluster_policy",
    "pods_per_server",
    "rail_network",
]
