"""`render roce-qos` and `render cumulus`: values from the intent, real NVUE syntax, every port.

The NVUE underlay groups (BGP, PFC headroom/watchdog, adaptive routing) are checked in
tests/unit/test_artifacts_cumulus_underlay.py.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fabric_stack.artifacts import RenderContext, TargetMismatchError, cumulus, roce_qos
from fabric_stack.intent.model import SwitchIntent
from fabric_stack.naming.devices import cage_of
from tests.golden_artifacts import context, seed_context

# The NVUE commands this renderer may emit, as documented in the NVUE command
# reference (QoS, Interface) and the Cumulus Linux 5.12 RoCE / QoS / Switch Port
# Attributes pages. A renderer bug that invents a command fails here.
NVUE_GRAMMAR = [
    r"nv set qos roce mode (lossless|lossy)",
    r"nv set qos mapping default-global trust (l2|l3|both|port)",
    r"nv set qos mapping default-global dscp \d{1,2} switch-priority [0-7]",
    r"nv set qos egress-queue-mapping default-global switch-priority [0-7] traffic-class [0-7]",
    r"nv set qos pfc default-global switch-priority [0-7](,[0-7])*",
    r"nv set qos pfc default-global (tx|rx) enable",
    r"nv set qos congestion-control default-global traffic-class [0-7] ecn (enable|disable)",
    r"nv set qos congestion-control default-global traffic-class [0-7] (min|max)-threshold \d+",
    r"nv set qos congestion-control default-global traffic-class [0-7] probability ([1-9]\d?|100)",
    r"nv set interface swp\d+ link breakout [248]x",
    r"nv set interface swp\d+(s\d)? description [A-Za-z0-9_.-]+",
    # link mtu accepts 552-9216, on a port or a VLAN interface (SVI, the rail gateway)
    r"nv set interface (swp\d+(s\d)?|vlan\d+) link mtu "
    r"(55[2-9]|5[6-9]\d|[6-9]\d\d|[1-8]\d{3}|9[01]\d\d|920\d|921[0-6])",
    r"nv config apply -y",
    r"nv config save",
    # Cumulus 5.12 Interface Configuration and Management: administrative state
    r"nv set interface swp\d+(s\d)? link state up",
    # Basic BGP Configuration + NVUE reference BGP (RFC 7938 underlay)
    r"nv set interface lo ip address 10\.\d+\.\d+\.\d+/32",
    r"nv set interface swp\d+(s\d)? ip address [\d.]+/31",
    r"nv set bridge domain br_default vlan \d+",
    r"nv set interface swp\d+(s\d)? bridge domain br_default access \d+",
    r"nv set interface vlan\d+ ip address [\d.]+/\d+",
    r"nv set router bgp autonomous-system 42\d{8}",
    r"nv set router bgp router-id [\d.]+",
    r"nv set vrf default router bgp neighbor (swp\d+(s\d)?|[\d.]+) remote-as external",
    r"nv set vrf default router bgp neighbor (swp\d+(s\d)?|[\d.]+) type (un)?numbered",
    r"nv set vrf default router bgp path-selection multipath aspath-ignore on",
    r"nv set vrf default router bgp address-family ipv4-unicast multipaths ebgp "
    r"([1-9]\d?|1[01]\d|12[0-8])",
    r"nv set vrf default router bgp address-family ipv4-unicast network [\d.]+/\d+",
    r"nv set vrf default router bgp address-family ipv4-unicast redistribute connected enable on",
    r"nv set vrf default router bgp address-family ipv4-unicast aggregate-route [\d.]+/\d+ "
    r"summary-only on",
    # QoS page: PFC port groups with cable length, PFC watchdog
    r"nv set qos pfc pfc-[a-z-]+-\d+m switch-priority [0-7](,[0-7])*",
    r"nv set qos pfc pfc-[a-z-]+-\d+m (tx|rx) enable",
    r"nv set qos pfc pfc-[a-z-]+-\d+m cable-length \d+",
    r"nv set interface swp\d+(s\d)? qos pfc profile pfc-[a-z-]+-\d+m",
    r"nv set interface swp\d+(s\d)? qos pfc-watchdog",
    # NVUE reference Adaptive Routing (5.14 and earlier: enable on)
    r"nv set router adaptive-routing enable on",
    r"nv set interface swp\d+(s\d)? router adaptive-routing enable on",
]
FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_GRAMMAR = re.compile("^(?:" + "|".join(NVUE_GRAMMAR) + ")$")


def _qos_docs(ctx: RenderContext) -> dict[str, dict[str, Any]]:
    return {a.path: yaml.safe_load(a.content) for a in roce_qos.render(ctx)}


def _switch(ctx: RenderContext, name: str) -> SwitchIntent:
    return next(s for s in ctx.intent.switches if s.name == name)


def test_one_file_per_compute_switch_with_the_intent_values() -> None:
    ctx = seed_context("roce")
    docs = _qos_docs(ctx)
    compute = [s for s in ctx.intent.switches if s.role in ("leaf", "spine", "core")]
    assert sorted(docs) == sorted(f"roce-qos/{s.name}.yaml" for s in compute)
    assert len(docs) == 12
    roce = ctx.spec.roce
    for sw in compute:
        d = docs[f"roce-qos/{sw.name}.yaml"]
        assert d["switch"]["name"] == sw.name and d["switch"]["role"] == sw.role
        assert d["mtu"] == sw.mtu == 9216
        assert d["trust"] == {"dscp": sw.dscp_trust} == {"dscp": True}
        assert d["pfc"]["priorities"] == sw.pfc_priorities == [3]
        assert d["pfc"]["enabled"] and d["pfc"]["rx"] and d["pfc"]["tx"]
        assert d["ecn"]["enabled"] is sw.ecn is True
        assert d["ecn"]["traffic_class"] == 3
        assert d["ecn"]["min_threshold_bytes"] == roce.ecn_min_kb * 1000 == 150_000
        assert d["ecn"]["max_threshold_bytes"] == roce.ecn_max_kb * 1000 == 1_500_000
        assert d["ecn"]["probability_percent"] == 100
        assert d["mappings"]["roce"] == {"dscp": 26, "switch_priority": 3, "traffic_class": 3}
        assert d["mappings"]["cnp"] == {"dscp": 48, "switch_priority": 6, "traffic_class": 6}
        assert {e["carries"]: e["mode"] for e in d["ets"]} == {
            "cnp": "strict",
            "roce": "dwrr",
            "other": "dwrr",
        }


def test_every_compute_port_appears_once_with_its_far_end() -> None:
    ctx = seed_context("roce")
    docs = _qos_docs(ctx)
    expected: dict[str, set[tuple[str, str]]] = {}
    for link in ctx.topo.links_of("node_leaf", "leaf_spine", "spine_core"):
        expected.setdefault(link.b_device, set()).add(
            (link.b_port, f"{link.a_device}:{link.a_port}")
        )
        if link.role != "node_leaf":
            expected.setdefault(link.a_device, set()).add(
                (link.a_port, f"{link.b_device}:{link.b_port}")
            )
    for name, ports in expected.items():
        listed = [(p["port"], p["peer"]) for p in docs[f"roce-qos/{name}.yaml"]["ports"]]
        assert len(listed) == len(set(listed)) == len(ports)
        assert set(listed) == ports
        sw = _switch(ctx, name)
        assert len(listed) == sw.ports_down + sw.ports_up


def test_per_tier_override_lands_on_that_tier_only() -> None:
    ctx = context(
        {
            "fabric": "roce",
            "switch": "sn5600",
            "roce": {"overrides": {"spine": {"mtu": 1500, "pfc_priorities": []}}},
        }
    )
    docs = _qos_docs(ctx)
    for path, d in docs.items():
        if d["switch"]["role"] == "spine":
            assert d["mtu"] == 1500 and d["pfc"] == {
                "enabled": False,
                "priorities": [],
                "rx": False,
                "tx": False,
            }
        else:
            assert d["mtu"] == 9216 and d["pfc"]["priorities"] == [3], path
        # The markings are fabric-wide: an override must not move them.
        assert d["mappings"]["roce"]["switch_priority"] == 3
    nvue = {a.path: a.content for a in cumulus.render(ctx)}
    spine = nvue["cumulus/spine-01.nvue.sh"]
    assert "nv set qos roce mode lossy" in spine and "nv set qos pfc" not in spine
    assert "link mtu 1500" in spine and "link mtu 9216" not in spine
    leaf = nvue["cumulus/su1-r1-leaf.nvue.sh"]
    assert "nv set qos roce mode lossless" in leaf and "link mtu 9216" in leaf


@pytest.mark.parametrize("variant", ["roce"])
def test_nvue_files_use_only_documented_commands(variant: str) -> None:
    ctx = seed_context(variant)
    arts = cumulus.render(ctx)
    assert len(arts) == 12
    for art in arts:
        lines = art.content.splitlines()
        assert lines[0] == "#!/usr/bin/env bash"
        cmds = [ln for ln in lines if ln and not ln.startswith("#") and ln != "set -euo pipefail"]
        bad = [c for c in cmds if not _GRAMMAR.match(c)]
        assert not bad, f"{art.path}: {bad[:3]}"
        assert cmds[0] == "nv set qos roce mode lossless"
        assert cmds[-2:] == ["nv config apply -y", "nv config save"]
        # Every group of commands is preceded by comments, the settings groups by a source URL.
        sources = [ln for ln in lines if ln.startswith("# Source: https://")]
        assert len(sources) >= 6


def test_nvue_ports_breakouts_and_values_match_the_plan() -> None:
    ctx = seed_context("roce")
    nvue = {a.path: a.content for a in cumulus.render(ctx)}
    ppc = ctx.plan.ports_per_cage
    assert ppc == 2  # SN5600 at 400G: 800G cages split 2x
    for name, ports in ctx.compute_ports.items():
        text = nvue[f"cumulus/{name}.nvue.sh"]
        mtu_ports = re.findall(r"^nv set interface (\S+) link mtu 9216$", text, re.M)
        assert mtu_ports == [label for _, label, _ in ports]
        cages = {
            int(c) for c in re.findall(r"^nv set interface swp(\d+) link breakout 2x$", text, re.M)
        }
        assert cages == {cage_of(num, ppc)[0] for num, _, _ in ports}
        for _, label, peer in ports:
            assert re.search(
                rf"^nv set interface {label} description to_{re.escape(peer.replace(':', '_'))}$",
                text,
                re.M,
            )
        assert (
            "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000"
            in text
        )
        assert "nv set qos mapping default-global dscp 26 switch-priority 3" in text
        assert "nv set qos mapping default-global dscp 48 switch-priority 6" in text
        assert "nv set qos pfc default-global switch-priority 3" in text


@pytest.mark.parametrize("target", [roce_qos.render, cumulus.render])
def test_wrong_fabric_is_refused(target: Any) -> None:
    with pytest.raises(
        TargetMismatchError,
        match=r"^render (roce-qos|cumulus): the plan's fabric is "
        r"infiniband, not RoCEv2 \(",
    ):
        target(seed_context("infiniband"))


def test_cumulus_needs_a_cumulus_switch() -> None:
    ctx = context({"fabric": "roce", "switch": "generic-64x400"})
    assert roce_qos.render(ctx)  # vendor-neutral intent still renders
    with pytest.raises(TargetMismatchError) as exc:
        cumulus.render(ctx)
    assert str(exc.value) == (
        "render cumulus: the compute switches (Generic 64 × 400G switch) do not run Cumulus Linux "
        "(plan with a Cumulus switch such as `--switch sn5600`, or use `render roce-qos` for "
        "vendor-neutral intent)"
    )


def test_yaml_round_trip() -> None:
    for art in roce_qos.render(seed_context("roce")):
        loaded = yaml.safe_load(art.content)
        assert yaml.safe_load(yaml.safe_dump(loaded, sort_keys=False)) == loaded
        # Every top-level section carries a comment right above it.
        for key in loaded:
            idx = art.content.index(f"\n{key}:")
            assert art.content[:idx].rstrip("\n").rsplit("\n", 1)[-1].startswith("#"), key


@settings(max_examples=25, deadline=None)
@given(
    nodes=st.integers(1, 16),
    dscp=st.integers(0, 63),
    cnp=st.integers(0, 63),
    cnp_prio=st.integers(0, 7),
    prio=st.integers(0, 7),
    lo=st.integers(1, 2000),
    span=st.integers(0, 4000),
    prob=st.integers(1, 100),
)
def test_values_follow_the_spec(
    nodes: int, dscp: int, cnp: int, cnp_prio: int, prio: int, lo: int, span: int, prob: int
) -> None:
    assume(dscp != cnp and cnp_prio != prio)  # the spec rejects shared markings
    roce = {
        "roce_dscp": dscp,
        "cnp_dscp": cnp,
        "cnp_priority": cnp_prio,
        "pfc_priorities": [prio],
        "ecn_min_kb": lo,
        "ecn_max_kb": lo + span,
        "ecn_probability": prob,
    }
    ctx = context({"fabric": "roce", "switch": "sn5600", "gpus": 8 * nodes, "roce": roce})
    for art in roce_qos.render(ctx):
        d = yaml.load(art.content, Loader=FAST_LOADER)  # CSafeLoader: safe, and fast
        assert d["mappings"]["roce"] == {
            "dscp": dscp,
            "switch_priority": prio,
            "traffic_class": prio,
        }
        assert d["mappings"]["cnp"] == {
            "dscp": cnp,
            "switch_priority": cnp_prio,
            "traffic_class": cnp_prio,
        }
        assert d["pfc"]["priorities"] == [prio]
        assert (d["ecn"]["min_threshold_bytes"], d["ecn"]["max_threshold_bytes"]) == (
            lo * 1000,
            (lo + span) * 1000,
        )
        assert d["ecn"]["probability_percent"] == prob
    for art in cumulus.render(ctx):
        cmds = [ln for ln in art.content.splitlines() if ln.startswith("nv ")]
        assert all(_GRAMMAR.match(c) for c in cmds)
        assert f"nv set qos mapping default-global dscp {dscp} switch-priority {prio}" in cmds
