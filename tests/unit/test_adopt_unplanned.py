"""`adopt` and `drift` on InfiniBand fabrics nobody here planned (issue 47).

The dumps are written by :mod:`tests.ib_site_fabrics` in the layout of the real
``ibnetdiscover`` samples (each line's real model is named there), with the truth they
were built from (which host hangs on which leaf). Adopt's answer is judged against that
truth: every host must land in the SU of the leaf it is cabled to, every leaf on a
distinct SU of its rail, and drift with adopt's names must report only what the
generator broke on purpose (a link below the fabric's rate).

The issue's 2023 EDR cluster (6 Switch-IB switches: 4 leaves of 24 hosts, 2 spines; 96
single-HCA hosts ``node001…``, ``gpu001…``, ``login01``, ``controller``, ``bee01``; one
DDR link among EDR ones) is :func:`tests.ib_site_fabrics.edr_2023`.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.cli import main
from tests.ib_site_fabrics import Shape, Truth, edr_2023, site_fabric

EDR_SPEC = [
    *("--gpus", "96", "--gpus-per-node", "1", "--rails", "1", "--su-nodes", "24"),
    *("--nic-gbps", "100", "--switch", "generic-36x100", "--oversubscription", "2:1"),
]
"""The plan an operator states for the cluster: 96 one-GPU, one-HCA hosts, 24 per leaf."""


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(main, args, catch_exceptions=False)


def _adopt(dump: Path, spec: list[str]) -> tuple[int, dict[str, Any], list[dict[str, str]]]:
    names = dump.with_suffix(".names.csv")
    r = _run(
        ["adopt", *spec, "--ibnetdiscover", str(dump), "--out", str(names), "--format", "json"]
    )
    rows = (
        list(csv.DictReader(names.read_text(encoding="utf-8").splitlines()))
        if names.is_file()
        else []
    )
    return r.exit_code, json.loads(r.output), rows


def _check_against_truth(
    rows: list[dict[str, str]], truth: Truth, skip: set[str] | None = None
) -> None:
    """Every host is in the SU of the leaves it is cabled to; leaves on distinct SUs."""
    by_guid = {row["guid"].removeprefix("0x"): row["planned"] for row in rows if row["guid"]}
    leaf_pos = {leaf: by_guid[_sw_guid(truth, leaf)] for leaf in truth.leaves}
    assert len(set(leaf_pos.values())) == len(truth.leaves)
    placed = {row["actual"]: row["planned"] for row in rows}
    for host, leaves in truth.host_leaves.items():
        if host in (skip or set()):
            continue
        pos = placed.get(host) or next((p for a, p in placed.items() if a.endswith(host)), None)
        assert pos is not None, f"{host} not placed"
        su = {leaf_pos[leaf].split("-")[0] for leaf in leaves}
        assert len(su) == 1, (host, leaves, su)
        if pos.startswith("su"):  # a fabric manager's position has no SU in its name
            assert pos.split("-")[0] == su.pop(), (host, pos, leaves)


def _sw_guid(truth: Truth, name: str) -> str:
    kind = 1 if name.startswith("leaf") else 2
    n = int(name.removeprefix("leaf").removeprefix("spine"))
    return f"{0x248A070300000000 + (kind << 24) + n:016x}"


@pytest.fixture(scope="module")
def edr(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    text, truth = edr_2023()
    path = tmp_path_factory.mktemp("edr") / "edr.txt"
    path.write_text(text, encoding="utf-8")
    return path, truth


def test_the_2023_edr_cluster_is_placed_whole(edr: tuple[Path, Truth]) -> None:
    dump, truth = edr
    code, report, rows = _adopt(dump, EDR_SPEC)
    assert code == 0, report
    # 93 compute hosts (1 on the plan's fabric-manager ports: bee01 on the other is a
    # storage host), 4 leaves, 2 spines; the login, controller and storage hosts are
    # other hosts, listed with the leaf port they sit on
    assert len(rows) == 99
    others = {o["device"]: o for o in report["other_hosts"]}
    assert set(others) == {"login01", "controller", "bee01"}
    assert not others.keys() & {r["actual"] for r in rows}
    by_guid = {row["guid"].removeprefix("0x"): row["actual"] for row in rows if row["guid"]}
    for host, (leaf,) in ((h, truth.host_leaves[h]) for h in others):
        assert others[host]["leaf"] == by_guid[_sw_guid(truth, leaf)], (host, leaf)
    assert (dump.with_suffix(".names.others.csv")).read_text().count("\n") == 4
    _check_against_truth(rows, truth, skip=set(others))
    assert not report["unplaced_other"]
    assert all(not c["unplaced"] for c in report["classes"].values())
    # the unmanaged switches say only 'SwitchIB Mellanox Technologies': named by GUID
    assert any("report no host name" in n for n in report["notes"])
    assert "gpu029" in {r["actual"] for r in rows}
    leaves = [m for m in report["mapping"] if m["planned"].endswith("-leaf")]
    assert all(m["confidence"] == "low" and "cannot tell" in m["basis"] for m in leaves)


def test_drift_after_adopt_reports_only_the_ddr_link_and_the_plans_empty_seats(
    edr: tuple[Path, Truth],
) -> None:
    dump, truth = edr
    _adopt(dump, EDR_SPEC)
    names = dump.with_suffix(".names.csv")
    r = _run(["drift", *EDR_SPEC, "--ibnetdiscover", str(dump), "--names", str(names),
              "--format", "json"])  # fmt: skip
    report = json.loads(r.output)
    assert r.exit_code == 1
    findings = report["findings"]
    # the other hosts are known: nothing names them; the plan's 96 compute seats hold 93
    assert not any(o in json.dumps(f) for f in findings for o in ("login01", "bee01"))
    assert not any(f["kind"].startswith("unexpected") for f in findings), findings[:5]
    speed = [f for f in findings if f["kind"] == "speed_mismatch"]
    assert len(speed) == 1
    assert {f["kind"] for f in findings} - {"speed_mismatch"} <= {"missing_device", "missing_link"}
    ((host, leaf),) = truth.slow_links
    leaf_label = f"switchib-{_sw_guid(truth, leaf)}"
    text = speed[0]["summary"]
    assert host in text and leaf_label in text and "4xDDR" in text and "4xEDR" in text


SHAPES = {
    "one-rail-managed-hdr": Shape(leaves=3, spines=2, hosts_per_leaf=16, uplinks=8,
                                  generation="HDR", managed=True, radix=32),
    "two-rails-shuffled": Shape(leaves=4, spines=2, hosts_per_leaf=16, hcas_per_host=2,
                                uplinks=8, generation="NDR", shuffle_ports=True, radix=32,
                                hca_style="mlx5"),
    "four-rails-hca-form": Shape(leaves=8, spines=4, hosts_per_leaf=16, hcas_per_host=4,
                                 uplinks=4, generation="NDR", shuffle_ports=True, radix=32),
}  # fmt: skip


def _spec(shape: Shape, tmp: Path) -> list[str]:
    """The plan of ``shape`` as its operator would state it (switch-embedded SM: no
    manager hosts take server positions)."""
    rails = shape.hcas_per_host
    hosts = shape.leaves * shape.hosts_per_leaf // rails
    gbps = {"EDR": 100, "HDR": 200, "NDR": 400}[shape.generation]
    down, up = shape.hosts_per_leaf, shape.uplinks * shape.spines
    cfg = tmp / "cluster.yaml"
    cfg.write_text(
        f"gpus: {hosts * rails}\ngpus_per_node: {rails}\nrails: {rails}\n"
        f"su_nodes: {shape.hosts_per_leaf}\nnic_gbps: {gbps}\n"
        f"switch: generic-{shape.radix}x{gbps}\noversubscription: '{down}:{up}'\n"
        "infiniband: {sm_location: switch}\n",
        encoding="utf-8",
    )
    return ["--config", str(cfg)]


def _random_names(n: int, rng: random.Random) -> list[str]:
    stems = ["cn", "gpu-a", "hpc", "x"]
    out: set[str] = set()
    while len(out) < n:
        out.add(f"{rng.choice(stems)}{rng.randrange(1, 10_000):04d}")
    return sorted(out)


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("seed", [1, 2])
def test_other_shapes_are_placed_and_drift_is_clean(tmp_path: Path, name: str, seed: int) -> None:
    shape = SHAPES[name]
    rng = random.Random(seed)
    hosts = shape.leaves * shape.hosts_per_leaf // shape.hcas_per_host
    shape.host_names = _random_names(hosts, rng)
    text, truth = site_fabric(shape, seed)
    dump = tmp_path / "fabric.txt"
    dump.write_text(text, encoding="utf-8")
    spec = _spec(shape, tmp_path)
    code, report, rows = _adopt(dump, spec)
    assert all(not c["unplaced"] for c in report["classes"].values()), report["classes"]
    _check_against_truth(rows, truth)
    r = _run(["drift", *spec, "--ibnetdiscover", str(dump),
              "--names", str(dump.with_suffix(".names.csv")), "--format", "json"])  # fmt: skip
    findings = json.loads(r.output)["findings"]
    assert not findings, [f["summary"] for f in findings[:5]]
    assert code in (0, 1)
