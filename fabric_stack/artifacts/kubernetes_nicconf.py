"""`render kubernetes` on RoCEv2: ``nic-configuration-template.yaml``, the NIC side of the
lossless profile for NVIDIA's NIC configuration operator.

One ``NicConfigurationTemplate`` (``configuration.net.nvidia.com/v1alpha1``) whose
``roceOptimized.qos`` is the same :class:`~fabric_stack.intent.nic_qos.NicQos` ``render
hosts`` writes as ``mlnx_qos`` commands: DSCP trust, PFC on the RoCE priority only, the
RDMA-CM ToS (= ``NCCL_IB_TC``), ECN on the RoCE priority, global pause off, and ``cableLen``.
A template applies one ``cableLen`` to every NIC it selects, so it carries the longest planned
host cable (whole metres, rounded up): a longer figure only costs NIC buffer, a shorter one
would under-size the headroom of the longest runs. Judged by kubeconform against the
operator's CRD (``make validate``, family kubernetes).
"""

from __future__ import annotations

from typing import Any

from fabric_stack.artifacts import sources
from fabric_stack.artifacts._base import GENERATED_BY, RenderContext, yaml_documents
from fabric_stack.artifacts.kubernetes import TARGET, num_vfs
from fabric_stack.intent.nic_qos import NicQos, build_nic_qos
from fabric_stack.text.numbers import whole_metres

FILE = "nic-configuration-template.yaml"
"""The file this module writes under ``kubernetes/``."""

NAMESPACE = "nic-configuration-operator"
"""Namespace the operator watches (its deployment's default, as in its examples)."""

NIC_TYPES: dict[str, str] = {"ConnectX-7": "1021", "ConnectX-8": "1023", "ConnectX-9": "1025"}
"""``nicSelector.nicType``: the NIC's PCI device id. 1023 (ConnectX-8) and 1025 (ConnectX-9)
are the CRD's own (its validation rules); 1021 (ConnectX-7, "MT2910 Family") is the PCI ID
database's, UNVERIFIED here."""

PCI_NODE_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
"""Node Feature Discovery's label for nodes with an NVIDIA (Mellanox, 15b3) PCI device."""


def host_cable_m(ctx: RenderContext) -> int:
    """The longest planned server-to-leaf cable, whole metres (rounded up)."""
    runs = [ctx.cable_lengths[(h.leaf, h.leaf_port)] for h in ctx.underlay.hosts]
    return whole_metres(max(runs, default=1.0))


def template(ctx: RenderContext, q: NicQos) -> dict[str, Any]:
    """The ``NicConfigurationTemplate`` of the rail NICs."""
    model = ctx.spec.node_profile.nic_model
    qos: dict[str, Any] = {
        "trust": q.trust,
        "pfc": q.pfc_vector,
        "tos": q.tos,
        "ecn": {"enabled": q.ecn, "priority": q.roce_priority},
        "pauseFrames": {"enabled": q.global_pause},
        "cableLen": host_cable_m(ctx),
    }
    return {
        "apiVersion": "configuration.net.nvidia.com/v1alpha1",
        "kind": "NicConfigurationTemplate",
        "metadata": {"name": f"{ctx.spec.name}-rail-roce", "namespace": NAMESPACE},
        "spec": {
            "nodeSelector": {PCI_NODE_LABEL: "true"},
            "nicSelector": {"nicType": NIC_TYPES.get(model, NIC_TYPES["ConnectX-7"])},
            "template": {
                "numVfs": num_vfs(ctx) if ctx.k8s_rdma == "sriov" else 0,
                "linkType": "Ethernet",
                "roceOptimized": {"enabled": True, "roceMode": 2, "qos": qos},
            },
        },
    }


def nicconf_file(ctx: RenderContext) -> tuple[str, str]:
    """(file name, YAML) of the template."""
    q = build_nic_qos(ctx.spec)
    model = ctx.spec.node_profile.nic_model
    notes = [
        f"NVIDIA NIC configuration operator template for {ctx.spec.name}'s rail NICs: the",
        "host side of the switches' lossless profile, from the same `roce` spec as",
        f"render hosts' <server>.roce-qos.sh and nccl/roce.env (ToS {q.tos} = NCCL_IB_TC).",
        f"cableLen {host_cable_m(ctx)} m: the longest planned server-to-leaf cable (one",
        "template, one length for every NIC it selects).",
        GENERATED_BY.format(target=TARGET),
        f"nicType selects every {model} of the node, storage ports included: add",
        "pciAddresses of the rail NICs if storage NICs are the same model.",
        *(
            [f"UNVERIFIED: {model} has no PCI device id here; ConnectX-7's is used."]
            if model not in NIC_TYPES
            else []
        ),
        "UNVERIFIED on hardware (no ConnectX here); kubeconform checks it against the CRD.",
        f"CRD: {sources.NIC_CONFIGURATION_OPERATOR} (config/crd/bases)",
    ]
    return FILE, yaml_documents(notes, [(["The rail NICs."], template(ctx, q))])
