"""Growth never renumbers what exists (issue #27): allocations and the plan's change summary."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric_stack.artifacts.growth import (
    allocations_of,
    compare_allocations,
    compare_config,
    compare_specs,
    context_of,
    group_of,
)
from fabric_stack.errors import SpecError
from fabric_stack.spec.model import FabricSpec

FABRICS: dict[str, dict[str, Any]] = {
    "roce": {"fabric": "roce", "switch": "sn5600"},
    "infiniband": {"fabric": "infiniband", "switch": "qm9700"},
}


P2P31 = {"fabric_links": "p2p31", "host_addressing": "p2p31"}
"""Numbered fabric links and a /31 per host port: the other addressing modes."""


def _spec(fabric: str, gpus: int, **kw: Any) -> FabricSpec:
    return FabricSpec.model_validate({**FABRICS[fabric], "gpus": gpus, **kw})


def _allocations(fabric: str, gpus: int, **kw: Any) -> dict[str, str]:
    return allocations_of(context_of(_spec(fabric, gpus, **kw)))


def _assert_kept(before: dict[str, str], after: dict[str, str]) -> None:
    lost = sorted(set(before) - set(after))
    assert not lost, f"growth dropped {lost[:5]}"
    assert compare_allocations(before, after) == []


# Two tiers: up to 2,048 GPUs on QM9700 (32-server SUs), 8,192 on SN5600; SUs of 8 servers
# keep the plans small and give many SUs (and partial ones) to grow through.
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fabric=st.sampled_from(sorted(FABRICS)),
    planes=st.sampled_from([1, 2]),
    p2p31=st.booleans(),
    steps=st.lists(st.integers(1, 24), min_size=2, max_size=3, unique=True).map(sorted),
)
def test_two_tier_growth_keeps_every_allocation(
    fabric: str, planes: int, p2p31: bool, steps: list[int]
) -> None:
    # Whole 8-GPU servers, four at a time, so partial SUs are on the path too.
    kw: dict[str, Any] = {"su_nodes": 8, "planes": planes}
    if p2p31 and fabric == "roce":
        kw["underlay"] = P2P31
    paths = [_allocations(fabric, 8 * 4 * n, **kw) for n in steps]
    for before, after in itertools.pairwise(paths):
        _assert_kept(before, after)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.integers(3, 6), min_size=2, max_size=2, unique=True).map(sorted))
def test_three_tier_growth_adding_pods_keeps_every_allocation(steps: list[int]) -> None:
    # QM9700 goes to three tiers above 2,048 GPUs: pods of 1,024 GPUs each.
    paths = [_allocations("infiniband", 1024 * n) for n in steps]
    _assert_kept(paths[0], paths[1])


def test_three_tier_roce_growth_adds_a_pod_without_renumbering() -> None:
    # SN5600 with 16-server SUs reaches three tiers at 2,048 GPUs: 2 → 3 pods.
    # 3 pods of SN5600 have 49,152 fabric links: more /31s than the default /16 holds.
    kw = {"su_nodes": 16, "underlay": {**P2P31, "p2p": "10.248.0.0/14"}}
    before = _allocations("roce", 4096, **kw)
    after = _allocations("roce", 6144, **kw)
    assert any(k.startswith("core") for k in before)
    assert any(k.endswith("a-address") and "spine" in k for k in before)  # spine-core /31s
    _assert_kept(before, after)


def test_256_to_1024_roce_moves_no_address_and_names_the_devices_that_change() -> None:
    diff = compare_specs(_spec("roce", 256), _spec("roce", 1024))
    assert diff.address_changes == []
    assert diff.allocations_removed == 0
    changed = {c.device for c in diff.config_changes if not c.new}
    new = {c.device for c in diff.config_changes if c.new}
    # Every existing leaf gains servers and spines, every existing spine gains leaves.
    assert changed == {f"su1-r{r}-leaf" for r in range(1, 9)} | {
        f"spine-0{i}" for i in (1, 2, 3, 4)
    }
    assert new == {f"su2-r{r}-leaf" for r in range(1, 9)} | {f"spine-0{i}" for i in (5, 6, 7, 8)}
    spine = next(c for c in diff.config_changes if c.device == "spine-01")
    assert "bgp" in spine.groups and "ports" in spine.groups


def test_256_to_1024_infiniband_keeps_partitions_sm_and_guid_bindings() -> None:
    diff = compare_specs(_spec("infiniband", 256), _spec("infiniband", 1024))
    assert diff.address_changes == []
    # The SM configuration (priorities, bindings, partitions) does not move with growth.
    assert not [c for c in diff.config_changes if c.device in ("partitions", "ufm-1", "ufm-2")]
    # The new switches are listed (no lines of their own: the SM configures them), the
    # existing ones are not (an IB switch's config does not change when a leaf is added).
    old, grown = (context_of(_spec("infiniband", g)) for g in (256, 1024))
    added = {s.name for s in grown.compute_switches()} - {s.name for s in old.compute_switches()}
    assert added and {c.device for c in diff.config_changes if c.new} == added
    assert all(c.added == 0 for c in diff.config_changes if c.new)


def test_a_spec_change_that_renumbers_is_listed_per_object() -> None:
    before = _allocations("roce", 256)
    after = _allocations(
        "roce", 256, underlay={"loopbacks": "10.254.128.0/17", "p2p": "10.253.0.0/16"}
    )
    moved = compare_allocations(before, after)
    assert moved and all(m.object.endswith("router-id") for m in moved)
    assert {m.object for m in moved} == {k for k in before if k.endswith("router-id")}


def test_loopback_pool_overflow_names_the_field() -> None:
    with pytest.raises(SpecError) as err:
        _allocations("roce", 1024, underlay={"loopbacks": "10.255.0.0/27"})
    assert err.value.field == "underlay.loopbacks"
    assert "reserved so growth never renumbers" in str(err.value)


def test_config_changes_group_lines_and_ignore_order() -> None:
    before = {"leaf": ["frr: neighbor swp1 interface", "frr: interface swp2"]}
    after = {"leaf": ["frr: interface swp2", "frr: neighbor swp1 interface", "frr: neighbor swp3"]}
    (change,) = compare_config(before, after)
    assert (change.added, change.removed, change.groups) == (
        1,
        0,
        {"bgp": {"added": 1, "removed": 0}},
    )
    assert group_of("cumulus: nv set qos pfc 3 switch-priority 3") == "qos"
    assert group_of("infiniband: 0x8001=ALL=full") == "partitions"


def _summary(**kw: Any) -> Any:
    from fabric_stack.adapters.pulumi.changes import summarize_changes

    return summarize_changes([], stack="t").model_copy(update={"compared": True, **kw})


def test_plan_views_carry_the_config_and_address_changes() -> None:
    from fabric_stack.analysis.growth_model import AddressChange, ConfigChange
    from fabric_stack.views.changes import changes_json, changes_markdown

    change = ConfigChange(
        device="spine-01",
        added=2,
        removed=1,
        groups={"bgp": {"added": 2, "removed": 1}},
        lines_added=["frr: neighbor a", "frr: neighbor b"],
        lines_removed=["frr: neighbor c"],
    )
    moved = AddressChange(object="spine-01 router-id", before="10.255.0.9", after="10.255.0.17")
    s = _summary(config_changes=[change], address_changes=[moved])
    md = changes_markdown(s)
    assert "#### Config changes (1 devices)" in md and "| spine-01 |  | 2 | 1 | bgp +2 −1 |" in md
    assert "| spine-01 router-id | 10.255.0.9 | 10.255.0.17 |" in md
    data = changes_json(s)
    assert data["config_changes"] == [
        {
            "device": "spine-01",
            "new": False,
            "added": 2,
            "removed": 1,
            "groups": {"bgp": {"added": 2, "removed": 1}},
        }
    ]  # the lines stay out of the plan's JSON
    assert data["address_changes"] == [moved.model_dump()]
    assert "None: every existing allocation is unchanged." in changes_markdown(_summary())


def test_diff_command_compares_two_spec_files(tmp_path: Any) -> None:
    import json

    from click.testing import CliRunner

    from fabric_stack.cli import main

    for name, gpus in (("a", 64), ("b", 128)):
        (tmp_path / f"{name}.yaml").write_text(
            f"fabric: roce\nswitch: sn5600\ngpus: {gpus}\nsu_nodes: 8\n"
        )
    args = ["diff", "--from", str(tmp_path / "a.yaml"), "--to", str(tmp_path / "b.yaml")]
    r = CliRunner().invoke(main, [*args, "--format", "json", "--lines"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["address_changes"] == [] and data["allocations_removed"] == 0
    assert any(c["new"] and c["lines_added"] for c in data["config_changes"])
    r = CliRunner().invoke(main, [*args, "--format", "markdown"])
    assert r.exit_code == 0 and "#### Address changes (0)" in r.stdout


def test_a_recorded_spec_that_does_not_read_back_is_not_compared_and_says_why() -> None:
    # Pulumi redacts a PostgreSQL backend's password wherever it occurs in its JSON output:
    # with the password "fabric", the recorded spec's `fabric` key came back "[credential]".
    from fabric_stack.artifacts.growth import with_growth
    from fabric_stack.views.changes import changes_markdown

    s = _summary(compared=False, spec_before={"[credential]": "infiniband"}, spec_after={})
    assert with_growth(s) is s  # one side only: nothing to compare, nothing to say
    s = s.model_copy(update={"spec_after": {"gpus": 256}})
    out = with_growth(s)
    assert not out.compared and out.config_changes == [] and out.address_changes == []
    assert out.not_compared.startswith("the recorded spec does not read back ([credential]:")
    assert "Config and address changes: not compared: the recorded spec" in changes_markdown(out)


def _recorded_stack(old_alloc: dict[str, Any] | None, **fabric_old: Any) -> Any:
    """A synthetic preview of a RoCE stack grown 256 -> 1,024 GPUs on SN5600: the Fabric
    record's two specs and spine-01's and su1-r1-leaf's records as the stack holds them
    (``old_alloc`` None: recorded before stable allocations, without the field;
    ``fabric_old``: more fields of the recorded Fabric record)."""
    from fabric_stack.adapters.pulumi.changes import Step, summarize_changes

    before, after = (_spec("roce", g).model_dump(mode="json") for g in (256, 1024))
    fab_old = {"spec": before, **fabric_old}
    steps = [Step(op="update", kind="Fabric", name="f", old=fab_old, new={"spec": after})]
    for name in ("spine-01", "su1-r1-leaf"):
        old: dict[str, Any] = {"name": name, "role": "leaf", "config_digest": "0" * 16}
        if old_alloc is not None:
            old["allocations"] = old_alloc[name]
        new = {"name": name, "config_digest": "1" * 16, "allocations": {}}
        steps.append(Step(op="update", kind="Switch", name=name, old=old, new=new))
    return summarize_changes(steps, stack="t")


def test_plan_names_what_a_stack_recorded_before_stable_allocations() -> None:
    # spine-01 was 10.255.0.9 under the old numbering (eight leaves first): the issue's
    # own example. The stable layout gives the spines the first slots.
    from fabric_stack.artifacts.growth import with_growth
    from fabric_stack.views.changes import changes_json, changes_markdown

    out = with_growth(_recorded_stack(None))
    moved = {a.object: a for a in out.address_changes}
    rid = moved["spine-01 router-id"]
    assert (rid.before, rid.after) == ("10.255.0.9", "10.255.0.1")
    assert rid.reason == "recorded before stable allocations: router-id 10.255.0.9 → 10.255.0.1"
    assert moved["su1-r1-leaf rail-blocks"].before == "not recorded"
    assert "su1-r1-leaf router-id" in moved  # leaves moved up behind the reserved spine slots
    assert all(a.reason.startswith("recorded before stable allocations") for a in moved.values())
    assert {a["object"] for a in changes_json(out)["address_changes"]} == set(moved)
    # Recorded by this numbering with fabric:config_records off: the Fabric record says
    # so, and a record without allocations is then no sign of the old numbering.
    assert with_growth(_recorded_stack(None, config_records=False)).address_changes == []
    md = changes_markdown(out)
    assert "| spine-01 router-id | 10.255.0.9 | 10.255.0.1 | recorded before" in md
    # The old numbering is an assumption (one release wrote allocation-less records with
    # the records off and no marker): every such change carries the caveat, said once.
    assert all("e696bf7…64ea23f" in a.caveat for a in moved.values())
    assert md.count("**Caveat:**") == 1
    assert changes_json(out)["address_changes"][0]["caveat"] == rid.caveat


def test_plan_trusts_records_that_agree_and_names_ones_that_do_not() -> None:
    from fabric_stack.artifacts.growth import switch_allocations, with_growth

    derived = switch_allocations(context_of(_spec("roce", 256)))
    same = {n: derived[n] for n in ("spine-01", "su1-r1-leaf")}
    assert with_growth(_recorded_stack(same)).address_changes == []  # a pure growth
    other = {**same, "spine-01": {**same["spine-01"], "asn": 64999}}
    moved = with_growth(_recorded_stack(other)).address_changes
    assert [a.object for a in moved] == ["spine-01 asn"]
    assert moved[0].before == "64999" and moved[0].after == str(same["spine-01"]["asn"])
    assert moved[0].reason.startswith("the stack recorded other allocations")
    assert moved[0].caveat == ""  # the record says what it was given: nothing assumed
