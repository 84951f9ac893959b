"""`render hosts`: per server, the rail NICs' addresses, per-rail routing tables and rules.

Every rail NIC of a server sits in a different subnet behind a different leaf.
With one main routing table, replies and traffic to another SU's leaf leave by
whichever NIC owns the default or first route: the classic multi-NIC RoCE
pitfall (RDMA CM resolves the path with the kernel's routing). So each rail NIC
gets its own table (``underlay.route_table_base + k``) holding its connected
block and a route to the whole rail subnet (every other leaf's block of that
rail) via its leaf, and ``ip rule from <addr> table <n>`` makes traffic sourced
from that address use it. The main table only has the connected blocks.

Two equivalent files per server: ``hosts/<server>.netplan.yaml`` (netplan
``routes``/``routing-policy`` with ``table``, https://netplan.readthedocs.io/en/stable/netplan-yaml/)
and ``hosts/<server>.sh`` (the same as ``ip -batch`` commands; the twin applies
exactly these). On RoCEv2 a third, ``hosts/<server>.roce-qos.sh``, sets the NICs' side of
the lossless profile (:mod:`.hosts_roce`). Interfaces are named by
:func:`~fabric_stack.artifacts._base.netdev_of`,
the lookup Kubernetes uses: ``--netdevs``, else the server profile's netdev (its
Ethernet-mode name on RoCE, UNVERIFIED), else the ``railN`` placeholder. RDMA device
names (``mlx5_0``) are never interface names: ``ip link set dev mlx5_0`` fails with
``Cannot find device "mlx5_0"`` and netplan matches nothing. When a name is a placeholder
or derived, both files carry :func:`~fabric_stack.artifacts._base.netdev_warning` (and
``render`` prints it on stderr).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from fabric_stack.artifacts import hosts_roce
from fabric_stack.artifacts._base import (
    GENERATED_BY,
    Artifact,
    RenderContext,
    netdev_of,
    netdev_warning,
    require_routed,
)
from fabric_stack.underlay.plan import HostPort

TARGET = "hosts"

RULE_PRIORITY = 1000
"""Priority of the per-rail source rules (before the main table's 32766)."""


def rail_subnet(ctx: RenderContext, h: HostPort) -> str:
    """The whole rail subnet (all leaves' blocks of this rail and plane)."""
    compute = ctx.topo.networks[[n.name for n in ctx.topo.networks].index("compute")]
    idx = (h.plane - 1) * ctx.plan.rails + h.rail - 1 if h.plane else h.rail - 1
    return compute.subnets[idx]


def _servers(ctx: RenderContext) -> list[str]:
    return list(dict.fromkeys(h.server for h in ctx.underlay.hosts))


def _block(h: HostPort) -> str:
    """The subnet of a host port: the same as its gateway's (leaf block or /31 pair)."""
    return _network(h.gateway, h.prefixlen)


@lru_cache(maxsize=65536)  # one parse per leaf block, not per host port
def _network(address: str, prefixlen: int) -> str:
    return str(ipaddress.ip_interface(f"{address}/{prefixlen}").network)


def ip_commands(
    ctx: RenderContext, server: str, name: Callable[[str], str] | None = None
) -> list[str]:
    """``ip -batch`` lines that give one server its rail addressing.

    ``name`` maps an RDMA device to the interface to configure (default
    :func:`netdev_of`); the twin passes the identity, because its server namespaces
    name their veth ends by RDMA device (see ``fabric_stack/twin/ops_eth.py``).
    """
    mtu = ctx.underlay.mtu
    out = []
    for h in ctx.underlay.hosts_of(server):
        dev = name(h.nic) if name else netdev_of(ctx, h.nic)
        out += [
            f"link set dev {dev} mtu {mtu} up",
            f"address add {h.address}/{h.prefixlen} dev {dev}",
            f"route add {_block(h)} dev {dev} src {h.address} table {h.table}",
            f"route add {rail_subnet(ctx, h)} via {h.gateway} dev {dev} table {h.table}",
            f"rule add from {h.address} table {h.table} priority {RULE_PRIORITY + h.table}",
        ]
    return out


def netplan(ctx: RenderContext, server: str) -> dict[str, Any]:
    """The netplan document of one server (same content as :func:`ip_commands`)."""
    eths: dict[str, Any] = {}
    for h in ctx.underlay.hosts_of(server):
        eths[netdev_of(ctx, h.nic)] = {
            "mtu": ctx.underlay.mtu,
            "addresses": [f"{h.address}/{h.prefixlen}"],
            "routes": [
                {"to": _block(h), "scope": "link", "table": h.table},
                {"to": rail_subnet(ctx, h), "via": h.gateway, "table": h.table},
            ],
            "routing-policy": [
                {"from": h.address, "table": h.table, "priority": RULE_PRIORITY + h.table}
            ],
        }
    return {"network": {"version": 2, "ethernets": eths}}


def netplan_text(doc: dict[str, Any]) -> str:
    """Block-style YAML of a netplan document with flow-style leaves (one line per route/rule).

    PyYAML's representer takes ~6 ms per server; 4,096 servers are rendered here
    with plain formatting of the fixed shape :func:`netplan` returns. Tests load
    the output back with ``yaml.safe_load`` and compare it with :func:`netplan`.
    """
    lines = ["network:", "  version: 2", "  ethernets:"]
    for nic, cfg in doc["network"]["ethernets"].items():
        lines.append(f"    {nic}:")
        lines.append(f"      mtu: {cfg['mtu']}")
        lines.append(f"      addresses: [{', '.join(cfg['addresses'])}]")
        for key in ("routes", "routing-policy"):
            lines.append(f"      {key}:")
            for item in cfg[key]:
                body = ", ".join(f"{k}: {v}" for k, v in item.items())
                lines.append(f"        - {{{body}}}")
    return "\n".join(lines) + "\n"


def files(ctx: RenderContext) -> list[str]:
    """The paths :func:`render` writes."""
    require_routed(ctx)
    servers = _servers(ctx)
    own = [f"hosts/{s}.{ext}" for s in servers for ext in ("netplan.yaml", "sh")]
    return own + hosts_roce.files(ctx, servers)


def render(ctx: RenderContext) -> list[Artifact]:
    """Netplan YAML and an equivalent ip script per server."""
    require_routed(ctx)
    out = []
    head = f"# {GENERATED_BY.format(target=TARGET)}\n"
    if warning := netdev_warning(ctx):  # in the file too: it outlives the render's stderr
        head += f"# {warning}\n"
    for server in _servers(ctx):
        doc = netplan_text(netplan(ctx, server))
        out.append(Artifact(TARGET, f"hosts/{server}.netplan.yaml", head + doc))
        script = "".join(f"{line}\n" for line in ip_commands(ctx, server))
        sh = (
            f"#!/bin/sh\n{head}# Rail addressing of {server}: a table and a rule per rail NIC.\n"
            f"set -e\nip -batch - <<'EOF'\n{script}EOF\n"
        )
        out.append(Artifact(TARGET, f"hosts/{server}.sh", sh))
    return out + hosts_roce.render(ctx, _servers(ctx))
