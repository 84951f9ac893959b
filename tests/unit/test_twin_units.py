"""The twin's pure parts: wiring, GUIDs, faults, the ibsim net file, OpenSM config and log readers.

No root, no daemons: these check the functions the twin adapters are built on.
The real daemons are exercised in tests/integration/twin/test_twin.py (marker ``twin``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.artifacts import infiniband
from fabric_stack.artifacts._base import RenderContext
from fabric_stack.cli import main
from fabric_stack.drift.ignore import alias_rates, parse_ignore
from fabric_stack.drift.model import Endpoint, ObservedLink, Snapshot
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.topology.build import FABRIC_ROLES, MANAGER_ROLE, FabricTopology, build_topology
from fabric_stack.twin import ibnet, ibroutes
from fabric_stack.twin.lfts import parse_lfts, set_lft
from fabric_stack.twin.model import Fault
from fabric_stack.twin.wiring import (
    TwinError,
    apply_fault,
    assign_guids,
    parse_fault,
    plan_wiring,
)


def _topo(**kw: object) -> FabricTopology:
    return build_topology(size_fabric(validate_spec({}, **kw)))


@pytest.fixture(scope="module")
def ib() -> FabricTopology:
    return _topo()


@pytest.fixture(scope="module")
def roce() -> FabricTopology:
    return _topo(fabric="roce", switch="sn5600")


def test_ib_wiring_is_the_compute_subnet(ib: FabricTopology) -> None:
    w = plan_wiring(ib)
    # the InfiniBand subnet: compute cables and the fabric managers' (UFM) leaf cables
    compute = [lk for lk in ib.links if lk.role in FABRIC_ROLES]
    assert len(w.cables) == len(compute)
    hosts = sum(1 for lk in compute if lk.role in ("node_leaf", MANAGER_ROLE))
    assert sum(len(d.hcas) for d in w.devices) == hosts
    assert {"ufm-1", "ufm-2"} <= {d.name for d in w.devices if d.kind == "server"}
    assert {d.name for d in w.devices if d.kind == "switch"} == {
        d.name for d in ib.devices if d.role in ("leaf", "spine", "core")
    }


def test_ethernet_wiring_keeps_every_planned_cable(roce: FabricTopology) -> None:
    w = plan_wiring(roce)
    assert len(w.cables) == len(roce.links)
    ports = [(e.device, e.port) for c in w.cables for e in (c.a, c.b)]
    assert len(ports) == len(set(ports)), "a port carries two cables"
    # Interface names: at most 15 characters, no '/' (Linux IFNAMSIZ).
    assert all(len(p) <= 15 and "/" not in p for _, p in ports)


def test_two_plane_ib_is_refused_with_one_line() -> None:
    with pytest.raises(TwinError, match=r"^planes: .*2 planes"):
        plan_wiring(_topo(planes=2))


def test_guids_are_deterministic_unique_and_respect_given(ib: FabricTopology) -> None:
    w = plan_wiring(ib)
    a, b = assign_guids(w), assign_guids(w)
    assert a == b
    assert len(set(a.values())) == len(a)
    names = [d.name for d in w.devices if d.kind == "switch"]
    names += [f"{d.name} {h}" for d in w.devices for h in d.hcas]
    assert sorted(a) == sorted(names)
    # HCA GUIDs leave the next GUID free: ibsim gives port 1 the node GUID + 1.
    assert all(int(g, 16) & 0xF == 0 for g in a.values())
    given = {"spine-01": "0x0002c90300a1b2c0"}
    c = assign_guids(w, given)
    assert c["spine-01"] == "0x0002c90300a1b2c0"
    assert c["su1-r1-leaf"] == a["su1-r1-leaf"]


def test_netfile_describes_the_plan_as_gear_reports_it(ib: FabricTopology) -> None:
    w = plan_wiring(ib)
    guids = assign_guids(w)
    text = ibnet.render_netfile(w, guids, ib.plan.link_gbps, ib.plan.switch_model.key)
    switches = re.findall(
        r'^Switch (\d+) "S-([0-9a-f]{16})" # "([^"]+)" enhanced port 0', text, re.M
    )
    hcas = re.findall(r'^Hca 1 "H-([0-9a-f]{16})" # "([^"]+)"$', text, re.M)
    assert len(switches) == 12 and len(hcas) == 128 + 2  # + the two UFM HCAs
    assert ("64", guids["spine-01"][2:], "MF0;spine-01:MQM9700/U1") in switches
    assert (guids["su1-node07 mlx5_3"][2:], "su1-node07 mlx5_3") in hcas
    port_lines = re.findall(r"^\[\d+\] .* (\d)x([A-Z]+)$", text, re.M)
    assert len(port_lines) == 2 * len(w.cables)  # every cable from both ends
    # ibsim 0.10 has no NDR lane: the planned 4xNDR runs as 4xHDR (same width).
    assert set(port_lines) == {("4", "HDR")}


def test_netfile_applies_speed_and_down_faults(ib: FabricTopology) -> None:
    w = plan_wiring(ib)
    guids = assign_guids(w)
    slow = parse_fault(ib, w, "speed", ("spine-01:1", "200"))
    down = parse_fault(ib, w, "down", ("su1-node03",))
    w2 = apply_fault(ib, apply_fault(ib, w, slow), down)
    text = ibnet.render_netfile(w2, guids, ib.plan.link_gbps, ib.plan.switch_model.key)
    assert len(re.findall(r" 2xHDR$", text, re.M)) == 2  # both ends of the one slow cable
    assert "su1-node03" not in text
    assert len(re.findall(r"^Hca ", text, re.M)) == 128 + 2 - 8


def test_rates() -> None:
    assert ibnet.planned_rate(400).text == "4xNDR"
    assert ibnet.planned_rate(200).text == "2xNDR"
    assert ibnet.planned_rate(800).text == "4xXDR"
    assert ibnet.twin_rate(ibnet.planned_rate(400)).text == "4xHDR"
    assert ibnet.fault_rate(400, 100).text == "1xHDR"
    with pytest.raises(TwinError, match="try 100, 200"):
        ibnet.fault_rate(400, 300)
    with pytest.raises(TwinError):
        ibnet.fault_rate(400, 400)  # the planned speed is not a fault


def test_rendered_opensm_conf_is_kept_except_paths(ib: FabricTopology) -> None:
    ctx = RenderContext.from_topology(ib, guids=assign_guids(plan_wiring(ib)))
    arts = {a.path: a.content for a in infiniband.render(ctx)}
    rendered = arts["infiniband/opensm-ufm-1.conf"]
    out = ibnet.adapt_opensm_conf(rendered, "/tw/etc", "/tw/logs/o.log", "/tw/logs")
    settings = [ln for ln in out.splitlines() if ln and not ln.startswith("#")]
    assert "routing_engine ftree" in settings
    assert "root_guid_file /tw/etc/root-guids.conf" in settings
    assert "partition_config_file /tw/etc/partitions.conf" in settings
    assert "node_name_map_name /tw/etc/ib-node-name-map" in settings
    assert "log_file /tw/logs/o.log" in settings
    # Every rendered setting survives; only the UFM/opensm paths changed, the port GUID is
    # ibsim's for that HCA (node GUID + 1) and virt_enabled (NVIDIA) is commented out.
    ufm = "/opt/ufm/files/conf/opensm/"
    for ln in rendered.splitlines():
        if ln.startswith("guid "):
            assert f"guid 0x{int(ln.split()[1], 16) + 1:016x}" in settings
        elif ln.startswith("virt_enabled"):
            assert f"# twin: upstream OpenSM has no virt_enabled (NVIDIA option): {ln}" in out
        elif ln and not ln.startswith("#"):
            assert ln.replace(ufm, "/tw/etc/") in settings


def test_sharp_option_upstream_lacks_is_commented() -> None:
    out = ibnet.adapt_opensm_conf("routing_engine ftree\nsharp_enabled 2\n", "/e", "/l", "/d")
    assert "\nsharp_enabled 2" not in out
    assert "# twin: upstream OpenSM has no sharp_enabled" in out


def test_routing_used_reads_the_engine_and_fallback() -> None:
    good = "x 0x02 -> osm_ucast_mgr_process: ftree tables configured on all switches\n"
    assert ibnet.routing_used(good, "ftree")["ok"] is True
    bad = (
        "x 0x01 -> setup_routing_engines: Failed to setup routing engine 'ar_ftree'\n"
        "x 0x02 -> osm_ucast_mgr_process: minhop tables configured on all switches\n"
    )
    r = ibnet.routing_used(bad, "ar_ftree")
    assert r["engine"] == "minhop" and r["fell_back"] is True and r["ok"] is False
    assert r["log"] and "ar_ftree" in str(r["log"][0])  # type: ignore[index]
    assert ibnet.routing_used("", "ftree")["ok"] is False  # never routed: not ok


def test_parse_sminfo() -> None:
    line = (
        "sminfo: sm lid 1 sm guid 0xfc6a1c0300000001, activity count 92 priority 15 "
        "state 3 SMINFO_MASTER"
    )
    info = ibnet.parse_sminfo(line)
    assert info == {"lid": 1, "guid": "0xfc6a1c0300000001", "priority": 15, "state": "MASTER"}
    assert ibnet.parse_sminfo("ibwarn: query failed") is None


_DISCOVER = """\
Switch\t4 "S-0000000000000001"\t\t# "MF0;spine:MQM9700/U1" enhanced port 0 lid 1 lmc 0
[1]\t"S-0000000000000002"[3]\t\t# "MF0;leaf-1:MQM9700/U1" lid 2 4xHDR
[2]\t"S-0000000000000003"[3]\t\t# "MF0;leaf-2:MQM9700/U1" lid 4 4xHDR

