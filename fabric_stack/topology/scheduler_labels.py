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

from fabric_stack.topology.scheduler import CORE_VALUE, SchedulerView, ServerPlace

TOPOGRAPH = "network.topology.nvidia.com"
"""Topograph's label prefix (Topograph docs, engines/k8s.md)."""

LEAF, SPINE, CORE, ACCELERATOR = (
    f"{TOPOGRAPH}/leaf",
    f"{TOPOGRAPH}/spine",
    f"{TOPOGRAPH}/core",
    f"{TOPOGRAPH}/accelerator",
)
"""Topograph's keys for the tree levels and the NVLink domain."""

TIER_KEYS = (LEAF, SPINE, CORE)
"""Topograph's tree keys, lowest level first: its labeler writes the switch one level up
from the node under ``leaf``, the next under ``spine``, the next under ``core``, and no
more (``switchNetworkHierarchy``, pkg/engines/k8s/labeler.go, Topograph v0.5.0)."""

OWN = "fabric-stack"
"""Prefix of the labels fabric-stack adds (facts Topograph has no key for)."""

SU, POD, RACK, PLANES = f"{OWN}/su", f"{OWN}/pod", f"{OWN}/rack", f"{OWN}/planes"

HOSTNAME = "kubernetes.io/hostname"
"""The well-known per-node label: Kueue's lowest topology level."""

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
    for key, value in zip(TIER_KEYS, place.tree, strict=False):
        labels[key] = value
    if not view.origin:  # the plan's own facts (a dump has no SU, pod or rail)
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
    NVLink domain (NVL72, or a dump's named domains), then ``kubernetes.io/hostname``,
    which Kueue allows only last."""
    levels = list(reversed(TIER_KEYS[: max(1, min(view.tiers, len(TIER_KEYS)))]))
    if any(p.nvlink_domain for p in view.servers):
        levels.append(ACCELERATOR)
    return [*levels, HOSTNAME]


def label_keys(view: SchedulerView) -> list[str]:
    """Every label key the plan sets on a server (what drift checks for), in order."""
    return list(node_labels(view, view.servers[0])) if view.servers else []


__all__ = [
    "ACCELERATOR",
    "CORE",
    "CORE_VALUE",
    "HOSTNAME",
    "LEAF",
    "OWN",
    "PLANES",
    "POD",
    "RACK",
    "SPINE",
    "SU",
    "TIER_KEYS",
    "TOPOGRAPH",
    "all_node_labels",
    "kueue_levels",
    "label_keys",
    "node_labels",
    "rail_leaf_key",
]
