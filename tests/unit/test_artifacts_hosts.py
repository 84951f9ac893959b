"""`render hosts`: per-rail addresses, tables and source rules per server, netplan == ip script."""

from __future__ import annotations

import ipaddress
import re

import yaml

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.artifacts import RenderContext, render_artifacts
from fabric_stack.artifacts._base import ETHERNET_NETDEV_UNVERIFIED, netdev_of
from tests.golden_artifacts import seed_artifacts, seed_context


def test_netplan_and_ip_script_say_the_same() -> None:
    ctx = seed_context("roce-2su")
    arts = seed_artifacts("roce-2su")
    for server in ("su1-node01", "su2-node16"):
        plan = yaml.safe_load(arts[f"hosts/{server}.netplan.yaml"])["network"]["ethernets"]
        script = arts[f"hosts/{server}.sh"]
        mine = [h for h in ctx.underlay.hosts if h.server == server]
        assert sorted(plan) == sorted(netdev_of(ctx, h.nic) for h in mine)
        for h in mine:
            nic = plan[netdev_of(ctx, h.nic)]
            assert nic["addresses"] == [f"{h.address}/{h.prefixlen}"]
            rule = nic["routing-policy"][0]
            assert rule["from"] == h.address
            assert f"rule add from {h.address} table {rule['table']} " in script
            via = next(r for r in nic["routes"] if "via" in r)
            assert f"route add {via['to']} via {via['via']}" in script
            # the rail route covers every other leaf's block of that rail
            others = [b for b in ctx.underlay.blocks if b.rail == h.rail and b.leaf != h.leaf]
            assert others and all(
                ipaddress.ip_network(b.subnet).subnet_of(ipaddress.ip_network(via["to"]))
                for b in others
            )


def test_netplan_text_is_the_netplan_document() -> None:
    from fabric_stack.artifacts.hosts import netplan

    ctx = seed_context("roce-2su")
    text = seed_artifacts("roce-2su")["hosts/su2-node03.netplan.yaml"]
    assert yaml.safe_load(text) == netplan(ctx, "su2-node03")


def test_every_rail_nic_has_its_own_table() -> None:
    script = seed_artifacts("roce")["hosts/su1-node01.sh"]
    tables = re.findall(r"^rule add from \S+ table (\d+)", script, re.M)
    assert len(tables) == len(set(tables)) == 8


def _hosts(spec: dict[str, object], netdevs: dict[str, str] | None = None) -> dict[str, str]:
    ctx = RenderContext.from_topology(
        build_topology(size_fabric(validate_spec(spec))), None, netdevs
    )
    return {a.path: a.content for a in render_artifacts("hosts", ctx)}


def test_host_files_never_name_rdma_devices() -> None:
    # `ip link set dev mlx5_0` fails on a real host (Cannot find device "mlx5_0") and a
    # netplan `mlx5_0:` stanza matches nothing: RDMA device names are not netdevs (#26).
    for spec in (
        {"fabric": "roce", "switch": "sn5600"},
        {"fabric": "ethernet", "switch": "sn5600"},
    ):
        for path, text in _hosts(spec).items():
            # The NIC QoS script names the RDMA device where an RDMA tool takes one:
            # cma_roce_tos -d <device>, and its comments; never as an interface.
            lines = [
                ln for ln in text.splitlines() if not ln.startswith(("#", "cma_roce_tos -d mlx5_"))
            ]
            assert "mlx5_" not in "\n".join(lines), path


def test_dgx_h100_roce_hosts_use_the_profiles_ethernet_names_marked_unverified() -> None:
    files = _hosts({"fabric": "roce", "switch": "sn5600", "node_profile": "dgx-h100"})
    plan = yaml.safe_load(files["hosts/su1-node01.netplan.yaml"])["network"]["ethernets"]
    assert list(plan)[:2] == ["enp24s0np0", "enp64s0np0"] and len(plan) == 8
    script = files["hosts/su1-node01.sh"]
    assert "link set dev enp220s0np0 mtu" in script
    assert ETHERNET_NETDEV_UNVERIFIED in script
    assert ETHERNET_NETDEV_UNVERIFIED in files["hosts/su1-node01.netplan.yaml"]


def test_placeholders_are_loud_and_netdevs_csv_wins() -> None:
    spec = {"fabric": "roce", "switch": "sn5600"}
    placeholder = _hosts(spec)["hosts/su1-node01.sh"]
    assert "link set dev rail1 mtu" in placeholder and "WARNING: rail netdev names" in placeholder
    given = {f"mlx5_{i}": f"ens{i}f0np0" for i in range(8)}
    real = _hosts(spec, given)["hosts/su1-node01.sh"]
    assert "link set dev ens0f0np0 mtu" in real and "WARNING" not in real
