"""`render kubernetes`: the target — rail networking (SR-IOV or Network Operator path), a
sample training pod, the nccl-tests acceptance job and a README.

Files under ``kubernetes/`` (``render --k8s-rdma`` picks the path):

* ``sriov`` (default): :mod:`fabric_stack.artifacts.kubernetes` —
  ``sriov-network-pool-config.yaml``, ``sriov-node-policies.yaml``,
  ``sriov-networks.yaml``, ``network-attachment-definitions.yaml``;
* ``host-device`` / ``ipoib``: :mod:`fabric_stack.artifacts.kubernetes_netop` —
  ``nic-cluster-policy.yaml`` and ``host-device-networks.yaml`` / ``ipoib-networks.yaml``;
* always: ``training-pod.yaml`` (every rail, every GPU of a server, ``IPC_LOCK``,
  a memory-backed ``/dev/shm``: NCCL's shared-memory transport fails on the
  container runtime's 64 MB default), ``nccl-tests-mpijob.yaml`` (Kubeflow MPIJob
  v2beta1: all_reduce_perf on every server, failing below the plan's expected bus
  bandwidth) and ``README.md`` (prerequisites, apply order, checks).

The expected bus bandwidth is :func:`fabric_stack.analysis.estimate.estimate_collective`'s
figure for an all-reduce on the whole cluster (nothing recomputed here).
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
    pass_floor,
)
from fabric_stack.artifacts.kubernetes import (
    SRIOV_FILES,
    TARGET,
    TRAINING_IMAGE,
    WORKLOAD_NAMESPACE,
    nic_of,
    sriov_files,
    sriov_ipam_files,
    sriov_pod_networks,
)
from fabric_stack.artifacts.kubernetes_netop import netop_file, netop_files, netop_pod_networks
from fabric_stack.artifacts.kubernetes_readme import readme
from fabric_stack.artifacts.nccl import ROCE_V2_IPV4_GID_INDEX, traffic_class


def pod_networks(ctx: RenderContext) -> tuple[list[str], dict[str, int]]:
    """(Multus network names, device resources) a full-node pod asks for on the chosen path."""
    if ctx.k8s_rdma == "sriov":
        return sriov_pod_networks(ctx)
    return netop_pod_networks(ctx)


def pod_env(ctx: RenderContext) -> list[dict[str, str]]:
    """NCCL variables for a pod with every rail.

    SR-IOV (exclusive RDMA mode): the pod sees only its VFs, new ``mlx5_N`` devices,
    so the prefix ``mlx5`` is exact. Network Operator (shared mode): the pod sees
    every HCA of the host, so the rail devices are named exactly (``=mlx5_0,…``).
    """
    env = [
        {"name": "NCCL_SOCKET_IFNAME", "value": "=eth0"},
        {"name": "NCCL_CROSS_NIC", "value": "0"},
    ]
    if ctx.fabric in ("infiniband", "roce"):
        hca = "mlx5"
        if ctx.k8s_rdma != "sriov":
            hca = "=" + ",".join(nic_of(ctx, r) for r in ctx.intent.rails)
        env.insert(0, {"name": "NCCL_IB_HCA", "value": hca})
    else:
        env.insert(0, {"name": "NCCL_IB_DISABLE", "value": "1"})
    if ctx.fabric == "roce":
        env.append({"name": "NCCL_IB_GID_INDEX", "value": str(ROCE_V2_IPV4_GID_INDEX)})
        env.append({"name": "NCCL_IB_TC", "value": str(traffic_class(ctx.spec.roce.roce_dscp))})
    if ctx.fabric == "infiniband" and ctx.spec.infiniband.sharp:
        env.append({"name": "NCCL_COLLNET_ENABLE", "value": "1"})
    return env


SHM_VOLUME = {"name": "dshm", "emptyDir": {"medium": "Memory"}}
"""Memory-backed /dev/shm (no size limit: it counts against the pod's memory)."""


def full_node_pod_spec(
    ctx: RenderContext, name: str, image: str, command: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metadata annotations, pod spec) of a pod with every rail and every GPU of a server."""
    networks, devices = pod_networks(ctx)
    limits: dict[str, Any] = {"nvidia.com/gpu": ctx.spec.gpus_per_node, **devices}
    container = {
        "name": name,
        "image": image,
        "command": command,
        "env": pod_env(ctx),
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "resources": {"limits": limits, "requests": dict(limits)},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
    }
    annotations = {"k8s.v1.cni.cncf.io/networks": ",".join(networks)}
    return annotations, {"containers": [container], "volumes": [dict(SHM_VOLUME)]}


def training_pod(ctx: RenderContext) -> dict[str, Any]:
    """A sample pod with every rail attached and every GPU of one server."""
    annotations, spec = full_node_pod_spec(ctx, "trainer", TRAINING_IMAGE, ["sleep", "infinity"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{ctx.spec.name}-nccl-sample",
            "namespace": WORKLOAD_NAMESPACE,
            "annotations": annotations,
        },
        "spec": {"restartPolicy": "Never", **spec},
    }


def _launcher_script(ctx: RenderContext, expected: float | None) -> str:
    ranks = ctx.plan.nodes * ctx.spec.gpus_per_node
    env = " ".join(f"-x {e['name']}" for e in pod_env(ctx))
    run = (
        f"mpirun --allow-run-as-root -np {ranks} --bind-to none {env} "
        f"{NCCL_TESTS_PATH}/all_reduce_perf -b {ACCEPTANCE_SIZE} -e {ACCEPTANCE_SIZE} "
        "-g 1 -n 20 -w 5 | tee /tmp/nccl.out"
    )
    if expected is None:
        return f"set -euo pipefail\n{run}\n"
    floor = pass_floor(expected)
    return (
        "set -euo pipefail\n"
        f"{run}\n"
        "got=$(awk '/# Avg bus bandwidth/ {print $NF}' /tmp/nccl.out)\n"
        f'echo "bus bandwidth $got GB/s; expected {expected:g}, pass at >= {floor:g}"\n'
        f"awk -v got=\"$got\" 'BEGIN {{ exit (got + 0 >= {floor:g}) ? 0 : 1 }}'\n"
    )


def mpijob(ctx: RenderContext) -> dict[str, Any]:
    """The nccl-tests acceptance MPIJob: one worker per server, one rank per GPU."""
    expected = acceptance_busbw(ctx)
    image = acceptance_image(ctx)
    annotations, worker = full_node_pod_spec(ctx, "worker", image, ["/usr/sbin/sshd", "-De"])
    meta_ann = {"fabric-stack/expected-busbw-gbs": f"{expected:g}" if expected else "n/a"}
    launcher = {
        "name": "launcher",
        "image": image,
        "command": ["bash", "-c", _launcher_script(ctx, expected)],
        "env": pod_env(ctx),
    }
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {
            "name": f"{ctx.spec.name}-nccl-acceptance",
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
                    "replicas": ctx.plan.nodes,
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
            "The pod's eth0 carries NCCL's bootstrap sockets.",
            f"Source: {sources.NCCL_ENV}",
        ],
        [(["The pod."], training_pod(ctx))],
    )
    expected = acceptance_busbw(ctx)
    target = (
        f"expected {expected:g} GB/s (the plan's estimate), pass at >= "
        f"{pass_floor(expected):g} GB/s ({ACCEPTANCE_SHARE:.0%})."
        if expected
        else "no target: fewer than 2 GPUs."
    )
    job = yaml_documents(
        [
            f"nccl-tests acceptance for {ctx.spec.name}: all_reduce_perf at {ACCEPTANCE_SIZE}",
            "on all",
            f"{ctx.plan.nodes:,} servers x {ctx.spec.gpus_per_node} GPUs; bus bandwidth {target}",
            gen,
            f"The image ({acceptance_image(ctx)}) is yours to build: OpenMPI + sshd and",
            f"nccl-tests built with MPI=1 in {NCCL_TESTS_PATH} (see README.md).",
            f"Source: {sources.NCCL_TESTS}",
            f"CRD: {sources.MPI_OPERATOR} (manifests/base/kubeflow.org_mpijobs.yaml)",
        ],
        [(["The acceptance job."], mpijob(ctx))],
    )
    return [("training-pod.yaml", pod), ("nccl-tests-mpijob.yaml", job), ("README.md", readme(ctx))]


def render(ctx: RenderContext) -> list[Artifact]:
    """Every file of the target (see the module docstring)."""
    if ctx.k8s_rdma == "ipoib" and ctx.fabric != "infiniband":
        raise TargetMismatchError(
            TARGET, f"--k8s-rdma ipoib needs InfiniBand, not {ctx.fabric}", "sriov or host-device"
        )
    path = (
        [*sriov_files(ctx), *sriov_ipam_files(ctx)] if ctx.k8s_rdma == "sriov" else netop_files(ctx)
    )
    return [Artifact(TARGET, f"kubernetes/{n}", c) for n, c in [*path, *_common_files(ctx)]]


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    ipam = [p.removeprefix("kubernetes/") for p in k8s_ipam.files(ctx)]
    sriov = [*SRIOV_FILES, *ipam]
    path = sriov if ctx.k8s_rdma == "sriov" else ["nic-cluster-policy.yaml", netop_file(ctx)]
    return [
        f"kubernetes/{n}"
        for n in [*path, "training-pod.yaml", "nccl-tests-mpijob.yaml", "README.md"]
    ]


__all__ = ["acceptance_busbw", "files", "mpijob", "pod_env", "render", "training_pod"]
