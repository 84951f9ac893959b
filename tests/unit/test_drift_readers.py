"""Readers and identity resolution: every format's quirks, and located errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabric_stack.adapters.discovery import (
    EosReader,
    IbnetdiscoverReader,
    InventoryReader,
    LldpReader,
    NetboxCsvReader,
    NetboxJsonReader,
    load_mac_table,
    load_node_name_map,
)
from fabric_stack.adapters.discovery.lldp import parse_lldpd
from fabric_stack.drift import Endpoint, PlanIndex
from fabric_stack.drift.identity import (
    Identity,
    normalize_guid,
    normalize_mac,
    split_hca,
    switch_port_number,
    unquote,
)
from fabric_stack.drift.plan import infer_schemes
from fabric_stack.errors import InputFileError, InventoryError
from tests.drift_fixtures import (
    FIXTURES,
    SEED_IB,
    SEED_ROCE,
    FakeStore,
    inventory_records,
    topology,
    write_all,
)

# --------------------------------------------------------------------------- fixtures on disk


def test_fixture_files_are_what_the_generator_writes(tmp_path: Path) -> None:
    written = write_all(tmp_path)
    on_disk = sorted(p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*") if p.is_file())
    assert [p.relative_to(tmp_path).as_posix() for p in written] == on_disk
    for p in written:
        rel = p.relative_to(tmp_path)
        assert (FIXTURES / rel).read_bytes() == p.read_bytes(), (
            f"{rel} is stale: run `python -m tests.drift_fixtures`"
        )


# --------------------------------------------------------------------------- identity


@pytest.mark.parametrize(
    ("raw", "ppc", "number"),
    [
        ("1/17/1", 2, 33),
        ("1/17/2", 2, 34),
        ("1/4", 1, 4),
        ("swp4s1", 2, 8),
        ("swp4", 1, 4),
        ("swp33s0", 2, 65),
        ("Ethernet4/2", 2, 8),
        ("Et4/2", 2, 8),
        ("Ethernet1/4/2", 2, 8),
        ("Ethernet7", 1, 7),
        ('"Ethernet3/1"', 2, 5),
        ("p12", 1, 12),
        ("12", 2, 12),
        ("Eth1/3/2", 2, 6),
        ("IB1/3/2", 4, 10),
        ("swp4s2", 2, None),
        ("Ethernet4/3", 2, None),
        ("bond0", 2, None),
        ("0", 2, None),
    ],
)
def test_switch_port_spellings_map_to_one_logical_number(
    raw: str, ppc: int, number: int | None
) -> None:
    assert switch_port_number(raw, ppc) == number


def test_small_identity_helpers() -> None:
    assert unquote('"\\"x\\""'.replace("\\", "")) == "x"
    assert unquote("'swp1s0'") == "swp1s0"
    assert (
        normalize_guid("c42a10300a1b2c4")
        == normalize_guid("H-0c42a10300a1b2c4")
        == "0c42a10300a1b2c4"
    )
    assert normalize_guid("0xFC6A1C0300E4A1C0") == "fc6a1c0300e4a1c0"
    assert (
        normalize_mac("0C42.A1B2.C3D4") == normalize_mac("0c-42-a1-b2-c3-d4") == "0c:42:a1:b2:c3:d4"
    )
    assert split_hca('"gpu001 mlx5_3"') == ("gpu001", "mlx5_3")
    assert split_hca("su1-node07/mlx5_0") == ("su1-node07", "mlx5_0")
    assert split_hca("spine-01") == ("spine-01", None)


def test_identity_resolves_devices_and_ports_onto_the_plan() -> None:
    ident = Identity(PlanIndex.from_topology(topology(SEED_ROCE)))
    assert ident.device("spine-01.dc1.example.net") == "spine-01"
    assert ident.device("MF0;su1-r3-leaf:MQM9700/U1") == "su1-r3-leaf"
    assert ident.device("SU1-R3-LEAF") == "su1-r3-leaf"
    assert ident.device("lab-sw-01.dc1") == "lab-sw-01"  # unknown: still the short name
    assert ident.device("10.0.0.1") == "10.0.0.1"
    # One leaf port, four spellings (SN5600 at 400G: 2 ports per cage).
    for raw in ("swp4s1", "Ethernet4/2", '"Ethernet4/2"', "8"):
        assert ident.endpoint(Endpoint("su1-r1-leaf", raw)) == Endpoint("su1-r1-leaf", "swp4s1")
    assert ident.endpoint(Endpoint("su1-node07", "mlx5_03")) == Endpoint("su1-node07", "mlx5_3")
    mac = ident.endpoint(Endpoint("su1-node07", "0C:42:A1:00:00:01", "mac"))
    assert (mac.port_type, mac.port) == ("mac", "0c:42:a1:00:00:01")
    assert ident.port_text("su1-r1-leaf", "swp4s1") == "swp4s1 (port 8)"


def test_infer_schemes_from_labels_matches_the_catalog() -> None:
    for spec in (SEED_IB, SEED_ROCE, {"gpus": 64, "planes": 2, "nic_gbps": 800, "su_nodes": 4}):
        topo = topology(spec)
        exact = PlanIndex.from_topology(topo).schemes
        inferred = infer_schemes(topo.links)
        for dev, sch in exact.items():
            assert (inferred[dev].os_family, inferred[dev].ports_per_cage) == (
                sch.os_family,
                sch.ports_per_cage,
            ), dev


# --------------------------------------------------------------------------- lldpd


def _entry0(local: str, name: str | None, ptype: str, pval: str, descr: str = "") -> dict:
    chassis: dict = {"id": [{"type": "mac", "value": "02:00:00:00:00:01"}]}
    if name:
        chassis["name"] = [{"value": name}]
    return {
        "name": local,
        "chassis": [chassis],
        "port": [{"id": [{"type": ptype, "value": pval}], "descr": [{"value": descr}]}],
    }


def test_lldpd_json0_and_json_shapes_give_the_same_links(tmp_path: Path) -> None:
    json0 = {
        "lldp": [
            {
                "interface": [
                    _entry0("swp1s0", "su1-node01", "mac", "02:aa:00:00:00:01", "ens1np0"),
                    _entry0("swp33s0", "spine-01.dc1", "ifname", "swp1s0"),
                ]
            }
        ]
    }
    many = {
        "lldp": {
            "interface": [
                {
                    "swp1s0": {
                        "chassis": {
                            "su1-node01": {"id": {"type": "mac", "value": "02:00:00:00:00:01"}}
                        },
                        "port": {
                            "id": {"type": "mac", "value": "02:aa:00:00:00:01"},
                            "descr": "ens1np0",
                        },
                    }
                },
                {
                    "swp33s0": {
                        "chassis": {
                            "spine-01.dc1": {"id": {"type": "mac", "value": "02:00:00:00:00:01"}}
                        },
                        "port": {"id": {"type": "ifname", "value": "swp1s0"}, "descr": ""},
                    }
                },
            ]
        }
    }
    p = tmp_path / "leaf.json"
    a = parse_lldpd(json0, "leaf", p)
    b = parse_lldpd(many, "leaf", p)
    assert [(x.a, x.b) for x in a] == [(x.a, x.b) for x in b]
    assert a[0].b == Endpoint("su1-node01", "02:aa:00:00:00:01", "mac", "ens1np0")
    assert a[1].b == Endpoint("spine-01.dc1", "swp1s0")
    # One interface: a dict, not a list; an unnamed chassis falls back to its id.
    one = {
        "lldp": {
            "interface": {
                "eth0": {
                    "chassis": {"id": {"type": "mac", "value": "02:00:00:00:00:09"}},
                    "port": {"id": {"type": "ifname", "value": "swp9"}},
                }
            }
        }
    }
    (only,) = parse_lldpd(one, "host", p)
    assert (only.a, only.b) == (Endpoint("host", "eth0"), Endpoint("02:00:00:00:00:09", "swp9"))
    assert parse_lldpd({"lldp": {}}, "host", p) == []
    assert parse_lldpd({"lldp": [{}]}, "host", p) == []


def test_lldp_reader_covers_each_file_and_reads_the_mac_table() -> None:
    snap = LldpReader(FIXTURES / "roce/lldp", FIXTURES / "roce/mac-table.csv").load()
    assert snap.covered is not None and "su1-r1-leaf" in snap.covered and "spine-01" in snap.covered
    assert len(snap.covered) == 16
    assert any(link.b.port_type == "mac" for link in snap.links)
    macs, aliases = load_mac_table(FIXTURES / "roce/mac-table.csv")
    assert aliases[("su1-node01", "ens1np0")] == "mlx5_0"
    assert all(isinstance(ep, Endpoint) for ep in macs.values())
    speeds = {link.speed_gbps for link in snap.links}
    assert {400, 200, 100, 1} <= speeds  # parsed from the advertised MAU type


def test_lldp_errors_name_the_file_and_json_path(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text(json.dumps({"lldp": [{"interface": [{"name": "swp1"}]}]}))
    with pytest.raises(InputFileError) as e:
        LldpReader(tmp_path).load()
    assert (
        e.value.message
        == f"{tmp_path}/x.json:$.lldp[0].interface[0].port: neighbour without a port id"
    )
    with pytest.raises(InputFileError, match=r"nothing-here: not a directory"):
        LldpReader(tmp_path / "nothing-here").load()
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFileError, match=r"empty: no files \(LLDP neighbours"):
        LldpReader(tmp_path / "empty").load()


# --------------------------------------------------------------------------- EOS


def test_eos_quotes_fqdns_multiple_neighbours_and_status() -> None:
    snap = EosReader(FIXTURES / "roce/eos").load()
    r1 = [link for link in snap.links if link.a == Endpoint("su1-r1-leaf", "Ethernet1/1")]
    assert sorted(link.b.device for link in r1) == ["lab-sw-01.dc1", "su1-node01"]
    spine = next(link for link in snap.links if link.a.device == "spine-01")
    assert spine.b.device.endswith(".dc1.example.net")
    assert '"' not in spine.b.port  # interfaceId_v2 preferred over the quoted interfaceId
    silent = [s for s in snap.port_states if s.endpoint == Endpoint("su1-r6-leaf", "Ethernet3/2")]
    assert len(silent) == 1 and silent[0].up
    slow = next(link for link in snap.links if link.a == Endpoint("su1-r1-leaf", "Ethernet4/2"))
    assert slow.speed_gbps == 200


def test_eos_quoted_interface_id_without_v2(tmp_path: Path) -> None:
    doc = {
        "lldpNeighbors": {
            "Ethernet1/1": {
                "lldpNeighborInfo": [
                    {
                        "systemName": "spine-01.dc1",
                        "neighborInterfaceInfo": {"interfaceId": '"Ethernet3/1"'},
                    }
                ]
            }
        }
    }
    (tmp_path / "su1-r1-leaf.json").write_text(json.dumps(doc))
    (link,) = EosReader(tmp_path).load().links
    assert link.b == Endpoint("spine-01.dc1", '"Ethernet3/1"')
    ident = Identity(PlanIndex.from_topology(topology(SEED_ROCE)))
    assert ident.endpoint(link.b) == Endpoint("spine-01", "swp3s0")


# --------------------------------------------------------------------------- ibnetdiscover


def test_ibnetdiscover_reads_each_cable_once_with_names_and_rates() -> None:
    snap = IbnetdiscoverReader(
        FIXTURES / "ib/ibnetdiscover.txt", FIXTURES / "ib/node-name-map"
    ).load()
    text = (FIXTURES / "ib/ibnetdiscover.txt").read_text()
    port_lines = sum(1 for line in text.splitlines() if line.startswith("["))
    assert len(snap.links) * 2 == port_lines  # every cable printed from both ends, kept once
    hca = next(link for link in snap.links if Endpoint("su1-node05", "mlx5_4") in (link.a, link.b))
    assert (hca.width, hca.rate, hca.speed_gbps) == ("4x", "4xHDR", 200)
    # The node-name-map names su1-r3-leaf although its NodeDesc is stale.
    assert "su1-r3-leaf" in snap.devices and not any("switch-3f2a91" in d for d in snap.devices)
    assert snap.devices["su1-r7-leaf"].expected == {"guid": "0xfc6a1c03003a1d78"}
    assert snap.networks == frozenset({"compute"}) and snap.one_plane


def test_ibnetdiscover_parentheses_guid_is_unpadded_and_normalised(tmp_path: Path) -> None:
    text = (
        'Switch\t64 "S-fc6a1c0300000001"\t\t# "leaf-a" enhanced port 0 lid 1 lmc 0\n'
        '[1]\t"H-0c42a10300000002"[1](c42a10300000002) \t\t# "gpu001 mlx5_0" lid 2 4x???\n'
        "\n"
        'Ca\t1 "H-0c42a10300000002"\t\t# "gpu001 mlx5_0"\n'
        '[1](c42a10300000002) \t"S-fc6a1c0300000001"[1]\t\t# lid 2 lmc 0 "leaf-a" lid 1 4x???\n'
    )
    p = tmp_path / "t.txt"
    p.write_text(text)
    (link,) = IbnetdiscoverReader(p).load().links
    assert {link.a, link.b} == {Endpoint("leaf-a", "1", "number"), Endpoint("gpu001", "mlx5_0")}
    assert (link.width, link.speed_gbps) == ("4x", None)


def test_node_name_map_and_bad_lines(tmp_path: Path) -> None:
    m = tmp_path / "map"
    m.write_text('# c\n0xfc6a1c0300000001 "leaf-a"\nfc6a1c0300000002 "leaf-b"  # trailing\n')
    assert load_node_name_map(m) == {"fc6a1c0300000001": "leaf-a", "fc6a1c0300000002": "leaf-b"}
    p = tmp_path / "t.txt"
    p.write_text('Switch\t64 "S-fc6a1c0300000001"\t\t# "leaf-a"\nhello world\n')
    with pytest.raises(InputFileError) as e:
        IbnetdiscoverReader(p).load()
    assert e.value.where == 2 and "unrecognised line 'hello world'" in e.value.message


# --------------------------------------------------------------------------- NetBox


def test_netbox_csv_and_rest_json_agree() -> None:
    a = NetboxCsvReader(FIXTURES / "ib/netbox-cables.csv").load()
    b = NetboxJsonReader(FIXTURES / "ib/netbox-cables.json").load()
    assert [(x.a, x.b, dict(x.attrs or {})) for x in a.links] == [
        (x.a, x.b, dict(x.attrs or {})) for x in b.links
    ]
    (note,) = a.notes
    assert note == (
        "warning: 1 cable(s) not between two interfaces were not compared: "
        f"{FIXTURES / 'ib/netbox-cables.csv'}:452 (dcim.interface - dcim.frontport)"
    )
    assert b.notes[0].startswith("warning: 1 cable(s) not between two interfaces")
    assert not a.physical and a.covered is None
    row = next(x for x in a.links if x.a == Endpoint("su1-node01", "bmc1"))
    assert row.attrs is not None and row.attrs["medium"] == "mmf" and row.attrs["type"] == "mmf-om4"


def test_netbox_csv_errors(tmp_path: Path) -> None:
    p = tmp_path / "c.csv"
    p.write_text("side_a_device,side_a_name,side_b_device\nx,y,z\n")
    with pytest.raises(InputFileError) as e:
        NetboxCsvReader(p).load()
    assert e.value.where == 1 and "missing column 'side_b_name'" in e.value.message
    p.write_text("side_a_device,side_a_name,side_b_device,side_b_name\nx,y,z,w\nx,y\n")
    with pytest.raises(InputFileError) as e:
        NetboxCsvReader(p).load()
    assert e.value.where == 3


# --------------------------------------------------------------------------- inventory


def test_inventory_reader_with_a_fake_store() -> None:
    recs = inventory_records(topology(SEED_IB))
    snap = InventoryReader(FakeStore(recs)).load()
    assert len(snap.links) == len(recs["Cable"])
    assert snap.devices["spine-01"].attrs["model"] == "qm9700"
    grouped = {"Cable": [{"name": "bundle-1", "cables": recs["Cable"][:3]}], "Switch": []}
    assert len(InventoryReader(FakeStore(grouped)).load().links) == 3
    bad = {"Cable": [{"name": "c1", "a_device": "x", "a_port": "p"}]}
    with pytest.raises(InventoryError, match=r"Cable\[0\] \(c1\) has no b_device"):
        InventoryReader(FakeStore(bad)).load()


def test_inventory_reader_picks_one_stack() -> None:
    recs = inventory_records(topology(SEED_IB))
    two = {k: [{**r, "stack": s} for s in ("dev", "prod") for r in v] for k, v in recs.items()}
    with pytest.raises(
        InventoryError, match=r"several stacks \(dev, prod\); choose one with --stack"
    ):
        InventoryReader(FakeStore(two)).load()
    snap = InventoryReader(FakeStore(two), stack="prod").load()
    assert len(snap.links) == len(recs["Cable"])


def test_inventory_reader_against_a_real_sqlite_store(tmp_path: Path) -> None:
    inventory = pytest.importorskip("fabric_stack.adapters.inventory")
    url = f"sqlite:///{tmp_path}/inventory.db"
    store = inventory.open_store(url)
    recs = inventory_records(topology(SEED_IB))
    store.put_many("dev", "Cable", [(r["name"], r) for r in recs["Cable"]], status="active")
    store.put_many("dev", "Switch", [(r["name"], r) for r in recs["Switch"]], status="active")
    snap = InventoryReader(url, stack="dev").load()
    assert len(snap.links) == len(recs["Cable"])
    assert snap.origin == url
    assert {link.attrs["status"] for link in snap.links if link.attrs} == {"active"}


def test_progress_hooks_add_up_to_the_input_size() -> None:
    got: list[int] = []
    path = FIXTURES / "ib/ibnetdiscover.txt"
    IbnetdiscoverReader(path, progress=got.append).load()
    assert sum(got) == len(path.read_text(encoding="utf-8"))
    got.clear()
    LldpReader(FIXTURES / "roce/lldp", progress=got.append).load()
    assert sum(got) == sum(len(p.read_text()) for p in (FIXTURES / "roce/lldp").glob("*.json"))


def test_a_dcim_cable_type_the_plant_chose_is_no_finding(tmp_path: Path) -> None:
    # NetBox records the plant's cable (an ACC splitter for a short run: ``dac-active``);
    # the builder's class for that link is ``mmf``. Drift must accept the plant's cable and
    # still flag a copper record on a run the plant gives fibre.
    from click.testing import CliRunner

    from fabric_stack.adapters.inventory.netbox.plan import CABLE_TYPE_OF_MEDIUM
    from fabric_stack.cli import main
    from fabric_stack.plant import plant_of
    from fabric_stack.sizing.size import size_fabric
    from fabric_stack.spec.model import FabricSpec
    from fabric_stack.topology.build import build_topology
    from tests.drift_fixtures import clean_wires, netbox_csv, netbox_rows

    topo = build_topology(size_fabric(FabricSpec()))
    media = {k.id: r.medium for k, r in zip(topo.links, plant_of(topo).runs, strict=True)}
    rows = netbox_rows(topo, clean_wires(topo))
    for r in rows:
        r["type"] = CABLE_TYPE_OF_MEDIUM[media[r["label"]]]
    acc = [r for r in rows if media[r["label"]] == "acc"]
    assert len(acc) == 14  # the seed's split cages near the network rack (test_plant)
    path = tmp_path / "cables.csv"
    path.write_text(netbox_csv(rows))
    clean = CliRunner().invoke(main, ["drift", "--netbox-csv", str(path), "--format", "json"])
    assert clean.exit_code == 0, clean.output
    fibre = next(r for r in rows if media[r["label"]] == "mmf" and r["side_a_device"] != "")
    fibre["type"] = "dac-active"
    path.write_text(netbox_csv(rows))
    wrong = CliRunner().invoke(main, ["drift", "--netbox-csv", str(path), "--format", "json"])
    assert wrong.exit_code == 1
    (finding,) = json.loads(wrong.output)["findings"]
    assert finding["kind"] == "attribute_changed" and "dac-active" in json.dumps(finding)
