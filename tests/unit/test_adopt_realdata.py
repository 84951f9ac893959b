"""`adopt` on real fabrics nobody here cabled (issue 28, item 1), and on a renamed site's
access switches.

Every count below was read by eye in the dump, at the line named beside it
(``../shared/realdata/ibnetdiscover/``, provenance in its ``SOURCES.md``).

**The 2025 NDR DGX dump** (``topograph-ndr-dgx-example.out``, NVIDIA/topograph): 31
leaves ``MF0;A09-P1-IBLEAF-<row>-<su>`` / ``B09-…``, 9 spines ``…-IBSPINE-0N``. NIC
convention read in it:

- each leaf row carries one NIC index: row 01 ``HCA-1`` on SUs 1–3 (leaf 01-01, line 1216;
  line 1217 is ``"a05-p1-dgx-01-c01 HCA-1"``) and ``mlx5_0`` on SU 4 (leaf 01-04, line 839;
  line 840 ``"a08-p1-dgx-04-c01 mlx5_0"``), so the site's ``HCA-N`` is ``mlx5_(N-1)``; rows
  02, 03, 04 carry ``HCA-2``/``mlx5_1``, ``HCA-5``/``mlx5_4``, ``HCA-6``/``mlx5_5``;
- a host has four HCAs in this dump: ``a08-p1-dgx-04-c01`` is ``mlx5_0`` (line 4598),
  ``mlx5_1`` (4472), ``mlx5_4`` (4346), ``mlx5_5`` (2015): the plane carries rails 1, 2, 5, 6
  (``mlx5_0..5`` as rails 1..6 under the plan's ``hgx-8gpu`` NIC names; none of the DGX
  storage / in-band NICs ``mlx5_2``/``mlx5_3``/``mlx5_6+`` is cabled to this fabric);
- 69 HCAs keep the factory NodeDesc ``MT4129 ConnectX7   Mellanox Technologies`` (e.g.
  line 55 on leaf 04-04): one port each, they say nothing about their NIC index;
- leaf 04-08 (line 126) is rail 6 by 13 ``HCA-6`` host cables; ``b08-p1-dgx-08-c01 HCA-5``
  (line 127) and ``ubuntu mlx5_1`` / ``B11-P1-CUFM-02 mlx5_1`` (lines 144, 145) dissent;
  leaf 03-08 (line 170) is rail 5 with ``b08-p1-dgx-08-c01 HCA-6`` (line 171) and
  ``ubuntu``/``B11-P1-CUFM-02 mlx5_0`` (lines 188, 189) dissenting: c01's two cables are
  swapped between the two leaves.

**ltaulell-X5** (PSMN "X5", QDR, not rail-optimized): 6 switches with hosts (lines 10, 49,
91, 133, 168, 289), 4 without hosts cabled to those (lines 195, 220, 245, 267), and
``4036-86A2`` (line 156) whose 6 cables (lines 157–162) go only to two of those four.

The 2023 EDR fabric of the issue (6 SwitchIB, 96 hosts) is **not** among the stored real
samples (none has 6 switches and 96 CAs; SOURCES.md lists none), so the non-rail case is
tested on X5.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.discovery import LldpReader
from fabric_stack.cli import main
from fabric_stack.drift.adopt import adopt, observation_from_snapshot
from fabric_stack.drift.names import load_port_map, port_map_path, write_port_map
from fabric_stack.errors import InputFileError
from fabric_stack.files.names_file import write_names
from tests.adopt_fixtures import site_snapshot, write_lldp
from tests.unit.test_adopt import REAL

IB = REAL / "ibnetdiscover"
NDR = IB / "topograph-ndr-dgx-example.out"
NDR_SPEC = ["--gpus", "1152", "--su-nodes", "18"]  # 8 SUs of 18 DGX, as cabled
ROW_RAIL = {1: 1, 2: 2, 3: 5, 4: 6}
"""Leaf row in the site's name → the rail its NICs say (read above)."""

needs_real = pytest.mark.skipif(not NDR.is_file(), reason="../shared/realdata not found")


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(main, args, catch_exceptions=False)


