"""`render kubernetes`: the target — rail networking (SR-IOV or Network Operator path), a
sample training pod, the nccl-tests acceptance job and a README.

Files under ``kubernetes/`` (``render --k8s-rdma`` picks the path):

* ``sriov`` (default): :mod:`fabric_stack.artifacts.kubernetes` —
  ``sriov-network-pool-config.yaml``, ``sriov-node-policies.yaml``,
  ``sriov-networks.yaml``, ``network-attachment-definitions.yaml``;
* ``host-device`` / ``ipoib``: :mod:`fabric_stack.artifacts.kubernetes_netop` —
  ``nic-cluster-policy.yaml`` and ``host-device-networks.yaml`` / ``ipoib-networks.yaml``;
* RoCEv2: ``nic-configuration-template.yaml`` (:mod:`.kubernetes_nicconf`, the NICs' side
  of the lossless profile for NVIDIA's NIC configuration operator);
* always: ``training-pod.yaml`` (every rail, every GPU of a server, ``IPC_LOCK``,
  a memory-backed ``/dev/shm``: NCCL's shared-memory transport fails on the
  container runtime's 64 MB default), ``nccl-tests-mpijob.yaml`` (Kubeflow MPIJob
  v2beta1: all_reduce_perf, failing below the plan's expected bus bandwidth) and
  ``README.md`` (prerequisites, apply order, checks).

Pods attach the pod networks of :mod:`.k8s_ipam`. On the routed underlay those are per
rail per leaf, so there is one sample pod and one MPIJob **per SU**, each selecting its
SU's nodes (``nodeSelector`` on ``fabric-stack/su``, written by ``render k8s-topology``)
and attaching that SU's ``railK-suS`` networks: an MPIJob has a single Worker template,
so workers under different leaves cannot share one. On InfiniBand one pod and one MPIJob
cover the cluster. The pods' NCCL variables are :func:`fabric_stack.artifacts.nccl.nccl_vars`
(the rule of ``nccl/<fabric>.env``) with the pod's names.

Each job's expected bus bandwidth is :func:`fabric_stack.analysis.estimate.estimate_collective`'s
figure for that job's own servers (:mod:`.k8s_acceptance`): a per-SU job's floor is its SU's
figure; with several SUs on a routed underlay, two more jobs (all-reduce, all-to-all) run
over every server in the hosts' network namespace, so the leaf-spine tier is exercised and
judged against the figure for the path it takes.
"""

from __future__ import annotations

from typing import Any

from fabric_stack.artifacts import k8s_ipam, sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    TargetMismatchError,
    yaml_documents,
)
from fabric_stack.artifacts.acceptance import (
    ACCEPTANCE_SHARE,
    ACCEPTANCE_SIZE,
    NCCL_TESTS_PATH,
    acceptance_busbw,
    acceptance_image,
)
from fabric_stack.artifacts.k8s_acceptance import (
    CROSS_COLLECTIVES,
    cross_su_job,
    cross_su_note,
    expected_busbw,
    launcher_script,
    spans_sus,
    su_hosts,
)
from fabric_stack.artifacts.k8s_ipam import PodNetwork
from fabric_stack.artifacts.kubernetes import (
    SRIOV_FILES,
    TARGET,
    TRAINING_IMAGE,
    WORKLOAD_NAMESPACE,
    pod_resources,
    rail_key,
    sriov_files,
)
from fabric_stack.artifacts.kubernetes_netop import netop_file, netop_files, netop_resources
from fabric_stack.artifacts.kubernetes_nicconf import FILE as NICCONF_FILE
from fabric_stack.artifacts.kubernetes_nicconf import nicconf_file
from fabric_stack.artifacts.kubernetes_readme import readme
from fabric_stack.artifacts.nccl import PodScope, nccl_vars


def pod_groups(ctx: RenderContext) -> dict[int | None, list[PodNetwork]]:
    """SU (None: the whole cluster) → the pod networks a full-node pod there attaches."""
    return k8s_ipam.su_groups(ctx, rail_key)


def group_resources(ctx: RenderContext, nets: list[PodNetwork]) -> dict[str, int]:
    """Device resources a full-node pod attaching ``nets`` asks for on the chosen path."""
    if ctx.k8s_rdma == "sriov":
        return pod_resources(ctx, nets)
    return netop_resources(ctx, nets)


def pod_ifnames(nets: list[PodNetwork]) -> tuple[str, ...]:
    """The pod's rail interfaces: Multus names attachments net1, net2 … in annotation order
    (multus-cni docs/how-to-use.md; UNVERIFIED against a running Multus here)."""
    return tuple(f"net{i}" for i in range(1, len(nets) + 1))


