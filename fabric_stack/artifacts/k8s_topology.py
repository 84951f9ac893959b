"""`render k8s-topology`: Kubernetes node topology labels and a Kueue ``Topology``.

* ``k8s-topology/labels.sh`` — one ``kubectl label node --overwrite`` per server with
  every label of :mod:`fabric_stack.topology.scheduler_labels` (Topograph's
  ``network.topology.nvidia.com/*`` keys and fabric-stack's own).
* ``k8s-topology/nodes.json`` — the same labels as a ``v1`` ``List`` of ``Node`` objects
  (name and labels only), the shape of ``kubectl get nodes -o json``: what
  ``fabric-stack drift --k8s-nodes`` compares a live cluster's nodes with. Not for
  ``kubectl apply`` (the nodes register themselves).
* ``k8s-topology/kueue-topology.yaml`` — a Kueue ``Topology`` (``kueue.x-k8s.io/v1beta2``,
  Kueue 0.15 and later; v1beta1, deprecated, has the same ``spec.levels``) whose levels are
  those labels, widest first, ``kubernetes.io/hostname`` last, for topology-aware
  scheduling (a ResourceFlavor names it with ``spec.topologyName``).

Node names are the servers' host names (the site's names when renamed): Kubernetes node
names must match them (kubelet ``--hostname-override`` otherwise).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from fabric_stack.artifacts._base import (
    DISCOVERED_BY,
    GENERATED_BY,
    Artifact,
    RenderContext,
    comment_block,
    safe_name,
    yaml_documents,
)
from fabric_stack.topology.scheduler import SchedulerView, scheduler_view
from fabric_stack.topology.scheduler_labels import TIER_KEYS, all_node_labels, kueue_levels

TARGET = "k8s-topology"

KUEUE_API = "kueue.x-k8s.io/v1beta2"
"""Kueue's Topology API version (v1beta2 served and stored since Kueue v0.15.0; v1beta1
deprecated): kubernetes-sigs/kueue config/components/crd/bases/kueue.x-k8s.io_topologies.yaml."""

KUEUE_CRD = (
    "https://github.com/kubernetes-sigs/kueue/blob/main/config/components/crd/bases/"
    "kueue.x-k8s.io_topologies.yaml"
)
KUEUE_TAS = "https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/"
TOPOGRAPH_K8S = "https://github.com/NVIDIA/topograph/blob/main/docs/engines/k8s.md"

FILES = ("k8s-topology/labels.sh", "k8s-topology/nodes.json", "k8s-topology/kueue-topology.yaml")


def topology_name(view: SchedulerView) -> str:
    """The Topology object's name: the cluster's name as a DNS label."""
    return safe_name(view.cluster).lower().replace("_", "-").replace(".", "-")[:63] or "fabric"


def _made_by(view: SchedulerView) -> str:
    """The generated-by line (``--ibnetdiscover`` when read from a dump)."""
    return (DISCOVERED_BY if view.origin else GENERATED_BY).format(target=TARGET)


def _discovered_label_notes(view: SchedulerView) -> list[str]:
    """What the labels of a fabric read from a dump mean (no plan: Topograph's keys only)."""
    top = " > ".join(k.rsplit("/", 1)[1] for k in reversed(TIER_KEYS[: view.tiers]))
    notes = [
        "",
        f"Read from the wiring of {view.origin}, as Topograph does from ibnetdiscover:",
        f"Topograph's tree keys ({top}) are the switch above the node, the one above that,",
        "and so on (each level's switches with the same children are one value, the first",
        "name; rail leaves sharing their hosts are one host group, as in topology.conf; a",
        "value over 63 characters is Topograph's x<fnv64a hash>): Topograph v0.5.0",
        "pkg/engines/k8s/labeler.go, pkg/topology/merger.go (v1.0.0 renamed the keys to",
        "fabric.topograph.run/tier-N, accelerator.topograph.run/domain).",
    ]
    if any(p.nvlink_domain for p in view.servers):
        notes.append(
            "network.topology.nvidia.com/accelerator = the NVLink domain --nvlink-domains names."
        )
    else:
        notes.append("No accelerator label: the dump does not show NVLink domains.")
    return [
        *notes,
        *(x for n in view.notes for x in ("", f"Note: {n}")),
        "",
        f"Source: {TOPOGRAPH_K8S}",
    ]


def _label_notes(view: SchedulerView) -> list[str]:
    if view.origin:
        return _discovered_label_notes(view)
    notes = [
        "",
        "Labels: network.topology.nvidia.com/leaf = the SU (its rail leaves reach every server",
        "of the SU: one hop on every rail), /spine = the pod's spine group"
        + (", /core = the core layer" if view.tiers == 3 else "")
        + " (Topograph's keys,",
        "so schedulers configured for Topograph read them); fabric-stack/su, /pod, /rack,",
        "/planes and one fabric-stack/[pN-]railR-leaf per rail: the plan's own facts.",
    ]
    if view.block_kind == "nvl72":
        notes += [
            "network.topology.nvidia.com/accelerator = the NVL72 rack (NVLink domain), 18 trays",
            "at a time in plan order: UNVERIFIED against the site's racks (the plan does not",
            "model the rack); where GPU Operator sets nvidia.com/gpu.clique, that is the",
            "authoritative NVLink partition.",
        ]
    return [*notes, "", f"Source: {TOPOGRAPH_K8S}"]


def render_labels_sh(view: SchedulerView) -> str:
    """The kubectl label script (idempotent: --overwrite)."""
    head = "#!/bin/sh\n" + comment_block(
        [
            f"Topology labels for the Kubernetes nodes of {view.cluster}.",
            _made_by(view),
            "Use: KUBECTL='kubectl --context prod' sh labels.sh (default: kubectl); safe to rerun.",
            *_label_notes(view),
        ]
    )
    lines = [head, 'set -eu\nKUBECTL="${KUBECTL:-kubectl}"\n']
    for node, labels in all_node_labels(view).items():
        pairs = " \\\n  ".join(shlex.quote(f"{k}={v}") for k, v in labels.items())
        lines.append(f"$KUBECTL label node --overwrite {shlex.quote(node)} \\\n  {pairs}\n")
    return "".join(lines)


def nodes_json_data(view: SchedulerView) -> dict[str, Any]:
    """``kubectl get nodes -o json`` shape: a v1 List of Nodes with name and labels."""
    items = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": labels}}
        for n, labels in all_node_labels(view).items()
    ]
    return {
        "_comment": [
            f"{'Discovered' if view.origin else 'Planned'} topology labels of every "
            f"Kubernetes node of {view.cluster}.",
            _made_by(view),
            "The shape of `kubectl get nodes -o json` (name and labels only): compare a live "
            "cluster with `fabric-stack drift --k8s-nodes <kubectl get nodes -o json>`. "
            "Not for kubectl apply.",
        ],
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": items,
    }