@pytest.fixture(scope="module")
def ndr(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("ndr") / "names.csv"
    r = _run(
        ["adopt", *NDR_SPEC, "--ibnetdiscover", str(NDR), "--out", str(out), "--format", "json"]
    )
    assert r.exit_code == 1  # contradictions are reported (exit 1), not resolved silently
    return json.loads(r.output), out


@needs_real
def test_every_ndr_leaf_is_placed_on_the_rail_its_nics_say(
    ndr: tuple[dict[str, Any], Path],
) -> None:
    report, _ = ndr
    leaves = {m["actual"]: m for m in report["mapping"] if "ibleaf" in m["actual"]}
    assert len(leaves) == 31
    for actual, m in leaves.items():
        row, su = map(int, re.findall(r"ibleaf-(\d+)-(\d+)", actual)[0])
        assert m["planned"] == f"su{su}-r{ROW_RAIL[row]}-leaf", m
        assert m["confidence"] in ("high", "medium") and m["basis"]
    said = [
        c for c in report["classes"]["leaf"]["contradictions"] if "its NICs say rail" in c["what"]
    ]
    # rows 02 and 04 (16 leaves): the plan's spine ports say rail 3 / 7-8, the NICs 2 / 6
    assert len(said) == 16
    assert {re.findall(r"ibleaf-(\d+)", c["device"])[0] for c in said} == {"02", "04"}
    assert any("16 of 31 leaves placed on the rail their NICs say" in n for n in report["notes"])


@needs_real
def test_ndr_rail_dissent_is_reported_with_the_hosts(ndr: tuple[dict[str, Any], Path]) -> None:
    report, _ = ndr
    what: dict[str, str] = {}
    for c in report["classes"]["leaf"]["contradictions"]:
        what[c["device"]] = what.get(c["device"], "") + " | " + c["what"]
    assert "rail 6 by 13 of 16 server cables" in what["b09-p1-ibleaf-04-08"]
    assert "1 on rail 5 (b08-p1-dgx-08-c01)" in what["b09-p1-ibleaf-04-08"]
    assert "2 on rail 2 (b11-p1-cufm-02, ubuntu)" in what["b09-p1-ibleaf-04-08"]
    assert "rail 5 by 13 of 16 server cables" in what["b09-p1-ibleaf-03-08"]
    assert "1 on rail 6 (b08-p1-dgx-08-c01)" in what["b09-p1-ibleaf-03-08"]
    # the factory-named one-port HCAs are no vote: leaf 01-01 has 7 of them, no dissent
    assert not any("dissent" in w for d, w in what.items() if d == "a09-p1-ibleaf-01-01")


@needs_real
def test_ndr_port_map_makes_drift_compare_in_the_sites_numbering(
    ndr: tuple[dict[str, Any], Path],
) -> None:
    report, names = ndr
    pm = port_map_path(names)
    assert pm.is_file() and len(load_port_map(pm)) == len(report["port_map"]) > 0
    flags = [*NDR_SPEC, "--ibnetdiscover", str(NDR), "--format", "json"]
    mapped = json.loads(_run(["drift", *flags, "--names", str(names)]).output)
    bare = names.with_name("bare.csv")
    bare.write_text(names.read_text())  # the same names, no port map beside them
    plain = json.loads(_run(["drift", *flags, "--names", str(bare)]).output)
    assert plain["summary"]["wrong_peer"] > 100  # numbering, not faults
    assert mapped["summary"]["wrong_peer"] <= 10
    swaps = [f["summary"] for f in mapped["findings"] if f["kind"] == "wrong_peer"]
    # the c01 HCA-5 / HCA-6 swap between leaves 03-08 and 04-08 (lines 127, 171) stays
    assert any("b08-p1-dgx-08-c01" in s and "swapped" in s for s in swaps), swaps


@needs_real
def test_a_fabric_that_is_not_rail_optimized_still_gets_its_roles() -> None:
    r = _run(["adopt", "--ibnetdiscover", str(IB / "ltaulell-X5.topofile"), "--format", "json"])
    assert r.exit_code == 1
    report = json.loads(r.output)
    roles = [x["role"] for x in report["roles"]]
    assert sorted(roles) == ["core"] + ["leaf"] * 6 + ["spine"] * 4
    core = next(x for x in report["roles"] if x["role"] == "core")
    assert "4036-86a2" in core["device"] and "6 cable(s) to spines" in core["basis"]
    assert not report["mapping"]  # no position of an 8-rail plan is claimed
    assert "not a rail-optimized fabric" in report["notes"][0]
    assert "(roles from the wiring: 1 core, 6 leaf, 4 spine)" in report["notes"][0]


def test_a_renamed_sites_access_switches_are_placed_and_drift_is_clean(tmp_path: Path) -> None:
    """Storage, in-band and OOB switches named ``sw-NNNN``: placed by the server ports they
    serve, so drift no longer says 'disconnect sw-…' about a planned storage switch."""
    spec = {"fabric": "roce", "switch": "sn5600", "gpus": 128}
    topo, names, wires, _ = site_snapshot(spec, 3, 0, access=True)
    lldp = write_lldp(tmp_path / "lldp", topo, names, wires)
    result = adopt(topo, observation_from_snapshot(LldpReader(lldp).load()))
    truth = {actual: planned for planned, actual in names.items()}
    access = {a: p for a, p in truth.items() if a.startswith("sw-")}
    assert len(access) == 4  # 2 storage, 1 in-band, 1 OOB in this plan
    assert result.placed == truth
    assert all(result.confidence[a][0] == "high" for a in access)
    assert {result.roles[a].role for a in access} == {"storage", "inband", "oob"}
    (tmp_path / "names.csv").write_text(write_names(result.rows), encoding="utf-8")
    flags = ["--fabric", "roce", "--switch", "sn5600", "--gpus", "128"]
    r = _run(["drift", *flags, "--names", str(tmp_path / "names.csv"), "--lldp", str(lldp)])
    assert r.exit_code == 0 and "disconnect" not in r.output, r.output


def test_port_map_file_round_trips_and_a_bad_line_names_itself(tmp_path: Path) -> None:
    pm = {("leaf-a", "33"): 35, ("spine-b", "1/2/1"): 3}
    path = tmp_path / "names.ports.csv"
    path.write_text(write_port_map(pm), encoding="utf-8")
    assert load_port_map(path) == pm
    path.write_text("device,port,planned_port\nleaf-a,33,x\n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"names.ports.csv:2: expected device,port"):
        load_port_map(path)


@needs_real
def test_ndr_factory_hcas_are_grouped_into_servers_by_leaf_and_port(
    ndr: tuple[dict[str, Any], Path],
) -> None:
    """Leaf 04-02 (line 50) has factory HCAs on ports 6, 8, 9, 13, 17 (lines 55-65) and so
    do leaves 01-02 (lines 94-104), 02-02 and 03-02: no NodeDesc names server 6 of SU 2."""
    report, names = ndr
    rows = {m["planned"]: m for m in report["mapping"]}
    six = rows["su2-node06"]
    assert six["actual"].startswith("mt4129-") and six["confidence"] == "low"
    assert "factory-named HCAs at leaf port 6" in six["basis"]
    line = next(x for x in names.read_text().splitlines() if x.startswith("su2-node06,"))
    assert "e09d730300858d88" in line.lower()  # line 55's HCA, bound by its GUID
    assert any("66 HCA(s) reporting only a factory NodeDesc grouped into 22 server(s)" in n
               for n in report["notes"])  # fmt: skip
    assert report["classes"]["server"]["placed"] == 139  # 120 before the grouping


@needs_real
def test_ndr_factory_hcas_beside_a_miswire_are_placed_or_say_why_not(
    ndr: tuple[dict[str, Any], Path],
) -> None:
    """Leaf 01-01 port 11 (line 1227) holds a factory HCA; port 11 of leaves 02-01 and 04-01
    holds c12's HCA-2 (line 1184) and c14's HCA-6, whose other cables sit on ports 12 and
    14: miswires, so port 11 is nobody's but the factory HCA's: server 11 of SU1. Likewise
    port 4 of SU6's leaves 02-06, 03-06, 04-06 (lines 550, 507, 464), where c02's one
    cable on 01-06 port 4 is off its port 2. The HCA on 02-01 port 12 (line 1185) sits at
    c12's port of a leaf c12 is already on: whose it is the dump does not say."""
    report, names = ndr
    rows = {m["planned"]: m for m in report["mapping"]}
    assert rows["su1-node11"]["actual"] == "mt4129-e09d730300373158"
    assert rows["su6-node04"]["actual"] == "mt4129-e09d7303008574bc"
    line = next(x for x in names.read_text().splitlines() if x.startswith("su6-node04,"))
    assert all(g in line for g in ("8574bc", "8574c0", "858f50"))
    assert rows["su6-node04"]["confidence"] == "low"
    why = {u["device"]: u["why"] for u in report["classes"]["server"]["unplaced"]}
    c12 = why["mt4129 connectx7   mellanox technologies e09d73030037315c"]
    assert "a09-p1-ibleaf-02-01 port 12, the port of a05-p1-dgx-01-c12" in c12
    assert "already has a cable on a09-p1-ibleaf-02-01 (port 11)" in c12
    assert sum("factory-named HCA" in w for w in why.values()) == 3
    ufm = why["b11-p1-cufm-02"]
    assert "cabled to b09-p1-ibleaf-03-08 port 22, b09-p1-ibleaf-04-08 port 22" in ufm
    assert "ufm-1 on su1-r1-leaf port 32, ufm-2 on su1-r2-leaf port 32" in ufm
    assert "does not say which position" in ufm


@needs_real
def test_ndr_adopt_names_the_plan_mismatch_drift_reports(
    ndr: tuple[dict[str, Any], Path],
) -> None:
    report, names = ndr
    shape = next(n for n in report["notes"] if n.startswith("the wiring is not the plan's"))
    assert "rails 1, 2, 5, 6 cabled" in shape and "9 spines (plan: 32)" in shape
    assert "up to 2 cable(s) per leaf–spine pair (plan: 1)" in shape
    flags = [*NDR_SPEC, "--ibnetdiscover", str(NDR), "--format", "json", "--names", str(names)]
    summary = json.loads(_run(["drift", *flags]).output)["summary"]
    # the factory NodeDescs are the names file's now: 2 attribute findings left (of 19)
    assert summary["attribute_changed"] <= 2 and summary["total"] < 363
