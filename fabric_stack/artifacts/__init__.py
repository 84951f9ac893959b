"""Deployment artifacts rendered from the plan (`fabric-stack render TARGET --out-dir DIR`).

:data:`TARGETS` is the registry, one module per target: each entry holds its renderer,
the paths it writes, a one-line description and where it applies
(:class:`~fabric_stack.policy.applicability.Applicability`, required: no target applies
by default). ``render all`` renders every target that applies and names each skipped one
with its reason; ``render --help``, the design report and :func:`targets_table` (the
Markdown table for the docs) list the same registry.

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
    k8s_topology,
    kubernetes_bundle,
    nccl,
    report,
    roce_qos,
    slurm,
    sonic,
)
from fabric_stack.artifacts._base import Artifact, RenderContext, TargetMismatchError
from fabric_stack.errors import DeclarationError
from fabric_stack.files.outputs import write_files
from fabric_stack.hardware.switches import FABRIC_KINDS, FabricKind
from fabric_stack.policy.applicability import Applicability, Condition
from fabric_stack.views.registry_tables import markdown_table


def plan_fabric(ctx: RenderContext) -> str:
    """The plan's compute fabric (what a target's applicability looks at)."""
    return ctx.fabric


def for_fabrics(
    *fabrics: FabricKind, otherwise: str = "", needs: tuple[Condition[RenderContext], ...] = ()
) -> Applicability[RenderContext]:
    """A target's applicability: ``fabrics`` (the reason on any other), then ``needs``."""
    return Applicability(
        fabrics=fabrics, fabric_of=plan_fabric, otherwise=otherwise, conditions=needs
    )


EVERY_FABRIC: Applicability[RenderContext] = for_fabrics(*FABRIC_KINDS)
"""Applicability of a target every plan gets (still stated: there is no default)."""

_ROUTED = "an InfiniBand fabric has no IP underlay"
_NOT_ROCE = "the plan's fabric is {fabric}, not RoCEv2"


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """A render target: its renderer, the paths it writes (cheap), a one-line description,
    the files it writes as patterns (for help and tables), and where it applies (required)."""

    render: Callable[[RenderContext], list[Artifact]]
    files: Callable[[RenderContext], list[str]]
    help: str
    writes: tuple[str, ...]
    applies: Applicability[RenderContext]

    def __post_init__(self) -> None:
        # Checked where the entry is declared (at import), as diffsync checks a model's
        # fields when its class is made: help, tables and `render all` trust every entry.
        problems = target_problems(self)
        if problems:
            raise DeclarationError(f"a render target (help={self.help!r})", problems)


def target_problems(target: Target) -> list[str]:
    """What a render target lacks (empty: it is complete); see docs/dev/add-a-render-target.md."""
    problems = []
    if not callable(target.render) or not callable(target.files):
        problems.append("render and files: functions of the RenderContext")
    help_ = target.help.strip() if isinstance(target.help, str) else ""
    if not help_ or "\n" in help_ or not help_.endswith("."):
        problems.append("help: a one-line description ending in '.'")
    writes = target.writes if isinstance(target.writes, tuple) else ()
    if not writes or not all(isinstance(w, str) and "/" in w.strip("/") for w in writes):
        problems.append("writes: the patterns of the files it writes ('frr/<switch>.conf')")
    if not isinstance(target.applies, Applicability):
        problems.append("applies: an Applicability (for_fabrics(...) or EVERY_FABRIC)")
    return problems


def check_targets(targets: dict[str, Target]) -> None:
    """Each target's name and files: a lowercase name other than ``all`` (what `render`
    reserves), and every file under the folder of that name, so no two targets can claim
    one file (render_artifacts would find out only when rendering both)."""
    for name, target in targets.items():
        problems = []
        if name == "all" or not name.replace("-", "").isalnum() or name != name.lower():
            problems.append("name: lowercase letters, digits and '-', not 'all'")
        outside = [w for w in target.writes if not w.startswith(f"{name}/")]
        if outside:
            problems.append(f"writes: {outside} not under {name}/")
        if problems:
            raise DeclarationError(f"render target {name!r}", problems)


