"""`render hosts`: per-rail addresses, tables and source rules per server, netplan == ip script."""

from __future__ import annotations

import ipaddress
import re

import yaml

from tests.golden_artifacts import seed_artifacts, seed_context


def test_netplan_and_ip_script_say_the_same() -> None:
    ctx = seed_context("roce-2su")
    arts = seed_artifacts("roce-2su")
    for server in ("su1-node01", "su2-node16"):
        plan = yaml.safe_load(arts[f"hosts/{server}.netplan.yaml"])["network"]["ethernets"]
        script = arts[f"hosts/{server}.sh"]
        mine = [h for h in ctx.underlay.hosts if h.server == server]
        assert sorted(plan) == sorted(h.nic for h in mine)
        for h in mine:
            nic = plan[h.nic]
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
