"""`render sonic`: every config_db.json checked table by table against SONiC's schema.

A fast first check: ``make validate`` (validate/sonic_yang.py) runs libyang over SONiC's own
YANG models, and validate/sonic_defaults.py the platform's buffer defaults. Here :data:`SCHEMA`
transcribes, per
table, the key shape and the leaves (with their value patterns) of the YANG module
named next to it, from sonic-net/sonic-buildimage ``src/sonic-yang-models/yang-models``.
On top of the per-field check the tests follow SONiC's leafrefs (a QoS map, WRED or
buffer profile, VLAN member port… must exist) and check that port names and lanes
are the SN5600 O128 ``port_config.ini`` rows the drift reader parses.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from fabric_stack.artifacts import TargetMismatchError, render_artifacts, sonic
from fabric_stack.drift.plan import PortScheme
from fabric_stack.drift.ports import port_number
from fabric_stack.hardware.switches import CATALOG
from fabric_stack.nos.sonic import SONIC_DEFAULTS, sonic_port
from tests.golden_artifacts import context, seed_context

SN5600_LANES = 8
"""SerDes lanes per SN5600 cage in SONiC's port_config.ini (O128: Ethernet0, 4, 8 … 508)."""

IP4 = r"\d{1,3}(\.\d{1,3}){3}"
PORT = r"Ethernet\d+"
NUM = r"\d+"
MAPK = r"[A-Za-z0-9_.-]+"
SCHEMA: dict[str, tuple[str, dict[str, str]]] = {
    # sonic-device_metadata.yang
    "DEVICE_METADATA": (
        "localhost",
        {
            "hostname": r"[A-Za-z0-9_.-]{1,63}",
            "bgp_asn": NUM,
            "type": r"ToRRouter|LeafRouter|SpineRouter|BackEndToRRouter|BackEndLeafRouter",
            "platform": r"[A-Za-z0-9_-]*",
            "hwsku": r"[A-Za-z0-9_-]*",
            "docker_routing_config_mode": r"separated|unified|split|split-unified",
            "buffer_model": r"traditional|dynamic",
        },
    ),
    # sonic-port.yang (fec: rs, fc, none, auto; mtu 68-9216; admin_status up/down)
    "PORT": (
        PORT,
        {
            "alias": r"etp\d+[a-h]?",
            "lanes": r"\d+(,\d+)*",
            "speed": NUM,
            "mtu": r"(6[89]|[7-9]\d|[1-8]\d{2,3}|9[01]\d\d|920\d|921[0-6]|\d{2,3})",
            "fec": r"rs|fc|none|auto",
            "admin_status": r"up|down",
            "description": r"[^\n]{0,255}",
        },
    ),
    # sonic-loopback-interface.yang
    "LOOPBACK_INTERFACE": (rf"Loopback\d+(\|{IP4}/32)?", {}),
    # sonic-interface.yang (ipv6_use_link_local_only: mode-status enable|disable)
    "INTERFACE": (rf"{PORT}(\|{IP4}/\d+)?", {"ipv6_use_link_local_only": r"enable|disable"}),
    # sonic-vlan.yang: VLAN, VLAN_MEMBER (tagging_mode), VLAN_INTERFACE
    "VLAN": (r"Vlan\d+", {"vlanid": NUM, "mtu": NUM}),
    "VLAN_MEMBER": (rf"Vlan\d+\|{PORT}", {"tagging_mode": r"untagged|tagged|priority_tagged"}),
    "VLAN_INTERFACE": (rf"Vlan\d+(\|{IP4}/\d+)?", {}),
    # sonic-bgp-neighbor.yang
    "BGP_NEIGHBOR": (
        IP4,
        {"asn": NUM, "name": r"\S+", "local_addr": IP4, "admin_status": r"up|down"},
    ),
    # sonic-dscp-tc-map.yang, sonic-tc-queue-map.yang, sonic-tc-priority-group-map.yang,
    # sonic-pfc-priority-queue-map.yang: name → {"<n>": "<n>"}
    "DSCP_TO_TC_MAP": (MAPK, {str(d): r"[0-7]" for d in range(64)}),
    "TC_TO_QUEUE_MAP": (MAPK, {str(d): r"[0-7]" for d in range(8)}),
    "TC_TO_PRIORITY_GROUP_MAP": (MAPK, {str(d): r"[0-7]" for d in range(8)}),
    "MAP_PFC_PRIORITY_TO_QUEUE": (MAPK, {str(d): r"[0-7]" for d in range(8)}),
    # sonic-port-qos-map.yang (pfc_enable / pfcwd_sw_enable: "3" or "3,4" or "")
    "PORT_QOS_MAP": (
        PORT,
        {
            "dscp_to_tc_map": MAPK,
            "tc_to_queue_map": MAPK,
            "tc_to_pg_map": MAPK,
            "pfc_to_queue_map": MAPK,
            "pfc_enable": r"([0-7](,[0-7])*)?",
            "pfcwd_sw_enable": r"([0-7](,[0-7])*)?",
        },
    ),
    # sonic-wred-profile.yang
    "WRED_PROFILE": (
        MAPK,
        {
            "ecn": r"ecn_none|ecn_green|ecn_yellow|ecn_red|ecn_green_yellow|ecn_green_red|"
            r"ecn_yellow_red|ecn_all",
            "wred_green_enable": r"true|false",
            "green_min_threshold": NUM,
            "green_max_threshold": NUM,
            "green_drop_probability": r"\d{1,3}",
        },
    ),
    # sonic-scheduler.yang, sonic-queue.yang
    "SCHEDULER": (MAPK, {"type": r"STRICT|WRR|DWRR", "weight": NUM}),
    "QUEUE": (rf"{PORT}\|[0-7]", {"scheduler": MAPK, "wred_profile": MAPK}),
    # sonic-buffer-pool.yang, sonic-buffer-profile.yang, sonic-buffer-pg.yang,
    # sonic-buffer-queue.yang, sonic-cable-length.yang
    "BUFFER_POOL": (MAPK, {"type": r"ingress|egress", "mode": r"static|dynamic", "size": NUM}),
    "BUFFER_PROFILE": (MAPK, {"pool": MAPK, "size": NUM, "dynamic_th": r"-?\d+"}),
    "BUFFER_PG": (rf"{PORT}\|[0-7](-[0-7])?", {"profile": MAPK}),
    "BUFFER_QUEUE": (rf"{PORT}\|[0-7](-[0-7])?", {"profile": MAPK}),
    "CABLE_LENGTH": (MAPK, {}),  # port name → "<n>m", checked below
}


