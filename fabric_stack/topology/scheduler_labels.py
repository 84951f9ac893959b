"""Kubernetes node labels of the scheduler's view, and the Kueue topology levels over them.

Two label families, one per owner:

* NVIDIA Topograph's keys, for what Topograph itself defines, so a cluster labelled from
  the plan reads like one Topograph labelled from discovery (and schedulers configured for
  Topograph work unchanged): ``network.topology.nvidia.com/leaf`` "switches directly
  connected to compute nodes", ``/spine`` "the next tier of switches above the leaf level",
  ``/core`` "the top-level switches", ``/accelerator`` "high-speed interconnect domains,
  such as NVLink" (Topograph docs, engines/k8s.md; the same keys are the Helm chart's
  ``topologyNodeLabels`` defaults). Values follow the tree of
  :mod:`fabric_stack.topology.scheduler`: the leaf level is the **SU** (its rail leaves all
  reach every server of the SU), the spine level is the pod's spine group, the core level
  the cluster's cores (three tiers only: Topograph writes only the levels present). Topograph
  v1.0.0 moved to ``fabric.topograph.run/tier-N`` and ``accelerator.topograph.run/domain``
  (docs.nvidia.com/topograph/v1.0.0, node labels reference); the keys here are the
  ``network.topology.nvidia.com/*`` ones earlier releases and the Helm chart write.
* fabric-stack's own facts Topograph has no key for, under ``fabric-stack/``: the SU, the
  pod, the server's rack, the number of planes and the leaf of every (plane, rail).

Source: https://github.com/NVIDIA/topograph/blob/main/docs/engines/k8s.md;
https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/ (a value is at
most 63 characters: alphanumerics, '-', '_', '.', starting and ending alphanumeric).
"""

from __future__ import annotations

import re

from fabric_stack.topology.scheduler import SchedulerView, ServerPlace, pod_name

TOPOGRAPH = "network.topology.nvidia.com"
"""Topograph's label prefix (Topograph docs, engines/k8s.md)."""

LEAF, SPINE, CORE, ACCELERATOR = (
    f"{TOPOGRAPH}/leaf",
    f"{TOPOGRAPH}/spine",
    f"{TOPOGRAPH}/core",
    f"{TOPOGRAPH}/accelerator",
)
"""Topograph's keys for the tree levels and the NVLink domain."""

OWN = "fabric-stack"
"""Prefix of the labels fabric-stack adds (facts Topograph has no key for)."""

SU, POD, RACK, PLANES = f"{OWN}/su", f"{OWN}/pod", f"{OWN}/rack", f"{OWN}/planes"

HOSTNAME = "kubernetes.io/hostname"
"""The well-known per-node label: Kueue's lowest topology level."""

CORE_VALUE = "core"
"""The one value of the core label: every pod shares the cluster's core layer."""

_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def rail_leaf_key(plane: int, rail: int, planes: int) -> str:
    """``fabric-stack/rail3-leaf`` (``fabric-stack/p2-rail3-leaf`` with two planes)."""
    prefix = f"p{plane}-" if planes > 1 else ""
    return f"{OWN}/{prefix}rail{rail}-leaf"


def node_labels(view: SchedulerView, place: ServerPlace) -> dict[str, str]:
    """The labels of one server, Topograph's keys first, then fabric-stack's."""
    labels: dict[str, str] = {}
    if place.nvlink_domain:
        labels[ACCELERATOR] = place.nvlink_domain
    labels[LEAF] = f"su{place.su}"
    labels[SPINE] = pod_name(place.pod)
    if view.tiers == 3:
        labels[CORE] = CORE_VALUE
    labels[SU] = str(place.su)
    labels[POD] = str(place.pod)
    if place.rack:
        labels[RACK] = place.rack
    labels[PLANES] = str(view.planes)
    for plane, rail, leaf in place.leaves:
        labels[rail_leaf_key(plane, rail, view.planes)] = leaf
    bad = [f"{k}={v!r}" for k, v in labels.items() if len(v) > 63 or not _VALUE.match(v)]
    if bad:  # site names are host names (checked on input), so this is a programming error
        raise ValueError(f"{place.name}: not Kubernetes label values: {', '.join(bad)}")
    return labels


def all_node_labels(view: SchedulerView) -> dict[str, dict[str, str]]:
    """Host name → labels, for every server in plan order."""
    return {p.name: node_labels(view, p) for p in view.servers}


def kueue_levels(view: SchedulerView) -> list[str]:
    """Kueue's topology levels, widest first: core (three tiers), spine, leaf (the SU), the
    NVLink domain (NVL72), then ``kubernetes.io/hostname``, which Kueue allows only last."""
    levels = [CORE] if view.tiers == 3 else []
    levels += [SPINE, LEAF]
    if view.block_kind == "nvl72":
        levels.append(ACCELERATOR)
    return [*levels, HOSTNAME]


def label_keys(view: SchedulerView) -> list[str]:
    """Every label key the plan sets on a server (what drift checks for), in order."""
    return list(node_labels(view, view.servers[0])) if view.servers else []


__all__ = [
    "ACCELERATOR",
    "CORE",
    "HOSTNAME",
    "LEAF",
    "OWN",
    "PLANES",
    "POD",
    "RACK",
    "SPINE",
    "SU",
    "TOPOGRAPH",
    "all_node_labels",
    "kueue_levels",
    "label_keys",
    "node_labels",
    "rail_leaf_key",
]
