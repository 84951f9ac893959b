"""`fabric-stack drift` through click's runner: exit codes, formats, exact error lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fabric_stack.cli import main
from fabric_stack.drift import PlanIndex
from tests.drift_fixtures import (
    REPO,
    SEED_ROCE,
    clean_wires,
    eos_doc,
    lldp_entries,
    lldpd_json0,
    topology,
)
from tests.golden_drift import malformed_errors

F = "tests/fixtures/drift"
IB = ("--ibnetdiscover", f"{F}/ib/ibnetdiscover.txt", "--node-name-map", f"{F}/ib/node-name-map")
ROCE = ("--fabric", "roce", "--switch", "sn5600")


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    # Fixture paths are given relative to the checkout, as a user would type them.
    monkeypatch.chdir(REPO)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["drift", *args], env={"COLUMNS": "100", "NO_COLOR": "1"})


def test_drift_is_registered_and_its_help_teaches() -> None:
    r = CliRunner().invoke(main, ["--help"])
    assert "drift" in r.output
    r = run("--help")
    assert r.exit_code == 0
    for text in (
        "--ibnetdiscover",
        "--node-name-map",
        "--lldp",
        "--eos",
        "--netbox-csv",
        "--inventory",
        "--ignore",
        "1 drift or low coverage",
        "--network",
        "--min-coverage",
        "fabric-stack drift --ibnetdiscover fabric.txt",
    ):
        assert text in r.output, text


def test_clean_fabric_exits_0(tmp_path: Path) -> None:
    topo = topology(SEED_ROCE)
    index = PlanIndex.from_topology(topo)
    wires = clean_wires(topo, ("node_leaf", "manager_leaf", "leaf_spine"))
    for dev in index.schemes:
        if dev.endswith("-leaf") or dev.startswith("spine-"):
            doc = eos_doc(index, dev, wires, fqdn=lambda d: f"{d}.example.net")
            (tmp_path / f"{dev}.json").write_text(json.dumps(doc))
    r = run(*ROCE, "--eos", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert "no drift: every compared cable and device matches the plan" in r.output


def test_drift_exits_1_with_a_table_grouped_by_switch() -> None:
    r = run(*IB)
    assert r.exit_code == 1, r.output
    lines = r.output.splitlines()
    assert lines[1] == "scope: compute (what ibnetdiscover can see)"
    assert lines[2].startswith("compute: devices 30 planned, 29 seen, 29 matched; links ")
    assert lines[3].startswith("8 findings: 1 missing_link, 1 unexpected_link, 2 wrong_peer")
    assert all(len(line) <= 100 for line in lines)
    # Grouped: each switch is named once, in the first column, in order.
    groups = [
        line.split("│")[1].strip()
        for line in lines
        if line.startswith("│") and line.split("│")[1].strip()
    ]
    assert groups == [
        "(servers)",
        "su1-r1-leaf",
        "su1-r2-leaf",
        "su1-r4-leaf",
        "su1-r5-leaf",
        "su1-r7-leaf",
        "su1-r8-leaf",
    ]
    assert "swap_same_switch" in r.output and "wrong_rail" in r.output


def test_json_output_is_the_report() -> None:
    r = run(*IB, "--format", "json")
    assert r.exit_code == 1
    doc: dict[str, Any] = json.loads(r.output)
    assert list(doc) == ["summary", "coverage", "sources", "findings"]
    cov = doc["coverage"]
    for key in (
        "planned_devices",
        "seen_devices",
        "matched_devices",
        "planned_links",
        "seen_links",
        "matched_links",
    ):
        assert isinstance(cov[key], int)
    # One plane of the compute fabric: every planned device of it was seen but the one
    # the fixture switched off (its missing_device finding).
    assert cov["networks"] == ["compute"] and not cov["low"]
    gone = doc["summary"]["missing_device"]
    assert gone == 1 and cov["matched_devices"] == cov["planned_devices"] - gone
    assert doc["summary"]["total"] == len(doc["findings"]) == 8
    moved = next(f for f in doc["findings"] if f["cause"] == "wrong_rail")
    assert moved["fix"] == (
        "move the cable at su1-node07 mlx5_3 from su1-r2-leaf 1/12/1 (port 23) "
        "to su1-r4-leaf 1/4/1 (port 7)"
    )
    assert (moved["rail"], moved["su"], moved["switch"]) == (4, 1, "su1-r4-leaf")


def test_markdown_output_and_several_sources() -> None:
    r = run(
        *ROCE,
        "--lldp",
        f"{F}/roce/lldp",
        "--eos",
        f"{F}/roce/eos",
        "--mac-table",
        f"{F}/roce/mac-table.csv",
        "--format",
        "markdown",
    )
    assert r.exit_code == 1
    assert r.output.startswith("# Fabric drift report\n\n**12 findings:")
    assert "| lldp | `tests/fixtures/drift/roce/lldp` |" in r.output
    assert "| eos | `tests/fixtures/drift/roce/eos` |" in r.output
    assert "## su1-r2-leaf" in r.output and "- [ ] **wrong_peer** (swap_same_switch" in r.output


def test_ignore_file_suppresses_findings(tmp_path: Path) -> None:
    ign = tmp_path / "ignore.yaml"
    ign.write_text(
        "ports:\n"
        "  - {device: su1-node16, port: mlx5_7, mode: ignore}\n"
        "  - {device: su1-node05, port: mlx5_4, mode: link_state_only}\n"
        "devices: [lab-sw-01, su1-node12, su1-r7-leaf]\n"
    )
    r = run(*IB, "--ignore", str(ign), "--format", "json")
    kinds = sorted(f["kind"] for f in json.loads(r.output)["findings"])
    assert kinds == ["unexpected_link", "wrong_peer", "wrong_peer"]


@pytest.mark.parametrize(
    ("scenario", "args"),
    [
        ("lldp-truncated", ("--lldp", f"{F}/malformed/lldp-truncated")),
        ("eos-bad-shape", ("--eos", f"{F}/malformed/eos-bad-shape")),
        (
            "ibnetdiscover-bad-line",
            ("--ibnetdiscover", f"{F}/malformed/ibnetdiscover-bad-line.txt"),
        ),
        (
            "ibnetdiscover-truncated",
            ("--ibnetdiscover", f"{F}/malformed/ibnetdiscover-truncated.txt"),
        ),
        (
            "node-name-map-bad",
            (
                "--ibnetdiscover",
                f"{F}/ib/ibnetdiscover.txt",
                "--node-name-map",
                f"{F}/malformed/node-name-map-bad",
            ),
        ),
        ("netbox-missing-column", ("--netbox-csv", f"{F}/malformed/netbox-missing-column.csv")),
        ("netbox-truncated", ("--netbox-csv", f"{F}/malformed/netbox-truncated.csv")),
        (
            "ignore-bad-mode",
            (
                "--ibnetdiscover",
                f"{F}/ib/ibnetdiscover.txt",
                "--ignore",
                f"{F}/malformed/ignore-bad-mode.yaml",
            ),
        ),
    ],
)
def test_malformed_input_is_one_error_line_and_exit_2(scenario: str, args: tuple[str, ...]) -> None:
    # A good source next to the bad one: still no partial report.
    r = run(*args, "--netbox-json", f"{F}/ib/netbox-cables.json", "--format", "json")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == f"error: {malformed_errors()[scenario]}\n"


def test_exact_error_lines() -> None:
    errs = malformed_errors()
    assert errs["ibnetdiscover-truncated"] == (
        f'{F}/malformed/ibnetdiscover-truncated.txt:12: node 0x0c42a103004d9e57 ("su1-node02 '
        'mlx5_0") is referenced but has no block of its own: the dump looks truncated'
    )
    assert errs["netbox-missing-column"].startswith(
        f"{F}/malformed/netbox-missing-column.csv:1: missing column 'side_b_name' (the header has: "
    )
    assert errs["lldp-truncated"].startswith(f"{F}/malformed/lldp-truncated/su1-r1-leaf.json:")
    assert errs["lldp-truncated"].endswith("the file ends early (truncated?)")
    assert errs["eos-bad-shape"] == (
        f"{F}/malformed/eos-bad-shape/su1-r1-leaf.json:"
        "$.lldpNeighbors.Ethernet1/2: expected a 'lldpNeighborInfo' list"
    )


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    r = run()
    assert r.exit_code == 2 and "give at least one source" in r.output
    r = run("--node-name-map", f"{F}/ib/node-name-map", "--netbox-csv", f"{F}/ib/netbox-cables.csv")
    assert r.exit_code == 2 and "--node-name-map needs --ibnetdiscover" in r.output
    r = run("--lldp", str(tmp_path / "nope"))
    assert r.exit_code == 2
    assert r.stderr == (
        f"error: {tmp_path}/nope: not a directory (expected one file of LLDP neighbours "
        "(lldpctl or SONiC) per device)\n"
    )


def test_lldp_directory_from_the_plan_with_one_file(tmp_path: Path) -> None:
    topo = topology(SEED_ROCE)
    index = PlanIndex.from_topology(topo)
    wires = clean_wires(topo)
    (tmp_path / "su1-r1-leaf.json").write_text(
        json.dumps(lldpd_json0(lldp_entries(index, "su1-r1-leaf", wires)))
    )
    r = run(*ROCE, "--lldp", str(tmp_path), "--format", "json")
    doc = json.loads(r.output)
    # Only su1-r1-leaf is covered: its 16 host ports (MACs, no table) and 64 uplinks match.
    assert r.exit_code == 0, doc["findings"][:2]
    assert doc["sources"][0]["links"] == 80
    assert any("not verified" in n for n in doc["sources"][0]["notes"])


def test_inventory_url_against_a_real_sqlite_store(tmp_path: Path) -> None:
    inventory = pytest.importorskip("fabric_stack.adapters.inventory")
    from tests.drift_fixtures import SEED_IB, inventory_records

    url = f"sqlite:///{tmp_path}/inventory.db"
    store = inventory.open_store(url)
    recs = inventory_records(topology(SEED_IB))
    store.put_many("dev", "Cable", [(r["name"], r) for r in recs["Cable"]], status="active")
    store.put_many("dev", "Switch", [(r["name"], r) for r in recs["Switch"]], status="active")
    r = run("--inventory", url, "--format", "json")
    assert r.exit_code == 0, r.output
    # An edit behind the plan's back, made the way a DBA would: in the table.
    store.put(
        "dev",
        "Cable",
        "su1-node03:mlx5_5",
        {
            **next(c for c in recs["Cable"] if c["name"] == "su1-node03:mlx5_5"),
            "b_optic": "OSFP 400G DR4",
        },
        status="active",
    )
    store.delete("dev", "Cable", "su1-r1-leaf:1/17/1")
    r = run("--inventory", url, "--format", "json")
    assert r.exit_code == 1
    found = sorted((f["kind"], f["expected"][0]["where"]) for f in json.loads(r.output)["findings"])
    assert found == [
        ("attribute_changed", "plan:su1-node03:mlx5_5"),
        ("missing_link", "plan:su1-r1-leaf:1/17/1"),
    ]


def test_low_coverage_is_said_at_the_top_and_exits_1(tmp_path: Path) -> None:
    # A NetBox export whose names match nothing in the plan: not "a little drift".
    csv = tmp_path / "cables.csv"
    csv.write_text(
        "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name\n"
        "gpu-a01,dcim.interface,ib0,ibsw-07,dcim.interface,1/1\n",
        encoding="utf-8",
    )
    for fmt in ("table", "markdown", "json"):
        r = run("--netbox-csv", str(csv), "--format", fmt)
        assert r.exit_code == 1, r.output
        if fmt == "json":
            cov = json.loads(r.output)["coverage"]
            assert cov["low"] and cov["matched_devices"] == 0 and cov["planned_devices"] > 0
            assert cov["scope"] == "all networks (the input matched no planned device)"
            continue
        lines = [x for x in r.output.splitlines() if x and x != "# Fabric drift report"]
        assert lines[0].lstrip("> *").startswith("LOW COVERAGE: only 0 of "), r.output
        assert "names devices differently from the plan" in r.output.replace("\n", " ")


def test_clean_run_with_enough_coverage_exits_0_and_network_scopes(tmp_path: Path) -> None:
    topo = topology({})
    index = PlanIndex.from_topology(topo)
    from tests.drift_fixtures import ibnetdiscover_text

    dump = tmp_path / "ib.txt"
    dump.write_text(
        ibnetdiscover_text(index, clean_wires(topo, ("node_leaf", "manager_leaf", "leaf_spine")))
    )
    r = run("--ibnetdiscover", str(dump))
    assert r.exit_code == 0, r.output
    assert "scope: compute (what ibnetdiscover can see)" in r.output
    # Asking for the storage network of an InfiniBand dump: nothing of it is visible.
    r = run("--ibnetdiscover", str(dump), "--network", "storage", "--format", "json")
    doc = json.loads(r.output)
    assert doc["coverage"]["networks"] == [] and doc["findings"] == []
