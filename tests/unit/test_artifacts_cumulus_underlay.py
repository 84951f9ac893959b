"""`render cumulus` underlay: NVUE BGP, addresses and lossless extras follow the underlay plan."""

from __future__ import annotations

import re

from fabric_stack.artifacts import cumulus, frr
from tests.golden_artifacts import context, seed_context

VRF = "nv set vrf default router bgp"


def _nvue(ctx: object) -> dict[str, str]:
    return {a.path: a.content for a in cumulus.render(ctx)}  # type: ignore[arg-type]


def test_every_switch_carries_its_underlay_from_the_plan() -> None:
    ctx = seed_context("roce-2su")
    u = ctx.underlay
    nvue = _nvue(ctx)
    for name, s in u.switches.items():
        text = nvue[f"cumulus/{name}.nvue.sh"]
        assert f"nv set router bgp autonomous-system {s.asn}\n" in text
        assert f"nv set router bgp router-id {s.router_id}\n" in text
        assert f"nv set interface lo ip address {s.loopback}/32\n" in text
        ports = sorted(p for p, _ in u.links_of(name))
        neighbours = sorted(re.findall(rf"^{VRF} neighbor (\S+) type unnumbered$", text, re.M))
        assert neighbours == ports  # one unnumbered session per fabric port, no more
        originated = re.findall(rf"^{VRF} address-family ipv4-unicast network (\S+)$", text, re.M)
        assert originated == [f"{s.loopback}/32", *(b.subnet for b in u.blocks_of(name))]
        # The same blocks and ASN as the FRR rendering of the same plan.
        conf = next(a.content for a in frr.render(ctx) if a.path == f"frr/{name}.conf")
        assert f"router bgp {s.asn}\n" in conf
        for b in u.blocks_of(name):
            assert f"  network {b.subnet}\n" in conf


def test_leaf_gateway_on_a_local_rail_vlan() -> None:
    ctx = seed_context("roce")
    u = ctx.underlay
    text = _nvue(ctx)["cumulus/su1-r3-leaf.nvue.sh"]
    (block,) = u.blocks_of("su1-r3-leaf")
    vid = ctx.spec.rail_vlan(3)
    plen = block.subnet.split("/")[1]
    assert f"nv set interface vlan{vid} ip address {block.gateway}/{plen}\n" in text
    # The SVI's MTU is NVUE's to set: frr.conf cannot (FRR has no interface mtu, #26).
    assert f"nv set interface vlan{vid} link mtu {u.mtu}\n" in text
    access = re.findall(
        rf"^nv set interface (\S+) bridge domain br_default access {vid}$", text, re.M
    )
    assert access == [h.leaf_port for h in u.hosts_of("su1-r3-leaf")]
    spine = _nvue(ctx)["cumulus/spine-01.nvue.sh"]
    assert "bridge domain" not in spine and "nv set interface vlan" not in spine


def test_p2p31_hosts_and_fabric_links() -> None:
    ctx = context(
        {
            "fabric": "roce",
            "switch": "sn5600",
            "underlay": {"host_addressing": "p2p31", "fabric_links": "p2p31", "bfd": True},
        }
    )
    u = ctx.underlay
    nvue = _nvue(ctx)
    leaf = nvue["cumulus/su1-r1-leaf.nvue.sh"]
    for h in u.hosts_of("su1-r1-leaf"):
        assert f"nv set interface {h.leaf_port} ip address {h.gateway}/31\n" in leaf
    (block,) = u.blocks_of("su1-r1-leaf")
    assert f"aggregate-route {block.subnet} summary-only on\n" in leaf
    assert "redistribute connected enable on" in leaf and "bridge domain" not in leaf
    assert "summary-only on: UNVERIFIED" in leaf and "bfd enable on: UNVERIFIED" in leaf
    for port, lk in u.links_of("su1-r1-leaf"):
        mine, peer = (lk.a_address, lk.b_address)
        if lk.a_device != "su1-r1-leaf":
            mine, peer = peer, mine
        assert f"nv set interface {port} ip address {mine}/31\n" in leaf
        assert f"{VRF} neighbor {peer} type numbered\n" in leaf
        assert f"{VRF} neighbor {peer} bfd enable on\n" in leaf


def test_lossless_extras_on_every_port() -> None:
    ctx = seed_context("roce-2su")
    nvue = _nvue(ctx)
    for name, ports in ctx.compute_ports.items():
        text = nvue[f"cumulus/{name}.nvue.sh"]
        labels = [label for _, label, _ in ports]
        assert re.findall(r"^nv set interface (\S+) link state up$", text, re.M) == labels
        assert re.findall(r"^nv set interface (\S+) qos pfc-watchdog$", text, re.M) == labels
        profiles = dict(re.findall(r"^nv set interface (\S+) qos pfc profile (\S+)$", text, re.M))
        assert sorted(profiles) == sorted(labels)  # every port in exactly one class
        for link in ctx.topo.links_of("node_leaf", "leaf_spine"):
            if link.b_device == name:
                want = "pfc-hosts" if link.role == "node_leaf" else "pfc-leaf-spine"
                assert re.fullmatch(rf"{want}-\d+m", profiles[link.b_port])
        fabric = sorted(p for p, _ in ctx.underlay.links_of(name))
        ar = re.findall(r"^nv set interface (\S+) router adaptive-routing enable on$", text, re.M)
        assert sorted(ar) == fabric
        assert "nv set router adaptive-routing enable on\n" in text
        assert "UNVERIFIED" in text  # the watchdog's 5.12 page and the reach classes


def test_lossy_tier_gets_no_pfc_profiles_and_wide_ecmp_is_capped() -> None:
    ctx = context(
        {
            "fabric": "roce",
            "switch": "sn5600",
            "roce": {"overrides": {"spine": {"pfc_priorities": []}}},
            "underlay": {"maximum_paths": 200},
        }
    )
    nvue = _nvue(ctx)
    spine, leaf = nvue["cumulus/spine-01.nvue.sh"], nvue["cumulus/su1-r1-leaf.nvue.sh"]
    assert "pfc-watchdog" not in spine and "qos pfc profile" not in spine
    assert "qos pfc-watchdog" in leaf
    assert f"{VRF} address-family ipv4-unicast multipaths ebgp 128\n" in leaf
    assert "the spec's 200 exceeds NVUE's 128" in leaf.replace("\n# ", " ")
