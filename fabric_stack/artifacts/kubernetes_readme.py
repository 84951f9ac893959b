"""``kubernetes/README.md``: prerequisites, apply order and checks for the rendered manifests."""

from __future__ import annotations

from fabric_stack.artifacts import k8s_ipam, sources
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    RenderContext,
    netdev_of,
    netdevs_are_placeholders,
)
from fabric_stack.artifacts.acceptance import (
    ACCEPTANCE_SHARE,
    acceptance_busbw,
    acceptance_image,
    pass_floor,
)
from fabric_stack.artifacts.kubernetes import (
    OPERATOR_NAMESPACE,
    TARGET,
    networks_of,
    nic_of,
)
from fabric_stack.topology.scheduler_labels import SU


def _prereqs(ctx: RenderContext) -> list[str]:
    rdma = ctx.fabric != "ethernet"
    out = [
        f"- **Multus CNI** (meta-plugin attaching the rail networks): {sources.MULTUS}",
        f"- **Whereabouts IPAM** (every rail network uses it): {sources.WHEREABOUTS}",
    ]
    if ctx.k8s_rdma == "sriov":
        out.append(
            f"- **SR-IOV Network Operator** in namespace `{OPERATOR_NAMESPACE}` (standalone, "
            f"or deployed by the NVIDIA Network Operator): {sources.SRIOV_OPERATOR}; "
            "SR-IOV enabled in the server BIOS and NIC firmware (`SRIOV_EN`, `NUM_OF_VFS`)."
        )
        if rdma:
            out.append(
                "- **RDMA CNI** (the `rdma` meta-plugin, shipped with the operator): "
                + sources.RDMA_CNI
            )
        if ctx.fabric == "infiniband":
            out.append(
                "- InfiniBand VFs need virtualization enabled in the subnet manager "
                "(see `infiniband/`), and a GUID per VF: ib-kubernetes or the "
                "`infiniband-guid` network annotation."
            )
    else:
        out.append(
            f"- **NVIDIA Network Operator** ({ctx.k8s_rdma} path): {sources.NETWORK_OPERATOR}"
        )
    out.append(
        "- **NVIDIA GPU Operator with GPUDirect RDMA** (`driver.rdma.enabled=true`: "
        "nvidia-peermem, or DMA-BUF on recent kernels), so NCCL moves data GPU↔NIC without a "
        f"host copy: {sources.GPU_OPERATOR_RDMA}"
    )
    if rdma:
        out.append("- Host RDMA stack (DOCA-OFED / MLNX_OFED or inbox rdma-core) on every server.")
    out.append(
        "- **Kubeflow MPI Operator** (MPIJob `kubeflow.org/v2beta1`) for the acceptance job: "
        + sources.MPI_OPERATOR
    )
    return out


def _order(ctx: RenderContext) -> list[str]:
    nets = networks_of(ctx)
    per = "one per rail per leaf: " if k8s_ipam.routed(ctx) else "one per rail: "
    names = per + ", ".join(n.name for n in nets[:3]) + (" …" if len(nets) > 3 else "")
    steps = []
    if k8s_ipam.routed(ctx):
        steps.append(
            "sh ../k8s-topology/labels.sh   # node labels: the pods select their SU by "
            f"{SU} (render k8s-topology)"
        )
    if ctx.k8s_rdma == "sriov":
        steps += [
            "kubectl apply -f sriov-network-pool-config.yaml   # reboots the selected nodes",
            "kubectl apply -f sriov-node-policies.yaml",
            f"kubectl apply -f sriov-networks.yaml   # {names}",
            "#   (OR network-attachment-definitions.yaml: the same networks as NADs)",
        ]
    else:
        net = "ipoib-networks.yaml" if ctx.k8s_rdma == "ipoib" else "host-device-networks.yaml"
        steps += ["kubectl apply -f nic-cluster-policy.yaml", f"kubectl apply -f {net}   # {names}"]
    job = f"{ctx.spec.name}-nccl-acceptance"
    if k8s_ipam.routed(ctx):
        job += "-su1"
    return [
        *steps,
        "kubectl apply -f training-pod.yaml    # optional: a pod to poke around in",
        "kubectl apply -f nccl-tests-mpijob.yaml",
        f"kubectl logs -f job/{job}-launcher   # exits 1 below target",
    ]


