"""The drift engine: matching by identity, classification, one finding per physical mistake."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric_stack.adapters.discovery import (
    EosReader,
    IbnetdiscoverReader,
    InventoryReader,
    LldpReader,
    NetboxCsvReader,
)
from fabric_stack.drift import (
    Endpoint,
    IgnoreRules,
    ObservedLink,
    PlanIndex,
    PortState,
    Snapshot,
    compute_drift,
    parse_ignore,
)
from fabric_stack.drift.coverage import NETWORKS
from fabric_stack.drift.identity import switch_port_number
from fabric_stack.drift.ports import max_port
from fabric_stack.errors import InputFileError
from fabric_stack.naming.devices import cage_of, switch_port_label
from fabric_stack.topology.build import FabricTopology
from tests.drift_fixtures import (
    FIXTURES,
    SEED_IB,
    SEED_ROCE,
    FakeStore,
    Wire,
    add,
    clean_wires,
    drop,
    free_port,
    move_b,
    set_rate,
    snapshot_of,
    swap_b,
    topology,
)

SPECS: dict[str, dict[str, Any]] = {
    "ib-2su": {"gpus": 128, "su_nodes": 8},
    "roce-2su": {"fabric": "roce", "switch": "sn5600", "gpus": 64, "su_nodes": 4},
    "ib-2plane": {"gpus": 64, "planes": 2, "nic_gbps": 800, "su_nodes": 4},
}
"""Small plans with free leaf ports (partial SUs) and two SUs, so every fault has room."""


@cache
def plan(name: str) -> tuple[FabricTopology, PlanIndex]:
    topo = topology(SPECS[name])
    return topo, PlanIndex.from_topology(topo)


def spelled(index: PlanIndex, wires: list[Wire], style: str) -> Snapshot:
    """A snapshot of ``wires`` as a source with ``style`` of names would report it."""

    def port(dev: str, p: str) -> str:
        sch = index.schemes.get(dev)
        if sch is None or style in ("plan", "fqdn"):
            return p
        n = switch_port_number(p, sch.ports_per_cage)
        assert n is not None
        if style == "number":
            return str(n)
        cage, lane = cage_of(n, sch.ports_per_cage)
        eos = f"Ethernet{cage}/{lane}"
        return f'"{eos}"' if style == "quoted" else eos

    def dev(d: str) -> str:
        return f"{d}.dc1.example.net" if style == "fqdn" else d

    return Snapshot(
        source="test",
        origin="memory",
        links=[
            ObservedLink(
                Endpoint(dev(w.a_dev), port(w.a_dev, w.a_port)),
                Endpoint(dev(w.b_dev), port(w.b_dev, w.b_port)),
                speed_gbps=w.speed,
            )
            for w in wires
        ],
    )


STYLES = st.sampled_from(["plan", "number", "eos", "quoted", "fqdn"])


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(SPECS)), style=STYLES)
def test_a_clean_snapshot_gives_no_findings(name: str, style: str) -> None:
    topo, index = plan(name)
    report = compute_drift(index, spelled(index, clean_wires(topo), style))
    assert report.findings == []
    assert report.summary["total"] == 0
    assert report.sources[0].links == len(topo.links)


FAULTS = [
    "missing",
    "extra",
    "swap_same_switch",
    "swap_across_switches",
    "wrong_port",
    "wrong_rail",
    "wrong_switch",
    "speed",
    "missing_device",
    "unexpected_device",
    "unknown_port",
]


def inject(
    topo: FabricTopology, index: PlanIndex, fault: str, data: st.DataObject
) -> tuple[list[Wire], str, str, set[str]]:
    """Wires with one fault, and the (kind, cause, planned link ids) it must produce."""
    wires = clean_wires(topo)
    node = [w for w in wires if w.role == "node_leaf"]
    pick = data.draw(st.sampled_from(node), label="link")
    leaf = index.devices[pick.b_dev]
    if fault == "missing":
        return drop(wires, pick.id), "missing_link", "", {pick.id}
    if fault == "extra":
        other = next(d for d, i in index.devices.items() if i.role == "leaf" and d != pick.b_dev)
        w = Wire(
            pick.b_dev, free_port(index, pick.b_dev, 1), other, free_port(index, other, 1), 400
        )
        return add(wires, w), "unexpected_link", "", set()
    if fault == "swap_same_switch":
        mate = data.draw(
            st.sampled_from([w for w in node if w.b_dev == pick.b_dev and w is not pick])
        )
        return swap_b(wires, pick.id, mate.id), "wrong_peer", fault, {pick.id, mate.id}
    if fault == "swap_across_switches":
        mate = data.draw(
            st.sampled_from([w for w in node if w.a_dev == pick.a_dev and w is not pick])
        )
        return swap_b(wires, pick.id, mate.id), "wrong_peer", fault, {pick.id, mate.id}
    if fault == "wrong_port":
        return (
            move_b(wires, pick.id, pick.b_dev, free_port(index, pick.b_dev, 1)),
            "wrong_peer",
            fault,
            {pick.id},
        )
    if fault == "wrong_rail":
        other = next(
            d
            for d, i in index.devices.items()
            if i.role == "leaf"
            and i.su == leaf.su
            and i.plane == leaf.plane
            and i.rail != leaf.rail
        )
        return (
            move_b(wires, pick.id, other, free_port(index, other, 1)),
            "wrong_peer",
            fault,
            {pick.id},
        )
    if fault == "wrong_switch":
        other = next(
            d
            for d, i in index.devices.items()
            if i.role == "leaf"
            and i.su != leaf.su
            and i.plane == leaf.plane
            and i.rail == leaf.rail
        )
        return (
            move_b(wires, pick.id, other, free_port(index, other, 1)),
            "wrong_peer",
            fault,
            {pick.id},
        )
    if fault == "speed":
        return set_rate(wires, pick.id, pick.speed // 2, None), "speed_mismatch", "", {pick.id}
    if fault == "missing_device":
        return [w for w in wires if w.a_dev != pick.a_dev], "missing_device", "", set()
    if fault == "unknown_port":
        # The leaf reports a port beyond its model's cages: one unknown_port, no move.
        sch = index.schemes[pick.b_dev]
        n = max_port(sch) + 1 + data.draw(st.integers(0, 40), label="beyond")
        label = switch_port_label(sch.os_family, n, sch.ports_per_cage)
        return move_b(wires, pick.id, pick.b_dev, label), "unknown_port", "", {pick.id}
    assert fault == "unexpected_device"
    w = Wire("rogue-01", "eth0", pick.b_dev, free_port(index, pick.b_dev, 1), 400)
    return add(wires, w), "unexpected_device", "", set()


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(SPECS)), fault=st.sampled_from(FAULTS), style=STYLES, data=st.data()
)
def test_each_injected_fault_gives_exactly_its_finding(
    name: str, fault: str, style: str, data: st.DataObject
) -> None:
    topo, index = plan(name)
    wires, kind, cause, ids = inject(topo, index, fault, data)
    report = compute_drift(index, spelled(index, wires, style))
    assert [(f.kind, f.cause) for f in report.findings] == [(kind, cause)], [
        f.summary for f in report.findings
    ]
    (finding,) = report.findings
    assert {s.where.removeprefix("plan:") for s in finding.expected if s.where} == ids
    assert report.summary[kind] == 1 and report.summary["total"] == 1
    assert finding.fix


def test_a_swap_is_one_finding_with_both_cables() -> None:
    topo, index = plan("ib-2su")
    wires = swap_b(clean_wires(topo), "su1-node03:mlx5_1", "su1-node04:mlx5_1")
    (f,) = compute_drift(index, snapshot_of(wires)).findings
    assert (f.kind, f.cause, f.switch, f.rail, f.su) == (
        "wrong_peer",
        "swap_same_switch",
        "su1-r2-leaf",
        2,
        1,
    )
    assert len(f.expected) == len(f.actual) == 2
    assert f.fix == (
        "swap the cables in su1-r2-leaf ports 1/2/1 (port 3) and 1/2/2 (port 4): "
        "su1-node03 mlx5_1 belongs on 1/2/1 (port 3), su1-node04 mlx5_1 on 1/2/2 (port 4)"
    )


def test_wrong_rail_fix_names_both_ports() -> None:
    topo, index = plan("ib-2su")
    wires = move_b(clean_wires(topo), "su1-node07:mlx5_3", "su1-r2-leaf", "1/12/1")
    (f,) = compute_drift(index, snapshot_of(wires)).findings
    assert f.cause == "wrong_rail"
    assert f.fix == (
        "move the cable at su1-node07 mlx5_3 from su1-r2-leaf 1/12/1 (port 23) "
        "to su1-r4-leaf 1/4/1 (port 7)"
    )


def test_finding_ids_are_stable_and_order_independent() -> None:
    topo, index = plan("roce-2su")
    wires = drop(
        move_b(clean_wires(topo), "su1-node02:mlx5_0", "su1-r1-leaf", "swp20s0"),
        "su1-node03:mlx5_4",
    )
    a = compute_drift(index, snapshot_of(wires))
    b = compute_drift(index, snapshot_of(list(reversed(wires))))
    assert [f.id for f in a.findings] == [f.id for f in b.findings]
    assert len({f.id for f in a.findings}) == 2
    assert all(f.id.startswith(f.kind + ":") for f in a.findings)


def test_plan_from_a_bare_link_list_matches_the_indexed_topology() -> None:
    topo, index = plan("roce-2su")
    wires = swap_b(clean_wires(topo), "su1-node01:mlx5_2", "su1-node02:mlx5_2")
    snap = spelled(index, wires, "eos")
    assert compute_drift(topo.links, snap).findings == compute_drift(index, snap).findings


def test_coverage_limits_missing_links_to_covered_devices() -> None:
    topo, index = plan("roce-2su")
    wires = [w for w in clean_wires(topo) if "su1-r1-leaf" in (w.a_dev, w.b_dev)]
    snap = snapshot_of(wires, covered=frozenset({"su1-r1-leaf"}))
    assert compute_drift(index, snap).findings == []
    uplink = next(w for w in wires if w.role == "leaf_spine")
    snap = snapshot_of(drop(wires, uplink.id), covered=frozenset({"su1-r1-leaf"}))
    assert [f.kind for f in compute_drift(index, snap).findings] == ["missing_link"]
    # A server seen nowhere else is a missing device, not a missing link.
    snap = snapshot_of(drop(wires, "su1-node01:mlx5_0"), covered=frozenset({"su1-r1-leaf"}))
    assert [f.kind for f in compute_drift(index, snap).findings] == ["missing_device"]


def test_one_plane_snapshot_is_not_blamed_for_the_other_plane() -> None:
    topo, index = plan("ib-2plane")
    plane1 = [
        w
        for w in clean_wires(topo, ("node_leaf", "manager_leaf", "leaf_spine"))
        if not w.b_dev.startswith("p2-")
    ]
    snap = snapshot_of(plane1, networks=frozenset({"compute"}), one_plane=True)
    assert compute_drift(index, snap).findings == []


def test_networks_scope_ignores_other_networks() -> None:
    topo, index = plan("ib-2su")
    compute = clean_wires(topo, ("node_leaf", "manager_leaf", "leaf_spine"))
    snap = snapshot_of(compute, networks=frozenset({"compute"}))
    assert compute_drift(index, snap).findings == []
    # Without a scope the input's own reach is inferred: only compute switches were seen,
    # so only the compute network is compared, and the report says why.
    unscoped = compute_drift(index, snapshot_of(compute))
    assert unscoped.findings == []
    assert unscoped.coverage is not None and unscoped.coverage.networks == ["compute"]
    assert unscoped.coverage.scope == "the networks whose switches the input reports"
    # Asking for every network: the storage/in-band/OOB switches were never seen: missing
    # devices (their cables fold into them instead of one missing_link each).
    every = compute_drift(index, snapshot_of(compute), networks=frozenset(NETWORKS))
    assert {f.kind for f in every.findings} == {"missing_device"}
    assert {f.expected[0].a_device for f in every.findings} == {
        d for d, i in index.devices.items() if i.role in ("storage", "inband", "oob")
    }
    assert every.coverage is not None
    assert every.coverage.by_network["compute"].matched_devices == (
        every.coverage.by_network["compute"].planned_devices
    )
    assert every.coverage.by_network["storage"].matched_links == 0


def test_unverified_ports_are_inferred_from_the_plan_and_noted() -> None:
    topo, index = plan("roce-2su")
    wires = swap_b(clean_wires(topo), "su1-node01:mlx5_3", "su1-node02:mlx5_3")
    snap = snapshot_of(wires)
    # Host ports as MAC addresses and no MAC table: the swap is still found on the leaf.
    snap.links = [
        replace(o, a=Endpoint(o.a.device, f"02:00:00:00:{i // 256:02x}:{i % 256:02x}", "mac"))
        if o.a.port.startswith("mlx5")
        else o
        for i, o in enumerate(snap.links)
    ]
    report = compute_drift(index, snap)
    assert [(f.kind, f.cause) for f in report.findings] == [("wrong_peer", "swap_same_switch")]
    assert any("not verified" in n for n in report.sources[0].notes)


def test_link_up_without_neighbour() -> None:
    topo, index = plan("roce-2su")
    wires = drop(clean_wires(topo), "su1-node02:mlx5_1")
    snap = snapshot_of(wires)
    snap.port_states = [
        PortState(Endpoint("su1-r2-leaf", "Ethernet1/2"), True, 400, "st:1"),
        PortState(Endpoint("su1-r2-leaf", "Ethernet30/1"), True, 400, "st:2"),
        PortState(Endpoint("su1-r2-leaf", "Ethernet31/1"), False, None, "st:3"),
    ]
    kinds = [(f.kind, f.summary) for f in compute_drift(index, snap).findings]
    assert kinds == [
        (
            "link_up_no_neighbor",
            "su1-r2-leaf swp1s1 (port 2) is up but reports no LLDP neighbour "
            "(planned su1-node02 mlx5_1)",
        ),
        (
            "link_up_no_neighbor",
            "su1-r2-leaf swp30s0 (port 59) is up with no LLDP neighbour and no planned cable",
        ),
    ]


# --------------------------------------------------------------------------- ignore rules


def test_ignore_rules() -> None:
    topo, index = plan("ib-2su")
    wires = drop(clean_wires(topo), "su1-node07:mlx5_3")
    wires = move_b(wires, "su1-node02:mlx5_0", "su1-r1-leaf", "1/12/1")
    snap = snapshot_of(wires)
    assert compute_drift(index, snap).summary["total"] == 2
    rules = parse_ignore([{"device": "su1-node07", "port": "mlx5_3", "mode": "ignore"}])
    assert [f.kind for f in compute_drift(index, snap, rules).findings] == ["wrong_peer"]
    # Link state only: the moved cable is up, so the port passes; the missing one does not.
    rules = parse_ignore(
        {
            "ports": [
                {"device": "su1-node02", "port": "mlx5_0", "mode": "link-state-only"},
                {"device": "su1-node07", "port": "mlx5_3", "mode": "link state only"},
            ]
        }
    )
    assert [f.kind for f in compute_drift(index, snap, rules).findings] == ["missing_link"]
    rules = IgnoreRules(devices=["su1-node0[27]"])
    assert compute_drift(index, snap, rules).findings == []
    # A leaf port in any spelling: logical number 2 is 1/1/2, where node02 should land.
    rules = parse_ignore([{"device": "su1-r1-leaf", "port": 2, "mode": "link_state_only"}])
    assert [f.kind for f in compute_drift(index, snap, rules).findings] == [
        "wrong_peer",
        "missing_link",
    ]
    ids = [f.id for f in compute_drift(index, snap).findings]
    assert len(compute_drift(index, snap, IgnoreRules(findings=ids[:1])).findings) == 1


def test_ignore_file_errors_name_the_yaml_path() -> None:
    with pytest.raises(InputFileError) as e:
        parse_ignore({"ports": [{"device": "x", "mode": "sometimes"}]}, "ign.yaml")
    assert (
        e.value.message
        == "ign.yaml:$.ports[0].mode: 'sometimes' is not a mode (use ignore or link_state_only)"
    )
    with pytest.raises(InputFileError, match=r"ign.yaml:\$.colour: unknown key"):
        parse_ignore({"colour": 1}, "ign.yaml")


# --------------------------------------------------------------------------- the seed fixtures


def _kinds(report: Any) -> list[tuple[str, str, str]]:
    return sorted((f.kind, f.cause, f.switch) for f in report.findings)


def test_seed_ibnetdiscover_faults() -> None:
    idx = PlanIndex.from_topology(topology(SEED_IB))
    snap = IbnetdiscoverReader(
        FIXTURES / "ib/ibnetdiscover.txt", FIXTURES / "ib/node-name-map"
    ).load()
    report = compute_drift(idx, snap)
    assert _kinds(report) == sorted(
        [
            ("missing_link", "", "su1-r8-leaf"),
            ("unexpected_link", "", "su1-r1-leaf"),
            ("wrong_peer", "swap_same_switch", "su1-r2-leaf"),
            ("wrong_peer", "wrong_rail", "su1-r4-leaf"),
            ("speed_mismatch", "", "su1-r5-leaf"),
            ("attribute_changed", "", "su1-r7-leaf"),
            ("missing_device", "", ""),
            ("unexpected_device", "", "su1-r8-leaf"),
        ]
    )
    gone = next(f for f in report.findings if f.kind == "missing_device")
    assert (gone.expected[0].a_device, gone.links) == ("su1-node12", 8)
    speed = next(f for f in report.findings if f.kind == "speed_mismatch")
    assert speed.actual[0].rate == "4xHDR" and speed.changes == ["speed_gbps: 400 → 200"]


def test_seed_lldp_and_eos_faults() -> None:
    idx = PlanIndex.from_topology(topology(SEED_ROCE))
    lldp = compute_drift(
        idx, LldpReader(FIXTURES / "roce/lldp", FIXTURES / "roce/mac-table.csv").load()
    )
    assert _kinds(lldp) == sorted(
        [
            ("missing_link", "", "su1-r8-leaf"),
            ("unexpected_link", "", "su1-r1-leaf"),
            ("wrong_peer", "swap_same_switch", "su1-r2-leaf"),
            ("wrong_peer", "swap_across_switches", "su1-r1-leaf"),
            ("wrong_peer", "wrong_rail", "su1-r4-leaf"),
            ("wrong_peer", "wrong_switch", "su1-r6-leaf"),
            ("speed_mismatch", "", "su1-r3-leaf"),
        ]
    )
    eos = compute_drift(
        idx, EosReader(FIXTURES / "roce/eos", FIXTURES / "roce/mac-table.csv").load()
    )
    assert _kinds(eos) == sorted(
        [
            ("missing_link", "", "su1-r3-leaf"),
            ("link_up_no_neighbor", "", "su1-r6-leaf"),
            ("wrong_peer", "wrong_port", "su1-r7-leaf"),
            ("speed_mismatch", "", "su1-r1-leaf"),
            ("unexpected_device", "", "su1-r1-leaf"),
        ]
    )


def test_seed_netbox_and_inventory_faults() -> None:
    idx = PlanIndex.from_topology(topology(SEED_IB))
    nb = compute_drift(idx, NetboxCsvReader(FIXTURES / "ib/netbox-cables.csv").load())
    assert _kinds(nb) == sorted(
        [
            ("missing_link", "", "su1-oob-a1"),
            ("unexpected_link", "", "su1-r1-leaf"),
            ("wrong_peer", "wrong_port", "su1-storage-b1"),
            ("attribute_changed", "", "su1-r4-leaf"),
            ("attribute_changed", "", "su1-oob-a1"),
        ]
    )
    typ = next(f for f in nb.findings if f.switch == "su1-oob-a1" and f.kind == "attribute_changed")
    assert typ.changes == ["type: 'copper cable' → 'mmf-om4'"]
    recs = json.loads((FIXTURES / "ib/inventory-records.json").read_text())
    inv = compute_drift(idx, InventoryReader(FakeStore(recs)).load())
    assert _kinds(inv) == sorted(
        [
            ("missing_link", "", "su1-r3-leaf"),
            ("attribute_changed", "", "su1-r1-leaf"),
            ("attribute_changed", "", "su1-r2-leaf"),
            ("speed_mismatch", "", "su1-r7-leaf"),
            ("attribute_changed", "", "spine-03"),
            ("unexpected_device", "", "su1-r9-leaf"),
        ]
    )
    assert all("pulumi" in f.fix for f in inv.findings if f.kind != "unexpected_device")
