"""The discovery formats of issue 28 on the real samples, and their bad-input contract.

Samples are read in place from ``../shared/realdata`` (provenance in its SOURCES.md).
Counts were read off the files by eye; each assertion names the line it comes from, and
:func:`line` checks that the line still says so. Formats without a real sample (SONiC
``show lldp table``, ``config_db.json``, NVUE beyond the one sample) use the small
fixtures of ``tests/fixtures/discovery-formats`` (their README says where each layout comes
from). The same fabric written in every InfiniBand layout (``tests/ib_formats.py``) must
read the same, on the plan fixture and on the real 2025 NDR DGX dump.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.discovery import iblinkinfo
from fabric_stack.adapters.discovery.eos import EosReader
from fabric_stack.adapters.discovery.ibdiagnet import IbdiagnetReader
from fabric_stack.adapters.discovery.iblinkinfo import IblinkinfoReader
from fabric_stack.adapters.discovery.ibnetdiscover import IbnetdiscoverReader
from fabric_stack.adapters.discovery.lldp import LldpReader
from fabric_stack.adapters.discovery.nvue import NvueReader, nvue_speed
from fabric_stack.adapters.discovery.sonic_config import SonicConfigReader
from fabric_stack.cli import main
from fabric_stack.drift.model import Endpoint, ObservedLink, Snapshot
from fabric_stack.errors import InputFileError
from tests.ib_formats import iblinkinfo_line_of, iblinkinfo_of, lst_of
from tests.unit.test_drift_realdata import REAL, line, pytestmark

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "drift"
FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "discovery-formats"
__all__ = ["pytestmark"]  # the realdata skip (never silent in CI) applies here too


def pairs(snap: Snapshot) -> set[tuple[str, str, str, str]]:
    """Every link as (a device, a port, b device, b port)."""
    return {(x.a.device, x.a.port, x.b.device, x.b.port) for x in snap.links}


def cable_set(links: list[ObservedLink]) -> list[tuple[object, ...]]:
    """Links as unordered end pairs with their rate (to compare two readers)."""
    return sorted(
        (*sorted([(x.a.device, x.a.port), (x.b.device, x.b.port)]), x.rate) for x in links
    )


# --------------------------------------------------------------------------- iblinkinfo


def test_iblinkinfo_edr_msb7700() -> None:
    p = REAL / "iblinkinfo" / "iblinkinfo-msb7700-edr-2node.txt"
    line(p, 2, "4X      25.78125 Gbps Active/  LinkUp)==>       2   17[  ]")
    line(p, 5, "Switch: 0x506b4b0300820910 MF0;SB7700:MSB7700/U1:")
    line(
        p,
        23,
        '2   18[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       1    1[  ] "n01 HCA-1"',
    )
    snap = IblinkinfoReader(p).load()
    # Lines 2 and 22 are one cable (n02 ↔ port 17); line 4 mgt ↔ 36; line 23 port 18 ↔ n01.
    assert pairs(snap) == {
        ("n02", "HCA-1", "SB7700", "17"),
        ("mgt", "mlx5_0", "SB7700", "36"),
        ("SB7700", "18", "n01", "HCA-1"),
    }
    assert {x.rate for x in snap.links} == {"4xEDR"} and {x.speed_gbps for x in snap.links} == {100}
    assert snap.devices["SB7700"].attrs["guid"] == "0x506b4b0300820910"  # line 5
    assert snap.devices["n02"].attrs["hca_guids"] == ["0xec0d9a03003d62be"]  # line 2
    assert "hca_guids" not in snap.devices["n01"].attrs  # n01 has no block: no GUID
    # Lines 6-21: ports 1-16 Down/ Polling.
    assert sorted(int(s.endpoint.port) for s in snap.port_states) == list(range(1, 17))
    assert not any(s.up for s in snap.port_states)
    assert any('lid:1 "n01 HCA-1", line 23' in n for n in snap.notes)


def test_iblinkinfo_qdr_infiniscale() -> None:
    p = REAL / "iblinkinfo" / "iblinkinfo-infiniscale-iv-4node.txt"
    line(p, 9, "Switch: 0x0002c9020046c588 Infiniscale-IV Mellanox Technologies:")
    line(p, 14, "2    5[  ] ==(                Down/ Polling)==>")
    snap = IblinkinfoReader(p).load()
    sw = "Infiniscale-IV Mellanox Technologies"
    # Lines 10-13: ports 1-4 to centos-data-202, -201, -200 and kube-node-100, 4X 10.0 Gbps.
    assert pairs(snap) == {
        ("centos-data-202", "HCA-1", sw, "1"),
        ("centos-data-201", "HCA-1", sw, "2"),
        ("centos-data-200", "HCA-1", sw, "3"),
        ("kube-node-100", "HCA-1", sw, "4"),
    }
    assert {(x.rate, x.speed_gbps) for x in snap.links} == {("4xQDR", 40)}
    assert len(snap.port_states) == 32  # lines 14-45: ports 5-36 down
    assert snap.notes == []  # every far end has a block


IBSIM_HDR = (
    "CA: su1-node16 mlx5_7:\n"
    "      0x02fa5702376987d1    124    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>"
    '     110   16[  ] "MF0;su1-r8-leaf:MQM9700/U1" (Could be 12X )\n'
)
"""Two lines copied from the twin's ``iblinkinfo`` (infiniband-diags 44.0 on ibsim 0.10,
Debian 12; ``twin collect`` of the 128-GPU IB plan): ibsim's HDR lane rate, no hardware."""


