"""The RoCE twin's host side against its switch side, per link (issue #46).

``render hosts`` gives each rail NIC the underlay's MTU (``ip_commands``, which the
twin applies in every server namespace); the switches give each port the MTU of their
QoS config (:class:`~fabric_stack.intent.switch_config.QosConfig`), which the twin sets
on the leaf's end of every host cable (:func:`apply_switch_mtu`), as the NOS would. A
host whose MTU exceeds its leaf port's drops (or has dropped) every full-size RoCE frame:
``twin check`` reads both ends of every host link back from the kernel
(:func:`host_link_report`) and lists each link where they disagree with each other or
with the plan.

The other host settings of the NIC QoS script (DSCP trust, PFC, ECN, the RDMA-CM ToS)
live in the NIC firmware and in ``/sys/kernel/config/rdma_cm`` (``default_roce_tos``),
which exist only with an RDMA device. The twin's hosts are veths without one, so
:func:`rdma_cm_tos` reports whether the kernel here exposes the RDMA-CM configfs and the
twin applies no ToS where it does not (UNVERIFIED on hardware).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabric_stack.artifacts._base import RenderContext
from fabric_stack.twin.model import TwinState
from fabric_stack.twin.runtime import netns_name, run

RDMA_CM_CONFIGFS = Path("/sys/kernel/config/rdma_cm")
"""The RDMA-CM configfs (Linux ``drivers/infiniband/core/cma_configfs.c``): per device
``ports/N/default_roce_tos``, which ``cma_roce_tos`` writes."""


def _ns(state: TwinState, device: str) -> str:
    return netns_name(state.tag, device)


def switch_mtus(ctx: RenderContext) -> dict[str, int]:
    """Port MTU per leaf, from its typed switch config (what the NOS applies)."""
    by_name = {sw.name: sw for sw in ctx.compute_switches()}
    leaves = {h.leaf for h in ctx.underlay.hosts}
    return {
        leaf: ctx.switch_config(by_name[leaf], routed=False).qos.mtu
        for leaf in sorted(leaves)
        if leaf in by_name
    }


def apply_switch_mtu(ctx: RenderContext, state: TwinState, leaves: set[str] | None = None) -> int:
    """Set the host ports of ``leaves`` (default: every leaf) to the switch config's MTU.

    With ``leaves`` given (re-wiring after a fault), a port that a fault has unplugged does
    not exist: each line is applied with ``-force`` and a missing port is not an error
    (the CI run where ``fault unplug`` then failed on "Command failed -:1"). Returns the
    number of port lines sent.
    """
    mtus = switch_mtus(ctx)
    by_leaf: dict[str, list[str]] = {}
    for h in ctx.underlay.hosts:
        if h.leaf in mtus and (leaves is None or h.leaf in leaves):
            by_leaf.setdefault(h.leaf, []).append(f"link set dev {h.leaf_port} mtu {mtus[h.leaf]}")
    force = leaves is not None
    for leaf, lines in by_leaf.items():
        argv = ["ip", *(["-force"] if force else []), "-n", _ns(state, leaf), "-batch", "-"]
        run(argv, stdin="\n".join(lines) + "\n", check=not force)
    return sum(len(v) for v in by_leaf.values())


def link_mtus(state: TwinState, device: str) -> dict[str, int]:
    """Interface → MTU in ``device``'s namespace, as the kernel reports it."""
    res = run(["ip", "-j", "-n", _ns(state, device), "link", "show"], timeout=20, check=False)
    try:
        return {i["ifname"]: int(i["mtu"]) for i in json.loads(res.stdout or "[]")}
    except (ValueError, KeyError):
        return {}


def host_link_report(ctx: RenderContext, state: TwinState, down: tuple[str, ...]) -> dict[str, Any]:
    """Both ends of every host link against each other and the plan (module docstring)."""
    planned_host = ctx.underlay.mtu
    planned_switch = switch_mtus(ctx)
    seen: dict[str, dict[str, int]] = {}
    wrong: list[dict[str, Any]] = []
    links = 0
    for h in ctx.underlay.hosts:
        if h.server in down or h.leaf in down:
            continue
        links += 1
        for dev in (h.server, h.leaf):
            if dev not in seen:
                seen[dev] = link_mtus(state, dev)
        host, port = seen[h.server].get(h.nic), seen[h.leaf].get(h.leaf_port)
        want_port = planned_switch.get(h.leaf)
        why = []
        if host != planned_host:
            why.append(f"host MTU {host}, render hosts sets {planned_host}")
        if port != want_port:
            why.append(f"leaf port MTU {port}, the switch config sets {want_port}")
        if host is not None and port is not None and host > port:
            why.append(f"host MTU {host} > leaf port MTU {port}: full-size frames are dropped")
        if why:
            wrong.append(
                {
                    "host": f"{h.server}:{h.nic}",
                    "leaf": f"{h.leaf}:{h.leaf_port}",
                    "host_mtu": host,
                    "leaf_mtu": port,
                    "why": "; ".join(why),
                }
            )
    return {
        "links": links,
        "agree": links - len(wrong),
        "mismatches": wrong[:50],
        "compared": "MTU of both ends of every host link (ip -j link show in each namespace)",
        "rdma_cm_tos": rdma_cm_tos(),
    }


def rdma_cm_tos() -> str:
    """Whether the RDMA-CM ToS can be applied here (module docstring)."""
    if RDMA_CM_CONFIGFS.is_dir():
        return f"{RDMA_CM_CONFIGFS} exists, but the twin's hosts have no RDMA device: not applied"
    return (
        f"not applied: this kernel exposes no {RDMA_CM_CONFIGFS} (configfs/rdma_cm not mounted "
        "or loaded) and the twin's hosts are veths without an RDMA device; the NIC QoS "
        "script's ToS, trust, PFC and ECN are UNVERIFIED on hardware"
    )


__all__ = [
    "RDMA_CM_CONFIGFS",
    "apply_switch_mtu",
    "host_link_report",
    "link_mtus",
    "rdma_cm_tos",
    "switch_mtus",
]
