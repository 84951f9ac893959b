"""The NetBox way (issue #34): IB interface types, plant cable fields, rack positions, GUIDs,
underlay IPAM, custom fields, and drift's write-back, on the in-memory NetBox."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.adapters.discovery.netbox_live import NetboxApiReader
from fabric_stack.adapters.inventory.netbox.custom_fields import (
    FIELDS,
    OWNED_OBJECT_TYPES,
    ensure_custom_fields,
)
from fabric_stack.adapters.inventory.netbox.definitions import PROCESS_CACHE
from fabric_stack.adapters.inventory.netbox.fake import FakeNetBox
from fabric_stack.adapters.inventory.netbox.plan import details_of, ib_interface_type
from fabric_stack.adapters.inventory.netbox.status import (
    MARK,
    cable_statuses,
    journal_entries,
    write_back,
)
from fabric_stack.adapters.inventory.netbox.store import NetBoxStore
from fabric_stack.drift.model import DriftReport, Finding, Side
from fabric_stack.plant.plan import plant_of
from tests.netbox_plan_io import intent_of, write_plan

URL = "netbox+http://nb.test"
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


class CountingNetBox(FakeNetBox):
    """The fake, counting the objects each write call sends, and answering a device's rack
    nested with its name as NetBox does (the store compares rack names)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: Counter[str] = Counter()

    def _nest(self, endpoint: str) -> None:
        if endpoint != "dcim/devices":
            return
        racks = self.tables.get("dcim/racks", {})
        for d in self.tables.get(endpoint, {}).values():
            if isinstance(d.get("rack"), int):
                d["rack"] = {"id": d["rack"], "name": racks[d["rack"]]["name"]}

    def create(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        self.writes[f"POST {endpoint}"] += len(objs)
        out = super().create(endpoint, objs)
        self._nest(endpoint)
        return out

    def update(self, endpoint: str, objs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        self.writes[f"PATCH {endpoint}"] += len(objs)
        out = super().update(endpoint, objs)
        self._nest(endpoint)
        return out


@pytest.fixture
def api() -> Iterator[CountingNetBox]:
    PROCESS_CACHE.ids.clear()  # ids cached per process belong to another fake
    PROCESS_CACHE.details.clear()
    yield CountingNetBox()
    PROCESS_CACHE.ids.clear()
    PROCESS_CACHE.details.clear()


def _table(api: FakeNetBox, endpoint: str) -> list[dict[str, Any]]:
    return list(api.tables.get(endpoint, {}).values())


@pytest.mark.parametrize(
    ("speed", "lane", "want"),
    [
        (400, "NDR", "infiniband-ndr-4x"),  # QM9700 port; Q3400 port run at NDR
        (200, "NDR200", "infiniband-ndr-2x"),  # QM9700 split port
        (800, "XDR", "infiniband-xdr-4x"),  # Q3400 port
        (200, "HDR", "infiniband-hdr-4x"),
        (100, "HDR100", "infiniband-hdr-2x"),
        (50, "HDR", "infiniband-hdr"),
        (300, "NDR", "other"),  # 3 lanes: no such width
        (400, "400G", "other"),  # an Ethernet speed name
    ],
)
def test_ib_interface_type_by_speed_and_width(speed: int, lane: str, want: str) -> None:
    assert ib_interface_type(speed, lane) == want


def test_details_follow_the_plant_and_the_layout() -> None:
    topo = build_topology(size_fabric(validate_spec(gpus=32)))
    details = details_of(topo)
    plant = plant_of(topo)
    assert details.compute_types == {400: "infiniband-ndr-4x", 200: "infiniband-ndr-2x"}
    for link, run in zip(topo.links, plant.runs, strict=True):
        got = details.cables[link.id]
        assert got["length"] == run.length_m and got["length_unit"] == "m"
        assert got["label"].startswith(run.label_a) and len(got["label"]) <= 100
        assert got["type"] in ("dac-passive", "dac-active", "mmf-om4", "smf-os2", "cat6")
    racked = {d.name: d for d in topo.devices if d.rack}
    assert {n: (p["rack"], p["position"]) for n, p in details.devices.items()} == {
        n: (d.rack, d.position) for n, d in racked.items()
    }
    assert details.devices["su1-node01"]["model"] == "server:hgx-8gpu:8"
    assert not details.asns  # InfiniBand: no IP underlay


def test_infiniband_plan_in_netbox(api: CountingNetBox) -> None:
    store = NetBoxStore(URL, api=api, token="t")
    intent = intent_of(gpus=32, names=GUIDS)
    write_plan(store, "ib", intent)
    ifaces = _table(api, "dcim/interfaces")
    by_name = {(str(i["device"]), i["name"]): i for i in ifaces}
    devices = {d["id"]: d for d in _table(api, "dcim/devices")}
    compute = [c for c in intent.cables if c.network == "compute"]
    dev_id = {d["name"]: d["id"] for d in devices.values()}
    for c in compute:
        for dev, port in ((c.a_device, c.a_port), (c.b_device, c.b_port)):
            assert by_name[(str(dev_id[dev]), port)]["type"] == "infiniband-ndr-4x", (dev, port)
    assert not [i for i in ifaces if i["type"] == "400gbase-x-osfp"]
    node = devices[dev_id["su1-node01"]]
    assert node["position"] == 1 and node["face"] == "front" and node.get("rack")
    leaf = devices[dev_id["su1-r1-leaf"]]
    assert leaf["custom_fields"]["ib_guid"] == "0002c90300a1b2c3"
    hca = by_name[(str(dev_id["su1-node01"]), "mlx5_3")]
    assert hca["custom_fields"]["ib_guid"] == "0002c90300000004"
    types = {t["id"]: t for t in _table(api, "dcim/device-types")}
    assert types[node["device_type"]]["u_height"] == 8
    cables = _table(api, "dcim/cables")
    assert {c["length_unit"] for c in cables} == {"m"} and all(c["length"] for c in cables)
    # A rerun writes nothing but the Fabric record (always put): every body matches.
    api.writes.clear()
    write_plan(store, "ib", intent)
    assert api.writes == Counter({"PATCH dcim/sites": 1}), api.writes


def test_routed_underlay_in_ipam(api: CountingNetBox) -> None:
    store = NetBoxStore(URL, api=api, token="t")
    intent = intent_of(gpus=32, fabric="roce", switch="sn5600")
    write_plan(store, "roce", intent)
    topo = build_topology(size_fabric(validate_spec(gpus=32, fabric="roce", switch="sn5600")))
    details = details_of(topo)
    asns = {a["asn"]: a for a in _table(api, "ipam/asns")}
    assert sorted(asns) == sorted(set(details.asns.values()))
    assert {a["rir"] for a in asns.values()} == {_table(api, "ipam/rirs")[0]["id"]}
    addrs = {a["address"]: a for a in _table(api, "ipam/ip-addresses")}
    ifaces = {i["id"]: i for i in _table(api, "dcim/interfaces")}
    devices = {d["name"]: d for d in _table(api, "dcim/devices")}
    leaf = devices["su1-r1-leaf"]
    asn_id = leaf["custom_fields"]["fabric_asn"]
    assert next(a for a in asns.values() if a["id"] == asn_id)["asn"] == details.asns["su1-r1-leaf"]
    loop = addrs[details.loopbacks["su1-r1-leaf"]]
    assert ifaces[loop["assigned_object_id"]]["name"] == "lo"
    assert leaf["primary_ip4"] == loop["id"]
    host = addrs[details.addresses[("su1-node01", "mlx5_0")]]
    assert ifaces[host["assigned_object_id"]]["name"] == "mlx5_0"
    underlay = [
        p
        for p in _table(api, "ipam/prefixes")
        if p["custom_fields"]["fabric_kind"] == "UnderlayPrefix"
    ]
    assert {p["prefix"] for p in underlay} == set(details.prefixes)
    api.writes.clear()
    write_plan(store, "roce", intent)
    assert api.writes == Counter({"PATCH dcim/sites": 1}), api.writes
    store.delete("roce", "Fabric", intent.summary.name)  # the stack's summary record goes
    assert not _table(api, "ipam/asns")
    assert not [
        p
        for p in _table(api, "ipam/prefixes")
        if p["custom_fields"].get("fabric_kind") == "UnderlayPrefix"
    ]


def test_custom_fields_gain_missing_object_types(api: CountingNetBox) -> None:
    api.create(
        "extras/custom-fields",
        [{"name": "fabric_stack", "type": "text", "object_types": ["dcim.site"]}],
    )
    ensure_custom_fields(api)
    fields = {f["name"]: f for f in _table(api, "extras/custom-fields")}
    assert set(fields) == {f.name for f in FIELDS}
    assert set(fields["fabric_stack"]["object_types"]) == set(OWNED_OBJECT_TYPES)
    assert fields["fabric_asn"]["related_object_type"] == "ipam.asn"
    api.writes.clear()
    ensure_custom_fields(api)
    assert not api.writes


def _finding(kind: str, a: tuple[str, str], b: tuple[str, str], n: int) -> Finding:
    return Finding(
        id=f"f{n}",
        kind=kind,  # type: ignore[arg-type]
        source="ibnetdiscover",
        switch=b[0],
        summary=f"{a} - {b} {kind}",
        fix="reseat it",
        expected=[Side(a_device=a[0], a_port=a[1], b_device=b[0], b_port=b[1])],
    )


def test_write_status_sets_cable_status_and_journal_once(api: CountingNetBox) -> None:
    store = NetBoxStore(URL, api=api, token="t")
    spec = validate_spec(gpus=16)
    intent = intent_of(gpus=16)
    write_plan(store, "ws", intent)
    topo = build_topology(size_fabric(spec))
    gone, fine = topo.links[0], topo.links[1]
    report = DriftReport(
        summary={"missing_link": 1},
        findings=[
            _finding("missing_link", (gone.a_device, gone.a_port), (gone.b_device, gone.b_port), 1)
        ],
    )
    seen = {d.name for d in topo.devices}
    statuses = cable_statuses(topo.links, report, {"ibnetdiscover"}, seen)
    assert statuses[gone.id] == "planned" and statuses[fine.id] == "connected"
    # A cable the stack does not own keeps its status.
    site = _table(api, "dcim/sites")[0]["id"]
    foreign = api.create(
        "dcim/cables",
        [
            {
                "status": "planned",
                "site": site,
                "tags": [],
                "custom_fields": {"fabric_name": fine.id},
            }
        ],
    )[0]
    entries = journal_entries(report, {"ibnetdiscover"})
    done = write_back(api, statuses, entries)
    assert done.cables == len(statuses) - 1 and done.entries == 2  # both ends' devices
    cables = {
        c["custom_fields"].get("fabric_name"): c for c in _table(api, "dcim/cables") if c["tags"]
    }
    assert cables[gone.id]["status"] == "planned" and cables[fine.id]["status"] == "connected"
    assert api.tables["dcim/cables"][foreign["id"]]["status"] == "planned"
    journal = _table(api, "extras/journal-entries")
    assert {j["kind"] for j in journal} == {"danger"}
    assert all(
        j["comments"].endswith(f"{MARK}f1") and "reseat it" in j["comments"] for j in journal
    )
    again = write_back(api, statuses, entries)
    assert (again.cables, again.entries, again.unchanged) == (0, 0, len(statuses))


def test_live_reader_reads_back_devices(api: CountingNetBox) -> None:
    store = NetBoxStore(URL, api=api, token="t")
    write_plan(store, "rb", intent_of(gpus=16, names=GUIDS))
    reader = NetboxApiReader("http://nb.test", "t", site="rb", api=api)
    attrs = reader.device_attrs()
    assert attrs["su1-r1-leaf"]["guid"] == "0002c90300a1b2c3"
    assert attrs["su1-node01"]["position"] == 1.0 and attrs["su1-node01"]["rack"]
    cables = reader.fetch()
    assert all(c["length_unit"] == "m" for c in cables)
    json.dumps(attrs)  # plain JSON: what the adopt's names file takes


def test_fabric_record_written_last_backfills_the_rest(api: CountingNetBox) -> None:
    """`pulumi up` writes records in parallel: what came before the spec is patched after."""
    store = NetBoxStore(URL, api=api, token="t")
    intent = intent_of(gpus=16, names=GUIDS)
    store.put_many("late", "Switch", [(s.name, s.props()) for s in intent.switches])
    store.replace_bundle("late", "Cable", "all", [(c.name, c.props()) for c in intent.cables])
    assert {i["type"] for i in _table(api, "dcim/interfaces")} >= {"400gbase-x-osfp"}
    store.put("late", "Fabric", intent.summary.name, intent.summary.props())
    ifaces = _table(api, "dcim/interfaces")
    assert "400gbase-x-osfp" not in {i["type"] for i in ifaces}
    assert all(c.get("length_unit") == "m" for c in _table(api, "dcim/cables"))
    devices = {d["name"]: d for d in _table(api, "dcim/devices")}
    assert devices["su1-node01"]["position"] == 1 and devices["su1-r1-leaf"]["position"]
    assert devices["su1-r1-leaf"]["custom_fields"]["ib_guid"] == "0002c90300a1b2c3"
    api.writes.clear()
    store.put("late", "Fabric", intent.summary.name, intent.summary.props())
    assert api.writes == Counter({"PATCH dcim/sites": 1}), api.writes


def test_write_status_needs_netbox(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from fabric_stack.cli import main
    from fabric_stack.drift import PlanIndex
    from tests.drift_fixtures import clean_wires, ibnetdiscover_text

    topo = build_topology(size_fabric(validate_spec(gpus=16)))
    dump = tmp_path / "ib.txt"
    dump.write_text(
        ibnetdiscover_text(PlanIndex.from_topology(topo), clean_wires(topo, ("node_leaf",)))
    )
    r = CliRunner().invoke(
        main, ["drift", "--gpus", "16", "--ibnetdiscover", str(dump), "--write-status"]
    )
    assert r.exit_code == 2
    assert "--write-status needs --netbox URL (sources given: ibnetdiscover)" in r.output
    assert "Traceback" not in r.output