def test_iblinkinfo_hdr_lane_as_ibsim_prints_it(tmp_path: Path) -> None:
    p = tmp_path / "iblinkinfo.txt"
    p.write_text(IBSIM_HDR, encoding="utf-8")
    snap = IblinkinfoReader(p).load()
    assert pairs(snap) == {("su1-node16", "mlx5_7", "su1-r8-leaf", "16")}
    assert {(x.rate, x.speed_gbps) for x in snap.links} == {("4xHDR", 200)}


TWIN_IBL = Path(__file__).parents[1] / "fixtures" / "discovery-formats" / "iblinkinfo"
"""``iblinkinfo`` and ``iblinkinfo --line`` of one simulated fabric (``ibsim.net`` there:
2 switches, 2 hosts × 2 HCAs; infiniband-diags 44.0 on ibsim 0.10 after one OpenSM sweep)."""


def test_iblinkinfo_line_mode_reads_as_the_blocks_do() -> None:
    p = TWIN_IBL / "iblinkinfo-line.ibsim.txt"
    line(
        p,
        1,
        '0x0000000000100007 "                 node02 mlx5_1"      6    1[  ] ==( 4X           '
        "2.5 Gbps Active/  LinkUp)==>  0x0000000000200001      3    2[  ]",
    )
    line(p, 6, '0x0000000000200001 "         MF0;leaf-2:MSB7700/U1"      3    4[  ] ==(')
    snap = IblinkinfoReader(p).load()
    blocks = IblinkinfoReader(TWIN_IBL / "iblinkinfo.ibsim.txt").load()
    # Line 1: node02 mlx5_1 ↔ leaf-2 port 2; lines 5 and 7: leaf-2 ports 3, 5 ↔ leaf-1 3, 5.
    assert ("node02", "mlx5_1", "leaf-2", "2") in pairs(snap)
    assert ("leaf-2", "3", "leaf-1", "3") in pairs(snap) and len(snap.links) == 6
    assert cable_set(snap.links) == cable_set(blocks.links)
    assert {(x.rate, x.speed_gbps) for x in snap.links} == {("4xSDR", 10)}
    assert {d: (s.kind, s.attrs) for d, s in snap.devices.items()} == {
        d: (s.kind, s.attrs) for d, s in blocks.devices.items()
    }
    assert snap.devices["leaf-2"].attrs["guid"] == "0x0000000000200001"  # lines 3-10
    # Lines 6, 8-10 and 16, 18-20: ports 4, 6, 7, 8 of each switch are Down/ Polling.
    down = {(s.endpoint.device, s.endpoint.port) for s in snap.port_states}
    assert down == {(sw, str(n)) for sw in ("leaf-1", "leaf-2") for n in (4, 6, 7, 8)}
    assert down == {(s.endpoint.device, s.endpoint.port) for s in blocks.port_states}
    assert snap.notes == blocks.notes == []


def test_iblinkinfo_line_mode_bad_line_names_it(tmp_path: Path) -> None:
    text = (TWIN_IBL / "iblinkinfo-line.ibsim.txt").read_text(encoding="utf-8")
    p = tmp_path / "l.txt"
    p.write_text(text.replace("\n", "\nCA: node9 mlx5_0:\n", 1), encoding="utf-8")
    with pytest.raises(
        InputFileError, match=r"l\.txt:2: unrecognised line .CA: node9.*iblinkinfo --line"
    ):
        IblinkinfoReader(p).load()


