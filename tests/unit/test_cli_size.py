"""The `size` command through click's runner, and every negative scenario's exact message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fabric_stack.cli import main

NEGATIVE = sorted((Path(__file__).resolve().parents[1] / "scenarios" / "negative").glob("*.yaml"))


def run(*args: str) -> object:
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})


def test_size_table_shows_the_seed_card() -> None:
    r = run("size")
    assert r.exit_code == 0, r.output
    for text in (
        "400 Gb",
        "line rate",
        "3200 Gb",
        "8× rails",
        "51.2 Tb",
        "full non-blocking",
        "rail-optimized",
        "64-port",
        "non-blocking",
        "InfiniBand (rail-optimized, non-blocking)",
        "Oversubscription: 1:1 (non-blocking) — collectives must not queue",
    ):
        assert text in r.output, text
    # the leaf and spine tiles carry 8 and 4
    assert "│ 8 " in r.output and "│ 4 " in r.output


def test_size_json_contract() -> None:
    r = run("size", "--format", "json", "--gpus", "1024")
    assert r.exit_code == 0
    d = json.loads(r.output)
    assert d["tiers"] == 2
    assert (
        d["switches"]["leaf"] == 32 and d["switches"]["spine"] == 16 and d["switches"]["core"] == 0
    )
    # 4 full SUs: one server position of SU 1 goes to the two UFMs (the DGX SuperPOD RA
    # rule), so 127 servers are cabled; the JSON says so.
    assert d["cables"]["node_leaf"] == 1016 and d["cables"]["leaf_spine"] == 1024
    assert d["cables"]["spine_core"] == 0 and d["cables"]["manager_leaf"] == 2
    assert (d["nodes"], d["servers_removed"], d["manager_su"]) == (127, 1, 1)
    assert d["bandwidth"]["per_gpu_gbps"] == 400
    assert d["bandwidth"]["per_node_gbps"] == 3200
    assert d["bandwidth"]["bisection_tbps"] == pytest.approx(406.4)
    assert d["oversubscription"] == "1:1"


def test_switch_names_are_case_insensitive() -> None:
    a = json.loads(run("size", "--format", "json", "--switch", "QM9700").output)
    b = json.loads(run("size", "--format", "json", "--switch", "qm9700").output)
    assert a == b


def test_config_file_and_flags_merge(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("gpus: 512\noversubscription: 2:1\n")  # unquoted 2:1 stays a ratio
    d = json.loads(run("size", "--config", str(f), "--format", "json").output)
    assert d["oversubscription"] == "2:1" and d["spec"]["gpus"] == 512
    d = json.loads(run("size", "--config", str(f), "--gpus", "1024", "--format", "json").output)
    assert d["spec"]["gpus"] == 1024


def test_explain_and_markdown() -> None:
    r = run("size", "--explain")
    assert r.exit_code == 0
    for text in (
        "RoCEv2",
        "Standard Ethernet",
        "Multus",
        "SR-IOV CNI",
        "Cilium",
        "OVN-Kubernetes",
        "GPUDirect RDMA",
        "NCCL",
    ):
        assert text in r.output
    md = run("size", "--format", "markdown", "--fabric", "roce", "--switch", "sn5600").output
    assert md.startswith("### Networking architecture")
    assert "PFC" in md and "RoCEv2 (rail-optimized, non-blocking)" in md


def test_help_teaches() -> None:
    r = run("size", "--help")
    assert r.exit_code == 0
    for flag in (
        "--gpus",
        "--gpus-per-node",
        "--nic-gbps",
        "--rails",
        "--fabric",
        "--switch",
        "--oversubscription",
        "--su-nodes",
        "--planes",
        "--format",
        "--config",
        "Examples",
    ):
        assert flag in r.output


@pytest.mark.parametrize("path", NEGATIVE, ids=[p.stem for p in NEGATIVE])
def test_negative_scenario(path: Path, tmp_path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    args = [str(a) for a in case.get("args", [])]
    expected = case["error"]
    if "config" in case:
        cfg = tmp_path / "cluster.yaml"
        cfg.write_text(case["config"])
        args += ["--config", str(cfg)]
        expected = expected.replace("{config}", str(cfg))
    r = CliRunner().invoke(main, ["size", *args])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.output.strip().splitlines() if x.strip()]
    assert "Traceback" not in r.output
    last = lines[-1].removeprefix("Error: ").removeprefix("error: ")
    assert last == expected