def _dbs(ctx: Any) -> dict[str, dict[str, Any]]:
    return {
        a.path.split("/")[1]: json.loads(a.content)
        for a in sonic.render(ctx)
        if a.path.endswith("config_db.json")
    }


def _check_schema(name: str, db: dict[str, Any]) -> None:
    assert set(db) <= set(SCHEMA), (name, set(db) - set(SCHEMA))
    for table, rows in db.items():
        key_re, fields = SCHEMA[table]
        for key, row in rows.items():
            assert re.fullmatch(key_re, key), (name, table, key)
            assert all(isinstance(v, str) for v in row.values()), (name, table, key)
            if table == "CABLE_LENGTH":
                assert all(
                    re.fullmatch(PORT, p) and re.fullmatch(r"\d+m", v) for p, v in row.items()
                )
                continue
            for field, value in row.items():
                assert field in fields, (name, table, key, field)
                assert re.fullmatch(fields[field], value), (name, table, key, field, value)


def _check_refs(name: str, db: dict[str, Any]) -> None:
    ports = set(db["PORT"])
    for key, row in db["PORT_QOS_MAP"].items():
        assert key in ports
        for field, table in (
            ("dscp_to_tc_map", "DSCP_TO_TC_MAP"),
            ("tc_to_queue_map", "TC_TO_QUEUE_MAP"),
            ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"),
            ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"),
        ):
            assert row[field] in db[table], (name, key, field)
    for key, row in db["QUEUE"].items():
        assert key.split("|")[0] in ports and row["scheduler"] in db["SCHEDULER"]
        assert row.get("wred_profile", "ROCE_ECN") in db["WRED_PROFILE"]
    # Buffers are SONiC's defaults (tables.json); ours adds only BUFFER_PG rows (profile NULL).
    assert not set(db) & {"BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_QUEUE"}, name
    for key, row in db.get("BUFFER_PG", {}).items():
        assert key.split("|")[0] in ports and row["profile"] == "NULL"
    for key in db.get("VLAN_MEMBER", {}):
        vlan, port = key.split("|")
        assert vlan in db["VLAN"] and port in ports
        assert port not in db["INTERFACE"]  # a bridged port has no routed interface
    for key in [*db["INTERFACE"], *db.get("VLAN_INTERFACE", {})]:
        base = key.split("|")[0]
        assert base in ports or base in db.get("VLAN", {}), key
        if "|" in key:
            assert base in db["INTERFACE"] or base in db.get("VLAN_INTERFACE", {})
    assert set(db["CABLE_LENGTH"]["AZURE"]) == ports


