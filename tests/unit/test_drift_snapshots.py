"""Generated snapshots of real-world shapes the drift readers must hold up on.

A Quantum-X800 Q3400 fabric reported per ASIC (four switch nodes per system,
a router node inside it), ``ibnetdiscover -g`` output, every NodeDescription
form, SONiC lane-based port names on an SN5600 at 400G and 800G, and the
speed strings of every source as a table.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.adapters.discovery import IbnetdiscoverReader
from fabric_stack.drift import Endpoint, ObservedLink, PlanIndex, Snapshot, compute_drift
from fabric_stack.drift.identity import switch_port_number
from fabric_stack.drift.plan import PortScheme, infer_schemes
from fabric_stack.drift.ports import port_number
from fabric_stack.drift.speeds import bandwidth_speed, ib_speed, mau_speed
from fabric_stack.naming.devices import switch_port_label
from fabric_stack.naming.nodedesc import parse_nodedesc
from tests.drift_fixtures import (
    Wire,
    clean_wires,
    hca_guid,
    ibnetdiscover_text,
    switch_guid,
    topology,
)

Q3400 = {"gpus": 64, "su_nodes": 4, "nic_gbps": 800, "switch": "q3400"}
SN5600_400 = {"fabric": "roce", "switch": "sn5600", "gpus": 64, "su_nodes": 4}
SN5600_800 = {**SN5600_400, "nic_gbps": 800}
COMPUTE = ("node_leaf", "manager_leaf", "leaf_spine")  # UFM HCAs are in the subnet too


def spelled_snapshot(wires: list[Wire], spell: Any) -> Snapshot:
    """A snapshot of ``wires`` with every port spelled by ``spell(device, port)``."""
    return Snapshot(
        source="test",
        origin="memory",
        links=[
            ObservedLink(
                Endpoint(w.a_dev, spell(w.a_dev, w.a_port)),
                Endpoint(w.b_dev, spell(w.b_dev, w.b_port)),
                speed_gbps=w.speed,
            )
            for w in wires
        ],
    )


def _plan(spec: dict[str, Any]) -> tuple[PlanIndex, list[Wire]]:
    topo = topology(spec)
    return PlanIndex.from_topology(topo), clean_wires(topo, COMPUTE)


# ----------------------------------------------------------------------- Q3400 per ASIC


def _chip(dev: str, k: int) -> str:
    """GUID of ASIC ``k`` (router: 15) of ``dev``: one nibble of the system GUID changed."""
    base = switch_guid(dev)
    return f"{base[:4]}{k:x}{base[5:]}"


def q3400_dump(index: PlanIndex, wires: list[Wire], drop: tuple[str, int] | None = None) -> str:
    """An ibnetdiscover dump of ``wires`` as a multi-plane Q3400 fabric reports it.

    Each Q3400 is four switch nodes U1..U4 sharing one system image GUID (plus a
    router node U2/RT on U2's port 149); each cable is four 1xXDR links, one per
    ASIC, with the same port number on every ASIC; each HCA is one CA node with a
    port per plane. ``drop`` = (link id, plane) leaves one plane of one cable out.
    """

    def num(dev: str, port: str) -> int:
        n = switch_port_number(port, index.schemes[dev].ports_per_cage)
        assert n is not None
        return n

    blocks: dict[tuple[str, int], list[str]] = {}
    cas: dict[tuple[str, str], list[str]] = {}
    for w in wires:
        for k in range(1, 5):
            if drop == (w.id, k):
                continue
            b = (w.b_dev, num(w.b_dev, w.b_port))
            if w.a_dev in index.schemes:  # leaf-spine: U_k to U_k
                a = (w.a_dev, num(w.a_dev, w.a_port))
                blocks.setdefault((a[0], k), []).append(
                    f'[{a[1]}]\t"S-{_chip(b[0], k)}"[{b[1]}]\t\t'
                    f'# "MF0;{b[0]}:Q3400_RA/U{k}" lid 1 1xXDR'
                )
                blocks.setdefault((b[0], k), []).append(
                    f'[{b[1]}]\t"S-{_chip(a[0], k)}"[{a[1]}]\t\t'
                    f'# "MF0;{a[0]}:Q3400_RA/U{k}" lid 1 1xXDR'
                )
                continue
            hg = hca_guid(w.a_dev, w.a_port)
            blocks.setdefault((b[0], k), []).append(
                f'[{b[1]}]\t"H-{hg}"[{k}]({int(hg, 16) + k:x}) \t\t'
                f'# "{w.a_dev} {w.a_port}" lid 2 1xXDR'
            )
            cas.setdefault((w.a_dev, w.a_port), []).append(
                f'[{k}]({int(hg, 16) + k:x}) \t"S-{_chip(b[0], k)}"[{b[1]}]\t\t'
                f'# lid 2 lmc 0 "MF0;{b[0]}:Q3400_RA/U{k}" lid 1 1xXDR'
            )
    out = ["#", "# Topology file: generated on Mon Nov 30 10:00:00 2026", "#", ""]
    switches = sorted({dev for dev, _ in blocks})
    for dev in switches:
        sys_guid = switch_guid(dev)
        rt = _chip(dev, 15)
        for k in range(1, 5):
            g = _chip(dev, k)
            out += ["vendid=0x2c9", "devid=0xd2f4", f"sysimgguid=0x{sys_guid}"]
            out += [f"switchguid=0x{g}({g})"]
            out.append(f'Switch\t160 "S-{g}"\t\t# "MF0;{dev}:Q3400_RA/U{k}" enhanced port 0')
            out += blocks.get((dev, k), [])
            if k == 2:
                out.append(f'[149]\t"R-{rt}"[2]\t\t# "MF0;{dev}:Q3400_RA/U2/RT" lid 8 1xXDR')
            out.append("")
        out += ["vendid=0x2c9", "devid=0xc839", f"sysimgguid=0x{sys_guid}", f"rtguid=0x{rt}"]
        out.append(f'Rt\t8 "R-{rt}"\t\t# "MF0;{dev}:Q3400_RA/U2/RT"')
        out.append(
            f'[2]({int(rt, 16) + 1:x}) \t"S-{_chip(dev, 2)}"[149]\t\t'
            f'# lid 9 lmc 0 "MF0;{dev}:Q3400_RA/U2" lid 8 1xXDR'
        )
        out.append("")
    for (host, hca), rows in sorted(cas.items()):
        hg = hca_guid(host, hca)
        out += ["vendid=0x2c9", "devid=0x1023", f"sysimgguid=0x{hg}", f"caguid=0x{hg}"]
        out.append(f'Ca\t4 "H-{hg}"\t\t# "{host} {hca}"')
        out += [*rows, ""]
    return "\n".join(out)


def test_q3400_per_asic_nodes_are_one_device_and_cables_fold(tmp_path: Path) -> None:
    index, wires = _plan(Q3400)
    path = tmp_path / "q3400.txt"
    path.write_text(q3400_dump(index, wires), encoding="utf-8")
    snap = IbnetdiscoverReader(path).load()
    switches = {d for d, s in snap.devices.items() if s.kind == "switch"}
    assert switches == {w.b_dev for w in wires}  # one device per system, not four
    assert not any(s.kind == "router" for s in snap.devices.values())  # inside the system
    assert len(snap.links) == len(wires)  # four per-ASIC links fold into one cable
    assert {link.rate for link in snap.links} == {"4xXDR"}
    assert {link.speed_gbps for link in snap.links} == {800}
    assert any("UNVERIFIED" in n and "Q3400" in n for n in snap.notes)
    assert any(n.startswith(f"{len(switches)} link(s) inside") for n in snap.notes)
    report = compute_drift(index, snap)
    assert report.findings == []
    assert report.coverage is not None and not report.coverage.low


def test_q3400_one_plane_down_is_one_speed_mismatch(tmp_path: Path) -> None:
    index, wires = _plan(Q3400)
    victim = next(w for w in wires if w.role == "node_leaf")
    path = tmp_path / "q3400.txt"
    path.write_text(q3400_dump(index, wires, drop=(victim.id, 3)), encoding="utf-8")
    report = compute_drift(index, IbnetdiscoverReader(path).load())
    (finding,) = report.findings
    assert finding.kind == "speed_mismatch"
    assert finding.actual[0].rate == "3xXDR" and finding.actual[0].speed_gbps == 600
    assert finding.actual[0].attributes["chips"] == "U1,U2,U4"


def test_q3400_chip_qualified_port_beyond_the_model_is_unknown() -> None:
    scheme = PortScheme("mlnx-os", 2, 144, 72, "q3400")
    assert port_number("U2/7", scheme) == 7
    assert port_number("U2/149", scheme) is None  # the router port: no front-panel port
    assert port_number("sw37p1", scheme) == 73  # NVOS: cage 37, port 1
    assert port_number("sw73p1", scheme) is None  # FNM1 on a real Q3400: not a fabric port


def test_q3400_plan_numbers_ports_as_nvos_reports_them() -> None:
    """The plan labels a Q3400's ports ``sw<cage>p<port>`` (NVOS), not MLNX-OS ``1/N/M``.

    Every switch-side label of the plan must read back, through the same parser
    the drift readers use, as the link's logical port number; and the scheme read
    off the labels alone must be NVOS with two ports per cage (twin-port OSFP).
    """
    topo = topology(Q3400)
    index = PlanIndex.from_topology(topo)
    compute = [link for link in topo.links if link.role in COMPUTE]
    labels = 0
    for link in compute:
        ends = [(link.b_device, link.b_port, link.b_port_number)]
        if link.role not in ("node_leaf", "manager_leaf"):  # the a-end is a host's HCA
            ends.append((link.a_device, link.a_port, link.a_port_number))
        for dev, label, number in ends:
            assert re.fullmatch(r"sw\d+p[12]", label), (dev, label)
            assert port_number(label, index.schemes[dev]) == number, (dev, label)
            labels += 1
    assert (
        labels == sum(1 + (link.role not in ("node_leaf", "manager_leaf")) for link in compute) > 0
    )
    inferred = infer_schemes(compute)
    assert {(s.os_family, s.ports_per_cage) for s in inferred.values()} == {("nvos", 2)}


# ----------------------------------------------------------------------- -g output


def grouped(text: str) -> str:
    """Plain ibnetdiscover output rewritten the way ``-g`` prints it.

    The first switch goes into a ``Chassis 1`` section (``# Chassis 1`` after its
    sysimgguid, ``[ext N]`` after its port numbers), the rest under ``Non-Chassis
    Nodes`` — the layout of rdma-core's ``dump_topology(group=1)``.
    """
    head, _, body = text.partition("\n\n")
    blocks = body.split("\n\n")
    first = blocks[0].replace("\nswitchguid", "\t\t# Chassis 1\nswitchguid", 1)
    first = re.sub(r"^\[(\d+)\]", r"[\1][ext \1]", first, flags=re.M)
    return "\n\n".join(
        [
            head,
            "Chassis 1 (guid 0x0002c90000000001)\n\n# Spine Nodes\n\n# Line Nodes",
            "# Chassis Switches\n" + first,
            "Non-Chassis Nodes",
            *blocks[1:],
        ]
    )


def test_g_output_reads_like_the_plain_dump(tmp_path: Path) -> None:
    topo = topology({})
    index = PlanIndex.from_topology(topo)
    wires = clean_wires(topo, COMPUTE)
    plain = ibnetdiscover_text(index, wires)
    (tmp_path / "plain.txt").write_text(plain, encoding="utf-8")
    (tmp_path / "g.txt").write_text(grouped(plain), encoding="utf-8")
    a = IbnetdiscoverReader(tmp_path / "plain.txt").load()
    b = IbnetdiscoverReader(tmp_path / "g.txt").load()
    assert "[ext 1]" in grouped(plain) and "Non-Chassis Nodes" in grouped(plain)
    assert sorted((x.a.text(), x.b.text(), x.rate) for x in a.links) == sorted(
        (x.a.text(), x.b.text(), x.rate) for x in b.links
    )
    assert compute_drift(index, b).findings == []


# ----------------------------------------------------------------------- NodeDesc forms


@pytest.mark.parametrize(
    ("desc", "form", "host", "hca", "model", "chip"),
    [
        ("su1-node01 mlx5_3", "host-ibdev", "su1-node01", "mlx5_3", "", 0),
        ("r-dcs96 HCA-1", "host-hca", "r-dcs96", "HCA-1", "", 0),
        ("MF0;r-ufm-sw95:MQM8700/U1", "mf0", "r-ufm-sw95", "", "MQM8700", 1),
        ("MF0;mamba-2132:Q3400_RA/U2/RT", "mf0", "mamba-2132", "", "Q3400_RA", 2),
        ("MT25408 ConnectX Mellanox Technologies", "plain", "", "", "", 0),
        ("Mellanox Technologies Aggregation Node", "aggregation", "", "", "", 0),
    ],
)
def test_nodedesc_forms(desc: str, form: str, host: str, hca: str, model: str, chip: int) -> None:
    d = parse_nodedesc(desc)
    assert (d.form, d.host, d.hca, d.model, d.chip) == (form, host, hca, model, chip)
    assert d.router == desc.endswith("/RT")


def _rewrite_cas(text: str, new: Any) -> str:
    return re.sub(r'"(\S+) (mlx5_(\d+))"', lambda m: f'"{new(m)}"', text)


def test_every_nodedesc_form_matches_the_plan(tmp_path: Path) -> None:
    # GPU-server HCAs only (switch-hosted SMs: no UFM HCA in the subnet)
    topo = topology({"infiniband": {"sm_location": "switch"}})
    index = PlanIndex.from_topology(topo)
    wires = clean_wires(topo, COMPUTE)
    plain = ibnetdiscover_text(index, wires)
    # MLNX_OFED's `host HCA-N` (N from 1): read as mlx5_(N-1), and noted as unverified.
    ofed = _rewrite_cas(plain, lambda m: f"{m.group(1)} HCA-{int(m.group(3)) + 1}")
    (tmp_path / "ofed.txt").write_text(ofed, encoding="utf-8")
    report = compute_drift(index, IbnetdiscoverReader(tmp_path / "ofed.txt").load())
    assert report.findings == []
    assert any("HCA-N" in n and "UNVERIFIED" in n for n in report.sources[0].notes)
    # A vendor string shared by every HCA, named by a node-name map (unquoted names).
    vendor = _rewrite_cas(plain, lambda m: "MT4129 ConnectX7 Mellanox Technologies")
    (tmp_path / "vendor.txt").write_text(vendor, encoding="utf-8")
    hosts = {(w.a_dev, w.a_port) for w in wires if w.role == "node_leaf"}
    (tmp_path / "map").write_text(
        "\n".join(f"H-{hca_guid(h, p)} {h} {p}" for h, p in sorted(hosts)), encoding="utf-8"
    )
    snap = IbnetdiscoverReader(tmp_path / "vendor.txt", tmp_path / "map").load()
    assert compute_drift(index, snap).findings == []
    # Without the map they stay distinct devices, named `<desc> <guid>`.
    bare = IbnetdiscoverReader(tmp_path / "vendor.txt").load()
    named = [d for d in bare.devices if d.startswith("MT4129 ConnectX7")]
    assert len(named) == len(hosts)


# ----------------------------------------------------------------------- SONiC on SN5600


@pytest.mark.parametrize(
    ("raw", "at400", "at800"),
    [
        ("Ethernet0", 1, 1),
        ("Ethernet4", 2, None),  # at 800G a port starts every 8 lanes
        ("Ethernet184", 47, 24),  # the real LEAF0x port of unifabric-testJSON2.json
        ("Ethernet508", 128, None),
        ("Ethernet504", 127, 64),
        ("Ethernet512", None, None),  # etp65, the SFP28 port outside the 64 cages
        ("etp24a", 47, 24),
        ("etp24b", 48, None),
        ("Ethernet24/2", 48, None),  # EOS spelling: cage 24, lane 2
        ("swp24s1", 48, None),
        ("swp65", None, None),
    ],
)
def test_sonic_names_on_sn5600(raw: str, at400: int | None, at800: int | None) -> None:
    s400 = PortScheme("cumulus", 2, 128, 64, "sn5600")
    s800 = PortScheme("cumulus", 1, 64, 64, "sn5600")
    assert port_number(raw, s400) == at400
    assert port_number(raw, s800) == at800


@pytest.mark.parametrize("spec", [SN5600_400, SN5600_800], ids=["400G", "800G"])
def test_sonic_spelled_snapshot_matches_and_a_bad_name_is_unknown_port(
    spec: dict[str, Any],
) -> None:
    index, wires = _plan(spec)

    def sonic(dev: str, port: str) -> str:
        sch = index.schemes.get(dev)
        if sch is None:
            return port
        n = switch_port_number(port, sch.ports_per_cage)
        assert n is not None
        cage, lane = divmod(n - 1, sch.ports_per_cage)
        return f"Ethernet{cage * 8 + lane * (8 // sch.ports_per_cage)}"

    assert compute_drift(index, spelled_snapshot(wires, sonic)).findings == []
    # One leaf end named Ethernet516 (lane 516: beyond the 64 cages).
    victim = next(w for w in wires if w.role == "node_leaf")

    def broken(dev: str, port: str) -> str:
        if (dev, port) == (victim.b_dev, victim.b_port):
            return "Ethernet516"
        return sonic(dev, port)

    report = compute_drift(index, spelled_snapshot(wires, broken))
    assert [f.kind for f in report.findings] == ["unknown_port"]
    (f,) = report.findings
    assert "'Ethernet516'" in f.summary and "move the cable" not in f.fix
    assert f.expected[0].where == f"plan:{victim.id}"
    assert switch_port_label("cumulus", 1, 2) == "swp1s0"  # the plan's own spelling


# ----------------------------------------------------------------------- speeds


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        # ibnetdiscover width × rate (signalling rate per lane; 1xSDR = 2.5 Gb/s raw).
        ("1xSDR", 2.5),
        ("4xSDR", 10),  # jabl-ibtopotool-1.topo line 16
        ("4xDDR", 20),  # ltaulell-X5.topofile line 14
        ("4xQDR", 40),  # ltaulell-X5.topofile line 11
        ("4xFDR10", 40),  # arthurtumanyan-small_topo_file.txt line 28
        ("4xFDR", 56),  # arthurtumanyan-small_topo_file.txt line 11
        ("4xEDR", 100),  # arthurtumanyan-small_topo_file.txt line 12
        ("4xHDR", 200),  # arthurtumanyan-small_topo_file.txt line 14
        ("2xNDR", 200),
        ("4xNDR", 400),
        ("1xXDR", 200),  # nvidia-q3400-router-snippet.txt line 6
        ("4xXDR", 800),
        ("4x???", None),
    ],
)
def test_ib_speed_table(text: str, gbps: float | None) -> None:
    assert ib_speed(text) == gbps


@pytest.mark.parametrize(
    ("text", "gbps"),
    [
        # lldpd MAU names (its dot3 atom) and lldpctl's long form.
        ("2p5GigT", 2.5),
        ("5GigT", 5),
        ("100BaseTXFD", 0.1),
        ("1000BaseTFD", 1),
        ("10GigBaseLR", 10),
        ("40GbaseCR4", 40),
        ("400GbaseSR8", 400),
        # lldpd-upstream-test-neighbors.json: auto-negotiation current.
        ("10GbaseT - Four-pair Category 6A or better, full duplex mode only", 10),
        ("unknown", None),  # puppet-lldpd-output1.json
        # EOS operMauType (napalm-normal.json, napalm-issue903.json, issue1153).
        ("10GBASE-X", 10),
        ("10GBASE-LR", 10),
        ("1000BASE-T", 1),
        ("400GBASE-DR4", 400),
        ("Unknown", None),
    ],
)
def test_mau_speed_table(text: str, gbps: float | None) -> None:
    assert mau_speed(text) == gbps


def test_bandwidth_speed() -> None:
    # arista-vEOS excerpt: Management1 bandwidth 1000000000, Ethernet2 bandwidth 0.
    assert bandwidth_speed(1_000_000_000) == 1
    assert bandwidth_speed(0) is None
    assert bandwidth_speed(400_000_000_000) == 400


def test_node_name_map_follows_rdma_core_and_accepts_h_keys(tmp_path: Path) -> None:
    from fabric_stack.adapters.discovery import load_node_name_map
    from fabric_stack.errors import InputFileError

    path = tmp_path / "map"
    path.write_text(
        "# rdma-core util/node_name_map.c: strtoull(guid, 0), name = strtok(rest, '\"#')\n"
        '0xfc6a1c0300e4a1c0 "su1-r1-leaf"\n'
        "0xfc6a1c0300e4a1c1 su1-r2-leaf   # unquoted, comment after\n"
        "\t0x0c42a10300a1b2c4\tsu1-node01 mlx5_0\n"
        "H-0c42a10300a1b2c5 su1-node01 mlx5_1\n"
        "0c42a10300a1b2c6 su1-node02\n",
        encoding="utf-8",
    )
    assert load_node_name_map(path) == {
        "fc6a1c0300e4a1c0": "su1-r1-leaf",
        "fc6a1c0300e4a1c1": "su1-r2-leaf",
        "0c42a10300a1b2c4": "su1-node01 mlx5_0",
        "0c42a10300a1b2c5": "su1-node01 mlx5_1",
        "0c42a10300a1b2c6": "su1-node02",
    }
    path.write_text('0xfc6a1c0300e4a1c0 "ok"\nsu1-r2-leaf 0xfc6a\n', encoding="utf-8")
    with pytest.raises(InputFileError) as exc:
        load_node_name_map(path)
    assert str(exc.value).startswith(f"{path}:2: expected `<guid> <name>`")
