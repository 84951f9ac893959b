"""InfiniBand node naming (fabric_stack.naming.ib_nodes): what the twin writes, the drift
reader reads back; multi-chip switches fold into one device and one link per cable."""

from __future__ import annotations

import pytest

from fabric_stack.naming.ib_nodes import (
    IbNode,
    NodeName,
    cable_key,
    folded_port_label,
    folded_rate,
    internal_link,
    name_nodes,
    node_id,
    port_label,
)
from fabric_stack.naming.nodedesc import host_nodedesc, parse_nodedesc, switch_nodedesc


def test_written_nodedescs_read_back() -> None:
    sw = parse_nodedesc(switch_nodedesc("su1-r1-leaf", "MQM9700"))
    assert (sw.form, sw.host, sw.model, sw.chip) == ("mf0", "su1-r1-leaf", "MQM9700", 1)
    host = parse_nodedesc(host_nodedesc("su1-node07", "mlx5_3"))
    assert (host.form, host.host, host.hca) == ("host-ibdev", "su1-node07", "mlx5_3")


def test_node_ids_are_spelled_as_ibnetdiscover_prints_them() -> None:
    assert node_id("0xfc6a1c0300e4a1c0", "Switch") == "S-fc6a1c0300e4a1c0"
    assert node_id("c42a10300a1b2c4", "Ca") == "H-0c42a10300a1b2c4"
    assert node_id("1", "Rt") == "R-0000000000000001"


def _q3400(guid: str, chip: int, system: str = "aa") -> IbNode:
    return IbNode("Switch", guid, f"MF0;mamba-2132:Q3400_RA/U{chip}", chip, system)


def test_a_multi_chip_switch_is_one_device_with_chip_qualified_ports() -> None:
    nodes = {g: _q3400(g, c) for g, c in (("03", 3), ("01", 1), ("02", 2))}
    nodes["h1"] = IbNode("Ca", "h1", "gpu001 mlx5_0", 9)
    nodes["r1"] = IbNode("Rt", "r1", "MF0;mamba-2132:Q3400_RA/U2/RT", 10, "aa")
    ends = name_nodes(nodes, {})
    assert {ends[g].device for g in ("01", "02", "03", "r1")} == {"mamba-2132"}
    assert port_label(ends["02"], 149) == ("U2/149", "number")
    assert port_label(ends["h1"], 1) == ("mlx5_0", "name")
    assert port_label(ends["h1"], 2) == ("mlx5_0/2", "name")
    assert internal_link(ends["01"], ends["r1"], "01", "r1")
    assert not internal_link(ends["01"], ends["h1"], "01", "h1")
    # The per-chip links of one cable share their key and fold into one 4-lane link.
    keys = {cable_key(ends[g], 7, ends["h1"], 1) for g in ("01", "02", "03")}
    assert len(keys) == 1
    assert folded_port_label(ends["03"], 7) == ("7", "number")
    assert folded_rate(["1xXDR"] * 4) == "4xXDR"
    assert folded_rate(["1xXDR", "1xNDR"]) is None
    assert folded_rate(["1xXDR", None]) is None


@pytest.mark.parametrize(
    ("desc", "names", "forced", "device"),
    [
        (
            "MT25408 ConnectX Mellanox Technologies",
            {},
            (),
            "MT25408 ConnectX Mellanox Technologies",
        ),
        ("gpu001 mlx5_0", {}, (), "gpu001"),  # the NodeDesc names its host
        ("gpu001 mlx5_0", {"g1": "node-a"}, (), "node-a"),  # the map comes first
        ("gpu001 mlx5_0", {"g1": "node-a mlx5_0"}, (), "node-a"),  # a map entry's host
        ("gpu001 mlx5_0", {"g1": "node-a mlx5_0"}, ("g1",), "node-a mlx5_0"),  # names file: as is
    ],
)
def test_a_server_is_named_by_map_desc_or_guid(
    desc: str, names: dict[str, str], forced: tuple[str, ...], device: str
) -> None:
    ends = name_nodes({"g1": IbNode("Ca", "g1", desc, 1)}, names, forced)
    assert ends["g1"] == NodeName(device, "server", hca="mlx5_0" if "mlx5" in desc else "")


def test_a_shared_vendor_string_gets_the_guid() -> None:
    nodes = {g: IbNode("Ca", g, "MT4129 ConnectX7", i) for i, g in enumerate(("a1", "b2"))}
    assert [e.device for e in name_nodes(nodes, {}).values()] == [
        "MT4129 ConnectX7 a1",
        "MT4129 ConnectX7 b2",
    ]