TARGETS: dict[str, Target] = {
    "roce-qos": Target(
        render=roce_qos.render,
        files=roce_qos.files,
        help="Per-switch lossless RoCEv2 QoS intent (YAML).",
        writes=("roce-qos/<switch>.yaml",),
        applies=for_fabrics("roce", otherwise=_NOT_ROCE),
    ),
    "cumulus": Target(
        render=cumulus.render,
        files=cumulus.files,
        help="RoCE QoS and BGP underlay as Cumulus Linux NVUE commands, per switch.",
        writes=("cumulus/<switch>.nvue.sh",),
        applies=for_fabrics(
            "roce",
            otherwise=_NOT_ROCE,
            needs=(Condition("compute switches run Cumulus Linux", cumulus.not_cumulus),),
        ),
    ),
    "frr": Target(
        render=frr.render,
        files=frr.files,
        help="FRR (zebra + bgpd) underlay config per leaf/spine/core.",
        writes=("frr/<switch>.conf",),
        applies=for_fabrics("roce", "ethernet", otherwise=_ROUTED),
    ),
    "sonic": Target(
        render=sonic.render,
        files=sonic.files,
        help="SONiC config_db.json (ports, addresses, lossless QoS over the platform's buffer "
        "defaults) and frr.conf (BGP, SONiC names) per leaf/spine/core.",
        writes=(
            "sonic/<switch>/config_db.json",
            "sonic/<switch>/frr.conf",
            "sonic/<switch>/tables.json",
            "sonic/<leaf>/hwsku.json",
            "sonic/README.md",
        ),
        applies=for_fabrics(
            "roce",
            "ethernet",
            otherwise=_ROUTED,
            needs=(Condition("a switch model with a SONiC platform", sonic.no_lane_table),),
        ),
    ),
    "hosts": Target(
        render=hosts.render,
        files=hosts.files,
        help="Per server: rail addresses, per-rail tables and rules; on RoCEv2 the NICs' "
        "lossless QoS (mlnx_qos, cma_roce_tos).",
        writes=("hosts/<server>.netplan.yaml", "hosts/<server>.sh", "hosts/<server>.roce-qos.sh"),
        applies=for_fabrics("roce", "ethernet", otherwise=_ROUTED),
    ),
    "infiniband": Target(
        render=infiniband.render,
        files=infiniband.files,
        help="OpenSM settings per SM, partitions, node-name-map and .topo.",
        writes=(
            "infiniband/opensm-<sm>.conf",
            "infiniband/partitions.conf.user_ext",
            "infiniband/ib-node-name-map",
            "infiniband/<cluster>.topo",
            "infiniband/ibnl/<hca>.ibnl",
            "infiniband/hca_mapping.csv",
        ),
        applies=for_fabrics(
            "infiniband",
            otherwise="the plan's fabric is {fabric}; subnet managers, partitions and .topo "
            "are InfiniBand only",
        ),
    ),
    "nccl": Target(
        render=nccl.render,
        files=nccl.files,
        help="NCCL environment file for the fabric.",
        writes=("nccl/<fabric>.env",),
        applies=EVERY_FABRIC,
    ),
    "kubernetes": Target(
        render=kubernetes_bundle.render,
        files=kubernetes_bundle.files,
        help="RDMA rail networks (SR-IOV or Network Operator), training pod, nccl-tests MPIJob, "
        "README.",
        writes=("kubernetes/<object>.yaml", "kubernetes/README.md"),
        applies=for_fabrics(
            "infiniband",
            "roce",
            "ethernet",
            otherwise="the plan's fabric is {fabric}",
            needs=(
                Condition(
                    "hosts not on p2p31",
                    kubernetes_bundle.no_pod_addresses,
                ),
            ),
        ),
    ),
    "slurm": Target(
        render=slurm.render,
        files=slurm.files,
        help="Slurm network topology from the plan: topology/tree (SU, spine, core), blocks "
        "(SUs or NVL72 racks) for 23.11+ and topology.yaml for 25.05+.",
        writes=slurm.FILES,
        applies=EVERY_FABRIC,
    ),
    "k8s-topology": Target(
        render=k8s_topology.render,
        files=k8s_topology.files,
        help="Kubernetes node topology labels (Topograph keys + fabric-stack), a kubectl "
        "label script, and a Kueue Topology over them.",
        writes=k8s_topology.FILES,
        applies=EVERY_FABRIC,
    ),
    "report": Target(
        render=lambda ctx: report.render(ctx, target_listing(ctx)),
        files=report.files,
        help="Self-contained HTML design report.",
        writes=("report/design-report.html",),
        applies=EVERY_FABRIC,
    ),
}
"""Target name → :class:`Target`, in the order `all` renders them."""
check_targets(TARGETS)

TARGET_NAMES: tuple[str, ...] = (*TARGETS, "all")
"""What `fabric-stack render` accepts."""


def skip_reason(target: str, ctx: RenderContext) -> str | None:
    """Why ``target`` does not fit this plan (None: it fits, and `all` renders it)."""
    return TARGETS[target].applies(ctx)


def applies(target: str, ctx: RenderContext) -> bool:
    """Whether ``target`` fits this plan (what `all` includes)."""
    return skip_reason(target, ctx) is None


def skipped_targets(ctx: RenderContext) -> list[tuple[str, str]]:
    """(target, reason) of every target `all` leaves out for this plan, in registry order."""
    return [(name, why) for name in TARGETS if (why := skip_reason(name, ctx)) is not None]


def target_listing(ctx: RenderContext) -> list[report.ArtifactRow]:
    """(target, description, files) of every target that fits the plan, in `all` order."""
    return [(name, t.help, t.files(ctx)) for name, t in TARGETS.items() if applies(name, ctx)]


def targets_table() -> str:
    """The render targets as a Markdown table (target, what, files, applies to), from
    :data:`TARGETS`: for the README and docs, never kept by hand."""
    rows = [
        (f"`{n}`", t.help, ", ".join(f"`{w}`" for w in t.writes), t.applies.describe())
        for n, t in TARGETS.items()
    ]
    return markdown_table(("target", "what", "files", "applies to"), rows)


def report_html(ctx: RenderContext) -> str:
    """The design report's HTML (what the ``report`` target writes)."""
    return report.render_html(ctx, target_listing(ctx))


def render_artifacts(
    target: str, ctx: RenderContext, on_step: Callable[[int, int, str], None] | None = None
) -> list[Artifact]:
    """Render ``target`` (or every applicable one for ``all``) without touching the disk.

    ``on_step(done, total, next_target)`` runs before each target and once at the end
    (``done == total``): the CLI shows progress and may raise to stop (``--max-seconds``);
    nothing has been written then, and this module stays free of clocks and I/O.
    """
    if target == "all":
        names = [t for t in TARGETS if applies(t, ctx)]
    elif target in TARGETS:
        names = [target]
    else:
        raise TargetMismatchError(target, "unknown target", "one of " + ", ".join(TARGET_NAMES))
    out: list[Artifact] = []
    for done, name in enumerate(names):
        if on_step is not None:
            on_step(done, len(names), name)
        out.extend(TARGETS[name].render(ctx))
    if on_step is not None:
        on_step(len(names), len(names), "")
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
    "check_targets",
    "render_artifacts",
    "skip_reason",
    "skipped_targets",
    "target_problems",
    "targets_table",
    "write_artifacts",
]