def _mutations(line: str) -> list[str]:
    """A port or header line with one character dropped, doubled or replaced, at each place."""
    out = []
    for i in range(len(line)):
        out += [line[:i] + line[i + 1 :], line[:i] + line[i] + line[i:]]
        out += [line[:i] + c + line[i + 1 :] for c in ' "()[]\t\r\x0b:x0é']
    return out


def test_block_lines_read_at_once_as_line_by_line() -> None:
    """The whole-text pattern (the fast path) gives each line's fields exactly as the
    per-line patterns do, on the real and twin samples and on lines mangled every way."""
    samples = [
        REAL / "iblinkinfo" / "iblinkinfo-msb7700-edr-2node.txt",
        REAL / "iblinkinfo" / "iblinkinfo-infiniscale-iv-4node.txt",
        TWIN_IBL / "iblinkinfo.ibsim.txt",
    ]
    for p in samples:
        text = p.read_text(encoding="utf-8")
        lines = text.split("\n")
        numbers = [n for n, x in enumerate(lines, 1) if x.strip()]
        fast = iblinkinfo._BLOCK_LINE.findall(text)
        assert fast == [iblinkinfo._fields(str(p), lines[n - 1], n) for n in numbers], p
    checked = 0
    for p in samples:
        for text_line in p.read_text(encoding="utf-8").splitlines()[:6]:
            for bad in _mutations(text_line):
                fast = iblinkinfo._BLOCK_LINE.findall(bad)
                if len(fast) != 1 or not bad.strip():
                    continue
                checked += 1
                assert fast[0] == iblinkinfo._fields("x", bad, 1), bad
    assert checked > 1000


# --------------------------------------------------------------- ibnetdiscover -p, .lst


def test_ibnetdiscover_ports_report() -> None:
    p = REAL / "ibnetdiscover" / "ibnetdiscover-p-ports.ncar-docstring.txt"
    line(p, 1, "CA    44  1 0x0002c9030045f121 4x FDR - SW     2 17 0x0002c903006e1430")
    line(p, 3, "SW    82 19 0x7cfe900300bdf4f0 4x ???")
    snap = IbnetdiscoverReader(p).load()
    assert pairs(snap) == {("localhost", "HCA-1", "js01ib2", "17")}  # line 1
    assert [(x.rate, x.speed_gbps) for x in snap.links] == [("4xFDR", 56)]
    # Lines 2 and 3: a port with nothing on it, on each switch.
    assert {(s.endpoint.device, s.endpoint.port) for s in snap.port_states} == {
        ("js01ib2", "19"),
        ("r1i0s0 SW1", "19"),
    }
    assert snap.devices["r1i0s0 SW1"].kind == "switch"
    assert any("read as `ibnetdiscover -p`" in n for n in snap.notes)


def test_ibdiagnet_lst_one_line() -> None:
    p = REAL / "ibdiagnet" / "ibdiagnet2.lst.one-line.txt"
    line(p, 1, "LID:0002 PN:14 } PHY=4x LOG=ACT SPD=2.5")
    snap = IbdiagnetReader(p).load()
    # No NodeDescription survived the export: each node is named by its GUID. PN is hex.
    assert pairs(snap) == {("0002c90300165e60", "port1", "0002c90300688830", "20")}
    assert [(x.rate, x.speed_gbps) for x in snap.links] == [("4xSDR", 10)]
    assert snap.devices["0002c90300688830"].kind == "switch"


@pytest.mark.parametrize(
    "dump",
    [FIX / "ib" / "ibnetdiscover.txt", REAL / "ibnetdiscover" / "topograph-ndr-dgx-example.out"],
)
def test_every_infiniband_layout_reads_the_same_fabric(dump: Path, tmp_path: Path) -> None:
    text = dump.read_text(encoding="utf-8")
    (tmp_path / "f.iblinkinfo").write_text(iblinkinfo_of(text), encoding="utf-8")
    (tmp_path / "f.lst").write_text(lst_of(text), encoding="utf-8")
    (tmp_path / "f.line").write_text(iblinkinfo_line_of(text), encoding="utf-8")
    ref = IbnetdiscoverReader(dump).load()
    for snap in (
        IblinkinfoReader(tmp_path / "f.iblinkinfo").load(),
        IblinkinfoReader(tmp_path / "f.line").load(),
        IbdiagnetReader(tmp_path / "f.lst").load(),
    ):
        assert cable_set(snap.links) == cable_set(ref.links), snap.source
        assert sorted(snap.devices) == sorted(ref.devices)
        assert {d: s.kind for d, s in snap.devices.items()} == {
            d: s.kind for d, s in ref.devices.items()
        }
    if dump.suffix == ".out":
        # The NDR dump (SOURCES.md): 1,074 cables once the 40 SHARP nodes are folded in.
        assert len(ref.links) == 1074 and any(n.startswith("40 link(s) inside") for n in ref.notes)