Switch\t4 "S-0000000000000002"\t\t# "MF0;leaf-1:MQM9700/U1" enhanced port 0 lid 2 lmc 0
[1]\t"H-0000000000000010"[1](11) \t\t# "n1 mlx5_0" lid 3 4xHDR
[3]\t"S-0000000000000001"[1]\t\t# "MF0;spine:MQM9700/U1" lid 1 4xHDR

Switch\t4 "S-0000000000000003"\t\t# "MF0;leaf-2:MQM9700/U1" enhanced port 0 lid 4 lmc 0
[1]\t"H-0000000000000020"[1](21) \t\t# "n2 mlx5_0" lid 5 4xHDR
[3]\t"S-0000000000000001"[2]\t\t# "MF0;spine:MQM9700/U1" lid 1 4xHDR

Ca\t1 "H-0000000000000010"\t\t# "n1 mlx5_0"
[1](11) \t"S-0000000000000002"[1]\t\t# lid 3 lmc 0 "MF0;leaf-1:MQM9700/U1" lid 2 4xHDR

Ca\t1 "H-0000000000000020"\t\t# "n2 mlx5_0"
[1](21) \t"S-0000000000000003"[1]\t\t# lid 5 lmc 0 "MF0;leaf-2:MQM9700/U1" lid 4 4xHDR
"""

_LFTS = """\
Unicast lids [0x0-0x5] of switch DR path slid 0; dlid 0; 0,3,2 guid 0x0000000000000003 (L2):
  Lid  Out   Destination
       Port     Info
