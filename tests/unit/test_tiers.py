"""Per-tier switch models and link speeds, and four planes (issue #43, first half).

Figures checked here:

* the issue's own case: 1,024 GPUs of RoCE on SN5600 with 400G NICs and 800G uplinks runs
  the leaves' 400G downlinks two per 800G cage and their uplinks one per cage, so the
  leaf-spine layer is 512 800G cables instead of 1,024 400G ones. SN5600: 64 OSFP cages,
  800G each or split 2 × 400G (NVIDIA Spectrum-4 SN5000 2U Switch Systems Hardware User
  Manual, the catalog's source);
* four planes: a ConnectX-8 800G SuperNIC is split into one PF per plane, quad-plane on B300
  (NVIDIA Network Operator 26.4, "Software Multiplane Spectrum-X Quick Start",
  docs.nvidia.com/networking/display/kubernetes2640/spectrum-x/quick-start-swplb.html), so
  each plane runs 200G.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric_stack.cli import main
from fabric_stack.errors import SpecError
from fabric_stack.intent.derive import derive_intent
from fabric_stack.policy.rules.oversubscription_1_to_1 import check_oversubscription
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.verify import verify_topology
from fabric_stack.views.card import card_json, tiers_line
from tests.topology_fixtures import Spec, spec_key, topo_for

ROCE_800 = {"gpus": 1024, "fabric": "roce", "switch": "sn5600", "uplink_gbps": 800}


def test_800g_uplinks_halve_the_leaf_spine_cables() -> None:
    same = size_fabric(validate_spec(**{**ROCE_800, "uplink_gbps": None}))
    fast = size_fabric(validate_spec(**ROCE_800))
    assert same.cables.leaf_spine == 1024
    assert fast.cables.leaf_spine == 512
    leaf = fast.tier_plans[0]
    assert (leaf.ports_down, leaf.down_gbps, leaf.ports_up, leaf.up_gbps) == (64, 400, 32, 800)
    assert leaf.capacity_down_gbps == leaf.capacity_up_gbps  # 1:1 in capacity
    assert fast.su_nodes == same.su_nodes == 64  # the SU keeps its 64 servers
    # 16 leaves × 32 uplinks = 512 800G ports on 64-port spines: 8 spines
    assert fast.switches.spine == 8 and fast.spine_radix == 64
    assert fast.bandwidth.bisection_tbps == same.bandwidth.bisection_tbps == 409.6


def test_800g_links_carry_their_speed_and_whole_cage_labels() -> None:
    t = topo_for(spec_key(**ROCE_800))
    speeds = Counter((k.role, k.speed_gbps) for k in t.links_of("node_leaf", "leaf_spine"))
    assert speeds == {("node_leaf", 400): 1024, ("leaf_spine", 800): 512}
    up = [k for k in t.links_of("leaf_spine") if k.a_device == "su1-r1-leaf"]
    # uplinks on cages 33..64, unsplit (swp33), numbered at the cage's first 400G lane
    assert [k.a_port for k in up[:2]] == ["swp33", "swp34"]
    assert [k.a_port_number for k in up[:2]] == [65, 67]
    assert {k.b_port[:3] for k in up} == {"swp"} and all("s" not in k.b_port[3:] for k in up)


def test_card_shows_each_tier_only_when_asked() -> None:
    fast = size_fabric(validate_spec(**ROCE_800))
    line = tiers_line(fast)
    assert line is not None
    assert "32 × 800G up" in line and "spine SN5600: 64 × 800G" in line
    assert card_json(fast)["tier_plans"][0]["up_gbps"] == 800
    plain = size_fabric(validate_spec(gpus=1024, fabric="roce", switch="sn5600"))
    assert tiers_line(plain) is None
    assert "up_gbps" not in card_json(plain)["tier_plans"][0]
    assert "uplink_gbps" not in card_json(plain)


def test_oversubscription_rule_counts_capacity() -> None:
    intent = derive_intent(topo_for(spec_key(**ROCE_800)))
    assert list(check_oversubscription(intent)) == []
    leaf = next(s for s in intent.switches if s.role == "leaf")
    assert (leaf.port_gbps, leaf.uplink_gbps, leaf.ports_up) == (400, 800, 32)


def test_four_planes_split_an_800g_nic_into_200g_planes() -> None:
    plan = size_fabric(
        validate_spec(gpus=1024, fabric="roce", switch="sn5600", nic_gbps=800, planes=4)
    )
    assert plan.link_gbps == 200 and plan.planes == 4
    assert plan.cables.node_leaf == 1024 * 4
    assert plan.radix == 256  # 64 cages × 4 at 200G
    assert plan.bandwidth.per_gpu_gbps == 800


@pytest.mark.parametrize(
    ("spec", "field", "says"),
    [
        ({**ROCE_800, "spine_switch": "generic-64x400"}, "uplink_gbps", "no 800G ports"),
        ({**ROCE_800, "uplink_gbps": 200}, "uplink_gbps", "slower than the 400G host links"),
        ({**ROCE_800, "uplink_gbps": 1600}, "uplink_gbps", "no 1600G ports"),
        ({"fabric": "roce", "switch": "sn5600", "spine_switch": "qm9700"}, "spine_switch", "is an"),
        ({"planes": 3, "nic_gbps": 600}, "planes", "SerDes lanes"),
        ({"planes": 3}, "planes", "do not split evenly"),
        ({"planes": 5}, "planes", "out of range"),
    ],
)
def test_bad_combinations_get_one_line_naming_the_key(
    spec: dict[str, Any], field: str, says: str
) -> None:
    with pytest.raises(SpecError) as err:
        size_fabric(validate_spec(**spec))
    assert err.value.field == field
    assert says in err.value.message and "\n" not in err.value.message


UP_FLAGS = ("--uplink-gbps", "800", "--spine-switch", "sn5600", "--format", "json")


def test_cli_flags_and_exit_2() -> None:
    r = CliRunner().invoke(
        main,
        [*("size", "--gpus", "1024", "--fabric", "roce", "--switch", "sn5600"), *UP_FLAGS],
    )
    assert r.exit_code == 0, r.output
    assert '"leaf_spine": 512' in r.output
    bad = CliRunner().invoke(main, ["size", "--planes", "3", "--nic-gbps", "600"])
    assert bad.exit_code == 2
    assert "Traceback" not in bad.output


# ----------------------------------------------------------------- invariants

_per_tier = st.builds(
    lambda n, up, ratio, nic, planes: spec_key(
        gpus=8 * n,
        fabric="roce",
        switch="sn5600",
        nic_gbps=nic,
        planes=planes,
        uplink_gbps=up,
        oversubscription=ratio,
    ),
    st.integers(min_value=1, max_value=160),
    st.sampled_from([400, 800]),
    st.sampled_from(["1:1", "2:1", "3:1"]),
    st.sampled_from([400, 800]),
    st.sampled_from([1, 2, 4]),
).filter(lambda k: dict(k)["nic_gbps"] // dict(k)["planes"] <= dict(k)["uplink_gbps"])

_ib_tiers = st.builds(
    lambda n, sw: spec_key(gpus=8 * n, switch="qm9700", spine_switch=sw, core_switch=sw),
    st.sampled_from([1, 16, 64, 257, 300]),
    st.sampled_from(["q3400", "generic-128x400", "qm9700"]),
)

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.one_of(_per_tier, _ib_tiers))
def test_every_port_is_used_once_and_counts_match_the_card(key: Spec) -> None:
    t = topo_for(key)
    plan = t.plan
    radix = {d.name: d.radix for d in t.switches()}
    ends: Counter[tuple[str, object]] = Counter()
    for k in t.links:
        ends[(k.a_device, k.a_port)] += 1
        ends[(k.b_device, k.b_port)] += 1
        for dev, number in ((k.a_device, k.a_port_number), (k.b_device, k.b_port_number)):
            if dev in radix:  # a switch's logical port numbers are unique too
                ends[(dev, number)] += 1
    assert max(ends.values()) == 1
    for k in t.links:
        assert k.b_device not in radix or 1 <= k.b_port_number <= radix[k.b_device]
        assert k.a_device not in radix or 1 <= k.a_port_number <= radix[k.a_device]
    counted = t.count_links()
    assert counted.get("node_leaf", 0) == plan.cables.node_leaf
    assert counted.get("leaf_spine", 0) == plan.cables.leaf_spine
    assert counted.get("spine_core", 0) == plan.cables.spine_core
    sw = t.count_switches()
    assert (sw.get("leaf", 0), sw.get("spine", 0), sw.get("core", 0)) == (
        plan.switches.leaf,
        plan.switches.spine,
        plan.switches.core,
    )
    models = {d.role: d.model for d in t.switches("leaf", "spine", "core")}
    assert models["spine"] == plan.spine_model.key
    assert {k.speed_gbps for k in t.links_of("leaf_spine", "spine_core")} == {plan.uplink_gbps}


@SETTINGS
@given(st.one_of(_per_tier, _ib_tiers))
def test_capacity_at_each_tier_honours_the_oversubscription(key: Spec) -> None:
    t = topo_for(key)
    plan = t.plan
    a, b = plan.spec.ratio
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for k in t.links_of("node_leaf", "leaf_spine", "spine_core"):
        down[k.b_device] += k.speed_gbps
        if k.role != "node_leaf":
            up[k.a_device] += k.speed_gbps
    for leaf in t.switches("leaf"):
        budget = plan.leaf_down * plan.link_gbps
        assert budget * b == up[leaf.name] * a, leaf.name
        assert down[leaf.name] <= budget
    if plan.tiers == 3:
        for spine in t.switches("spine"):
            assert down[spine.name] <= up[spine.name], spine.name
    report = verify_topology(t, mincut_max_nodes=0)
    assert not [c.name for c in report.checks if c.status == "fail"]


# ----------------------------------------------------------------- renderers and exports

IB_TIERS = {
    "gpus_per_node": 4,
    "gpus": 256,
    "nic_gbps": 800,
    "planes": 4,
    "spine_switch": "q3400",
    "uplink_gbps": 400,
}
"""NDR200 QM9700 leaves (an 800G NIC as four 200G planes) with NDR uplinks to Q3400 spines."""


def test_topo_file_names_each_tier_and_each_links_width() -> None:
    from fabric_stack.views.exports import topo_file

    lines = topo_file(topo_for(spec_key(**IB_TIERS))).splitlines()
    assert "MQM9700 p1-su1-r1-leaf" in lines and "Q3400 p1-spine-01" in lines
    host = next(x for x in lines if "-> HCA_" in x)
    assert "-2x-100G->" in host  # NDR200 to the NIC
    up = next(x for x in lines if "-> Q3400 p1-spine-01" in x)
    assert "-4x-100G->" in up  # NDR to the spine
    assert "uplinks 400G, spines NVIDIA Quantum-X800 Q3400-RA" in lines[0]


def test_ufm_p2p_names_a_mixed_leafs_uplinks_in_the_uplink_layout() -> None:
    from fabric_stack.views.exports import ufm_p2p

    rows = [r.split(",") for r in ufm_p2p(topo_for(spec_key(**IB_TIERS))).splitlines()]
    ups = [r for r in rows if r[0] == "p1-su1-r1-leaf" and "spine" in r[3]]
    # 64 NDR200 downlinks fill cages 1-16 (4 per cage); NDR uplinks are 2 per cage from 17
    assert [r[2] for r in ups[:3]] == ["17/1", "17/2", "18/1"]


def test_nvue_breaks_out_only_the_split_cages() -> None:
    from fabric_stack.artifacts import RenderContext
    from fabric_stack.artifacts.cumulus import render_switch

    ctx = RenderContext.from_topology(topo_for(spec_key(**ROCE_800)))
    leaf = next(s for s in ctx.compute_switches() if s.role == "leaf")
    text = render_switch(ctx, leaf)
    assert "nv set interface swp32 link breakout 2x" in text
    assert "nv set interface swp33 link breakout" not in text  # an 800G uplink cage
    assert "nv set interface swp33 description" in text


ROCE_FLAGS = ("--gpus", "1024", "--fabric", "roce", "--switch", "sn5600")


def test_sonic_breaks_a_mixed_leafs_cages_out(tmp_path: Any) -> None:
    """Once refused ("no stock SN5600 HwSKU"), now dynamic port breakout
    (tests/unit/test_sonic_breakout.py checks the ports and what stays refused)."""
    r = CliRunner().invoke(
        main,
        ["render", "sonic", *ROCE_FLAGS, "--uplink-gbps", "800", "--out-dir", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    leaf = json.loads((tmp_path / "sonic" / "su1-r1-leaf" / "config_db.json").read_text())
    assert len(leaf["BREAKOUT_CFG"]) == 64


def test_stack_config_spells_the_keys_in_camel_case() -> None:
    from fabric_stack.files.config import spec_from_stack_config

    spec = spec_from_stack_config(
        {
            "fabric:gpus": "1024",
            "fabric:fabric": "roce",
            "fabric:switch": "sn5600",
            "fabric:spineSwitch": "sn5600",
            "fabric:uplinkGbps": "800",
        }
    )
    assert (spec.spine_switch, spec.uplink_gbps, spec.uplink_speed) == ("sn5600", 800, 800)
    with pytest.raises(SpecError) as err:
        spec_from_stack_config({"fabric:planes": "3"})
    assert err.value.field == "fabric:planes"