@pytest.mark.parametrize("variant", ["roce", "roce-2su"])
def test_every_config_db_follows_the_schema(variant: str) -> None:
    ctx = seed_context(variant)
    dbs = _dbs(ctx)
    assert sorted(dbs) == sorted(ctx.underlay.switches)
    for name, db in dbs.items():
        _check_schema(name, db)
        _check_refs(name, db)


def test_port_names_and_lanes_are_sonics_and_drift_reads_them_back() -> None:
    sn5600 = CATALOG["sn5600"].sonic
    assert sn5600 is not None and sn5600.lanes_per_cage == SN5600_LANES
    ctx = seed_context("roce-2su")
    scheme = PortScheme("sonic", ctx.plan.ports_per_cage, radix=128, cages=64, model="sn5600")
    dbs = _dbs(ctx)
    for name, ports in ctx.compute_ports.items():
        db_ports = dbs[name]["PORT"]
        for num, label, _ in ports:
            sname, _, alias = sonic_port(SN5600_LANES, num, 2)
            first = int(sname.removeprefix("Ethernet"))
            # port_config.ini (O128): EthernetN has lanes N..N+3, alias etp<cage><a|b>.
            assert db_ports[sname]["lanes"] == ",".join(str(first + i) for i in range(4))
            assert db_ports[sname]["alias"] == alias
            assert db_ports[sname]["description"].startswith(f"{label} to ")
            assert port_number(sname, scheme) == num == port_number(alias, scheme)
            assert db_ports[sname]["speed"] == "400000"
    assert sonic_port(SN5600_LANES, 47, 2) == ("Ethernet184", "184,185,186,187", "etp24a")
    assert sonic_port(SN5600_LANES, 128, 2)[0] == "Ethernet508"