# --------------------------------------------------------------------------- LLDP


def test_lldpctl_keyvalue_and_sonic_neighbours_in_one_directory(tmp_path: Path) -> None:
    kv = REAL / "lldpd" / "lldpctl-keyvalue-mozilla-2if.txt"
    sonic = REAL / "sonic" / "sonic-show-lldp-neighbors-microsoft-owr01.txt"
    line(kv, 9, "lldp.eth0.port.ifname=Gi3/0/9")
    line(kv, 24, "lldp.eth1.port.ifname=Gi4/0/9")
    line(sonic, 12, "PortID:       local 588")
    line(sonic, 72, "Interface:    Ethernet2, via: LLDP")
    (tmp_path / "web1.txt").symlink_to(kv)
    (tmp_path / "owr01").symlink_to(sonic)
    (tmp_path / "notes.md").write_text("# cabling notes\n", encoding="utf-8")
    snap = LldpReader(tmp_path).load()
    assert snap.notes == [
        "skipped notes.md: not lldpctl JSON, keyvalue or text, nor SONiC "
        "`show lldp neighbors`/`show lldp table`"
    ]
    assert snap.covered == frozenset({"web1", "owr01"})
    web = [x for x in snap.links if x.a.device == "web1"]
    assert [(x.a.port, x.b.device, x.b.port, x.b.hint) for x in web] == [
        ("eth0", "switch1.vlan.dc.mozilla.com", "Gi3/0/9", "GigabitEthernet3/0/9"),  # lines 5-10
        ("eth1", "switch1.vlan.dc.mozilla.com", "Gi4/0/9", "GigabitEthernet4/0/9"),  # 20-25
    ]
    assert all(x.speed_gbps is None for x in web)  # lines 13, 28: current=unknown
    owr = [x for x in snap.links if x.a.device == "owr01"]
    # Five blocks (lines 4, 31, 46, 59, 72); Ethernet2 has three neighbours.
    assert [(x.a.port, x.b.device, x.b.port) for x in owr] == [
        ("eth0", "STR-22EX-219-A06", "588"),
        ("Ethernet3", "rwa04.str01", "Ethernet5/35/1"),
        ("Ethernet2", "rwa03.str01.network.microsoft.com", "Bundle-Ether121"),
        ("Ethernet2", "rwa03.str01.network.microsoft.com", "FourHundredGigE0/2/0/8"),
        ("Ethernet2", "Device1(SONiC).network.microsoft.com", "Ethernet2"),
    ]
    assert owr[0].b.hint == "ge-0/0/38.0"  # line 13: the Juniper's local port id's name
    assert snap.chassis_macs["rwa04.str01"] == "fc:bd:67:11:b1:28"  # line 33


def test_sonic_show_lldp_table_fixture() -> None:
    snap = LldpReader(FORMATS / "lldp-table").load()
    assert pairs(snap) == {
        ("leaf-1", "Ethernet0", "spine-01", "Ethernet1/51"),
        ("leaf-1", "Ethernet4", "spine-02", "Ethernet1/51"),
        ("leaf-1", "Ethernet8", "node-07", "mlx5_0"),
    }
    hints = {x.a.port: x.b.hint for x in snap.links}
    assert hints == {
        "Ethernet0": "leaf-1:Ethernet0",
        "Ethernet4": "leaf-1 uplink 2",
        "Ethernet8": "",
    }


def test_sonic_show_lldp_table_total_must_match(tmp_path: Path) -> None:
    text = (FORMATS / "lldp-table" / "leaf-1.txt").read_text(encoding="utf-8")
    (tmp_path / "leaf-1.txt").write_text(text.replace("Ethernet8    node-07         mlx5_0\n", ""))
    with pytest.raises(InputFileError) as e:
        LldpReader(tmp_path).load()
    assert e.value.message == (
        f"{tmp_path}/leaf-1.txt:7: says 3 entries but lists 2 (truncated or edited?) "
        "(read as SONiC `show lldp table`)"
    )


