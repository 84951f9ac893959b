"""`render frr`: one FRR config per fabric switch, derived from the underlay plan."""

from __future__ import annotations

import re

import pytest

from fabric_stack.artifacts import TargetMismatchError, render_artifacts
from tests.golden_artifacts import context, seed_artifacts, seed_context


def _conf(variant: str, switch: str) -> str:
    return seed_artifacts(variant)[f"frr/{switch}.conf"]


def test_every_fabric_switch_has_a_config() -> None:
    ctx = seed_context("roce-2su")
    names = {s.name for s in ctx.topo.switches("leaf", "spine", "core")}
    got = {
        p.removeprefix("frr/").removesuffix(".conf")
        for p in seed_artifacts("roce-2su")
        if p.startswith("frr/")
    }
    assert got == names


def test_neighbour_per_fabric_port_and_peer_asns_from_plan() -> None:
    ctx = seed_context("roce-2su")
    u = ctx.underlay
    for name in ("su2-r3-leaf", "spine-01"):
        conf = _conf("roce-2su", name)
        ports = {p for p, _ in u.links_of(name)}
        assert set(re.findall(r"neighbor (\S+) interface peer-group FABRIC", conf)) == ports
        assert f"router bgp {u.switches[name].asn}\n" in conf
        assert f"bgp router-id {u.switches[name].router_id}\n" in conf
        assert "bgp bestpath as-path multipath-relax" in conf


def test_leaf_originates_its_rail_block_once() -> None:
    u = seed_context("roce-2su").underlay
    seen: dict[str, str] = {}
    for path, text in seed_artifacts("roce-2su").items():
        if path.startswith("frr/"):
            for net in re.findall(r"^  network (\S+)$", text, re.M):
                assert net not in seen, f"{net} originated by {seen.get(net)} and {path}"
                seen[net] = path
    for b in u.blocks:
        assert seen[b.subnet] == f"frr/{b.leaf}.conf"


def test_p2p31_links_and_bfd() -> None:
    ctx = context(
        {"fabric": "roce", "switch": "sn5600", "underlay": {"fabric_links": "p2p31", "bfd": True}}
    )
    confs = {a.path: a.content for a in render_artifacts("frr", ctx)}
    leaf = confs["frr/su1-r1-leaf.conf"]
    assert " neighbor FABRIC bfd" in leaf
    link = ctx.underlay.links_of("su1-r1-leaf")[0][1]
    assert f" ip address {link.a_address}/31" in leaf
    assert f" neighbor {link.b_address} peer-group FABRIC" in leaf
    assert f" ip address {link.b_address}/31" in confs[f"frr/{link.b_device}.conf"]


@pytest.mark.parametrize("variant", ["roce", "roce-2su"])
def test_no_interface_mtu_line(variant: str) -> None:
    """FRR has no interface ``mtu`` command (vtysh: ``% Unknown command``): the NOS sets it."""
    confs = {p: c for p, c in seed_artifacts(variant).items() if p.startswith("frr/")}
    assert confs
    assert not [p for p, c in confs.items() if re.search(r"^\s*mtu\b", c, re.M)]


def test_infiniband_is_a_target_mismatch() -> None:
    with pytest.raises(TargetMismatchError, match="render frr"):
        render_artifacts("frr", seed_context("infiniband"))
