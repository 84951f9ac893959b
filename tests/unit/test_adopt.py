"""`fabric-stack adopt`: place a renamed, shuffled, miswired fabric on the plan, then drift.

The property: generate a snapshot from a plan (ibnetdiscover or lldpd JSON), rename
every device at random as a site would, shuffle, swap the leaf ends of k ≤ 5 pairs of
server cables; adopt recovers the true planned position of every device, and drift
with the names file it wrote reports exactly the k swaps (nothing else).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric_stack.adapters.discovery import IbnetdiscoverReader, LldpReader
from fabric_stack.cli import main
from fabric_stack.drift.adopt import adopt, observation_from_snapshot
from fabric_stack.files.names_file import load_names, write_names
from tests.adopt_fixtures import site_snapshot, write_ibnetdiscover, write_lldp

REPO = Path(__file__).resolve().parents[2]
REAL = next(
    (
        p
        for p in (REPO.parent / "shared" / "realdata", REPO.parent.parent / "shared" / "realdata")
        if p.is_dir()
    ),
    REPO.parent / "shared" / "realdata",
)

IB: dict[str, Any] = {}
ROCE: dict[str, Any] = {"fabric": "roce", "switch": "sn5600"}


def _flags(spec: dict[str, Any], gpus: int) -> list[str]:
    out = ["--gpus", str(gpus)]
    for k, v in spec.items():
        out += [f"--{k.replace('_', '-')}", str(v)]
    return out


def _run(args: list[str]) -> Any:
    return CliRunner().invoke(main, args, catch_exceptions=False)


def _adopt_and_drift(tmp: Path, source: str, gpus: int, seed: int, k: int, **extra: Any) -> None:
    spec = {**(ROCE if source == "lldp" else IB), "gpus": gpus, **extra}
    topo, names, wires, moved = site_snapshot(spec, seed, k)
    tmp.mkdir(parents=True, exist_ok=True)
    if source == "lldp":
        where = write_lldp(tmp / "lldp", topo, names, wires)
        snap = LldpReader(where).load()
        flag = "--lldp"
    else:
        where = write_ibnetdiscover(tmp / "ib.txt", topo, names, wires, hca_form=seed % 2 == 1)
        snap = IbnetdiscoverReader(where).load()
        flag = "--ibnetdiscover"
    result = adopt(topo, observation_from_snapshot(snap))
    truth = {actual: planned for planned, actual in names.items()}
    assert result.placed == truth
    assert not [u for u in result.unplaced if u.role != "switch"]
    (tmp / "names.csv").write_text(write_names(result.rows), encoding="utf-8")
    flags = _flags({k2: v for k2, v in spec.items() if k2 != "gpus"}, gpus)
    r = _run(
        ["drift", *flags, "--names", str(tmp / "names.csv"), flag, str(where), "--format", "json"]
    )
    report = json.loads(r.output)
    kinds = [f["kind"] for f in report["findings"]]
    assert kinds == ["wrong_peer"] * k, (moved, [f["summary"] for f in report["findings"]])
    assert r.exit_code == (1 if k else 0)
    if k:  # findings speak the site's names with the planned position beside
        f = report["findings"][0]
        assert "[planned: " in f["summary"]
        assert f["planned"] and all(truth[a] == p for a, p in f["planned"].items())
        assert not any(p in f["summary"].split("[planned")[0] for p in names)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 5), source=st.sampled_from(["ib", "lldp"]))
def test_adopt_recovers_every_device_at_128_gpus(
    tmp_path: Path, seed: int, k: int, source: str
) -> None:
    _adopt_and_drift(tmp_path / f"{source}-{seed}-{k}", source, 128, seed, k)


@settings(
    max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 5), source=st.sampled_from(["ib", "lldp"]))
def test_adopt_recovers_every_device_at_1024_gpus(
    tmp_path: Path, seed: int, k: int, source: str
) -> None:
    _adopt_and_drift(tmp_path / f"{source}-{seed}-{k}", source, 1024, seed, k)


@pytest.mark.parametrize("source", ["ib", "lldp"])
def test_adopt_at_1024_gpus_both_sources_with_five_miswires(tmp_path: Path, source: str) -> None:
    _adopt_and_drift(tmp_path, source, 1024, 7, 5)


@pytest.mark.parametrize(("source", "seed"), [("ib", 4), ("ib", 5), ("lldp", 4)])
def test_adopt_a_dgx_h100_fabric_by_its_real_device_names(
    tmp_path: Path, source: str, seed: int
) -> None:
    """DGX H100 compute ports are mlx5_0,3,4,5,6,9,10,11 (issue 13a's profile); odd seeds
    spell them HCA-N as MLNX_OFED does."""
    _adopt_and_drift(tmp_path, source, 1024, seed, 3, node_profile="dgx-h100")


def test_adopt_cli_writes_the_names_file_with_guids_and_reports(tmp_path: Path) -> None:
    topo, names, wires, _ = site_snapshot({}, 3, 2)
    dump = write_ibnetdiscover(tmp_path / "ib.txt", topo, names, wires, hca_form=False)
    out = tmp_path / "names.csv"
    r = _run(["adopt", "--ibnetdiscover", str(dump), "--out", str(out), "--format", "json"])
    assert r.exit_code == 1  # the two swaps contradict the plan (left to drift)
    report = json.loads(r.output)
    assert report["classes"]["server"]["placed"] == 16
    assert report["classes"]["leaf"]["placed"] == 8
    assert report["classes"]["spine"]["placed"] == 4
    assert report["classes"]["manager"]["placed"] == 2  # the two UFM hosts, one cable each
    assert report["classes"]["leaf"]["contradictions"]
    rows = load_names(out)["rows"]
    assert len(rows) == 30
    server = next(r for r in rows if r["planned"] == "su1-node01")
    assert server["actual"] == names["su1-node01"]
    assert len(server["guids"]) == 8  # one HCA GUID per rail port, as ibnetdiscover printed
    md = _run(["adopt", "--ibnetdiscover", str(dump), "--format", "markdown"]).output
    assert md.startswith("## adopt") and "| server | 16 | 16 | 0 | " in md


def test_drift_binds_a_stale_nodedesc_by_the_names_file_guid(tmp_path: Path) -> None:
    topo, names, wires, _ = site_snapshot({}, 11, 0)
    dump = write_ibnetdiscover(tmp_path / "ib.txt", topo, names, wires, hca_form=False)
    out = tmp_path / "names.csv"
    assert _run(["adopt", "--ibnetdiscover", str(dump), "--out", str(out)]).exit_code == 0
    host = names["su1-node03"]
    # The host was re-imaged and reports its old hostname: only its GUIDs still say who it is.
    dump.write_text(dump.read_text().replace(f'"{host} mlx5_', '"old-name mlx5_'))
    clean = _run(["drift", "--names", str(out), "--ibnetdiscover", str(dump), "--format", "json"])
    assert json.loads(clean.output)["summary"]["total"] == 0, clean.output
    without = tmp_path / "no-guids.csv"
    without.write_text(
        "planned,actual\n" + "".join(f"{p},{a}\n" for p, a in sorted(names.items())),
        encoding="utf-8",
    )
    stale = _run(
        ["drift", "--names", str(without), "--ibnetdiscover", str(dump), "--format", "json"]
    )
    assert json.loads(stale.output)["summary"]["total"] > 0


def test_adopt_needs_a_source_and_refuses_a_bad_file(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["adopt"])
    assert r.exit_code == 2 and "give a source" in r.output
    bad = tmp_path / "x.txt"
    bad.write_text("Switch garbage\n")
    r = CliRunner().invoke(main, ["adopt", "--ibnetdiscover", str(bad)])
    assert r.exit_code == 2 and str(bad) in r.output and "Traceback" not in r.output


# ------------------------------------------------------------------------------- real data

pytestmark_real = pytest.mark.skipif(
    not REAL.is_dir() and not os.environ.get("CI"), reason="../shared/realdata not found"
)


@pytestmark_real
@pytest.mark.parametrize(
    ("name", "servers", "ports"),
    [
        ("ltaulell-X5.topofile", 89, 1),
        ("arthurtumanyan-small_topo_file.txt", 5, 4),
        ("jabl-ibtopotool-1.topo", 4, 2),
    ],
)
def test_real_non_rail_fabrics_say_why_they_cannot_be_placed(
    name: str, servers: int, ports: int
) -> None:
    """No planned position claimed; the roles the wiring shows still reported (exit 1)."""
    path = REAL / "ibnetdiscover" / name
    r = CliRunner().invoke(main, ["adopt", "--ibnetdiscover", str(path), "--format", "json"])
    assert r.exit_code == 1
    report = json.loads(r.output)
    assert not report["mapping"] and report["roles"]
    line = report["notes"][0]
    assert f"{servers} server(s) with at most {ports} fabric port(s) each" in line
    assert "servers have 8 rails" in line and "not a rail-optimized fabric" in line
    assert "roles from the wiring: " in line


@pytest.mark.parametrize("gpus", [128, 1024])
def test_another_spine_port_convention_is_never_guessed(tmp_path: Path, gpus: int) -> None:
    """Spine ports cabled in another order than the plan's: the port map says nothing.

    One SU: every leaf is the only leaf of its rail, so the NICs it serves place it and
    everything follows. Four SUs: which SU *number* a leaf group gets is not knowable
    from the wiring (issue 47: it is placed, at low confidence, saying so); what the
    wiring does say holds: each leaf on the rail of its NICs, each host in the SU of its
    leaves, one SU per host group.
    """
    import random
    from dataclasses import replace

    topo, names, wires, _ = site_snapshot({"gpus": gpus}, 5, 0)
    rng = random.Random(1)
    by_spine: dict[str, list[int]] = {}
    for i, w in enumerate(wires):
        if w.role == "leaf_spine":
            by_spine.setdefault(w.b_dev, []).append(i)
    for idx in by_spine.values():
        ports = [wires[i].b_port for i in idx]
        rng.shuffle(ports)
        for i, p in zip(idx, ports, strict=True):
            wires[i] = replace(wires[i], b_port=p)
    dump = write_ibnetdiscover(tmp_path / "ib.txt", topo, names, wires, hca_form=False)
    result = adopt(topo, observation_from_snapshot(IbnetdiscoverReader(dump).load()))
    truth = {actual: planned for planned, actual in names.items()}
    if gpus == 128:
        assert result.placed == truth
        return
    assert result.placed.keys() == truth.keys()
    attrs = {d.planned_name: d for d in topo.devices}
    su_of: dict[int, set[int]] = {}
    for o, p in result.placed.items():
        want, got = attrs[truth[o]], attrs[p]
        assert (want.role, want.rail) == (got.role, got.rail), (o, p)
        su_of.setdefault(want.su, set()).add(got.su)
    assert all(len(v) == 1 for v in su_of.values()), su_of  # one SU per true SU
    assert len({next(iter(v)) for v in su_of.values()}) == len(su_of)
    leaves = [o for o, p in result.placed.items() if attrs[p].role == "leaf"]
    assert all(result.confidence[o][0] == "low" for o in leaves if truth[o] != result.placed[o])


def test_drift_binds_a_nameless_lldp_neighbour_by_the_names_file_mac(tmp_path: Path) -> None:
    from fabric_stack.drift import PlanIndex
    from tests.drift_fixtures import lldp_entries, lldpd_json0

    topo, names, wires, _ = site_snapshot(ROCE, 13, 0)
    lldp = write_lldp(tmp_path / "lldp", topo, names, wires)
    out = tmp_path / "names.csv"
    flags = ["--fabric", "roce", "--switch", "sn5600"]
    assert _run(["adopt", *flags, "--lldp", str(lldp), "--out", str(out)]).exit_code == 0
    host = names["su1-node05"]
    row = next(r for r in load_names(out)["rows"] if r["actual"] == host)
    assert len(row["macs"]) == 1  # its chassis MAC, learned from the switches' LLDP
    # The host's lldpd stops sending its system name: the switches see only its chassis MAC.
    bare = tmp_path / "bare"
    bare.mkdir()
    index = PlanIndex.from_topology(topo)
    for d in topo.switches("leaf", "spine"):
        entries = lldp_entries(index, names[d.name], wires)
        for e in entries:
            if e["name"] == host:
                e["name"] = ""
        doc = lldpd_json0(entries)
        (bare / f"{names[d.name]}.json").write_text(json.dumps(doc), encoding="utf-8")
    clean = _run(["drift", *flags, "--names", str(out), "--lldp", str(bare), "--format", "json"])
    assert json.loads(clean.output)["summary"]["total"] == 0, clean.output
    plain = tmp_path / "no-macs.csv"
    plain.write_text(
        "planned,actual\n" + "".join(f"{p},{a}\n" for p, a in sorted(names.items())),
        encoding="utf-8",
    )
    stale = _run(["drift", *flags, "--names", str(plain), "--lldp", str(bare), "--format", "json"])
    assert json.loads(stale.output)["summary"]["total"] > 0


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_adopt_from_a_netbox_export(tmp_path: Path, fmt: str) -> None:
    """A DCIM that already holds the site's names and cables: adopt maps them onto the plan."""
    from tests.drift_fixtures import netbox_csv, netbox_rest, netbox_rows

    topo, names, wires, _ = site_snapshot(ROCE, 17, 2)
    rows = netbox_rows(topo, wires)
    path = tmp_path / f"cables.{fmt}"
    text = netbox_csv(rows) if fmt == "csv" else json.dumps(netbox_rest(rows))
    path.write_text(text, encoding="utf-8")
    r = _run(
        [
            "adopt",
            "--fabric",
            "roce",
            "--switch",
            "sn5600",
            f"--netbox-{fmt}",
            str(path),
            "--out",
            str(tmp_path / "names.csv"),
            "--format",
            "json",
        ]
    )
    assert r.exit_code == 1  # the two swaps contradict the plan
    truth = {actual: planned for planned, actual in names.items()}
    got = {row["actual"]: row["planned"] for row in json.loads(r.output)["mapping"]}
    assert got == truth


def test_adopt_a_netbox_export_of_every_network_places_the_compute_fabric(tmp_path: Path) -> None:
    """A NetBox export holds storage, in-band and OOB cables too (what `pulumi up` writes into a
    NetBox inventory): every device lands on its own position, the access switches by the
    server ports they serve (their servers' storage / in-band / BMC ports are not read as
    rail NICs), and nothing contradicts the plan."""
    from tests.drift_fixtures import clean_wires, netbox_rest, netbox_rows, topology

    topo = topology({"gpus": 512})
    wires = clean_wires(topo)  # every role
    assert {"storage", "inband", "oob", "manager_leaf"} <= {w.role for w in wires}
    path = tmp_path / "cables.json"
    path.write_text(json.dumps(netbox_rest(netbox_rows(topo, wires))), encoding="utf-8")
    r = _run(["adopt", "--gpus", "512", "--netbox-json", str(path), "--format", "json"])
    report = json.loads(r.output)
    mapping = {m["actual"]: m["planned"] for m in report["mapping"]}
    access = {d.name for d in topo.devices if d.role in ("storage", "inband", "oob")}
    assert access
    assert set(mapping) == {d.name for d in topo.devices} and all(
        a == p for a, p in mapping.items()
    )
    assert not any(c["contradictions"] for c in report["classes"].values())
    unplaced = {u["device"] for c in report["classes"].values() for u in c["unplaced"]}
    assert not unplaced and not report["unplaced_other"]
    assert r.exit_code == 0