# --------------------------------------------------------------------------- EOS, NVUE, SONiC


def test_eos_result_as_pyeapi_and_eapi_return_it(tmp_path: Path) -> None:
    p = REAL / "eos" / "eos-lldp-detail.PDX01-M01-G29-IPMISPINE-01.json"
    line(p, 3, '"Ethernet1": {')
    line(p, 165, '"Ethernet4": {')
    result = json.loads(p.read_text(encoding="utf-8"))
    plain, wrapped, rpc = (tmp_path / d for d in ("plain", "pyeapi", "eapi"))
    for d in (plain, wrapped, rpc):
        d.mkdir()
    (plain / "sp.json").symlink_to(p)
    (wrapped / "sp.json").write_text(
        json.dumps([{"command": "show lldp neighbors detail", "result": result}])
    )
    (rpc / "sp.json").write_text(json.dumps({"jsonrpc": "2.0", "id": "1", "result": [result]}))
    snaps = [EosReader(d).load() for d in (plain, wrapped, rpc)]
    assert pairs(snaps[0]) == pairs(snaps[1]) == pairs(snaps[2])
    # Lines 3, 48, 93, 165: Ethernet1-4, one neighbour each.
    assert sorted(x.a.port for x in snaps[0].links) == [f"Ethernet{i}" for i in range(1, 5)]
    assert (
        snaps[1].links[0].where.endswith(":$[0].result.lldpNeighbors.Ethernet1.lldpNeighborInfo[0]")
    )
    assert (
        snaps[2].links[0].where.endswith(":$.result[0].lldpNeighbors.Ethernet1.lldpNeighborInfo[0]")
    )


def test_nvue_real_sample(tmp_path: Path) -> None:
    p = REAL / "nvue" / "nvue-show-interface.cumulus56.json"
    line(p, 15, '"speed": "1G",')
    (tmp_path / "rno1-m04-leaf.json").symlink_to(p)
    snap = NvueReader(tmp_path).load()
    # eth0's one neighbour (lines 30-66); swp1, swp10-12 are swp ports, down, no neighbour.
    assert pairs(snap) == {
        ("rno1-m04-leaf", "eth0", "rno1-m04-C10-leaf1.smn.lab1", "Ethernet2"),
    }
    assert snap.links[0].speed_gbps == 1
    assert sorted((s.endpoint.port, s.up) for s in snap.port_states) == [
        ("swp1", False),
        ("swp10", False),
        ("swp11", False),
        ("swp12", False),
    ]
    assert snap.chassis_macs["rno1-m04-C10-leaf1.smn.lab1"] == "fc:59:c0:3d:4c:cb"


def test_nvue_fixture_mac_port_speed_and_silent_up_port() -> None:
    snap = NvueReader(FORMATS / "nvue").load()
    host = next(x for x in snap.links if x.b.device == "su1-node01")
    assert host.b == Endpoint("su1-node01", "02:cf:36:df:af:e7", "mac", "ens1np0")
    assert host.speed_gbps == 400
    assert [(s.endpoint.port, s.up) for s in snap.port_states] == [("swp2", True), ("swp3", False)]
    assert (nvue_speed("100M"), nvue_speed("2.5G"), nvue_speed("auto")) == (0.1, 2.5, None)


def test_sonic_config_db_both_device_neighbor_spellings() -> None:
    snap = SonicConfigReader(FORMATS / "sonic").load()
    assert not snap.physical  # configured neighbours are records
    assert pairs(snap) == {
        ("su1-r1-leaf", "Ethernet0", "su1-node01", "mlx5_0"),
        ("su1-r1-leaf", "Ethernet4", "su1-node02", "mlx5_0"),
        ("su1-r1-leaf", "Ethernet256", "spine-01", "Ethernet0"),  # local_port alias etp33
    }
    assert {x.a.port: x.speed_gbps for x in snap.links}["Ethernet256"] == 800
    assert snap.aliases[("su1-r1-leaf", "etp1a")] == "Ethernet0"


# --------------------------------------------------------------------------- bad input


