"""Conformance of every drift reader with real output captured at other sites.

The samples live in ``../shared/realdata`` (beside the clone; provenance in its
SOURCES.md) and are read from there, never copied. Each sample either parses
or is rejected for the reason SOURCES.md gives. The expected counts and fields
below were read off the files by eye; each assertion names the line (or JSON
path) it comes from, and :func:`line` checks that line still says so.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from fabric_stack.adapters.discovery import IbnetdiscoverReader, NetboxCsvReader, NetboxJsonReader
from fabric_stack.adapters.discovery._common import read_json
from fabric_stack.adapters.discovery.eos import _status, parse_eos
from fabric_stack.adapters.discovery.lldp import parse_lldpd
from fabric_stack.drift.model import Endpoint
from fabric_stack.errors import InputFileError

REPO = Path(__file__).resolve().parents[2]
# CI: shared/ beside the clone. A git worktree one level deeper (wt/<name>) finds it above.
REAL = next(
    (
        p
        for p in (REPO.parent / "shared" / "realdata", REPO.parent.parent / "shared" / "realdata")
        if p.is_dir()
    ),
    REPO.parent / "shared" / "realdata",
)
IB, LLDP, EOS, NB = (REAL / d for d in ("ibnetdiscover", "lldpd", "eos", "netbox"))

# Never a silent pass in CI: there the samples must be present.
pytestmark = pytest.mark.skipif(
    not REAL.is_dir() and not os.environ.get("CI"), reason="../shared/realdata not found"
)


def line(path: Path, n: int, text: str) -> None:
    """Line ``n`` of ``path`` says ``text`` (so a test's reading by eye stays checkable)."""
    assert text in path.read_text(encoding="utf-8").splitlines()[n - 1]


def ends(snap_links: list, device: str) -> set[str]:
    return {e.port for link in snap_links for e in (link.a, link.b) if e.device == device}


NOT_YET_READ: dict[str, str] = {}
"""Samples in ``../shared/realdata`` no test here reads yet, each with the reason."""


def test_every_sample_is_covered_by_a_test_here() -> None:
    more = ("iblinkinfo", "ibdiagnet", "sonic", "nvue")
    names = {p.name for d in (IB, LLDP, EOS, NB, *(REAL / m for m in more)) for p in d.iterdir()}
    text = Path(__file__).read_text(encoding="utf-8").split("NOT_YET_READ", 1)[0]
    text += Path(__file__).read_text(encoding="utf-8").split('"""Samples in', 1)[1]
    # The formats of issue 28 are read in their own file.
    text += (Path(__file__).parent / "test_discovery_formats.py").read_text(encoding="utf-8")
    uncovered = {n for n in names if n not in text}
    assert uncovered == set(NOT_YET_READ), "new samples need a test (or a reason here)"


# ----------------------------------------------------------------------- ibnetdiscover


def test_x5_89_identical_hcas_stay_89_devices() -> None:
    path = IB / "ltaulell-X5.topofile"
    line(path, 14, '"MT25408 ConnectX Mellanox Technologies" lid 72 4xDDR')
    snap = IbnetdiscoverReader(path).load()
    kinds = Counter(d.kind for d in snap.devices.values())
    # 89 `Ca` blocks and 11 `Switch` blocks (grep -c), 159 cables (318 port lines / 2).
    assert kinds == {"server": 89, "switch": 11}
    assert len(snap.links) == 159
    # Line 900: Ca H-003048c74e4a0000 "MT25408 ConnectX…": named `<desc> <guid>`.
    line(path, 900, 'Ca\t1 "H-003048c74e4a0000"')
    assert "MT25408 ConnectX Mellanox Technologies 003048c74e4a0000" in snap.devices
    # Line 10: a unique switch description is the device name; line 292: its port 11, 4xDDR.
    line(path, 292, '[11]\t"H-003048c74e4a0000"[1](3048c74e4a0001)')
    rates = {link.rate for link in snap.links}
    assert rates == {"4xQDR", "4xDDR"}
    assert {link.speed_gbps for link in snap.links} == {40, 20}


def test_x5_with_its_h_guid_map_names_the_hosts() -> None:
    path, mapping = IB / "ltaulell-X5.topofile", IB / "ltaulell-X5.map"
    line(mapping, 2, "H-003048c74e4a0000 x5570comp1")
    line(mapping, 3, "H-003048c7488b0000 x5570comp2")
    snap = IbnetdiscoverReader(path, mapping).load()
    assert {"x5570comp1", "x5570comp2"} <= set(snap.devices)
    assert snap.devices["x5570comp1"].kind == "server"
    assert len(snap.links) == 159 and len(snap.devices) == 100


def test_nvidia_lab_host_hca_n_sharp_node_and_loopbacks() -> None:
    path = IB / "arthurtumanyan-small_topo_file.txt"
    snap = IbnetdiscoverReader(path).load()
    # Line 10: MF0;r-ufm-sw95:MQM8700/U1; the SX6036 block: MF0;r-ufm-sw226:SX6036/U1.
    line(path, 10, '"MF0;r-ufm-sw95:MQM8700/U1"')
    assert {d for d, s in snap.devices.items() if s.kind == "switch"} == {
        "r-ufm-sw95",
        "r-ufm-sw226",
    }
    # Lines 12/13 and the SX6036's 19/20: r-dcs96 HCA-1..HCA-4 are one host, four ports.
    line(path, 12, '"r-dcs96 HCA-1" lid 9 4xEDR')
    assert ends(snap.links, "r-dcs96") == {"HCA-1", "HCA-2", "HCA-3", "HCA-4"}
    # Line 14: the SHARP aggregation node shares the MQM8700's sysimgguid: internal, skipped.
    line(path, 14, '"Mellanox Technologies Aggregation Node" lid 14 4xHDR')
    assert not any("Aggregation" in d for d in snap.devices)
    assert any("inside a multi-chip switch system" in n for n in snap.notes)
    # Lines 28/29: a loopback cable on the SX6036 (ports 25↔26), 4xFDR10.
    line(path, 28, '[25]\t"S-0002c903007b78b0"[26]')
    loop = next(link for link in snap.links if link.a == Endpoint("r-ufm-sw226", "25", "number"))
    assert (loop.b.port, loop.rate, loop.speed_gbps) == ("26", "4xFDR10", 40)
    # 2 switches + 5 hosts; 15 cables (1 ISL, 12 HCA ports, 2 loopbacks).
    assert len(snap.devices) == 7 and len(snap.links) == 15


def test_manpage_g_output_non_chassis_nodes_and_1xsdr() -> None:
    path = IB / "jabl-ibtopotool-1.topo"
    line(path, 7, "Non-Chassis Nodes")
    snap = IbnetdiscoverReader(path).load()
    # 2 switches, 4 HCAs that all say "MT23108 InfiniHost …" (named by GUID), 7 cables.
    assert Counter(d.kind for d in snap.devices.values()) == {"switch": 2, "server": 4}
    assert len(snap.links) == 7
    assert "MT23108 InfiniHost Mellanox Technologies 0008f10403960558" in snap.devices
    # Line 26: SW-6IB4 port 1 sees 1xSDR, but the cable was first printed at line 16 as 4xSDR.
    line(path, 26, '"ISR9024 Voltaire" lid 6 1xSDR')
    isl = next(
        link
        for link in snap.links
        if {link.a.device, link.b.device} == {"ISR9024 Voltaire", "SW-6IB4 Voltaire"}
        and "10" in (link.a.port, link.b.port)
    )
    assert isl.rate == "4xSDR" and isl.speed_gbps == 10


def test_2009_dump_with_host_hca_port_2() -> None:
    path = IB / "jabl-ibtopotool-2.topo"
    line(path, 12, '"compute-00-00 HCA-1" lid 2 4xSDR')
    snap = IbnetdiscoverReader(path).load()
    assert len(snap.links) == 2 and len(snap.devices) == 3
    # Line 12: the HCA's port 2 is cabled: HCA-1/2.
    assert ends(snap.links, "compute-00-00") == {"HCA-1/2"}


def test_stray_stderr_line_is_a_warning_not_fatal() -> None:
    path = IB / "jabl-ibtopotool-3.topo"
    line(path, 1, "src/query_smp.c:195; umad (DR path")
    snap = IbnetdiscoverReader(path).load()
    assert any(n.startswith(f"warning: {path}:1: skipped") for n in snap.notes)
    # Line 14: MF0;switch-de779e:SX6012/U1; line 20: r-ufm111 HCA-1 port 2, 4xFDR.
    line(path, 20, '"r-ufm111 HCA-1" lid 3 4xFDR')
    assert "switch-de779e" in snap.devices
    assert "HCA-1/2" in ends(snap.links, "r-ufm111")
    assert len(snap.links) == 10 and len(snap.devices) == 7


def test_sun_dcs36_whitespace_only_separator() -> None:
    path = IB / "jabl-ibtopotool-4.topo"
    line(path, 11, '"nsn33-43 HCA-1" lid 14 4xQDR')
    snap = IbnetdiscoverReader(path).load()
    assert len(snap.links) == 1
    assert snap.links[0].speed_gbps == 40


def test_q3400_router_snippet_is_a_truncated_fragment() -> None:
    path = IB / "nvidia-q3400-router-snippet.txt"
    # SOURCES.md: a 6-line fragment; line 6 points at U2's block, which is not there.
    line(path, 6, '"S-b8e924030000b921"[149]')
    with pytest.raises(InputFileError) as exc:
        IbnetdiscoverReader(path).load()
    assert str(exc.value).startswith(f"{path}:6:") and "truncated" in str(exc.value)


# ----------------------------------------------------------------------- lldpd


@pytest.mark.parametrize(
    ("name", "count", "first", "evidence"),
    [
        # $.lldp[0].interface[0]: chassis StorageSW (line 20), port id type local
        # "Ethernet120" (line 58); 5 interface entries.
        (
            "unifabric-testJSON2.json",
            5,
            ("StorageSW", "Ethernet120", "name"),
            [(20, '"StorageSW"'), (58, '"Ethernet120"')],
        ),
        # The H3C access switch (line 20), GigabitEthernet1/0/17 (line 45); 3 entries.
        (
            "unifabric-testJSON1.json",
            3,
            ("DaoCloud_ShangPu_H3C_D01_AccessSwitch", "GigabitEthernet1/0/17", "name"),
            [(20, "DaoCloud_ShangPu_H3C_D01_AccessSwitch"), (45, '"GigabitEthernet1/0/17"')],
        ),
        # -f json: chassis keyed by name "router" (line 10), port ge-1/0/1 (line 32).
        (
            "puppet-lldpd-output1.json",
            1,
            ("router", "ge-1/0/1", "name"),
            [(10, '"router": {'), (32, '"ge-1/0/1"')],
        ),
        # One interface as a dict; a chassis with only id (line 11): named by its MAC;
        # port g17 (line 19).
        (
            "puppet-lldpd-output2.json",
            1,
            ("44:94:fc:9d:55:0a", "g17", "name"),
            [(11, "44:94:fc:9d:55:0a"), (19, '"g17"')],
        ),
        # lldpd's own test: ns-2.example.com (line 8), port id a MAC (line 31).
        (
            "lldpd-upstream-test-neighbors.json",
            1,
            ("ns-2.example.com", "00:00:00:00:00:02", "mac"),
            [(8, '"ns-2.example.com"'), (31, "00:00:00:00:00:02")],
        ),
        (
            "lldpd-upstream-test-neighbors-json0.json",
            1,
            ("ns-2.example.com", "00:00:00:00:00:02", "mac"),
            [(19, '"ns-2.example.com"'), (54, "00:00:00:00:00:02")],
        ),
    ],
)
def test_lldpd_samples(
    name: str, count: int, first: tuple[str, str, str], evidence: list[tuple[int, str]]
) -> None:
    path = LLDP / name
    for n, text in evidence:
        line(path, n, text)
    links = parse_lldpd(read_json(path), "host", path)
    assert len(links) == count
    b = links[0].b
    assert (b.device, b.port, b.port_type) == first


def test_lldpd_mau_speeds_of_the_samples() -> None:
    # Line 38: the upstream test's auto-negotiation current "10GbaseT - Four-pair …".
    path = LLDP / "lldpd-upstream-test-neighbors.json"
    line(path, 38, '"current": "10GbaseT - Four-pair Category 6A or better')
    assert parse_lldpd(read_json(path), "h", path)[0].speed_gbps == 10
    # puppet output1 line 45: MAU "unknown" → no speed rather than a guess.
    path = LLDP / "puppet-lldpd-output1.json"
    line(path, 45, '"current": "unknown"')
    assert parse_lldpd(read_json(path), "h", path)[0].speed_gbps is None


# ----------------------------------------------------------------------- EOS


def test_eos_napalm_normal_65_ports_41_neighbours_with_mau_speed() -> None:
    path = EOS / "napalm-normal.json"
    doc = read_json(path)
    assert len(doc["lldpNeighbors"]) == 65
    links, _ = parse_eos(doc, "sw", path)
    assert len(links) == 41
    # Line 3 Ethernet8: line 35 systemName 78m3, line 17 interfaceId 000f.532e.ced1 (a MAC),
    # line 26 operMauType 10GBASE-X.
    line(path, 3, '"Ethernet8": {')
    line(path, 17, '"interfaceId": "000f.532e.ced1"')
    line(path, 26, '"operMauType": "10GBASE-X"')
    line(path, 35, '"systemName": "78m3"')
    e8 = next(link for link in links if link.a.port == "Ethernet8")
    assert (e8.b.device, e8.b.port, e8.b.port_type, e8.speed_gbps) == (
        "78m3",
        "000f.532e.ced1",
        "mac",
        10,
    )


def test_eos_issue903_and_issue1153() -> None:
    path = EOS / "napalm-issue903.json"
    (link,), _ = parse_eos(read_json(path), "sw", path)
    # Line 3 Ethernet22: line 35 systemName "linux", line 27 operMauType 10GBASE-LR.
    line(path, 27, '"operMauType": "10GBASE-LR"')
    line(path, 35, '"systemName": "linux"')
    assert (link.a.port, link.b.device, link.speed_gbps) == ("Ethernet22", "linux", 10)
    path = EOS / "napalm-issue1153.json"
    links, _ = parse_eos(read_json(path), "sw", path)
    # Line 127 Ethernet27/1 → line 175 some-switch, line 140 "\"et-0/0/20\"" (quoted).
    line(path, 127, '"Ethernet27/1": {')
    line(path, 140, '"interfaceId": "\\"et-0/0/20\\""')
    line(path, 175, '"systemName": "some-switch"')
    e27 = next(link for link in links if link.a.port == "Ethernet27/1")
    assert e27.b.device == "some-switch" and e27.b.port == '"et-0/0/20"'
    assert len(links) == 3


def test_eos_interfaces_status_excerpt() -> None:
    path = EOS / "arista-vEOS-docstring-show-interfaces-status.excerpt.json"
    status = _status(path, None)
    # Line 3 Management1, line 8 bandwidth 1000000000; Ethernet2, line 22 bandwidth 0.
    line(path, 8, '"bandwidth": 1000000000')
    line(path, 22, '"bandwidth": 0')
    assert status["Management1"][:2] == (True, 1)
    assert status["Ethernet2"][:2] == (True, None)


# ----------------------------------------------------------------------- NetBox


def test_netbox_le_3_2_list_of_console_cables_is_skipped_with_a_note() -> None:
    path = NB / "pynetbox-fixture-cables.json"
    snap = NetboxJsonReader(path).load()
    # "count": 3; lines 8, 48, 88: termination_a_type dcim.consoleport: none compared.
    line(path, 8, '"termination_a_type": "dcim.consoleport"')
    line(path, 48, '"termination_a_type": "dcim.consoleport"')
    line(path, 88, '"termination_a_type": "dcim.consoleport"')
    assert snap.links == []
    (note,) = snap.notes
    assert note.startswith("warning: 3 cable(s) not between two interfaces were not compared: ")
    assert f"{path}:$.results[2] (dcim.consoleport)" in note


def test_netbox_single_cable_object() -> None:
    path = NB / "pynetbox-fixture-cable.json"
    line(path, 3, '"termination_a_type": "dcim.consoleport"')
    snap = NetboxJsonReader(path).load()
    assert snap.links == [] and f"{path}:$ (dcim.consoleport)" in snap.notes[0]


def test_netbox_36_rear_port_cable_is_skipped_not_fatal() -> None:
    path = NB / "netbox-ansible_modules-issue1040-cable.json"
    assert '"object_type": "dcim.rearport"' in path.read_text(encoding="utf-8")
    snap = NetboxJsonReader(path).load()
    assert snap.links == [] and f"{path}:$ (dcim.rearport)" in snap.notes[0]


@pytest.mark.parametrize(
    "name", ["netbox-testviews-cable-import.csv", "netbox-testviews-cable-import-old.csv"]
)
def test_netbox_import_csv(name: str) -> None:
    path = NB / name
    line(path, 2, "Device 3,")
    snap = NetboxCsvReader(path).load()
    assert len(snap.links) == 3 and set(snap.devices) == {"Device 3", "Device 4"}
    assert snap.links[0].a == Endpoint("Device 3", "Interface 1")


def test_netbox_csv_importer_readme() -> None:
    path = NB / "csv_importer_netbox-readme-8_cables.csv"
    line(path, 2, "RNP-CE,dcim.interface,1/1,RG02-EMBRAPA")
    (link,) = NetboxCsvReader(path).load().links
    assert (link.a, link.b) == (Endpoint("RNP-CE", "1/1"), Endpoint("RG02-EMBRAPA", "1/1"))


def test_netbox_list_view_export_headers(tmp_path: Path) -> None:
    # No real list-view export was found (SOURCES.md); the titles are NetBox's table columns.
    path = tmp_path / "netbox_cables.csv"
    path.write_text(
        "ID,Label,Device A,Termination A,Device B,Termination B,Status,Type\n"
        "7,c7,leaf1,swp1,spine1,swp3,Connected,SMF\n",
        encoding="utf-8",
    )
    (link,) = NetboxCsvReader(path).load().links
    assert (link.a, link.b) == (Endpoint("leaf1", "swp1"), Endpoint("spine1", "swp3"))
    assert link.attrs is not None and link.attrs["medium"] == "smf"


def test_a_real_dump_of_another_site_is_low_coverage_not_small_drift() -> None:
    from fabric_stack.drift import PlanIndex, compute_drift
    from tests.drift_fixtures import topology

    snap = IbnetdiscoverReader(IB / "ltaulell-X5.topofile", IB / "ltaulell-X5.map").load()
    report = compute_drift(PlanIndex.from_topology(topology({})), snap)
    cov = report.coverage
    assert cov is not None and cov.low and not report.clean
    assert (cov.matched_devices, cov.planned_devices, cov.seen_links) == (0, 30, 159)