def test_underlay_and_qos_values_come_from_the_plan() -> None:
    ctx = seed_context("roce-2su")
    u = ctx.underlay
    dbs = _dbs(ctx)
    for name, s in u.switches.items():
        db = dbs[name]
        meta = db["DEVICE_METADATA"]["localhost"]
        assert meta["bgp_asn"] == str(s.asn) and meta["hostname"] == name
        assert f"Loopback0|{s.loopback}/32" in db["LOOPBACK_INTERFACE"]
        unnumbered = [k for k, v in db["INTERFACE"].items() if v]
        assert len(unnumbered) == len(u.links_of(name))
        for b in u.blocks_of(name):
            vid = ctx.spec.rail_vlan(b.rail)
            assert f"Vlan{vid}|{b.gateway}/{b.subnet.split('/')[1]}" in db["VLAN_INTERFACE"]
        for row in db["PORT_QOS_MAP"].values():
            assert row["pfc_enable"] == "3" == row["pfcwd_sw_enable"]
        assert (
            db["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3" and db["DSCP_TO_TC_MAP"]["ROCE"]["48"] == "6"
        )
        wred = db["WRED_PROFILE"]["ROCE_ECN"]
        assert (wred["green_min_threshold"], wred[
            "green_max_threshold"]) == ("150000", "1500000")  # fmt: skip
        port = next(iter(db["PORT"]))
        # PFC priority 3 is inside SONiC's default lossless PGs 3-4: no buffer row of ours.
        assert SONIC_DEFAULTS.lossless_pgs == (3, 4) and "BUFFER_PG" not in db
        assert db["QUEUE"][f"{port}|3"]["wred_profile"] == "ROCE_ECN"
        assert db["SCHEDULER"][db["QUEUE"][f"{port}|6"]["scheduler"]]["type"] == "STRICT"


def test_p2p31_fabric_and_hosts() -> None:
    ctx = context(
        {
            "fabric": "roce",
            "switch": "sn5600",
            "underlay": {"host_addressing": "p2p31", "fabric_links": "p2p31"},
            "roce": {"overrides": {"spine": {"pfc_priorities": []}}},
        }
    )
    u = ctx.underlay
    dbs = _dbs(ctx)
    for name, db in dbs.items():
        _check_schema(name, db)
        _check_refs(name, db)
        assert "VLAN" not in db
        assert len(db["BGP_NEIGHBOR"]) == len(u.links_of(name))
        for row in db["BGP_NEIGHBOR"].values():
            assert f"{row['local_addr']}/31" in {
                k.split("|")[1] for k in db["INTERFACE"] if "|" in k
            }
            assert row["asn"] == str(u.switches[row["name"]].asn)
    leaf = dbs["su1-r1-leaf"]
    scheme = PortScheme("cumulus", 2, radix=128, cages=64, model="sn5600")
    for h in u.hosts_of("su1-r1-leaf"):
        num = port_number(h.leaf_port, scheme)  # swp1s0 → 1
        assert num is not None
        assert f"{sonic_port(SN5600_LANES, num, 2)[0]}|{h.gateway}/31" in leaf["INTERFACE"]
    spine = dbs["spine-01"]
    assert all(r["pfc_enable"] == "" for r in spine["PORT_QOS_MAP"].values())
    assert "BUFFER_PG" not in spine


def test_sonic_needs_a_lane_table_and_render_all_includes_it() -> None:
    with pytest.raises(TargetMismatchError, match=r"^render sonic: no SONiC lane table for"):
        sonic.render(context({"fabric": "roce", "switch": "generic-64x400"}))
    with pytest.raises(TargetMismatchError, match=r"^render frr: an InfiniBand fabric"):
        sonic.render(seed_context("infiniband"))
    paths = [a.path for a in render_artifacts("all", seed_context("roce"))]
    assert "sonic/README.md" in paths and "sonic/su1-r1-leaf/config_db.json" in paths


def _frr_interfaces(text: str) -> set[str]:
    """Every interface an FRR config names: ``interface X`` stanzas and ``neighbor X interface``."""
    out = set()
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["interface"]:
            out.add(words[1])
        if words[:1] == ["neighbor"] and words[2:3] == ["interface"]:
            out.add(words[1])
    return out


@pytest.mark.parametrize("addressing", ["leaf-subnet", "p2p31"])
def test_sonic_frr_names_only_interfaces_of_its_config_db(addressing: str) -> None:
    """Defect (a) of #26: the SONiC FRR file named Cumulus ports (swp33s0, vlan101)."""
    ctx = context(
        {"fabric": "roce", "switch": "sn5600", "underlay": {"host_addressing": addressing}}
    )
    arts = {a.path: a.content for a in sonic.render(ctx)}
    for name in ctx.underlay.switches:
        db = json.loads(arts[f"sonic/{name}/config_db.json"])
        known = {*db["PORT"], *(k.split("|")[0] for k in db["LOOPBACK_INTERFACE"])}
        known |= {k.split("|")[0] for k in db.get("VLAN_INTERFACE", {})}
        named = _frr_interfaces(arts[f"sonic/{name}/frr.conf"])
        assert named and named <= known, (name, sorted(named - known))
        unnumbered = {k for k, v in db["INTERFACE"].items() if v}
        peers = {
            line.split()[1]
            for line in arts[f"sonic/{name}/frr.conf"].splitlines()
            if line.startswith(" neighbor ") and " interface " in line
        }
        assert peers == unnumbered, name
        meta = db["DEVICE_METADATA"]["localhost"]
        assert meta["docker_routing_config_mode"] == "split-unified"


def test_tables_json_lists_every_buffer_and_qos_row_as_ours() -> None:
    arts = {a.path: a.content for a in sonic.render(seed_context("roce"))}
    db = json.loads(arts["sonic/su1-r1-leaf/config_db.json"])
    tables = json.loads(arts["sonic/su1-r1-leaf/tables.json"])
    assert tables["hwsku"] == "Mellanox-SN5600-O128"
    for table, rows in tables["ours"].items():
        assert rows == sorted(db[table]), table
    assert "config reload" not in arts["sonic/README.md"].split("Do not copy")[0]