def pod_env(ctx: RenderContext, nets: list[PodNetwork] | None = None) -> list[dict[str, str]]:
    """NCCL variables for a pod with every rail: :func:`.nccl.nccl_vars`, the rule of
    ``nccl/<fabric>.env``, with the pod's device and interface names."""
    if nets is None:
        nets = next(iter(pod_groups(ctx).values()))
    scope = PodScope(ctx.k8s_rdma, pod_ifnames(nets))
    return [{"name": v.key, "value": v.value} for v in nccl_vars(ctx, scope)]


SHM_VOLUME = {"name": "dshm", "emptyDir": {"medium": "Memory"}}
"""Memory-backed /dev/shm (no size limit: it counts against the pod's memory)."""


def full_node_pod_spec(
    ctx: RenderContext, su: int | None, name: str, image: str, command: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metadata annotations, pod spec) of a pod with every rail and every GPU of a server
    in SU ``su`` (None: any node)."""
    nets = pod_groups(ctx)[su]
    limits: dict[str, Any] = {"nvidia.com/gpu": ctx.spec.gpus_per_node}
    limits.update(group_resources(ctx, nets))
    container = {
        "name": name,
        "image": image,
        "command": command,
        "env": pod_env(ctx, nets),
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "resources": {"limits": limits, "requests": dict(limits)},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    annotations = {"k8s.v1.cni.cncf.io/networks": ",".join(n.name for n in nets)}
    spec: dict[str, Any] = {"containers": [container], "volumes": [dict(SHM_VOLUME)]}
    if selector := k8s_ipam.node_selector(su):
        spec = {"nodeSelector": selector, **spec}
    return annotations, spec


def _suffix(su: int | None) -> str:
    return "" if su is None else f"-su{su}"


def training_pod(ctx: RenderContext, su: int | None = None) -> dict[str, Any]:
    """A sample pod with every rail attached and every GPU of one server (of SU ``su``;
    default: the first group)."""
    if su is None:
        su = next(iter(pod_groups(ctx)))
    cmd = ["sleep", "infinity"]
    annotations, spec = full_node_pod_spec(ctx, su, "trainer", TRAINING_IMAGE, cmd)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{ctx.spec.name}-nccl-sample{_suffix(su)}",
            "namespace": WORKLOAD_NAMESPACE,
            "annotations": annotations,
        },
        "spec": {"restartPolicy": "Never", **spec},
    }


def group_servers(ctx: RenderContext, su: int | None) -> int:
    """Servers whose pods attach SU ``su``'s networks (the whole cluster for None)."""
    return min(n.servers for n in pod_groups(ctx)[su])


def mpijob(ctx: RenderContext, su: int | None = None) -> dict[str, Any]:
    """The nccl-tests acceptance MPIJob of SU ``su`` (default: the first group): one worker
    per server of the SU (of the cluster on InfiniBand), one rank per GPU."""
    if su is None:
        su = next(iter(pod_groups(ctx)))
    hosts = su_hosts(ctx, su)
    expected = expected_busbw(ctx, "all_reduce", hosts)
    image = acceptance_image(ctx)
    cmd = ["/usr/sbin/sshd", "-De"]
    annotations, worker = full_node_pod_spec(ctx, su, "worker", image, cmd)
    where = "the whole cluster" if su is None else f"SU {su}"
    meta_ann = {
        "fabric-stack/scope": f"{where}, {len(hosts)} servers",
        "fabric-stack/expected-busbw-gbs": f"{expected:g}" if expected else "n/a",
    }
    env = pod_env(ctx, pod_groups(ctx)[su])
    ranks = group_servers(ctx, su) * ctx.spec.gpus_per_node
    script = launcher_script(
        ranks, [e["name"] for e in env], "all_reduce_perf", expected, f"{where} all_reduce"
    )
    launcher = {"name": "launcher", "image": image, "command": ["bash", "-c", script], "env": env}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {
            "name": f"{ctx.spec.name}-nccl-acceptance{_suffix(su)}",
            "namespace": WORKLOAD_NAMESPACE,
            "annotations": meta_ann,
        },
        "spec": {
            "slotsPerWorker": ctx.spec.gpus_per_node,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "Never",
                    "template": {"spec": {"containers": [launcher]}},
                },
                "Worker": {
                    "replicas": group_servers(ctx, su),
                    "template": {"metadata": {"annotations": annotations}, "spec": worker},
                },
            },
        },
    }