0x0003 003 : (Channel Adapter portguid 0x0000000000000011: 'n1 mlx5_0')
0x0005 001 : (Channel Adapter portguid 0x0000000000000021: 'n2 mlx5_0')
2 valid lids dumped
Unicast lids [0x0-0x5] of switch DR path slid 0; dlid 0; 0,3 guid 0x0000000000000001 (S):
0x0003 001 : (Channel Adapter portguid 0x0000000000000011: 'n1 mlx5_0')
0x0005 002 : (Channel Adapter portguid 0x0000000000000021: 'n2 mlx5_0')
Unicast lids [0x0-0x5] of switch DR path slid 0; dlid 0; 0 guid 0x0000000000000002 (L1):
0x0003 001 : (Channel Adapter portguid 0x0000000000000011: 'n1 mlx5_0')
0x0005 003 : (Channel Adapter portguid 0x0000000000000021: 'n2 mlx5_0')
"""


def test_lft_walk_counts_pairs_and_hops() -> None:
    fab = ibnet.parse_discover(_DISCOVER)
    assert fab.lid["0000000000000010"] == 3 and fab.lid["0000000000000001"] == 1
    lfts = parse_lfts(_LFTS)
    r = ibroutes.verify_routes(fab, lfts, tiers=2)
    assert (r["pairs"], r["ok"], r["hops"], r["all"]) == (2, 2, {"3": 2}, True)


def test_lft_walk_finds_a_black_hole() -> None:
    fab = ibnet.parse_discover(_DISCOVER)
    broken = _LFTS.replace("0x0005 002 :", "0x0005 000 :")  # the spine drops traffic to n2
    r = ibroutes.verify_routes(fab, parse_lfts(broken), tiers=2)
    assert r["pairs"] == 2 and r["ok"] == 1 and r["all"] is False
    assert r["failed"][0]["switch"] == "MF0;spine:MQM9700/U1"  # where the route breaks


def test_lft_walk_stops_on_a_loop() -> None:
    fab = ibnet.parse_discover(_DISCOVER)
    looping = _LFTS.replace("0x0005 002 :", "0x0005 001 :").replace("0x0005 003 :", "0x0005 003 :")
    r = ibroutes.verify_routes(fab, parse_lfts(looping), tiers=2)
    assert r["ok"] == 1  # n1 → n2 bounces leaf-1 ↔ spine until the hop bound


@pytest.mark.parametrize(
    ("kind", "args", "message"),
    [
        ("yank", ("su1-node01:mlx5_0",), "is not known"),
        ("swap", ("su1-node01:mlx5_0",), "takes DEVICE:PORT DEVICE:PORT"),
        ("unplug", ("nobody:mlx5_0",), "no device 'nobody'"),
        ("unplug", ("su1-node01",), "expected DEVICE:PORT"),
        ("unplug", ("su1-node01:mlx5_9",), "has no port 'mlx5_9'"),
        ("move", ("su1-node01:mlx5_0", "su1-r1-leaf:2"), "already plugged"),
        ("rogue", ("su1-r1-leaf:1", "x"), "already plugged"),
        ("rogue", ("su1-r1-leaf:17", "su1-node02"), "already a device"),
        ("swap", ("su1-node01:mlx5_0", "su1-r1-leaf:1"), "two ends of one cable"),
        ("speed", ("spine-01:1", "fast"), "not a speed"),
        ("down", ("nobody",), "no such device"),
    ],
)
def test_bad_faults_are_one_line(
    ib: FabricTopology, kind: str, args: tuple[str, ...], message: str
) -> None:
    with pytest.raises(TwinError, match=re.escape(message)):
        parse_fault(ib, plan_wiring(ib), kind, args)


def test_swap_exchanges_two_cable_ends(ib: FabricTopology) -> None:
    w = plan_wiring(ib)
    f = parse_fault(ib, w, "swap", ("su1-node01:mlx5_0", "su1-node02:mlx5_0"))
    assert f == Fault(
        kind="swap", args=("su1-node01:mlx5_0", "su1-node02:mlx5_0"), expects="wrong_peer"
    )
    w2 = apply_fault(ib, w, f)
    peer = {(c.a.device, c.a.port): (c.b.device, c.b.number) for c in w2.cables}
    assert peer[("su1-node02", "mlx5_0")] == ("su1-r1-leaf", 1)
    assert peer[("su1-node01", "mlx5_0")] == ("su1-r1-leaf", 2)
    assert len(w2.cables) == len(w.cables)


def test_move_resolves_a_free_port_number_to_its_label(ib: FabricTopology) -> None:
    w = plan_wiring(ib)
    f = parse_fault(ib, w, "move", ("su1-node01:mlx5_0", "su1-r1-leaf:17"))
    assert f.args == ("su1-node01:mlx5_0", "su1-r1-leaf:1/9/1")  # QM9700: 2 ports per cage


def test_rate_rules_read_the_twin_lane_as_planned() -> None:
    rules = parse_ignore(
        {"rates": [{"lane": "HDR", "means": "NDR"}, {"gbps": 10, "means": "unknown"}]}
    )
    snap = Snapshot(source="x", origin="x")
    snap.links = [
        ObservedLink(Endpoint("a", "1"), Endpoint("b", "1"), 200, "4x", "4xHDR"),
        ObservedLink(Endpoint("a", "2"), Endpoint("b", "2"), 100, "2x", "2xHDR"),
        ObservedLink(Endpoint("c", "swp1"), Endpoint("d", "eth0"), 10),
        ObservedLink(Endpoint("e", "1"), Endpoint("f", "1"), 100, "4x", "4xEDR"),
    ]
    out = alias_rates(snap, rules).links
    assert [(lk.rate, lk.speed_gbps) for lk in out] == [
        ("4xNDR", 400),
        ("2xNDR", 200),
        (None, None),
        ("4xEDR", 100),  # not aliased: a real EDR link stays EDR
    ]


def test_unknown_rate_rule_key_is_one_line() -> None:
    from fabric_stack.errors import InputFileError

    with pytest.raises(InputFileError, match=r"rates\[0\]\.speed: unknown key"):
        parse_ignore({"rates": [{"speed": "HDR", "means": "NDR"}]}, "f.yaml")


def test_twin_without_root_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    for args in (["up", "--dir", str(tmp_path / "t")], ["down", "--dir", str(tmp_path / "t")]):
        result = CliRunner().invoke(main, ["twin", *args])
        assert result.exit_code == 2
        assert result.output.strip().splitlines() == [
            "error: twin needs root (it creates network namespaces and starts daemons); "
            "run it as root"
        ]
    assert not (tmp_path / "t").exists()


_TRACE = """\
From ca {0x02fa5702a0000010} portnum 1 lid 3-3 "n1 mlx5_0"
[1] -> switch port {0x0000000000000002}[1] lid 2-2 "MF0;leaf-1:MQM9700/U1"
[3] -> switch port {0x0000000000000001}[1] lid 1-1 "MF0;spine:MQM9700/U1"
[2] -> switch port {0x0000000000000003}[3] lid 4-4 "MF0;leaf-2:MQM9700/U1"
[1] -> ca port {0x0000000000000021}[1] lid 5-5 "n2 mlx5_0"
To ca {0x0000000000000020} portnum 1 lid 5-5 "n2 mlx5_0"
"""


def test_tracert_fills_lft_entries_dump_fts_left_out() -> None:
    fab = ibnet.parse_discover(_DISCOVER)
    no_top = "\n".join(ln for ln in _LFTS.splitlines() if not ln.startswith("0x0005"))
    lfts = parse_lfts(no_top)
    assert ibroutes.missing_destinations(fab, lfts) == [5]
    hops = ibnet.parse_tracert(_TRACE)
    assert hops == [
        ("0000000000000002", 3),
        ("0000000000000001", 2),
        ("0000000000000003", 1),
    ]
    for sw, port in hops:
        set_lft(lfts, sw, 5, port)
    r = ibroutes.verify_routes(fab, lfts, tiers=2)
    assert (r["pairs"], r["ok"], r["hops"], r["all"]) == (2, 2, {"3": 2}, True)
