"""Golden files of `fabric-stack render all` for the seed cluster, InfiniBand and RoCE.

``tests/golden/artifacts/infiniband/…`` is the default spec (128 GPUs, QM9700);
``tests/golden/artifacts/roce/…`` the same cluster as RoCEv2 on SN5600
(``fabric: roce, switch: sn5600``); ``roce-2su/…`` 256 GPUs in two 16-server SUs
(the smallest plan where a rail's traffic crosses spines between leaves);
``dgx-h100/…`` the seed cluster on real DGX H100s (``node_profile: dgx-h100``: rail
NICs mlx5_0, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_9, mlx5_10, mlx5_11). Every
target that applies is included, the HTML design report too (it is deterministic:
no timestamps). Files of identical devices are stored once per symmetry class, the
others pinned by a ``CLASSES.yaml`` table (``tests/golden/README.md``).

The helpers here are shared by the ``tests/test_artifacts_*.py`` modules.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.artifacts import RenderContext, render_artifacts
from tests.golden.classes import fold_directory

VARIANTS: dict[str, dict[str, Any]] = {
    "infiniband": {},
    "roce": {"fabric": "roce", "switch": "sn5600"},
    "roce-2su": {"fabric": "roce", "switch": "sn5600", "gpus": 256, "su_nodes": 16},
    "dgx-h100": {"node_profile": "dgx-h100"},
}
"""Seed-cluster variants: name → spec overrides."""

IB_VARIANTS: dict[str, dict[str, Any]] = {
    "infiniband-dual-host": {
        "planes": 2,
        "infiniband": {"sm_location": "opensm-host", "opensm": "upstream"},
    },
}
"""InfiniBand control-plane variants rendered with `render infiniband` only: two planes
(one SM pair per plane) on upstream-OpenSM hosts (partitions.conf, no NVIDIA keys)."""


def context(spec: dict[str, Any] | None = None, **kw: Any) -> RenderContext:
    """A render context for ``spec`` (plain data, as a YAML file would give it)."""
    topo = build_topology(size_fabric(validate_spec(spec or {}, **kw)))
    return RenderContext.from_topology(topo)


@cache
def seed_context(variant: str) -> RenderContext:
    """The seed cluster's context in one of :data:`VARIANTS` (cached: contexts are immutable)."""
    return context(VARIANTS[variant])


@cache
def seed_artifacts(variant: str) -> dict[str, str]:
    """``render all`` of a seed variant: relative path → content."""
    return {a.path: a.content for a in render_artifacts("all", seed_context(variant))}


K8S_PATHS: dict[str, tuple[str, str]] = {
    "k8s-ipoib": ("infiniband", "ipoib"),
    "k8s-host-device": ("roce", "host-device"),
}
"""Network Operator variants of the Kubernetes target: name → (seed variant, --k8s-rdma)."""


def k8s_context(name: str) -> RenderContext:
    """The seed variant's context with the Kubernetes path of :data:`K8S_PATHS` ``name``."""
    variant, mode = K8S_PATHS[name]
    base = seed_context(variant)
    return RenderContext(base.topo, base.intent, {}, {}, mode)


@cache
def rendered() -> dict[str, str]:
    """Every rendered file the artifact goldens cover: ``<variant>/<artifact path>`` → content."""
    out: dict[str, str] = {}
    for variant in VARIANTS:
        for path, content in seed_artifacts(variant).items():
            out[f"{variant}/{path}"] = content
    for variant, spec in IB_VARIANTS.items():
        for a in render_artifacts("infiniband", context(spec)):
            out[f"{variant}/{a.path}"] = a.content
    for name in K8S_PATHS:
        for art in render_artifacts("kubernetes", k8s_context(name)):
            out[f"{name}/{art.path}"] = art.content
    return out


def target_directories(files: dict[str, str]) -> dict[str, dict[str, str]]:
    """``files`` by render-target directory (``<variant>/<target>``), paths relative to it."""
    out: dict[str, dict[str, str]] = {}
    for path, content in files.items():
        variant, target, rest = path.split("/", 2)
        out.setdefault(f"{variant}/{target}", {})[rest] = content
    return out


def generate() -> dict[str, str]:
    """Golden files: per target directory, one file per symmetry class and its ``CLASSES.yaml``.

    Every rendered file is either stored as is or pinned by its class table
    (``tests/golden/classes.py``; ``tests/golden/test_classes.py`` checks each member).
    """
    out: dict[str, str] = {}
    for directory, files in target_directories(rendered()).items():
        for rel, content in fold_directory(files).items():
            out[f"{directory}/{rel}"] = content
    return out
