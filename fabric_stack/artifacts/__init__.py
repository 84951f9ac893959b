"""Deployment artifacts rendered from the plan (`fabric-stack render TARGET --out DIR`).

Targets, one module each:

==============  =====================================================  ===================
target          files                                                  fabrics
==============  =====================================================  ===================
``roce-qos``    ``roce-qos/<switch>.yaml``: lossless QoS intent         roce
``cumulus``     ``cumulus/<switch>.nvue.sh``: the same as NVUE          roce on Cumulus
``frr``         ``frr/<switch>.conf``: routed underlay (BGP)          roce, ethernet
``sonic``       ``sonic/<switch>/config_db.json`` + README              roce, ethernet (SN5600)
``hosts``       ``hosts/<server>.netplan.yaml`` and ``.sh``               roce, ethernet
``infiniband``  ``infiniband/``: opensm.conf per SM, partitions,        infiniband
                node-name-map, ``.topo``
``nccl``        ``nccl/<fabric>.env``                                   all
``kubernetes``  ``kubernetes/``: rail networks, pod, MPIJob, README   all
``report``      ``report/design-report.html``                           all
``all``         every target that applies to the fabric
==============  =====================================================  ===================

:func:`render_artifacts` renders everything in memory first; a target that does
not fit the fabric raises :class:`TargetMismatchError` before any file exists.
:func:`write_artifacts` then writes each file atomically.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fabric_stack.artifacts import (
    cumulus,
    frr,
    hosts,
    infiniband,
    kubernetes_bundle,
    nccl,
    report,
    roce_qos,
    sonic,
)
from fabric_stack.artifacts._base import Artifact, RenderContext, TargetMismatchError
from fabric_stack.files.outputs import write_files


@dataclass(frozen=True, slots=True)
class Target:
    """A render target: its renderer, the paths it writes (cheap), a one-line description."""

    render: Callable[[RenderContext], list[Artifact]]
    files: Callable[[RenderContext], list[str]]
    help: str


TARGETS: dict[str, Target] = {
    "roce-qos": Target(
        roce_qos.render, roce_qos.files, "Per-switch lossless RoCEv2 QoS intent (YAML)."
    ),
    "cumulus": Target(
        cumulus.render,
        cumulus.files,
        "RoCE QoS and BGP underlay as Cumulus Linux NVUE commands, per switch.",
    ),
    "frr": Target(frr.render, frr.files, "FRR (zebra + bgpd) underlay config per leaf/spine/core."),
    "sonic": Target(
        sonic.render,
        sonic.files,
        "SONiC config_db.json per leaf/spine/core: ports, addresses, BGP, lossless QoS.",
    ),
    "hosts": Target(
        hosts.render, hosts.files, "Per server: rail addresses, per-rail tables and rules."
    ),
    "infiniband": Target(
        infiniband.render,
        infiniband.files,
        "OpenSM settings per SM, partitions, node-name-map and .topo.",
    ),
    "nccl": Target(nccl.render, nccl.files, "NCCL environment file for the fabric."),
    "kubernetes": Target(
        kubernetes_bundle.render,
        kubernetes_bundle.files,
        "RDMA rail networks (SR-IOV or Network Operator), training pod, nccl-tests MPIJob, README.",
    ),
    "report": Target(
        lambda ctx: report.render(ctx, target_listing(ctx)),
        report.files,
        "Self-contained HTML design report.",
    ),
}
"""Target name → :class:`Target`, in the order `all` renders them."""

TARGET_NAMES: tuple[str, ...] = (*TARGETS, "all")
"""What `fabric-stack render` accepts."""


def applies(target: str, ctx: RenderContext) -> bool:
    """Whether ``target`` fits this plan (what `all` includes)."""
    if target == "roce-qos":
        return ctx.fabric == "roce"
    if target == "cumulus":
        return ctx.fabric == "roce" and ctx.plan.switch_model.os_family == "cumulus"
    if target == "infiniband":
        return ctx.fabric == "infiniband"
    if target in ("frr", "hosts"):
        return ctx.fabric != "infiniband"
    if target == "sonic":
        return ctx.fabric != "infiniband" and sonic.has_lane_table(ctx)
    return True


def target_listing(ctx: RenderContext) -> list[report.ArtifactRow]:
    """(target, description, files) of every target that fits the plan, in `all` order."""
    return [(name, t.help, t.files(ctx)) for name, t in TARGETS.items() if applies(name, ctx)]


def report_html(ctx: RenderContext) -> str:
    """The design report's HTML (what the ``report`` target writes)."""
    return report.render_html(ctx, target_listing(ctx))


def render_artifacts(target: str, ctx: RenderContext) -> list[Artifact]:
    """Render ``target`` (or every applicable one for ``all``) without touching the disk."""
    if target == "all":
        names = [t for t in TARGETS if applies(t, ctx)]
    elif target in TARGETS:
        names = [target]
    else:
        raise TargetMismatchError(target, "unknown target", "one of " + ", ".join(TARGET_NAMES))
    out: list[Artifact] = []
    for name in names:
        out.extend(TARGETS[name].render(ctx))
    paths = [a.path for a in out]
    dupes = sorted(p for p, n in Counter(paths).items() if n > 1)
    if dupes:  # a programming error, not bad input: two renderers claim one file
        raise RuntimeError(f"artifacts rendered twice: {dupes}")
    return out


def write_artifacts(artifacts: Sequence[Artifact], out_dir: str | Path) -> list[Path]:
    """Write every artifact under ``out_dir``, all or none; returns the paths in order."""
    root = Path(out_dir)
    return write_files([(root / a.path, a.content) for a in artifacts])


__all__ = [
    "TARGETS",
    "TARGET_NAMES",
    "Artifact",
    "RenderContext",
    "Target",
    "TargetMismatchError",
    "applies",
    "render_artifacts",
    "write_artifacts",
]