def kueue_topology(view: SchedulerView) -> dict[str, Any]:
    """The Kueue Topology object."""
    return {
        "apiVersion": KUEUE_API,
        "kind": "Topology",
        "metadata": {"name": topology_name(view)},
        "spec": {"levels": [{"nodeLabel": key} for key in kueue_levels(view)]},
    }


def render_kueue(view: SchedulerView) -> str:
    """kueue-topology.yaml."""
    levels = kueue_levels(view)
    header = [
        f"Kueue Topology of {view.cluster} for topology-aware scheduling.",
        _made_by(view),
        "Use: kubectl apply -f kueue-topology.yaml after labels.sh; name it from a",
        f"ResourceFlavor (spec.topologyName: {topology_name(view)}). Kueue 0.15+ (v1beta2);",
        "for older Kueue set apiVersion kueue.x-k8s.io/v1beta1 (same spec).",
        f"CRD: {KUEUE_CRD}",
        f"Source: {KUEUE_TAS}",
    ]
    fits = (
        "one SU gets one hop on every rail" if not view.origin else "one leaf (group) gets one hop"
    )
    why = [
        "Levels widest first: " + " > ".join(levels) + f". A job that fits {fits}",
        "(podset-required-topology: network.topology.nvidia.com/leaf). kubernetes.io/hostname",
        "last: Kueue allows it only as the lowest level (the CRD's validation rule).",
    ]
    return yaml_documents(header, [(why, kueue_topology(view))])


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    return list(FILES)


def render(ctx: RenderContext) -> list[Artifact]:
    """labels.sh, nodes.json and kueue-topology.yaml."""
    return render_view(scheduler_view(ctx.topo))


def render_view(view: SchedulerView) -> list[Artifact]:
    """labels.sh, nodes.json and kueue-topology.yaml of a scheduler view: a plan's, or a
    dump's (:func:`~fabric_stack.drift.discovered_view.discovered_view`)."""
    nodes = json.dumps(nodes_json_data(view), indent=2, ensure_ascii=False) + "\n"
    texts = (render_labels_sh(view), nodes, render_kueue(view))
    return [Artifact(TARGET, path, text) for path, text in zip(FILES, texts, strict=True)]
