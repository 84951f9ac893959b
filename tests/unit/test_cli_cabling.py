"""`cabling`, `bom`, `diagram` and `verify` through click's runner, bad input included."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from fabric_stack.cli import main
from fabric_stack.sizing.size import size_fabric
from fabric_stack.spec.model import validate_spec
from fabric_stack.text.printable import escape_controls
from fabric_stack.topology.build import build_topology
from fabric_stack.views.exports import links_csv, links_json

ENV = {"COLUMNS": "100", "NO_COLOR": "1"}

PCIE = """  pcie_switches:
    - {name: pcie0, numa: 0, gpus: [0, 1], nics: [0, 1]}
    - {name: pcie1, numa: 0, gpus: [2, 3], nics: [2, 3]}
    - {name: pcie2, numa: 1, gpus: [4, 5], nics: [4, 5]}
"""

BAD_INPUT = {
    "unknown_gpu.yaml": (
        "gpus: 16\nnode_profile:\n  name: custom-8\n  gpus: 8\n  rdma_nics: 8\n"
        + PCIE
        + "    - {name: pcie3, numa: 1, gpus: [6, 9], nics: [6, 7]}\n",
        "error: unknown_gpu.yaml: node_profile.pcie_switches[3].gpus: GPU 9 does not exist "
        "(this profile has GPUs 0-7)",
    ),
    "more_nics.yaml": (
        "gpus: 16\nrails: 4\nnode_profile:\n  name: custom-8\n  gpus: 8\n  rdma_nics: 8\n"
        + PCIE
        + "    - {name: pcie3, numa: 1, gpus: [6, 7], nics: [6, 7]}\n",
        "error: more_nics.yaml: node_profile: profile 'custom-8' has 8 RDMA NICs, more than the "
        "4 rails (set rails: 8 or remove NICs from the profile)",
    ),
    "dup_vlan.yaml": (
        "fabric: roce\nswitch: sn5600\nnetworks:\n  compute:\n"
        "    rail_vlans: [101, 101, 103, 104, 105, 106, 107, 108]\n",
        "error: dup_vlan.yaml: networks.compute.rail_vlans: VLAN 101 is given to two rails "
        "(rail 2 repeats it); every rail needs its own VLAN",
    ),
}


def run(*args: str, **kw: Any) -> Result:
    return CliRunner().invoke(main, list(args), env=ENV, **kw)


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_is_one_clear_line_and_exit_2(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, message = BAD_INPUT[name]
    monkeypatch.chdir(tmp_path)
    Path(name).write_text(text, encoding="utf-8")
    r = run("cabling", "--config", name)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr.strip() == message
    assert "Traceback" not in r.output


def test_cabling_csv_to_stdout() -> None:
    r = run("cabling")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("cable_id,role,network,a_device,a_port,")
    assert len(lines) == 1 + 448 + 2  # + the two UFM-to-leaf cables


def test_cabling_json_to_a_file_atomically(tmp_path: Path) -> None:
    out = tmp_path / "plans" / "plan.json"
    r = run("cabling", "--format", "json", "--gpus", "256", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert r.stdout == "" and f"wrote {out}" in r.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    # one SU, full: one server position goes to the two UFMs (the DGX SuperPOD RA rule)
    assert len([k for k in data["links"] if k["role"] == "node_leaf"]) == 248
    assert len([k for k in data["links"] if k["role"] == "manager_leaf"]) == 2
    assert [p.name for p in out.parent.iterdir()] == ["plan.json"]  # no temp file left behind


def test_cabling_topo_and_p2p_default_to_compute() -> None:
    topo = run("cabling", "--format", "topo")
    assert topo.exit_code == 0
    assert "MQM9700 su1-r1-leaf" in topo.stdout and "storage" not in topo.stdout
    p2p = run("cabling", "--format", "p2p")
    rows = [ln for ln in p2p.stdout.splitlines() if not ln.startswith("#")]  # naming header
    assert rows[0] == "A-Node Name,A-Type,A-Port,Z-Node Name,Z-Type,Z-Port"
    assert len(rows) == 1 + 384 + 2
    storage = run("cabling", "--format", "p2p", "--role", "storage")
    assert len(storage.stdout.splitlines()) == 1 + 32


def test_cabling_role_filter_and_avd() -> None:
    r = run("cabling", "--role", "oob")
    assert r.exit_code == 0
    assert {line.split(",")[1] for line in r.stdout.splitlines()[1:]} == {"oob"}
    avd = run("cabling", "--format", "avd", "--role", "compute")
    assert avd.stdout.startswith("Node Type,Node,Serial Number,Node Interface,")


def test_cabling_topo_refuses_ethernet_and_other_roles() -> None:
    r = run("cabling", "--format", "topo", "--fabric", "roce", "--switch", "sn5600")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "error: cabling --format topo: .topo files describe InfiniBand fabrics for ibdiagnet, "
        "but this fabric is roce (use --format csv, json or p2p)"
    )
    r = run("cabling", "--format", "topo", "--role", "storage")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "error: --role: --format topo holds the compute fabric only, not storage "
        "(use --role compute or leave it out)"
    )


def test_bad_spec_flag_is_exit_2() -> None:
    r = run("cabling", "--gpus", "12")
    assert r.exit_code == 2
    assert r.stderr.startswith("error: gpus: 12 is not a multiple of gpus_per_node 8")


def test_bom_formats(tmp_path: Path) -> None:
    table = run("bom")
    assert table.exit_code == 0
    assert "Bill of materials — gpu-cluster" in table.stdout
    assert "Compute counts match the sizing card" in table.stdout
    data = json.loads(run("bom", "--format", "json", "--gpus", "1024").stdout)
    assert data["compute"]["matches_sizing"] is True
    assert data["compute"]["switches"] == {"leaf": 32, "spine": 16, "core": 0, "total": 48}
    md = run("bom", "--format", "markdown").stdout
    assert md.startswith("### Bill of materials — gpu-cluster")
    out = tmp_path / "bom.md"
    assert run("bom", "--format", "markdown", "--out", str(out)).exit_code == 0
    assert out.read_text(encoding="utf-8") == md
    bad = run("bom", "--out", str(tmp_path / "bom.txt"))
    assert bad.exit_code == 2 and "use --format json or markdown with --out" in bad.stderr


def test_diagram_writes_svg(tmp_path: Path) -> None:
    out = tmp_path / "fabric.svg"
    r = run("diagram", "--out", str(out))
    assert r.exit_code == 0, r.output
    ET.fromstring(out.read_text(encoding="utf-8"))
    missing = run("diagram")
    assert missing.exit_code == 2 and "--out: missing option" in missing.stderr
    png = run("diagram", "--out", str(tmp_path / "fabric.png"))
    assert png.exit_code == 2
    assert (
        png.stderr.strip()
        == "error: --out: 'fabric.png' is not an .svg file (e.g. --out fabric.svg)"
    )


def test_verify_passes_and_fails_with_exit_codes() -> None:
    ok = run("verify")
    assert ok.exit_code == 0, ok.output
    assert "bisection-mincut" in ok.stdout and "PASS" in ok.stdout
    data = json.loads(run("verify", "--format", "json", "--gpus", "4104").stdout)
    assert data["passed"] is True
    assert {c["name"]: c["status"] for c in data["checks"]} == {
        "port-budget": "pass",
        "rail-alignment": "pass",
        "leaf-split": "pass",
        "gpu-reachability": "pass",
        "bisection-mincut": "skip",
    }
    # a 2:1 fabric whose halves do not fall on leaf boundaries: sizing's figure is that cut
    odd = run("verify", "--gpus", "1000", "--oversubscription", "2:1", "--format", "markdown")
    assert odd.exit_code == 0, odd.stdout
    assert "| `bisection-mincut` | ✅ pass | min-cut 204.8 Tb/s = sizing 204.8 Tb/s |" in odd.stdout


def test_help_teaches() -> None:
    for cmd in ("cabling", "bom", "diagram", "verify"):
        r = run(cmd, "--help")
        assert r.exit_code == 0
        assert "Examples:" in r.stdout and f"fabric-stack {cmd}" in r.stdout


@pytest.mark.parametrize(
    "label",
    [
        "{device}-{port}",  # clean: printed in pieces, without the escaping pass
        "{device}\x1b]0;pwn\x07{port}",  # a window-title escape, nothing to quote
        "{device}\x1b[31m,{port}\x85",  # a colour (stripped off a pipe), a comma, a C1 control
        '{rack}\t"{device}"\x7f{port}',  # a tab (not shown), quotes, DEL
    ],
)
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_cabling_prints_what_escaping_the_whole_text_prints(
    fmt: str, label: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Checked fragments let `cabling --format csv|json` skip the escaping pass (#43); what
    # it prints must stay what click.echo and the printable stream made of the whole text.
    monkeypatch.chdir(tmp_path)
    spec = {"gpus": 64, "layout": {"label": label}}
    Path("spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    r = run("cabling", "--config", "spec.yaml", "--format", fmt)
    export = links_csv if fmt == "csv" else links_json
    text = export(build_topology(size_fabric(validate_spec(**spec))))
    assert r.exit_code == 0, r.output
    assert r.stdout == escape_controls(click.unstyle(text), keep_styles=True, terminal=False)
    # JSON writes C0 controls as \\u00NN itself; DEL and C1 ones are the console's to show.
    shown = label != "{device}-{port}" and (fmt == "csv" or "\x85" in label or "\x7f" in label)
    assert ("\\x" in r.stdout) == shown
