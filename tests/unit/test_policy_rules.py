"""Every policy rule on passing and failing fixtures built from real specs (and hand mutations)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack import size_fabric, validate_spec
from fabric_stack.errors import InputFileError
from fabric_stack.intent.model import FabricIntent
from fabric_stack.policy import (
    RULES,
    PolicyConfig,
    Violation,
    check_ib_subnet_managers,
    check_link_speed,
    check_network_separation,
    check_oversubscription,
    check_pcie_locality,
    check_port_budget,
    check_rail_alignment,
    check_roce_host,
    check_roce_lossless,
    evaluate,
    load_policy_config,
    parse_leaf_name,
    policy_config_from_data,
    policy_config_schema,
)
from fabric_stack.policy.rules.gpudirect_pcie_locality import PcieLocalityConfig
from fabric_stack.policy.rules.ib_subnet_manager_redundancy import SubnetManagerConfig
from fabric_stack.policy.rules.oversubscription_1_to_1 import OversubscriptionConfig
from fabric_stack.policy.rules.port_budget import PortBudgetConfig
from fabric_stack.policy.rules.rail_grouped_nvlink import check_rail_grouped_nvlink
from fabric_stack.policy.rules.roce_lossless_consistency import RoceLosslessConfig
from fabric_stack.policy.rules.underlay_consistency import check_underlay_consistency
from tests.policy_fixtures import BAD_PCIE_PROFILE, ROCE, by_name, intent_for, replace

SEED = intent_for()

CHECKS = {
    "oversubscription-1-to-1": check_oversubscription,
    "gpudirect-pcie-locality": check_pcie_locality,
    "network-separation": check_network_separation,
    "rail-alignment": check_rail_alignment,
    "port-budget": check_port_budget,
    "link-speed-match": check_link_speed,
    "roce-lossless-consistency": check_roce_lossless,
    "roce-host-consistency": check_roce_host,
    "ib-subnet-manager-redundancy": check_ib_subnet_managers,
    "underlay-consistency": check_underlay_consistency,
    "rail-grouped-nvlink": check_rail_grouped_nvlink,
}


def run(check: Any, intent: FabricIntent, config: Any = None) -> list[Violation]:
    return list(check(intent, config))


def one(vs: list[Violation], resource: str) -> Violation:
    hits = [v for v in vs if v.resource == resource]
    assert len(hits) == 1, [v.message for v in vs]
    return hits[0]


# --------------------------------------------------------------------------- registry


def test_registry_lists_the_nine_rules_with_metadata() -> None:
    assert list(RULES) == list(CHECKS)
    for rule in RULES.values():
        assert rule.title and rule.description and rule.remediation
        json.dumps(rule.config_schema())  # JSON-serialisable for CrossGuard
    levels = {r.id: r.default_level for r in RULES.values()}
    assert levels["oversubscription-1-to-1"] == "mandatory"
    assert levels["gpudirect-pcie-locality"] == "mandatory"
    assert levels["network-separation"] == "mandatory"
    assert levels["ib-subnet-manager-redundancy"] == "mandatory"  # issue 17: a must, per plane
    assert "max_ratio" in RULES["oversubscription-1-to-1"].config_schema()
    assert "enforcementLevel" not in RULES["oversubscription-1-to-1"].config_schema()


@pytest.mark.parametrize("spec", [{}, ROCE, {"gpus": 4096}, {"planes": 2, "nic_gbps": 800}])
def test_pipeline_designs_pass_every_rule(spec: dict[str, Any]) -> None:
    report = evaluate(intent_for(**spec))
    assert report.violations == (), [v.message for v in report.violations]
    assert report.status == "pass" and not report.blocking


def test_policy_config_schema_validates_real_configs() -> None:
    schema = policy_config_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    good = {
        "all": "advisory",
        "oversubscription-1-to-1": {"enforcementLevel": "mandatory", "max_ratio": "2:1"},
        "ib-subnet-manager-redundancy": {"min_subnet_managers": 3},
    }
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"oversubscription-1-to-1": {"max_ratio": "two"}}, schema)


# --------------------------------------------------------------------------- oversubscription


def test_oversubscription_2to1_seed_names_every_leaf_with_the_fix() -> None:
    vs = run(check_oversubscription, intent_for(oversubscription="2:1"))
    assert sorted(v.resource for v in vs) == [f"su1-r{r}-leaf" for r in range(1, 9)]
    v = one(vs, "su1-r3-leaf")
    assert v.message == (
        "su1-r3-leaf: 42×400G down, 21×400G up (2:1); 1:1 required — "
        "re-size at 1:1: 32 down / 32 up per 64-port leaf (1 more spine)"
    )
    assert v.measured == "42×400G down, 21×400G up (2:1)"
    assert v.allowed == "1:1 (≥ 42×400G up)"
    assert v.level == "mandatory" and v.kind == "Switch"
    assert '"1:1"' in v.fix and "4 spines (now 3)" in v.fix


@pytest.mark.parametrize(
    ("spec", "allowed"),
    [
        ({"oversubscription": "2:1"}, "1:1"),
        ({"oversubscription": "3:1"}, "2:1"),
        ({"oversubscription": "2:1", "gpus": 4096}, "1:1"),
        ({"oversubscription": "2:1", "fabric": "roce", "switch": "sn5600"}, "1:1"),
    ],
)
def test_oversubscription_advice_and_fix_are_the_same_numbers(
    spec: dict[str, object], allowed: str
) -> None:
    # The message once said "add 21 uplinks per leaf" on a 64-port leaf with 42 downlinks
    # (84 ports) while the fix line re-sized to 32/32: both now come from the one plan.
    vs = run(check_oversubscription, intent_for(**spec), OversubscriptionConfig(max_ratio=allowed))
    leaves = [v for v in vs if v.kind == "Switch"]
    assert leaves
    for v in leaves:
        said = re.search(r"re-size at \S+: (\d+) down / (\d+) up per (\d+)-port leaf", v.message)
        fixed = re.search(r"each (\d+)-port leaf then splits (\d+) down / (\d+) up", v.fix)
        assert said and fixed, (v.message, v.fix)
        down, up, radix = map(int, said.groups())
        assert (radix, down, up) == tuple(map(int, fixed.groups()))
        assert down + up <= radix  # advice a leaf can follow
        more = re.search(r"\((\d+) more spines?", v.message)
        now = re.search(r"needs (\d+) spines \(now (\d+)\)", v.fix)
        assert now is not None
        assert int(more.group(1) if more else 0) == int(now.group(1)) - int(now.group(2))


def test_oversubscription_allowed_ratio_is_configurable() -> None:
    intent = intent_for(oversubscription="2:1")
    assert run(check_oversubscription, intent, OversubscriptionConfig(max_ratio="2:1")) == []
    three = intent_for(oversubscription="3:1")
    vs = run(check_oversubscription, three, OversubscriptionConfig(max_ratio="2:1"))
    assert vs and all("2:1 required" in v.message for v in vs)


def test_oversubscription_three_tiers_counts_spines_and_cores_from_the_sizing_rule() -> None:
    intent = intent_for(gpus=4096, oversubscription="2:1")
    at_1to1 = size_fabric(validate_spec({"gpus": 4096}))
    more_spines = at_1to1.switches.spine - intent.summary.switches["spine"]
    more_cores = at_1to1.switches.core - intent.summary.switches["core"]
    assert more_spines > 0 and more_cores > 0
    vs = run(check_oversubscription, intent)
    leaf = one(vs, "su1-r1-leaf")
    assert leaf.message.endswith(
        f"re-size at 1:1: 32 down / 32 up per 64-port leaf ({more_spines} more spines, "
        f"{more_cores} more cores)"
    )
    fabric = one(vs, intent.summary.name)
    assert fabric.kind == "Fabric"
    required = 4096 * 400 / 1000
    assert intent.summary.bisection_tbps < required
    assert f"{required:,.1f} Tb/s required (4,096 GPUs × 400G at 1:1)" in fabric.message
    # spines of a three-tier fabric are judged too, but sized 1:1 they pass
    assert not [v for v in vs if "spine" in v.resource]


def test_oversubscription_judges_three_tier_spines_but_not_two_tier_ones() -> None:
    three = intent_for(gpus=4096)
    bad = replace(three, "switches", by_name("pod1-spine-01"), ports_up=16)
    vs = run(check_oversubscription, bad)
    v = one(vs, "pod1-spine-01")
    assert v.message.startswith("pod1-spine-01: 32×400G down, 16×400G up (2:1); 1:1 required")
    assert "add 16 uplinks per spine" in v.message
    # two tiers: spines have no uplinks by design
    assert all(sw.ports_up == 0 for sw in SEED.switches if sw.role == "spine")
    assert run(check_oversubscription, SEED) == []


def test_oversubscription_on_a_1to1_spec_asks_for_cables_not_a_resize() -> None:
    bad = replace(SEED, "switches", by_name("su1-r2-leaf"), ports_up=30)
    v = one(run(check_oversubscription, bad), "su1-r2-leaf")
    assert v.message == (
        "su1-r2-leaf: 32×400G down, 30×400G up (16:15); 1:1 required — add 2 uplinks per leaf"
    )
    assert v.fix == "cable 2 more uplinks on su1-r2-leaf (the plan budgets 32)"


def test_oversubscription_flags_a_short_bisection() -> None:
    bad = SEED.model_copy(
        update={"summary": SEED.summary.model_copy(update={"bisection_tbps": 25.6})}
    )
    v = one(run(check_oversubscription, bad), "gpu-cluster")
    assert v.measured == "25.6 Tb/s bisection" and v.allowed == "≥ 51.2 Tb/s"


# --------------------------------------------------------------------------- PCIe locality


def test_pcie_locality_flags_a_profile_that_splits_gpu1_from_nic1() -> None:
    intent = intent_for(node_profile=BAD_PCIE_PROFILE)
    vs = run(check_pcie_locality, intent)
    assert len(vs) == 16  # one per node
    v = one(vs, "su1-node01:mlx5_1")
    assert v.message == (
        "su1-node01: GPU 1 is on PCIe switch pcie0 but its RDMA NIC mlx5_1 is on pcie1; "
        "GPUDirect RDMA needs one PCIe switch and NUMA node — move NIC mlx5_1 under pcie0 "
        "or re-pair GPU 1 with a NIC on pcie0 (mlx5_0)"
    )
    assert v.measured == "NIC pcie1 / NUMA 0" and v.allowed == "pcie0 / NUMA 0 (GPU 1's)"
    assert "node_profile.pcie_switches" in v.fix
    assert run(check_pcie_locality, SEED) == []


def test_pcie_locality_numa_is_judged_unless_disabled() -> None:
    bad = replace(SEED, "nics", by_name("su1-node03:mlx5_4"), numa=0)
    vs = run(check_pcie_locality, bad)
    assert [v.resource for v in vs] == ["su1-node03:mlx5_4"]
    assert "GPU 4 is on NUMA node 1 but its RDMA NIC mlx5_4 is on NUMA node 0" in vs[0].message
    assert run(check_pcie_locality, bad, PcieLocalityConfig(require_same_numa=False)) == []


def test_pcie_locality_each_gpu_has_exactly_one_nic() -> None:
    # NIC 2 claims GPU 3 as well; NIC 3 then serves nothing: GPU 3 has two NICs.
    twice = replace(
        SEED,
        "nics",
        by_name("su1-node02:mlx5_2"),
        gpus=[2, 3],
        gpu_pcie_switches=["pcie1", "pcie1"],
        gpu_numas=[0, 0],
    )
    v = one(run(check_pcie_locality, twice), "su1-node02:mlx5_3")
    assert "GPU 3 is served by 2 RDMA NICs (mlx5_2, mlx5_3)" in v.message
    orphan = replace(
        SEED, "nics", by_name("su1-node02:mlx5_5"), gpus=[], gpu_pcie_switches=[], gpu_numas=[]
    )
    vs = run(check_pcie_locality, orphan)
    assert [v.message.split(";")[0] for v in vs] == ["su1-node02: GPU 5 has no RDMA NIC"]


# --------------------------------------------------------------------------- network separation


STORAGE = {"vlan": 200, "subnet": "10.200.0.0/16", "switch": "sn5600"}


def test_storage_attached_to_compute_is_one_violation_on_its_vlan() -> None:
    intent = intent_for(networks={"storage": {**STORAGE, "attach": "compute"}})
    vs = run(check_network_separation, intent)
    assert len(vs) == 1
    assert vs[0].message == (
        "storage-vlan200: storage VLAN 200 is carried by 12 compute-fabric switches "
        "(su1-r1-leaf, su1-r2-leaf, su1-r3-leaf, … 9 more); compute switches carry only "
        "compute traffic — set networks.storage.attach: dedicated"
    )
    assert vs[0].kind == "Vlan"


def test_a_vlan_id_reused_across_networks_is_flagged() -> None:
    intent = intent_for(networks={"storage": {**STORAGE, "vlan": 300}})
    v = one(run(check_network_separation, intent), "inband-vlan300")
    assert v.message == (
        "inband-vlan300: VLAN 300 is also storage's VLAN (storage-vlan300); every network "
        "needs its own VLAN id — change networks.inband.vlan or networks.storage.vlan "
        "(e.g. 301 is free)"
    )


def test_a_roce_rail_vlan_equal_to_storage_is_flagged() -> None:
    vlans = [200, 102, 103, 104, 105, 106, 107, 108]
    intent = intent_for(**ROCE, networks={"compute": {"rail_vlans": vlans}})
    v = one(run(check_network_separation, intent), "storage-vlan200")
    assert "also compute's VLAN (compute-rail1-vlan200)" in v.message
    assert "networks.compute.rail_vlans" in v.message


def test_management_on_a_compute_switch_port_or_nic_elsewhere_are_flagged() -> None:
    carried = replace(SEED, "switches", by_name("spine-02"), networks_carried=["compute", "oob"])
    v = one(run(check_network_separation, carried), "spine-02")
    assert v.message.startswith("spine-02: carries oob on a compute-fabric spine")
    cable = next(c for c in SEED.cables if c.role == "inband")
    ported = replace(SEED, "cables", by_name(cable.name), b_device="su1-r4-leaf", b_port="1/9/1")
    v = one(run(check_network_separation, ported), cable.name)
    assert "inband port cabled to compute-fabric switch su1-r4-leaf port 1/9/1" in v.message
    stray = replace(SEED, "nics", by_name("su1-node05:mlx5_0"), leaf="su1-storage-a1")
    v = one(run(check_network_separation, stray), "su1-node05:mlx5_0")
    assert "cabled to su1-storage-a1, a storage storage switch" in v.message


# --------------------------------------------------------------------------- rail alignment


def test_a_nic_on_another_rails_leaf_is_flagged_with_the_right_leaf() -> None:
    bad = replace(SEED, "nics", by_name("su1-node07:mlx5_2"), leaf="su1-r4-leaf")
    vs = run(check_rail_alignment, bad)
    assert [v.message for v in vs] == [
        "su1-node07:mlx5_2: rail-3 NIC cabled to su1-r4-leaf, a rail-4 leaf; a rail-3 NIC "
        "lands on its SU's rail-3 leaf — move the cable to su1-r3-leaf 1/4/1"
    ]
    assert run(check_rail_alignment, SEED) == []


def test_rail_alignment_uses_the_switch_record_when_names_are_not_standard() -> None:
    renamed = replace(SEED, "switches", by_name("su1-r4-leaf"), name="leaf-x")
    bad = replace(renamed, "nics", by_name("su1-node07:mlx5_2"), leaf="leaf-x")
    vs = run(check_rail_alignment, bad)
    assert [v.resource for v in vs] == ["su1-node07:mlx5_2"]
    assert "a rail-4 leaf" in vs[0].message
    mislabeled = replace(SEED, "switches", by_name("su1-r6-leaf"), rail=5)
    v = one(run(check_rail_alignment, mislabeled), "su1-r6-leaf")
    assert "recorded as a rail-5 leaf but named for rail 6" in v.message


def test_rail_alignment_judges_each_nic_not_each_leaf() -> None:
    # The clean case is decided per distinct (leaf, rail, plane) (#43): a NIC whose own rail
    # is wrong on a leaf its neighbours rightly use, and two NICs sharing one wrong leaf,
    # are each still reported, in record order, from a list or a one-shot iterator alike.
    relabeled = replace(SEED, "nics", by_name("su1-node02:mlx5_0"), rail=2)
    moved = replace(
        relabeled, "nics", lambda n: n.name in ("su1-node03:mlx5_2", "su1-node09:mlx5_2"),
        leaf="su1-r5-leaf",
    )  # fmt: skip
    want = ["su1-node02:mlx5_0", "su1-node03:mlx5_2", "su1-node09:mlx5_2"]
    assert [v.resource for v in run(check_rail_alignment, moved)] == want
    records = RULES["rail-alignment"].check_record
    assert records is not None
    once = [v.resource for v in records("RdmaNic", iter(moved.nics), None)]
    assert once == want


def test_network_separation_judges_each_nic_on_a_stray_leaf() -> None:
    # Decided per distinct leaf name (#43): every NIC on a non-compute or unknown switch is
    # reported, in record order, and the NICs of the compute leaves are not.
    names = ("su1-node02:mlx5_1", "su1-node06:mlx5_3", "su1-node08:mlx5_0")
    stray = replace(SEED, "nics", lambda n: n.name in names[:2], leaf="su1-storage-a1")
    lost = replace(stray, "nics", by_name(names[2]), leaf="no-such-switch")
    vs = [v for v in run(check_network_separation, lost) if v.kind == "RdmaNic"]
    assert [v.resource for v in vs] == list(names)
    assert "no switch of this fabric" in vs[2].message


def test_parse_leaf_name() -> None:
    assert parse_leaf_name("su12-r3-leaf") == (1, 12, 3)
    assert parse_leaf_name("p2-su1-r8-leaf") == (2, 1, 8)
    assert parse_leaf_name("spine-01") is None


# --------------------------------------------------------------------------- port budget


def test_port_budget_radix_and_plan_split() -> None:
    bad = replace(SEED, "switches", by_name("su1-r1-leaf"), ports_down=40)
    vs = run(check_port_budget, bad)
    assert [v.message for v in vs] == [
        "su1-r1-leaf: 72 ports cabled (40 down + 32 up), radix 64 at 400G — remove 8 cables "
        "or use a switch with ≥ 72 ports",
        "su1-r1-leaf: 40 downlinks cabled, the plan budgets 32 — move 8 downlinks to another "
        "switch",
    ]
    only_radix = run(check_port_budget, bad, PortBudgetConfig(enforce_budgets=False))
    assert len(only_radix) == 1 and "radix 64" in only_radix[0].message
    assert run(check_port_budget, SEED) == []


# --------------------------------------------------------------------------- link speed


def test_link_speed_cable_ends_and_nic_vs_leaf() -> None:
    cable = next(c for c in SEED.cables if c.role == "leaf_spine")
    slow = replace(SEED, "cables", by_name(cable.name), b_speed_gbps=200)
    v = one(run(check_link_speed, slow), cable.name)
    assert v.measured == "400G / 200G"
    assert f"set {cable.b_device} {cable.b_port} to 400G" in v.message
    nic = replace(SEED, "nics", by_name("su1-node01:mlx5_0"), speed_gbps=200)
    v = one(run(check_link_speed, nic), "su1-node01:mlx5_0")
    assert v.message.startswith("su1-node01:mlx5_0: NIC runs 200G but su1-r1-leaf ports run 400G")
    assert run(check_link_speed, SEED) == []


# --------------------------------------------------------------------------- RoCE


def test_roce_spine_mtu_override_flags_each_spine() -> None:
    intent = intent_for(**ROCE, roce={"overrides": {"spine": {"mtu": 1500}}})
    vs = run(check_roce_lossless, intent)
    assert [v.resource for v in vs] == ["spine-01", "spine-02", "spine-03", "spine-04"]
    assert vs[0].message == (
        "spine-01: MTU 1500, 9216 on 8 of 12 compute hops; the same MTU on every hop "
        "required — remove roce.overrides.spine.mtu (use 9216)"
    )


def test_roce_two_pfc_priorities_flag_every_compute_switch() -> None:
    intent = intent_for(**ROCE, roce={"pfc_priorities": [3, 4], "lossless_pools": 2})
    vs = run(check_roce_lossless, intent)
    assert len(vs) == 12
    assert vs[0].message == (
        "su1-r1-leaf: PFC on priorities 3, 4; exactly one lossless priority required — "
        "set roce.pfc_priorities: [3]"
    )


def test_roce_ecn_dscp_priority_and_jumbo() -> None:
    intent = intent_for(**ROCE, roce={"overrides": {"leaf": {"ecn": False, "dscp_trust": False}}})
    msgs = [v.message for v in run(check_roce_lossless, intent)]
    assert len(msgs) == 16
    assert (
        "su1-r1-leaf: ECN off; ECN marking on every hop required — remove "
        "roce.overrides.leaf.ecn (use true)" in msgs
    )
    prio = intent_for(**ROCE, roce={"overrides": {"spine": {"pfc_priorities": [4]}}})
    v = run(check_roce_lossless, prio)[0]
    assert v.message.startswith("spine-01: PFC on priority 4, priority 3 on the other")
    small = intent_for(**ROCE, roce={"mtu": 1500}, networks={"compute": {"mtu": 1500}})
    vs = run(check_roce_lossless, small)
    assert [v.kind for v in vs] == ["Fabric"]
    assert run(check_roce_lossless, small, RoceLosslessConfig(min_mtu=1500)) == []
    host = intent_for(**ROCE, roce={"mtu": 4200})
    vs = run(check_roce_lossless, host, RoceLosslessConfig(min_mtu=1500))
    assert {v.kind for v in vs} == {"Vlan"} and "host MTU 9000 exceeds" in vs[0].message


def test_roce_rule_is_skipped_on_infiniband() -> None:
    report = evaluate(SEED)
    roce = next(r for r in report.rules if r.id == "roce-lossless-consistency")
    assert roce.status == "skipped" and "infiniband" in roce.reason


# --------------------------------------------------------------------------- subnet managers


def test_one_subnet_manager_is_mandatory_unless_configured_advisory() -> None:
    intent = intent_for(infiniband={"subnet_managers": 1})
    vs = run(check_ib_subnet_managers, intent)
    assert [v.message for v in vs] == [
        "gpu-cluster: 1 subnet manager cabled (on UFM); ≥ 2 required so a standby takes over "
        "when the master fails — set infiniband.subnet_managers: 2"
    ]
    assert vs[0].level == "mandatory"
    assert evaluate(intent).blocking
    relaxed = policy_config_from_data({"ib-subnet-manager-redundancy": "advisory"})
    report = evaluate(intent, relaxed)
    assert report.status == "warn" and not report.blocking
    assert run(check_ib_subnet_managers, SEED, SubnetManagerConfig(min_subnet_managers=3))
    assert (
        run(check_ib_subnet_managers, intent_for(**ROCE, infiniband={"subnet_managers": 0})) == []
    )


def test_subnet_managers_on_switches_count_the_flagged_switches() -> None:
    intent = intent_for(infiniband={"subnet_managers": 2, "sm_location": "switch"})
    assert sum(sw.subnet_manager for sw in intent.switches) == 2
    assert run(check_ib_subnet_managers, intent) == []
    one_less = replace(intent, "switches", lambda s: s.name == "spine-01", subnet_manager=False)
    assert "1 subnet manager (on switches)" in run(check_ib_subnet_managers, one_less)[0].message


# --------------------------------------------------------------------------- evaluate + config


def test_evaluate_levels_all_and_disabled() -> None:
    intent = intent_for(oversubscription="2:1")
    report = evaluate(intent)
    assert report.blocking and report.counts == {"mandatory": 8, "advisory": 0}
    outcome = {r.id: r.status for r in report.rules}
    assert outcome["oversubscription-1-to-1"] == "fail" and outcome["port-budget"] == "pass"
    advisory = evaluate(intent, policy_config_from_data({"all": "advisory"}))
    assert advisory.counts == {"mandatory": 0, "advisory": 8} and advisory.status == "warn"
    off = evaluate(intent, policy_config_from_data({"oversubscription-1-to-1": "disabled"}))
    assert off.violations == ()
    assert next(r for r in off.rules if r.id == "oversubscription-1-to-1").status == "disabled"
    # a rule's own level wins over "all"
    mixed = policy_config_from_data(
        {"all": "advisory", "oversubscription-1-to-1": {"enforcementLevel": "mandatory"}}
    )
    assert evaluate(intent, mixed).blocking


def test_policy_config_file_errors_name_the_key(tmp_path: Path) -> None:
    def load(text: str) -> PolicyConfig:
        p = tmp_path / "policy.yaml"
        p.write_text(text)
        return load_policy_config(p)

    assert (
        load('oversubscription-1-to-1:\n  max_ratio: "2:1"\n').oversubscription.max_ratio == "2:1"
    )
    # the pack's "<id>-fabric" stack policy name configures the same rule
    assert load("link-speed-match-fabric: advisory\n").link_speed.enforcement_level == "advisory"
    cases = {
        "oversubcription: mandatory\n": "oversubcription: unknown rule (rules: all, ",
        "port-budget:\n  enforce: false\n": "port-budget.enforce: unknown setting (settings: ",
        "network-separation: strict\n": "network-separation.enforcementLevel: 'strict' is not a "
        "level (mandatory, advisory, disabled or remediate)",
        "oversubscription-1-to-1:\n  max_ratio: '1:2'\n": "has more uplink than downlink",
    }
    for text, expected in cases.items():
        with pytest.raises(InputFileError) as err:
            load(text)
        assert expected in err.value.message, err.value.message
        assert err.value.message.startswith(str(tmp_path / "policy.yaml"))


# --------------------------------------------------------------------------- invariants


@settings(max_examples=25, deadline=None)
@given(
    nodes=st.integers(min_value=1, max_value=96),
    fabric=st.sampled_from(["infiniband", "roce"]),
    ratio=st.sampled_from(["1:1", "2:1", "3:1"]),
)
def test_pipeline_designs_break_only_the_ratio_they_ask_for(
    nodes: int, fabric: str, ratio: str
) -> None:
    spec: dict[str, Any] = {"gpus": nodes * 8, "oversubscription": ratio, "fabric": fabric}
    if fabric == "roce":
        spec["switch"] = "sn5600"
    intent = intent_for(**spec)
    # judged at the ratio it was sized for, every design is clean
    same = policy_config_from_data({"oversubscription-1-to-1": {"max_ratio": ratio}})
    assert evaluate(intent, same).violations == ()
    # judged at 1:1, exactly the oversubscribed ones fail, and only that rule
    strict = evaluate(intent)
    assert {v.rule for v in strict.violations} == (
        set() if ratio == "1:1" else {"oversubscription-1-to-1"}
    )


def test_one_rule_per_module_named_after_its_id() -> None:
    import pkgutil

    from fabric_stack.policy import registry, rules

    modules = {m.name for m in pkgutil.iter_modules(rules.__path__)}
    assert modules == {m.__name__.rsplit(".", 1)[1] for m in registry.RULE_MODULES}
    for module in registry.RULE_MODULES:
        rule = module.RULE
        assert module.__name__.rsplit(".", 1)[1] == rule.id.replace("-", "_")
        # The id is written once per module: RULE.id, every Violation.rule, the registry key.
        assert rule.id == module.RULE_ID
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        literals = [
            n.lineno
            for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Constant) and n.value == rule.id
        ]
        assert len(literals) == 1, f"{rule.id}: spelled out on lines {literals}, use RULE_ID"
        # The config file model and the pack derive from the registry.
        assert rule.id in PolicyConfig.model_json_schema(by_alias=True)["properties"]
    assert list(RULES) == [m.RULE.id for m in registry.RULE_MODULES]
