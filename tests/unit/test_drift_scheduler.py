"""Drift for the scheduler's view: planted misplacements in a Slurm topology and a node list.

Fixtures (tests/fixtures/scheduler/, provenance in its README):
``slurm/scontrol-show-topology.txt`` captured from a real slurmctld 22.05 that loaded the
rendered topology.conf of ``--gpus 1024`` (no drift); ``slurm/topology-drifted.conf``, a
hand-edited topology.conf of the seed cluster with three planted errors;
``k8s/nodes-drifted.json``, ``kubectl get nodes -o json``-shaped nodes of the seed cluster
with planted label errors, a missing node and a control-plane node.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabric_stack.adapters.discovery.k8s_nodes import K8sNodesReader
from fabric_stack.adapters.discovery.slurm_topology import SlurmTopologyReader
from fabric_stack.artifacts import render_artifacts
from fabric_stack.cli import main
from fabric_stack.drift.ignore import IgnoreRules
from fabric_stack.drift.scheduler import compare_scheduler
from fabric_stack.errors import InputFileError
from tests.golden_artifacts import context

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "scheduler"


def _rendered(tmp_path: Path, target: str, spec: dict[str, object]) -> Path:
    for a in render_artifacts(target, context(spec)):
        p = tmp_path / a.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(a.content)
    return tmp_path


@pytest.mark.parametrize(
    "spec", [{}, {"gpus": 1024}, {"switch": "generic-32x400", "gpus": 1024}, {"planes": 2}]
)
def test_the_rendered_files_have_no_drift(tmp_path: Path, spec: dict[str, object]) -> None:
    topo = context(spec).topo
    out = _rendered(tmp_path, "slurm", spec)
    _rendered(tmp_path, "k8s-topology", spec)
    for snap in (
        SlurmTopologyReader(out / "slurm/topology.conf").load(),
        K8sNodesReader(out / "k8s-topology/nodes.json").load(),
    ):
        report = compare_scheduler(topo, snap)
        assert report.findings == [], [f.summary for f in report.findings]


def test_real_scontrol_output_matches_the_plan() -> None:
    snap = SlurmTopologyReader(FIX / "slurm/scontrol-show-topology.txt").load()
    assert compare_scheduler(context({"gpus": 1024}).topo, snap).clean
    # ...and is not the seed cluster's tree: 111 servers the seed does not have, and more.
    seed = compare_scheduler(context({}).topo, snap)
    assert seed.summary["unexpected_device"] > 100


def test_a_planted_misplacement_in_a_topology_file_is_found() -> None:
    snap = SlurmTopologyReader(FIX / "slurm/topology-drifted.conf").load()
    report = compare_scheduler(context({}).topo, snap)
    got = {(f.kind, f.cause, f.summary.split(" ")[0]) for f in report.findings}
    assert got == {
        ("wrong_peer", "wrong_switch", "su1-node07"),
        ("missing_device", "", "su1-node16"),
        ("attribute_changed", "", "switch"),
    }
    moved = next(f for f in report.findings if f.kind == "wrong_peer")
    assert moved.summary.startswith("su1-node07 is under SwitchName=misc")
    assert moved.fix.startswith("list su1-node07 only under SwitchName=gpu-su1")
    assert moved.actual[0].where.endswith("topology-drifted.conf:5")
    spines = sorted(f.switch for f in report.findings if f.kind == "attribute_changed")
    assert spines == ["spine-01", "spine-04"]
    assert report.summary["total"] == 4


def test_a_node_moved_between_sus_is_under_the_wrong_switch(tmp_path: Path) -> None:
    out = _rendered(tmp_path, "slurm", {"gpus": 1024})
    conf = (out / "slurm/topology.conf").read_text()
    conf = conf.replace("Nodes=su1-node[01-31]", "Nodes=su1-node[01-06,08-31]")
    conf = conf.replace("Nodes=su2-node[01-32]", "Nodes=su1-node07,su2-node[01-32]")
    (tmp_path / "live.conf").write_text(conf)
    report = compare_scheduler(
        context({"gpus": 1024}).topo, SlurmTopologyReader(tmp_path / "live.conf").load()
    )
    (f,) = report.findings
    assert (f.kind, f.cause, f.switch, f.su) == ("wrong_peer", "wrong_switch", "su1", 1)
    assert "under SwitchName=su2" in f.summary and "SwitchName=su1" in f.fix
    accepted = IgnoreRules(findings=[f.id])
    snap = SlurmTopologyReader(tmp_path / "live.conf").load()
    assert compare_scheduler(context({"gpus": 1024}).topo, snap, accepted).clean


def test_planted_label_errors_in_a_node_list_are_found() -> None:
    snap = K8sNodesReader(FIX / "k8s/nodes-drifted.json").load()
    report = compare_scheduler(context({}).topo, snap)
    by_node = {f.summary.split()[1].rstrip(":"): f for f in report.findings}
    assert set(by_node) == {"su1-node05", "su1-node09", "su1-node16"}  # cp-01: no topology labels
    assert by_node["su1-node05"].changes == [
        "network.topology.nvidia.com/leaf: su1 → su2",
        "fabric-stack/su: 1 → 2",
    ]
    assert by_node["su1-node09"].changes == ["fabric-stack/rail3-leaf: su1-r3-leaf → (missing)"]
    assert by_node["su1-node16"].kind == "missing_device"
    assert by_node["su1-node05"].actual[0].where.endswith("$.items[4].metadata.labels")


def test_a_labelled_node_the_plan_lacks_is_unexpected(tmp_path: Path) -> None:
    doc = json.loads((FIX / "k8s/nodes-drifted.json").read_text())
    doc["items"][-1]["metadata"]["labels"]["network.topology.nvidia.com/leaf"] = "su9"
    (tmp_path / "n.json").write_text(json.dumps(doc))
    report = compare_scheduler(context({}).topo, K8sNodesReader(tmp_path / "n.json").load())
    (extra,) = [f for f in report.findings if f.kind == "unexpected_device"]
    assert extra.summary.startswith("node cp-01 carries topology labels")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("BlockName=b1 Nodes=n[1-2]\n", "t.conf:1: a block topology line (topology/block)"),
        ("SwitchName=s Nodes=n[3-1]\n", "t.conf:1: 'n[3-1]': range '3-1' runs backwards"),
        ("Nodes=n1\n", "t.conf:1: expected SwitchName=<name> (topology/tree)"),
        ("SwitchName=s\nSwitchName=s\n", "t.conf:2: SwitchName=s is listed twice"),
        ("SwitchName=s Color=red\n", "t.conf:1: unknown key 'color'"),
        ("# nothing\n", "t.conf: no SwitchName= lines"),
    ],
)
def test_a_bad_topology_file_is_one_located_line(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "t.conf").write_text(text)
    with pytest.raises(InputFileError) as err:
        SlurmTopologyReader(tmp_path / "t.conf").load()
    assert str(err.value).replace(str(tmp_path) + "/", "").startswith(message)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "n.json:$: expected the JSON of `kubectl get nodes -o json`"),
        ({"items": [{"kind": "Node"}]}, "n.json:$.items[0]: a node without metadata.name"),
        (
            {"items": [{"metadata": {"name": "a", "labels": {"k": 1}}}]},
            "n.json:$.items[0].metadata.labels: labels must map strings to strings",
        ),
        ({"items": [{"kind": "Pod", "metadata": {"name": "a"}}]}, "'Pod' is not a Node"),
    ],
)
def test_a_bad_node_list_names_its_json_path(tmp_path: Path, doc: object, message: str) -> None:
    (tmp_path / "n.json").write_text(json.dumps(doc))
    with pytest.raises(InputFileError) as err:
        K8sNodesReader(tmp_path / "n.json").load()
    assert message in str(err.value).replace(str(tmp_path) + "/", "")


def test_drift_cli_reports_both_in_the_cabling_findings_format() -> None:
    r = CliRunner().invoke(
        main,
        [
            "drift",
            "--slurm-topology",
            str(FIX / "slurm/topology-drifted.conf"),
            "--k8s-nodes",
            str(FIX / "k8s/nodes-drifted.json"),
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 1, r.output
    report = json.loads(r.output)
    assert [s["source"] for s in report["sources"]] == ["slurm-topology", "k8s-nodes"]
    assert report["summary"]["total"] == 7
    assert {f["source"] for f in report["findings"]} == {"slurm-topology", "k8s-nodes"}
    assert set(report["findings"][0]) >= {"id", "kind", "summary", "fix", "expected", "actual"}