BAD: dict[str, tuple[str, str, str, str]] = {
    "iblinkinfo": (
        "--iblinkinfo",
        "x.txt",
        "CA: n02 HCA-1:\n"
        "      0xec0d9a03003d62be  4  1[  ] ==( 4X 25.78125 Gbps Active/ LinkUp)==> 2\n",
        "x.txt:2: unrecognised line",
    ),
    "ibnetdiscover -p": (
        "--ibnetdiscover",
        "x.txt",
        "CA 44 1 0x0002c9030045f121 4x FDR - SW 2 17 0x0002c903006e1430 ( 'a HCA-1' - 'b' )\n"
        "SW 2 17 0x0002c903006e1430 4x FDR - CA\n",
        "x.txt:2: malformed `ibnetdiscover -p` line",
    ),
    "ibdiagnet": (
        "--ibdiagnet",
        "x.lst",
        "{ CA Ports:02 SystemGUID:1 NodeGUID:2 PortGUID:3 LID:0005 PN:01 } PHY=4x\n",
        "x.lst:1: malformed .lst line",
    ),
    "lldp keyvalue": (
        "--lldp",
        "d/h1.txt",
        "lldp.eth0.chassis.name=sw1\nlldp.eth0.port.descr=Gi1\n",
        "h1.txt:1: neighbour without a port id (read as `lldpctl -f keyvalue`)",
    ),
    "lldp text": (
        "--lldp",
        "d/h1.txt",
        "Interface:    eth0, via: LLDP, RID: 1\n  PortID:       ifname Gi1\n",
        "h1.txt:1: neighbour without a chassis name or id (read as lldpctl text / SONiC "
        "`show lldp neighbors`)",
    ),
    "lldp JSON": (
        "--lldp",
        "d/h1.json",
        '{"lldp": [',
        "h1.json:1: invalid JSON",
    ),
    "eos": (
        "--eos",
        "d/sw1.json",
        '[{"command": "show version", "result": {}}]',
        "sw1.json:$: no 'lldpNeighbors' object",
    ),
    "nvue": (
        "--nvue",
        "d/sw1.json",
        '{"swp1": {"lldp": {"neighbor": {"x": {"port": {}}}}}}',
        "sw1.json:$.swp1.lldp.neighbor.x: neighbour without port.name",
    ),
    "sonic": (
        "--sonic",
        "d/sw1.json",
        '{"DEVICE_NEIGHBOR": {"Ethernet0": {"port": "Ethernet1"}}}',
        "sw1.json:$.DEVICE_NEIGHBOR.Ethernet0: neighbour keyed by local port without 'name'",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_naming_file_and_line_exit_2(case: str, tmp_path: Path) -> None:
    flag, rel, text, expected = BAD[case]
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    given = path.parent if "/" in rel else path
    for command in ("drift", "adopt"):
        r = CliRunner().invoke(main, [command, flag, str(given)])
        assert r.exit_code == 2, (command, r.output)
        out = r.output.strip()
        assert out.count("\n") == 0 and "Traceback" not in out, out
        assert expected in out and str(tmp_path) in out, out


def test_a_directory_with_no_readable_file_says_what_it_skipped(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("device,port\n", encoding="utf-8")
    with pytest.raises(InputFileError) as e:
        LldpReader(tmp_path).load()
    assert e.value.message == (
        f"{tmp_path}: no file of LLDP neighbours in it (skipped a.csv: not lldpctl JSON, "
        "keyvalue or text, nor SONiC `show lldp neighbors`/`show lldp table`)"
    )


def test_drift_finds_the_same_faults_whichever_ib_tool_dumped_the_fabric(tmp_path: Path) -> None:
    dump = FIX / "ib" / "ibnetdiscover.txt"
    text = dump.read_text(encoding="utf-8")
    files = {
        "ibnetdiscover": dump,
        "iblinkinfo": tmp_path / "f.txt",
        "ibdiagnet": tmp_path / "f.lst",
    }
    files["iblinkinfo"].write_text(iblinkinfo_of(text), encoding="utf-8")
    files["ibdiagnet"].write_text(lst_of(text), encoding="utf-8")
    summaries = {}
    for flag, path in files.items():
        args = [
            "drift",
            f"--{flag}",
            str(path),
            "--node-name-map",
            str(FIX / "ib" / "node-name-map"),
        ]
        r = CliRunner().invoke(main, [*args, "--format", "json"])
        assert r.exit_code == 1, r.output  # the fixture's 8 faults
        doc = json.loads(r.output)
        summaries[flag] = (
            doc["summary"],
            sorted((f["kind"], f["switch"]) for f in doc["findings"]),
        )
    assert summaries["iblinkinfo"] == summaries["ibnetdiscover"] == summaries["ibdiagnet"]
    assert summaries["ibnetdiscover"][0]["total"] == 8
