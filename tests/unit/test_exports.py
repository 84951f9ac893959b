"""Cabling exports: CSV, JSON contract, ibdiagnet .topo, UFM P2P and AVD CSV."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.errors import FabricStackError, SpecError
from fabric_stack.topology.build import FABRIC_ROLES, MANAGER_ROLE
from fabric_stack.views.exports import (
    AVD_COLUMNS,
    CSV_COLUMNS,
    P2P_COLUMNS,
    avd_csv,
    ib_width,
    link_rows,
    links_csv,
    links_csv_lines,
    links_json,
    topo_file,
    ufm_p2p,
)
from tests.topology_fixtures import Spec, any_spec, topo, topo_for

# The ibdm topology-file grammar (ibutils Fabric.cpp, parseTopology), with the speed token
# widened to the per-lane rates ibdiagnet 2 writes (25G, 50G, 100G, 200G).
SYS_LINE = re.compile(r"^[ \t]*([^/ \t]+)[ \t]+([^/ \t]+)[ \t]*( CFG:(.*))?$")
PORT_LINE = re.compile(
    r"^[ \t]+([^ \t]+)[ \t]+-((1|2|4|8|12)[xX]-)?(([0-9.]+)G-)?[>]"
    r"[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]*$"
)


def parse_topo(text: str) -> dict[str, tuple[str, dict[str, tuple[str, str, str, str]]]]:
    """system name -> (type, {local port: (width-speed, remote type, remote name, remote port)})."""
    systems: dict[str, tuple[str, dict[str, tuple[str, str, str, str]]]] = {}
    current: str | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        if re.match(r"^[ \t]*#", line):
            continue
        if not line.strip():
            current = None
            continue
        m = PORT_LINE.match(line)
        if m:
            assert current is not None, f"line {n}: port line outside a system section"
            local = m.group(1)
            assert local not in systems[current][1], f"line {n}: {current} {local} listed twice"
            systems[current][1][local] = (
                f"{m.group(3)}x-{m.group(5)}G",
                m.group(6),
                m.group(7),
                m.group(8),
            )
            continue
        m = SYS_LINE.match(line)
        assert m, f"line {n}: neither a system nor a port line: {line!r}"
        assert current is None, f"line {n}: system line without a blank line before it"
        current = m.group(2)
        assert current not in systems, f"line {n}: system {current} declared twice"
        systems[current] = (m.group(1), {})
    return systems


def rows(text: str) -> list[dict[str, str]]:
    # '#' lines are the InfiniBand P2P sheet's port-naming header.
    body = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("#"))
    return list(csv.DictReader(io.StringIO(body)))


# --------------------------------------------------------------------------- CSV / JSON


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_spec)
def test_csv_has_one_row_per_cable_never_both_directions(key: Spec) -> None:
    t = topo_for(key)
    r = rows(links_csv(t))
    assert len(r) == len(t.links)
    seen = set()
    for row in r:
        cable = frozenset({(row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])})
        assert cable not in seen, row
        seen.add(cable)
    ids = [row["cable_id"] for row in r]
    assert len(set(ids)) == len(ids)


def test_csv_columns_and_places() -> None:
    t = topo()
    text = links_csv(t)
    assert text.splitlines()[0] == ",".join(CSV_COLUMNS)
    r = rows(text)
    first = r[0]
    assert first["cable_id"] == "su1-node01:mlx5_0"
    assert (first["a_device"], first["a_port"], first["b_device"], first["b_port"]) == (
        "su1-node01",
        "mlx5_0",
        "su1-r1-leaf",
        "1/1/1",
    )
    for row in r:
        for end in ("a", "b"):
            d = t.device(row[f"{end}_device"])
            assert row[f"{end}_rack"] == d.rack
            assert row[f"{end}_position"] == str(d.position)
    # a 1:1 seed cluster: 128 NIC cables, 256 uplinks, 64 access cables
    roles = [row["role"] for row in r]
    assert (roles.count("node_leaf"), roles.count("leaf_spine")) == (128, 256)


def test_role_filter() -> None:
    t = topo()
    # the compute fabric includes the fabric managers' leaf cables
    assert len(rows(links_csv(t, "compute"))) == sum(1 for _ in t.links_of(*FABRIC_ROLES))
    assert {row["role"] for row in rows(links_csv(t, "storage"))} == {"storage"}
    assert {row["role"] for row in rows(links_csv(t, "oob"))} == {"oob"}
    with pytest.raises(SpecError, match=r"--role: unknown role 'spine'"):
        links_csv(t, "spine")


def test_json_contract() -> None:
    t = topo(gpus=512, planes=2)
    data = json.loads(links_json(t))
    assert list(data) == ["links"]
    assert len(data["links"]) == len(t.links)
    for link, k in zip(data["links"], t.links, strict=True):
        for field in ("a_device", "a_port", "b_device", "b_port", "speed_gbps", "role"):
            assert link[field] == getattr(k, field)
        assert list(link) == list(CSV_COLUMNS)
    assert json.loads(links_json(t, "inband"))["links"][0]["role"] == "inband"


def test_json_of_an_empty_selection() -> None:
    t = topo(gpus=8)
    assert json.loads(links_json(t, "compute"))["links"]
    # no spine_core cables in two tiers: an empty filter result is still valid JSON
    from dataclasses import replace

    empty = replace(t, links=())
    assert json.loads(links_json(empty)) == {"links": []}


# --------------------------------------------------------------------------- .topo


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"gpus": 2056},
        {"gpus": 256, "planes": 2},
        {"gpus": 1024, "switch": "q3400", "nic_gbps": 800},
    ],
)
def test_topo_file_parses_and_lists_every_compute_cable_from_both_ends(
    kw: dict[str, object],
) -> None:
    t = topo(**kw)
    systems = parse_topo(topo_file(t))
    compute = list(t.links_of(*FABRIC_ROLES))
    width = ib_width(t)
    for k in compute:
        host = k.role in ("node_leaf", MANAGER_ROLE)
        a_port = f"{k.a_port}/P1" if host else f"P{k.a_port_number}"
        b_port = f"P{k.b_port_number}"
        a_type, a_ports = systems[k.a_device]
        b_type, b_ports = systems[k.b_device]
        assert a_ports[a_port] == (width, b_type, k.b_device, b_port)
        assert b_ports[b_port] == (width, a_type, k.a_device, a_port)
    assert sum(len(p) for _, p in systems.values()) == 2 * len(compute)
    # servers and fabric managers are HCA systems named by host name (a manager has one
    # HCA port per plane); switches are MQM9700 / Q3400
    types = {typ for typ, _ in systems.values()}
    assert types == {
        f"HCA_mlx5_{t.plan.rails * t.plan.planes - 1}",
        f"HCA_mlx5_{t.plan.planes - 1}",
        "MQM9700" if t.plan.switch_model.key == "qm9700" else "Q3400",
    }


def test_topo_width_tokens() -> None:
    assert ib_width(topo()) == "4x-100G"  # NDR: 4 lanes of 100G
    assert ib_width(topo(gpus=64, planes=2)) == "2x-100G"  # NDR200 on a split port
    assert ib_width(topo(gpus=64, switch="q3400", nic_gbps=800)) == "4x-200G"  # XDR


def test_topo_seed_head() -> None:
    text = topo_file(topo())
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert body[:3] == [
        "",
        "MQM9700 su1-r1-leaf",
        "    P1 -4x-100G-> HCA_mlx5_7 su1-node01 mlx5_0/P1",
    ]
    assert "HCA_mlx5_7 su1-node16" in body
    assert "    mlx5_7/P1 -4x-100G-> MQM9700 su1-r8-leaf P16" in body
    assert "    P33 -4x-100G-> MQM9700 spine-01 P1" in body


def test_topo_is_infiniband_only() -> None:
    with pytest.raises(FabricStackError) as err:
        topo_file(topo(fabric="roce", switch="sn5600"))
    assert str(err.value) == (
        "cabling --format topo: .topo files describe InfiniBand fabrics for ibdiagnet, but this "
        "fabric is roce (use --format csv, json or p2p)"
    )


# --------------------------------------------------------------------------- P2P / AVD


def test_ufm_p2p_columns_and_ports() -> None:
    t = topo()
    text = ufm_p2p(t)
    lines = text.splitlines()
    head = [ln for ln in lines if ln.startswith("#")]
    assert lines[len(head)] == ",".join(P2P_COLUMNS)
    assert any("P33 = 17/1 = 1/17/1" in ln for ln in head)
    r = rows(text)
    assert len(r) == sum(1 for _ in t.links_of(*FABRIC_ROLES))
    ufm = next(x for x in r if x["A-Node Name"] == "ufm-2")
    assert (ufm["A-Type"], ufm["A-Port"], ufm["Z-Node Name"], ufm["Z-Port"]) == (
        "Host",
        "1",
        "su1-r2-leaf",
        "16/2",
    )
    assert r[0] == {
        "A-Node Name": "su1-node01",
        "A-Type": "Host",
        "A-Port": "1",
        "Z-Node Name": "su1-r1-leaf",
        "Z-Type": "Switch",
        "Z-Port": "1/1",
    }
    # node03's rail-8 NIC is mlx5_7 → HCA port 8; leaf port 3 is cage 2, split 1
    row = next(
        x for x in r if x["A-Node Name"] == "su1-node03" and x["Z-Node Name"] == "su1-r8-leaf"
    )
    assert (row["A-Port"], row["Z-Port"]) == ("8", "2/1")
    uplink = next(x for x in r if x["A-Node Name"] == "su1-r1-leaf")
    assert uplink["A-Type"] == uplink["Z-Type"] == "Switch"
    assert uplink["A-Port"] == "17/1" and uplink["Z-Port"] == "1/1"


def test_ufm_p2p_on_ethernet_uses_interface_names() -> None:
    r = rows(ufm_p2p(topo(gpus=64, fabric="roce", switch="sn5600", nic_gbps=400)))
    assert r[0]["Z-Port"] == "swp1s0"
    storage = rows(ufm_p2p(topo(), "storage"))
    assert storage[0]["A-Port"] == "stor1" and storage[0]["Z-Port"].startswith("swp")


def test_avd_csv() -> None:
    t = topo()
    text = avd_csv(t)
    assert text.splitlines()[0] == ",".join(AVD_COLUMNS)
    r = rows(text)
    assert len(r) == len(t.links)
    assert r[0]["Node Type"] == "server" and r[0]["Peer Type"] == "leaf"


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"gpus": 256, "planes": 2, "fabric": "roce", "switch": "sn5600"},
        # Labels a CSV writer must quote: a comma, a double quote, a line break.
        {"layout": {"label": '{rack},"{device}"\n{port}'}},
        {"layout": {"label": "{port} at {device}, {rack}"}},
    ],
)
def test_links_csv_is_what_the_csv_writer_writes_of_the_rows(kw: dict[str, object]) -> None:
    # links_csv writes text from fragments (#43); it must stay the csv module's output.
    t = build_topology(size_fabric(validate_spec(**kw)))
    for role in ("all", "compute", "inband"):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        w.writerows(link_rows(t, role))
        assert links_csv(t, role) == buf.getvalue()


@pytest.mark.parametrize(
    ("label", "checked"),
    [
        ("{device}-{port}", True),
        ("{device},{port}", True),  # quoted, but no control character
        ("{device}\x1b[2J{port}", False),
        ("{device}\t{port}", True),  # a tab is not a control character the console shows
    ],
)
def test_links_csv_lines_say_whether_a_control_character_is_in_them(
    label: str, checked: bool
) -> None:
    t = build_topology(size_fabric(validate_spec(gpus=64, layout={"label": label})))
    lines, clean = links_csv_lines(t)
    assert clean is checked
    assert "".join(lines) == links_csv(t)
    assert len(lines) == len(t.links) + 1
