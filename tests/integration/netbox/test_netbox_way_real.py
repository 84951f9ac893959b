"""The NetBox way against a real NetBox (issue #34): IB interface types, plant cable fields,
rack positions, GUIDs, underlay IPAM, the read-back, and ``drift --write-status``.

A 16-GPU InfiniBand plan and a 16-GPU RoCE plan (8:1 oversubscribed: small) are written
through the inventory store directly (no Pulumi: the store is what the providers call), into
the session's NetBox (the ``netbox`` fixture: no second server). Every check reads NetBox's
REST API with a client of its own.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.adapters.discovery.netbox_live import NetboxApiReader
from fabric_stack.adapters.inventory.netbox.client import NetBoxClient
from fabric_stack.adapters.inventory.netbox.plan import details_of
from fabric_stack.adapters.inventory.netbox.status import MARK
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.cli import main as cli_main
from fabric_stack.drift import PlanIndex
from tests.drift_fixtures import clean_wires, drop, ibnetdiscover_text
from tests.netbox_plan_io import intent_of, write_plan

pytestmark = [pytest.mark.netbox, pytest.mark.slow]

GPUS = 16
# 8:1 leaf oversubscription: one spine and 7 uplinks a leaf (IB 82 cables, RoCE 136, not 282
# and 536): every check here is per port, cable, device or subnet kind, none per uplink.
OVERSUB = "8:1"
GUIDS = {
    "rows": [
        {"planned": "su1-r1-leaf", "actual": "su1-r1-leaf", "guids": ["0x0002c90300a1b2c3"]},
        {
            "planned": "su1-node01",
            "actual": "su1-node01",
            "guids": [f"0x0002c903000000{i:02x}" for i in range(1, 9)],
        },
    ]
}

# Its own subnets: NetBox enforces unique prefixes in the global table (the IB plan's rails).
ROCE: dict[str, Any] = {
    "gpus": 16,
    "oversubscription": OVERSUB,
    "fabric": "roce",
    "switch": "sn5600",
    "networks": {
        "compute": {"subnet": "10.128.0.0/12"},
        "storage": {"subnet": "10.201.0.0/16"},
        "inband": {"subnet": "10.31.0.0/16"},
        "oob": {"subnet": "10.41.0.0/16"},
    },
}


class CountingClient(NetBoxClient):
    """The real client, counting the objects each write sends."""

    writes: Counter[str]

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        self.writes[f"POST {endpoint}"] += len(objs)
        return super().create(endpoint, objs)

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        self.writes[f"PATCH {endpoint}"] += len(objs)
        return super().update(endpoint, objs)


def _store(url: str, token: str) -> tuple[NetBoxStore, CountingClient]:
    client = CountingClient(url, token)
    client.writes = Counter()
    return NetBoxStore(f"netbox+{url}", api=client, token=token), client


@pytest.fixture(scope="module")
def written(netbox: tuple[str, str]) -> Iterator[tuple[str, str, float]]:
    """The IB plan (stack ``nbway``) written once."""
    url, token = netbox
    store, _ = _store(url, token)
    t0 = time.monotonic()
    write_plan(store, "nbway", intent_of(gpus=GPUS, oversubscription=OVERSUB, names=GUIDS))
    yield url, token, time.monotonic() - t0


def _by(rows: list[dict[str, Any]], key: str = "name") -> dict[str, dict[str, Any]]:
    return {str(r[key]): r for r in rows}


def test_infiniband_types_cables_racks_and_guids(written: tuple[str, str, float]) -> None:
    url, token, took = written
    api = NetBoxClient(url, token)
    site = api.select("dcim/sites", {"slug": "nbway"})[0]["id"]
    topo = build_topology(
        size_fabric(validate_spec(gpus=GPUS, oversubscription=OVERSUB, names=GUIDS))
    )
    details = details_of(topo)
    ifaces = api.select(
        "dcim/interfaces", {"site_id": site, "fields": "id,name,device,type,custom_fields"}
    )
    types = {(i["device"]["name"], i["name"]): i["type"]["value"] for i in ifaces}
    for link in topo.links:
        if link.network == "compute":
            for end in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
                assert types[end] == "infiniband-ndr-4x", end
    assert "400gbase-x-osfp" not in set(types.values())
    guid = {(i["device"]["name"], i["name"]): i["custom_fields"].get("ib_guid") for i in ifaces}
    assert guid[("su1-node01", "mlx5_3")] == "0002c90300000004"
    cables = api.select("dcim/cables", {"site_id": site})
    assert len(cables) == len(topo.links)
    for c in cables:
        want = details.cables[c["custom_fields"]["fabric_name"]]
        assert (c["length"], c["length_unit"]["value"]) == (want["length"], "m")
        assert (c["label"], c["type"]) == (want["label"], want["type"])
    devices = _by(
        api.select(
            "dcim/devices",
            {"site_id": site, "fields": "id,name,rack,position,face,device_type,custom_fields"},
        )
    )
    for name, place in details.devices.items():
        d = devices[name]
        assert (d["rack"]["name"], float(d["position"]), d["face"]["value"]) == (
            place["rack"],
            float(place["position"]),
            "front",
        ), name
    assert devices["su1-r1-leaf"]["custom_fields"]["ib_guid"] == "0002c90300a1b2c3"
    node_type = api.select("dcim/device-types", {"id": devices["su1-node01"]["device_type"]["id"]})[
        0
    ]
    assert node_type["u_height"] == 8.0
    print(f"the {GPUS}-GPU InfiniBand plan written in {took:.1f} s")


def test_underlay_in_ipam(written: tuple[str, str, float]) -> None:
    url, token, _ = written
    store, _ = _store(url, token)
    intent = intent_of(**ROCE)
    write_plan(store, "nbroce", intent)
    api = NetBoxClient(url, token)
    topo = build_topology(size_fabric(validate_spec(**ROCE)))
    details = details_of(topo)
    asns = _by(api.select("ipam/asns", {"cf_fabric_stack": "nbroce"}), "asn")
    assert sorted(int(a) for a in asns) == sorted(set(details.asns.values()))
    site = api.select("dcim/sites", {"slug": "nbroce"})[0]["id"]
    devices = _by(
        api.select("dcim/devices", {"site_id": site, "fields": "id,name,primary_ip4,custom_fields"})
    )
    leaf = devices["su1-r1-leaf"]
    assert leaf["custom_fields"]["fabric_asn"]["asn"] == details.asns["su1-r1-leaf"]
    assert leaf["primary_ip4"]["address"] == details.loopbacks["su1-r1-leaf"]
    addrs = _by(api.select("ipam/ip-addresses", {"cf_fabric_stack": "nbroce"}), "address")
    want = set(details.addresses.values()) | set(details.loopbacks.values())
    assert set(addrs) == want
    node = min(d for d, p in details.addresses if p == "mlx5_0")  # su1-node001 at 8:1
    host = addrs[details.addresses[(node, "mlx5_0")]]
    assert host["assigned_object"]["device"]["name"] == node
    assert host["assigned_object"]["name"] == "mlx5_0"
    prefixes = api.select(
        "ipam/prefixes", {"cf_fabric_stack": "nbroce", "cf_fabric_kind": "UnderlayPrefix"}
    )
    assert {p["prefix"] for p in prefixes} == set(details.prefixes)

    # A RoCE rail and its VLAN share a subnet: one prefix, the rail's, carrying the VLAN;
    # every VLAN's subnet prefix points at it; both records read back as written.
    vlans = {v["id"]: v for v in api.select("ipam/vlans", {"cf_fabric_stack": "nbroce"})}
    assert sorted(v["vid"] for v in vlans.values()) == sorted(v.vlan for v in intent.vlans)
    subnets = _by(api.select("ipam/prefixes", {"site_id": site}), "prefix")
    for v in intent.vlans:
        assert vlans[subnets[v.subnet]["vlan"]["id"]]["vid"] == v.vlan, v.name
    for r in intent.rails:
        assert subnets[r.subnet]["custom_fields"]["fabric_kind"] == "Rail"
    records = [("Rail", r.name, r.props()) for r in intent.rails]
    records += [("Vlan", v.name, v.props()) for v in intent.vlans]
    for kind, name, props in records:
        assert store.get("nbroce", kind, name) == {
            **props,
            "status": "active" if kind == "Vlan" else "reserved",
        }, name
    # Deleting a rail leaves the prefix its VLAN needs; writing it again takes it back.
    rail = intent.rails[0]
    store.delete("nbroce", "Rail", rail.name, unbundled_only=True)
    kept = api.select("ipam/prefixes", {"site_id": site, "prefix": rail.subnet})
    assert len(kept) == 1 and kept[0]["vlan"]["vid"] == rail.vlan
    assert store.get("nbroce", "Rail", rail.name) is None
    store.put("nbroce", "Rail", rail.name, rail.props())
    back = api.select("ipam/prefixes", {"site_id": site, "prefix": rail.subnet})
    assert [p["id"] for p in back] == [kept[0]["id"]]
    assert back[0]["custom_fields"]["fabric_kind"] == "Rail" and back[0]["vlan"]["vid"] == rail.vlan


def test_rewrite_writes_nothing(written: tuple[str, str, float]) -> None:
    url, token, _ = written
    store, client = _store(url, token)
    write_plan(store, "nbway", intent_of(gpus=GPUS, oversubscription=OVERSUB, names=GUIDS))
    assert client.writes == Counter({"PATCH dcim/sites": 1}), client.writes  # Fabric: always put


def test_drift_reads_it_back_and_writes_status(
    written: tuple[str, str, float], tmp_path: Path
) -> None:
    url, token, _ = written
    api = NetBoxClient(url, token)
    snap = NetboxApiReader(url, token, site="nbway").load()
    assert {link.attrs.get("length") for link in snap.links} <= {
        "5 m",
        "7 m",
        "10 m",
        "15 m",
        "20 m",
        "30 m",
    }
    assert all(link.attrs.get("label") and link.attrs.get("type") for link in snap.links)
    assert snap.devices["su1-r1-leaf"].attrs["guid"] == "0002c90300a1b2c3"
    assert len(snap.devices["su1-node01"].attrs["hca_guids"]) == 8
    assert snap.devices["su1-node01"].attrs["position"] == 1.0

    topo = build_topology(size_fabric(validate_spec(gpus=GPUS, oversubscription=OVERSUB)))
    roles = ("node_leaf", "manager_leaf", "leaf_spine")
    gone = next(link for link in topo.links if link.role == "node_leaf")
    wires = drop(clean_wires(topo, roles), gone.id)
    dump = tmp_path / "ib.txt"
    dump.write_text(ibnetdiscover_text(PlanIndex.from_topology(topo), wires))
    args = [
        "drift", "--gpus", str(GPUS), "--oversubscription", OVERSUB,
        "--netbox", url, "--netbox-site", "nbway", "--ibnetdiscover", str(dump),
        "--write-status", "--format", "json",
    ]  # fmt: skip
    env = {"NETBOX_TOKEN": token}
    first = CliRunner().invoke(cli_main, args, env=env)
    assert first.exit_code == 1, first.output  # drift: the dropped cable
    site = api.select("dcim/sites", {"slug": "nbway"})[0]["id"]
    cables = _by(
        [
            {**c, "name": c["custom_fields"]["fabric_name"]}
            for c in api.select("dcim/cables", {"site_id": site})
        ]
    )
    compute = [link for link in topo.links if link.role in roles]
    assert cables[gone.id]["status"]["value"] == "planned"
    assert {cables[link.id]["status"]["value"] for link in compute if link.id != gone.id} == {
        "connected"
    }
    assert {
        cables[link.id]["status"]["value"] for link in topo.links if link.role not in roles
    } == {"planned"}
    dev = _by(api.select("dcim/devices", {"site_id": site, "name": [gone.a_device, gone.b_device]}))
    entries = api.select(
        "extras/journal-entries",
        {
            "assigned_object_type": "dcim.device",
            "assigned_object_id": [d["id"] for d in dev.values()],
        },
    )
    ours = [e for e in entries if MARK in e["comments"]]
    assert {e["assigned_object_id"] for e in ours} == {d["id"] for d in dev.values()}
    assert all("missing_link" in e["comments"] and e["kind"]["value"] == "danger" for e in ours)
    again = CliRunner().invoke(cli_main, args, env=env)
    assert "0 cable status(es) set" in again.stderr and "0 journal entries added" in again.stderr, (
        again.stderr
    )
    assert json.loads(again.stdout)["findings"] == json.loads(first.stdout)["findings"]
