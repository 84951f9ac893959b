"""The acceptance jobs' scopes and expectations: per SU, and across the SUs (the spines).

Each nccl-tests job is judged against :func:`fabric_stack.analysis.estimate.estimate_collective`
for its own servers (``job_hosts``), so a per-SU job's floor is that SU's figure and a job
spanning SUs carries the leaf-spine tier's (and, with pods, the core's) figure.

On a routed underlay (RoCE/Ethernet) a pod's rail networks are per leaf, so an MPIJob's one
Worker template cannot span SUs with them (:mod:`.kubernetes_bundle`). The cross-SU jobs
therefore run in the hosts' network namespace (``hostNetwork``, privileged for the host's
``/dev/infiniband``): the rail NICs are the physical functions with the addresses, per-rail
tables and NIC QoS of ``render hosts``, and NCCL takes ``nccl/<fabric>.env``'s variables.
One all-reduce and one all-to-all over every server, so both patterns cross the spines.
"""

from __future__ import annotations

from typing import Any

from fabric_stack.acceptance.results import pass_floor
from fabric_stack.analysis.estimate import estimate_collective, parse_sizes
from fabric_stack.artifacts._base import ACCEPTANCE_SIZE, RenderContext
from fabric_stack.artifacts.acceptance import NCCL_TESTS_PATH, acceptance_image
from fabric_stack.artifacts.kubernetes import WORKLOAD_NAMESPACE
from fabric_stack.artifacts.nccl import nccl_vars
from fabric_stack.errors import SpecError

CROSS_COLLECTIVES: dict[str, str] = {"all_reduce": "all_reduce_perf", "alltoall": "alltoall_perf"}
"""Collective → nccl-tests binary of the jobs that span every SU."""


def su_hosts(ctx: RenderContext, su: int | None) -> tuple[str, ...]:
    """The servers of SU ``su`` (every server for None), in plan order."""
    return tuple(
        d.name for d in ctx.topo.devices if d.role == "server" and (su is None or d.su == su)
    )


def expected_busbw(ctx: RenderContext, collective: str, hosts: tuple[str, ...]) -> float | None:
    """The estimate's bus bandwidth (GB/s) at :data:`ACCEPTANCE_SIZE` for ``collective`` on
    ``hosts``, computed once per context; None when the job has fewer than 2 GPUs."""
    key = ("acceptance_busbw", collective, hosts)
    if key not in ctx.memo:
        try:
            est = estimate_collective(
                ctx.topo, collective, parse_sizes(ACCEPTANCE_SIZE), job_hosts=list(hosts)
            )
            ctx.memo[key] = est.points[-1].busbw_gbs
        except SpecError:
            ctx.memo[key] = None
    value: float | None = ctx.memo[key]
    return value


def spans_sus(ctx: RenderContext) -> bool:
    """True when the plan has more than one SU (so a whole-cluster job crosses the spines)."""
    return len({d.su for d in ctx.topo.devices if d.role == "server"}) > 1


def crossed_tiers(ctx: RenderContext) -> str:
    """The tiers a job over every server crosses: the spines, and the cores with 3 tiers."""
    return "the spines and the cores" if ctx.topo.plan.tiers == 3 else "the spines"


def launcher_script(
    ranks: int, env: list[str], binary: str, expected: float | None, label: str
) -> str:
    """The launcher's bash: run ``binary`` on ``ranks`` ranks, then fail below the floor."""
    exports = " ".join(f"-x {e}" for e in env)
    run = (
        f"mpirun --allow-run-as-root -np {ranks} --bind-to none {exports} "
        f"{NCCL_TESTS_PATH}/{binary} -b {ACCEPTANCE_SIZE} -e {ACCEPTANCE_SIZE} "
        "-g 1 -n 20 -w 5 | tee /tmp/nccl.out"
    )
    if expected is None:
        return f"set -euo pipefail\n{run}\n"
    floor = pass_floor(expected)
    return (
        "set -euo pipefail\n"
        f"{run}\n"
        "got=$(awk '/# Avg bus bandwidth/ {print $NF}' /tmp/nccl.out)\n"
        f'echo "{label}: bus bandwidth $got GB/s; expected {expected:g}, pass at >= {floor:g}"\n'
        f"awk -v got=\"$got\" 'BEGIN {{ exit (got + 0 >= {floor:g}) ? 0 : 1 }}'\n"
    )


def cross_su_job(ctx: RenderContext, collective: str) -> dict[str, Any]:
    """The MPIJob running ``collective`` over every server in the hosts' network namespace."""
    hosts = su_hosts(ctx, None)
    expected = expected_busbw(ctx, collective, hosts)
    image = acceptance_image(ctx)
    gpn = ctx.spec.gpus_per_node
    env = [{"name": v.key, "value": v.value} for v in nccl_vars(ctx)]
    limits = {"nvidia.com/gpu": gpn}

    def container(name: str, command: list[str], gpus: bool) -> dict[str, Any]:
        c: dict[str, Any] = {"name": name, "image": image, "command": command, "env": env}
        if gpus:
            c["securityContext"] = {"privileged": True}
            c["resources"] = {"limits": dict(limits), "requests": dict(limits)}
            c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
        return c

    binary = CROSS_COLLECTIVES[collective]
    script = launcher_script(
        len(hosts) * gpn, [e["name"] for e in env], binary, expected, f"all SUs {collective}"
    )
    worker = {
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "containers": [container("worker", ["/usr/sbin/sshd", "-De"], True)],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
    }
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {
            "name": f"{ctx.spec.name}-nccl-acceptance-all-sus-{collective.replace('_', '')}",
            "namespace": WORKLOAD_NAMESPACE,
            "annotations": {
                "fabric-stack/scope": f"all {len(hosts)} servers, every SU"
                + (
                    f" and pod (crosses {crossed_tiers(ctx)})"
                    if ctx.topo.plan.tiers == 3
                    else f" (crosses {crossed_tiers(ctx)})"
                ),
                "fabric-stack/expected-busbw-gbs": f"{expected:g}" if expected else "n/a",
            },
        },
        "spec": {
            "slotsPerWorker": gpn,
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": 0},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "Never",
                    "template": {
                        "spec": {
                            "hostNetwork": True,
                            "dnsPolicy": "ClusterFirstWithHostNet",
                            "containers": [container("launcher", ["bash", "-c", script], False)],
                        }
                    },
                },
                "Worker": {"replicas": len(hosts), "template": {"spec": worker}},
            },
        },
    }


def cross_su_note(ctx: RenderContext, collective: str) -> list[str]:
    """The comment above a cross-SU job: its scope and its expectation."""
    hosts = su_hosts(ctx, None)
    expected = expected_busbw(ctx, collective, hosts)
    target = (
        f"expected {expected:g} GB/s, pass at >= {pass_floor(expected):g} GB/s"
        if expected
        else "no target"
    )
    return [
        f"{collective} across every SU ({len(hosts):,} servers): the leaf-spine tier carries",
        f"it; {target} (the plan's estimate for this job). Host network: the rail PFs with",
        "render hosts' addresses, tables and NIC QoS; NCCL variables of nccl/<fabric>.env.",
    ]