def _networks(ctx: RenderContext) -> list[str]:
    """The pod networks section: how pods get rail addresses without taking a host's."""
    if not k8s_ipam.routed(ctx):
        return [
            "One network per rail over the rail's planned subnet (whereabouts); every pod "
            "attaches all of them.",
        ]
    return [
        "The routed underlay gives each leaf its own block of every rail subnet, with the "
        "leaf as gateway. A pod's VF sits behind the same leaf as its server, so it needs an "
        "address in that leaf's block: there is one network per rail **per leaf** "
        "(`railK-suS`), whose whereabouts range is the block with the leaf gateway and every "
        "server's own rail address excluded, and a route to the whole rail subnet via the "
        "leaf. Whereabouts cannot pick a range by node, so the sample pod and the acceptance "
        f"MPIJob come **one per SU**: each selects its SU's nodes (`nodeSelector` `{SU}`, "
        "set by `k8s-topology/labels.sh`) and attaches that SU's networks. Every network's "
        "allocation was simulated at render time in whereabouts' order (lowest free address "
        "first) for every VF of every server behind the leaf; no address is a gateway's, a "
        "host's or another pod's (the file comments give the figures).",
    ]


def readme(ctx: RenderContext) -> str:
    """The README's Markdown."""
    expected = acceptance_busbw(ctx)
    rails = "\n".join(
        f"| {r.name} | `{nic_of(ctx, r)}` | `{netdev_of(ctx, nic_of(ctx, r))}` | {r.subnet} |"
        for r in ctx.intent.rails
    )
    names = (
        "**The PF netdev names above are placeholders** (`railN`): they match nothing unless the "
        "servers rename their rail interfaces so. Pass the real names with "
        "`fabric-stack render kubernetes --netdevs nic,netdev.csv`."
        if netdevs_are_placeholders(ctx)
        else "PF netdev names from `--netdevs` (or the server profile)."
    )
    target = (
        f"expected **{expected:g} GB/s** bus bandwidth (all-reduce, whole cluster, the plan's "
        f"estimate); the launcher exits 1 below {pass_floor(expected):g} GB/s "
        f"({ACCEPTANCE_SHARE:.0%})."
        if expected
        else "no bandwidth target (fewer than 2 GPUs)."
    )
    parts = [
        f"# Kubernetes RDMA networking for {ctx.spec.name}",
        "",
        f"{GENERATED_BY.format(target=TARGET)} Path: `--k8s-rdma {ctx.k8s_rdma}`.",
        "",
        "## Prerequisites",
        "",
        *_prereqs(ctx),
        "",
        "## Rails",
        "",
        "| Rail | RDMA device | PF netdev | Subnet |",
        "|---|---|---|---|",
        rails,
        "",
        names,
        "",
        "## Pod networks",
        "",
        *_networks(ctx),
        "",
        "## Apply",
        "",
        "```sh",
        *_order(ctx),
        "```",
        "",
        "## Acceptance",
        "",
        "`nccl-tests-mpijob.yaml` runs all_reduce_perf on every server"
        + (" (one MPIJob per SU, on that SU's networks)" if k8s_ipam.routed(ctx) else "")
        + f": {target}",
        f"Its image `{acceptance_image(ctx)}` is yours to build (OpenMPI, sshd, nccl-tests with "
        "`MPI=1` in /opt/nccl-tests/build), e.g. FROM the NGC PyTorch image.",
        "",
    ]
    return "\n".join(parts)


__all__ = ["readme"]
