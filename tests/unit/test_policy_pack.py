"""The CrossGuard wrappers in policies/, called directly as the SDK's own tests do.

Each policy's ``validate`` gets ``StackValidationArgs`` / ``ResourceValidationArgs``
holding resources shaped as a preview hands them over (see tests/policy_fixtures.py)
and a collector for ``report_violation``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.policy import _NotApplicableError
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError

from fabric_stack.hardware.server_profiles import PROFILES
from fabric_stack.policy import RULES, evaluate
from tests.policy_fixtures import (
    BAD_PCIE_PROFILE,
    OPTS,
    ROCE,
    Collector,
    by_name,
    intent_for,
    replace,
    resource,
    stack_resources,
    urn,
)

PACK_DIR = Path(__file__).resolve().parents[2] / "policies"


def _load() -> ModuleType:
    # The pack directory is not a package: the language host puts it on sys.path.
    spec = importlib.util.spec_from_file_location(
        "fabric_policies", PACK_DIR / "fabric_policies.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fabric_policies"] = mod
    spec.loader.exec_module(mod)
    return mod


fp = _load()
POLICIES = {p.name: p for p in fp.POLICIES}


def stack(
    name: str, resources: list[PolicyResource], config: dict[str, Any] | None = None
) -> Collector:
    pol = POLICIES[name]
    assert isinstance(pol, StackValidationPolicy)
    got = Collector()
    pol.validate(StackValidationArgs(resources, config), got)
    return got


def each_resource(
    name: str, resources: list[PolicyResource], config: dict[str, Any] | None = None
) -> list[tuple[str, str]]:
    pol = POLICIES[name]
    assert isinstance(pol, ResourceValidationPolicy)
    out: list[tuple[str, str]] = []
    for r in resources:
        got = Collector()
        args = ResourceValidationArgs(r.resource_type, r.props, r.urn, r.name, OPTS, None, config)
        pol.validate(args, got)
        out += [(r.urn, m) for m in got.messages]
    return out


# --------------------------------------------------------------------------- the pack's shape


def test_pack_has_a_policy_per_rule_with_levels_and_schemas() -> None:
    # From the registry: one policy per rule, plus "<id>-fabric" for the cross part of a
    # rule whose record part runs per resource.
    split = {r.id for r in RULES.values() if r.resource_policy and r.check_cross is not None}
    assert list(POLICIES) == [
        name
        for r in RULES.values()
        for name in (r.id, *([f"{r.id}-fabric"] if r.id in split else []))
    ]
    assert split == {"rail-alignment", "link-speed-match"}
    kinds = {n: type(p).__name__ for n, p in POLICIES.items()}
    assert (
        kinds["port-budget"]
        == kinds["link-speed-match"]
        == kinds["rail-alignment"]
        == ("ResourceValidationPolicy")
    )
    assert kinds["oversubscription-1-to-1"] == "StackValidationPolicy"
    for name in ("oversubscription-1-to-1", "gpudirect-pcie-locality", "network-separation"):
        assert POLICIES[name].enforcement_level == EnforcementLevel.MANDATORY
    assert POLICIES["ib-subnet-manager-redundancy"].enforcement_level == EnforcementLevel.MANDATORY
    schema = POLICIES["oversubscription-1-to-1"].config_schema
    assert schema is not None and schema.properties["max_ratio"]["default"] == "1:1"
    assert "enforcementLevel" not in schema.properties


def test_policy_pack_constructor_only_in_main_and_yaml_names_the_venv() -> None:
    def calls(path: Path) -> list[str]:
        tree = ast.parse(path.read_text())
        return [
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        ]

    assert "PolicyPack" in calls(PACK_DIR / "__main__.py")
    assert "PolicyPack" not in calls(PACK_DIR / "fabric_policies.py")
    meta = yaml.safe_load((PACK_DIR / "PulumiPolicy.yaml").read_text())
    assert meta["runtime"]["name"] == "python"
    venv = PACK_DIR / meta["runtime"]["options"]["virtualenv"]
    assert (venv / "bin" / "python").exists()
    assert meta["description"]


def test_no_pulumi_import_in_the_pure_rules() -> None:
    pkg = Path(__file__).resolve().parents[2] / "fabric_stack" / "policy"
    for path in pkg.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.split(".")[0].startswith("pulumi") for n in names), path


# --------------------------------------------------------------------------- stack policies


@pytest.mark.parametrize("granularity", ["bundle", "cable"])
def test_a_good_stack_reports_nothing(granularity: str) -> None:
    resources = stack_resources(intent_for(), granularity)
    intent = intent_for()
    for name, pol in POLICIES.items():
        if isinstance(pol, StackValidationPolicy):
            if RULES[name.removesuffix("-fabric")].applies(intent):  # skipped on an IB stack
                with pytest.raises(_NotApplicableError):
                    stack(name, resources)
                continue
            assert stack(name, resources).reports == [], name
        else:
            assert each_resource(name, resources) == [], name


def test_oversubscribed_stack_fails_on_each_leaf_urn_with_message_and_fix() -> None:
    got = stack("oversubscription-1-to-1", stack_resources(intent_for(oversubscription="2:1")))
    assert len(got.reports) == 8
    by_urn = dict((u, m) for m, u in got.reports)
    msg = by_urn[urn("Switch", "su1-r3-leaf")]
    first, fix = msg.split("\n")
    assert first == (
        "su1-r3-leaf: 42×400G down, 21×400G up (2:1); 1:1 required — "
        "re-size at 1:1: 32 down / 32 up per 64-port leaf (1 more spine)"
    )
    assert fix.startswith('fix: set oversubscription: "1:1"')


def test_policy_config_arrives_from_crossguard() -> None:
    resources = stack_resources(intent_for(oversubscription="2:1"))
    # numbers arrive as floats from the engine; unknown keys are ignored
    assert stack("oversubscription-1-to-1", resources, {"max_ratio": "2:1", "x": 1.0}).reports == []
    sm = stack_resources(intent_for(infiniband={"subnet_managers": 2}))
    got = stack("ib-subnet-manager-redundancy", sm, {"min_subnet_managers": 3.0})
    assert got.reports == [
        (
            "gpu-cluster: 2 subnet managers cabled (on UFM); ≥ 3 required so a standby takes "
            "over when the master fails — set infiniband.subnet_managers: 3\n"
            "fix: set infiniband.subnet_managers: 3 (one master, standbys on other hosts/UFMs)",
            urn("Fabric", "gpu-cluster"),
        )
    ]


def test_pcie_violation_is_reported_on_the_nic_group_that_holds_the_nic() -> None:
    resources = stack_resources(intent_for(node_profile=BAD_PCIE_PROFILE))
    got = stack("gpudirect-pcie-locality", resources)
    assert len(got.reports) == 16
    urns = {u for _, u in got.reports}
    assert urn("RdmaNicGroup", "su1-node01/nics") in urns
    assert got.messages[0].startswith("su1-node01: GPU 1 is on PCIe switch pcie0")


def test_network_separation_stack_and_roce_applicability() -> None:
    storage = {"vlan": 200, "subnet": "10.200.0.0/16", "switch": "sn5600", "attach": "compute"}
    got = stack("network-separation", stack_resources(intent_for(networks={"storage": storage})))
    assert [u for _, u in got.reports] == [urn("Vlan", "storage-vlan200")]
    roce = stack_resources(intent_for(**ROCE, roce={"overrides": {"spine": {"mtu": 1500}}}))
    got = stack("roce-lossless-consistency", roce)
    assert [u for _, u in got.reports] == [urn("Switch", f"spine-0{i}") for i in range(1, 5)]
    with pytest.raises(_NotApplicableError):
        stack("ib-subnet-manager-redundancy", roce)


def test_stack_without_fabric_resources_is_not_applicable() -> None:
    other = [PolicyResource("aws:s3/bucket:Bucket", {}, "urn:x", "b", OPTS, None, None, [], {})]
    with pytest.raises(_NotApplicableError):
        stack("network-separation", other)


def test_unknown_values_propagate_for_the_sdk_to_report() -> None:
    intent = intent_for()
    resources = stack_resources(intent, "cable")
    sw = intent.switches[0]
    # A record is known text or, as a whole, unknown (the program never puts Outputs in it).
    resources[1] = resource("Switch", sw.name, {}, text=UNKNOWN_STRING_VALUE)
    with pytest.raises(UnknownValueError):
        stack("oversubscription-1-to-1", resources)


def test_a_stack_policy_reads_only_the_kinds_its_rule_needs() -> None:
    intent = intent_for()
    resources = stack_resources(intent, "cable")
    i = next(k for k, r in enumerate(resources) if r.resource_type.endswith(":Cable"))
    c = intent.cables[0]
    resources[i] = resource("Cable", c.name, {}, text=UNKNOWN_STRING_VALUE)
    assert stack("oversubscription-1-to-1", resources).reports == []  # never reads cables
    with pytest.raises(UnknownValueError):
        stack("network-separation", resources)  # reads every cable


def test_stack_policies_match_fabric_stack_check() -> None:
    intent = intent_for(
        **ROCE, roce={"pfc_priorities": [3, 4], "lossless_pools": 2}, oversubscription="2:1"
    )
    resources = stack_resources(intent)
    expected = {(v.rule, v.message) for v in evaluate(intent).violations}
    seen: set[tuple[str, str]] = set()
    for name, pol in POLICIES.items():
        rule = name.removesuffix("-fabric")
        if isinstance(pol, StackValidationPolicy):
            with contextlib.suppress(_NotApplicableError):
                seen |= {(rule, m.split("\n")[0]) for m in stack(name, resources).messages}
        else:
            seen |= {(rule, m.split("\n")[0]) for _, m in each_resource(name, resources)}
    assert seen == expected and len(expected) == 8 + 11  # leaves; PFC on 8 leaves + 3 spines


# --------------------------------------------------------------------------- resource policies


def test_port_budget_on_a_single_switch() -> None:
    intent = replace(intent_for(), "switches", by_name("spine-03"), ports_down=70)
    bad = [r for r in stack_resources(intent, "cable") if r.name == "spine-03"]
    got = each_resource("port-budget", bad)
    assert [m.split("\n")[0] for _, m in got] == [
        "spine-03: 70 ports cabled (70 down + 0 up), radix 64 at 400G — remove 6 cables or use "
        "a switch with ≥ 70 ports",
        "spine-03: 70 downlinks cabled, the plan budgets 64 — move 6 downlinks to another switch",
    ]
    assert each_resource("port-budget", bad, {"enforce_budgets": False})[0][0] == urn(
        "Switch", "spine-03"
    )


@pytest.mark.parametrize("granularity", ["bundle", "cable"])
def test_link_speed_on_a_cable_or_its_bundle(granularity: str) -> None:
    intent = intent_for()
    cable = next(c for c in intent.cables if c.role == "node_leaf" and c.a_device == "su1-node02")
    slow = replace(intent, "cables", by_name(cable.name), a_speed_gbps=200)
    got = each_resource("link-speed-match", stack_resources(slow, granularity))
    holder = (
        urn("Cable", cable.name)
        if granularity == "cable"
        else urn("CableBundle", f"{cable.b_device}/downlinks")
    )
    assert [u for u, _ in got] == [holder]
    assert got[0][1].startswith(f"{cable.name}: su1-node02 {cable.a_port} runs 200G")


def test_rail_alignment_on_a_nic_group_and_the_fabric_half() -> None:
    intent = intent_for()
    bad = replace(intent, "nics", by_name("su1-node04:mlx5_7"), leaf="su1-r1-leaf")
    got = each_resource("rail-alignment", stack_resources(bad))
    assert got == [
        (
            urn("RdmaNicGroup", "su1-node04/nics"),
            "su1-node04:mlx5_7: rail-8 NIC cabled to su1-r1-leaf, a rail-1 leaf; a rail-8 NIC "
            "lands on its SU's rail-8 leaf — move the cable to su1-r8-leaf 1/2/2\n"
            "fix: re-cable su1-node04 mlx5_7 to su1-r8-leaf (same-rail traffic then stays one hop)",
        )
    ]
    # the stack half only judges leaves without a standard name: nothing twice
    assert stack("rail-alignment-fabric", stack_resources(bad)).reports == []
    nic = replace(intent, "nics", by_name("su1-node04:mlx5_7"), speed_gbps=100)
    got_nic = stack("link-speed-match-fabric", stack_resources(nic))
    assert [u for _, u in got_nic.reports] == [urn("RdmaNicGroup", "su1-node04/nics")]


def test_link_speed_flags_a_nic_asked_beyond_its_model_on_the_fabric() -> None:
    # A Fabric record holding 800G on a ConnectX-7 profile (it never passed validate_spec).
    intent = intent_for(node_profile="hgx-b300", nic_gbps=800, switch="q3400")
    spec = {**intent.summary.spec, "node_profile": PROFILES["dgx-h100"].model_dump(mode="json")}
    bad = intent.model_copy(update={"summary": intent.summary.model_copy(update={"spec": spec})})
    got = stack("link-speed-match-fabric", stack_resources(bad))
    assert [u for _, u in got.reports] == [urn("Fabric", intent.summary.name)]
    assert "ConnectX-7" in got.reports[0][0] and "800G" in got.reports[0][0]
    assert stack("link-speed-match-fabric", stack_resources(intent)).reports == []