def _common_files(ctx: RenderContext) -> list[tuple[str, str]]:
    gen = GENERATED_BY.format(target=TARGET)
    pod = yaml_documents(
        [
            f"Sample training pod for {ctx.spec.name}: every rail attached (Multus annotation),",
            f"one device per rail resource, all {ctx.spec.gpus_per_node} GPUs of a server,",
            "IPC_LOCK so RDMA can pin memory, and a memory-backed /dev/shm (NCCL's",
            "shared-memory transport fails on the runtime's 64 MB default).",
            gen,
            *_group_note(ctx),
            "NCCL variables: the rule of nccl/<fabric>.env with the pod's names.",
            f"Source: {sources.NCCL_ENV}",
        ],
        [(_doc_note(ctx, su, "pod"), training_pod(ctx, su)) for su in pod_groups(ctx)],
    )
    target = (
        f"pass at >= {ACCEPTANCE_SHARE:.0%} of the plan's estimate for the job's own servers"
        " (annotation fabric-stack/expected-busbw-gbs)."
        if acceptance_busbw(ctx)
        else "no target: fewer than 2 GPUs."
    )
    job = yaml_documents(
        [
            f"nccl-tests acceptance for {ctx.spec.name}: all_reduce_perf at {ACCEPTANCE_SIZE}",
            f"on every server x {ctx.spec.gpus_per_node} GPUs; bus bandwidth: {target}",
            *_group_note(ctx),
            gen,
            f"The image ({acceptance_image(ctx)}) is yours to build: OpenMPI + sshd and",
            f"nccl-tests built with MPI=1 in {NCCL_TESTS_PATH} (see README.md).",
            f"Source: {sources.NCCL_TESTS}",
            f"CRD: {sources.MPI_OPERATOR} (manifests/base/kubeflow.org_mpijobs.yaml)",
        ],
        [
            *((_doc_note(ctx, su, "acceptance job"), mpijob(ctx, su)) for su in pod_groups(ctx)),
            *_cross_su_jobs(ctx),
        ],
    )
    return [("training-pod.yaml", pod), ("nccl-tests-mpijob.yaml", job), ("README.md", readme(ctx))]


def _cross_su_jobs(ctx: RenderContext) -> list[tuple[list[str], dict[str, Any]]]:
    """The jobs spanning every SU (routed underlay with more than one SU; on InfiniBand the
    whole-cluster job already spans them)."""
    if not (k8s_ipam.routed(ctx) and spans_sus(ctx)):
        return []
    return [(cross_su_note(ctx, c), cross_su_job(ctx, c)) for c in CROSS_COLLECTIVES]


def _group_note(ctx: RenderContext) -> list[str]:
    """Header lines: why one object per SU (routed underlay), or one for the cluster."""
    if not k8s_ipam.routed(ctx):
        return ["One for the whole cluster: the rail networks span every node (InfiniBand)."]
    return [
        "One per SU: each leaf owns its block of a rail, so the SU's pods attach its",
        "railK-suS networks and select its nodes (nodeSelector fabric-stack/su, written by",
        "render k8s-topology). An MPIJob has one Worker template, hence one job per SU,",
        "each judged against the plan's estimate for its own servers. With several SUs, an",
        "all-reduce and an all-to-all over every server (host network) cross the spines.",
    ]


def _doc_note(ctx: RenderContext, su: int | None, what: str) -> list[str]:
    where = "the whole cluster" if su is None else f"SU {su}"
    return [f"The {what} of {where}: {group_servers(ctx, su):,} server(s)."]


def no_pod_addresses(ctx: RenderContext) -> str | None:
    """Why the target does not apply (p2p31 hosts leave pods no address), or None."""
    return k8s_ipam.no_pod_addresses(ctx)


def render(ctx: RenderContext) -> list[Artifact]:
    """Every file of the target (see the module docstring)."""
    if ctx.k8s_rdma == "ipoib" and ctx.fabric != "infiniband":
        raise TargetMismatchError(
            TARGET, f"--k8s-rdma ipoib needs InfiniBand, not {ctx.fabric}", "sriov or host-device"
        )
    if why := no_pod_addresses(ctx):  # direct callers; the CLI checks applicability first
        raise TargetMismatchError(
            TARGET, why, "underlay.host_addressing: leaf-subnet leaves pods addresses"
        )
    path = sriov_files(ctx) if ctx.k8s_rdma == "sriov" else netop_files(ctx)
    nic = [nicconf_file(ctx)] if ctx.fabric == "roce" else []
    return [Artifact(TARGET, f"kubernetes/{n}", c) for n, c in [*nic, *path, *_common_files(ctx)]]


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    path = (
        list(SRIOV_FILES)
        if ctx.k8s_rdma == "sriov"
        else ["nic-cluster-policy.yaml", netop_file(ctx)]
    )
    nic = [NICCONF_FILE] if ctx.fabric == "roce" else []
    return [
        f"kubernetes/{n}"
        for n in [*nic, *path, "training-pod.yaml", "nccl-tests-mpijob.yaml", "README.md"]
    ]


__all__ = ["acceptance_busbw", "files", "mpijob", "pod_env", "render", "training_pod"]
