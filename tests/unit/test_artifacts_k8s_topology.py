"""`render k8s-topology`: node labels, the kubectl script, the Kueue Topology, each validated.

What validates what:

* ``kueue-topology.yaml``: jsonschema against ``tests/data/kueue/topology.schema.json``, a
  schema written from the facts of Kueue's Topology CRD (its README-like description
  names the CRD's repository, path and commit); the CRD's two CEL rules (levels unique,
  ``kubernetes.io/hostname`` only last) in Python; ``kubeconform -strict`` against the same
  schema when kubeconform is installed (``scripts/kubeconform.sh``); and against the real
  CRD's ``openAPIV3Schema`` at ``../shared/schemas/crds/kueue/…`` (kubernetes-sigs/kueue
  ff69552e) or ``$FABRIC_STACK_KUEUE_CRD`` (skipped only where ../shared is absent). The
  ``kubernetes`` validate family also runs kubeconform -strict against that CRD, once over
  the scenario matrix (validate/kube.py).
* ``nodes.json``: the shape of ``kubectl get nodes -o json`` (a v1 List of Nodes), every
  label key and value by Kubernetes' label syntax (kubernetes.io, "Labels and Selectors").
* ``labels.sh``: ``sh -n``, and run against a fake ``kubectl`` that records what it is given:
  exactly the labels of nodes.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabric_stack.artifacts import render_artifacts
from fabric_stack.topology.scheduler import scheduler_view
from fabric_stack.topology.scheduler_labels import HOSTNAME, LEAF, SPINE, kueue_levels
from tests.golden_artifacts import context
from validate.schemas import shared_crds

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "tests" / "data" / "kueue" / "topology.schema.json"
# The upstream Kueue CRD in ../shared/schemas (validate.schemas finds the folder
# beside the clone or above a nested worktree).
SHARED_CRD = shared_crds().joinpath(
    "kueue", "config", "components", "crd", "bases", "kueue.x-k8s.io_topologies.yaml"
)

PLANS: dict[str, dict[str, Any]] = {
    "seed": {},
    "3-tier": {"switch": "generic-32x400", "gpus": 1024},
    "2-plane": {"planes": 2},
    "nvl72": {"node_profile": "gb200-nvl72-tray", "gpus": 288, "gpus_per_node": 4},
}

_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"


def _files(spec: dict[str, Any]) -> dict[str, str]:
    return {a.path: a.content for a in render_artifacts("k8s-topology", context(spec))}


def _kueue(text: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert len(docs) == 1
    return dict(docs[0])


def check_label(key: str, value: str) -> None:
    """Kubernetes' label syntax: [prefix/]name, name <= 63, prefix a DNS subdomain <= 253."""
    prefix, _, name = key.rpartition("/")
    assert re.fullmatch(_NAME, name) and len(name) <= 63, f"label key {key!r}"
    assert not prefix or (re.fullmatch(_PREFIX, prefix) and len(prefix) <= 253), key
    assert value == "" or (re.fullmatch(_NAME, value) and len(value) <= 63), f"{key}={value!r}"


def check_cel(obj: dict[str, Any]) -> None:
    """The CRD's x-kubernetes-validations on spec.levels (no JSON-schema tool runs CEL)."""
    labels = [lv["nodeLabel"] for lv in obj["spec"]["levels"]]
    assert len(set(labels)) == len(labels), "levels: must be unique"
    assert HOSTNAME not in labels or labels[-1] == HOSTNAME, (
        "the kubernetes.io/hostname label can only be used at the lowest level of topology"
    )


@pytest.mark.parametrize("plan", PLANS)
def test_kueue_topology_validates(plan: str) -> None:
    obj = _kueue(_files(PLANS[plan])["k8s-topology/kueue-topology.yaml"])
    jsonschema.validate(obj, json.loads(SCHEMA.read_text()))
    check_cel(obj)
    view = scheduler_view(context(PLANS[plan]).topo)
    assert [lv["nodeLabel"] for lv in obj["spec"]["levels"]] == kueue_levels(view)


def test_the_checks_can_fail() -> None:
    schema = json.loads(SCHEMA.read_text())
    bad = _kueue(_files({})["k8s-topology/kueue-topology.yaml"])
    bad["spec"]["levels"].append({"nodeLabel": "bad label!"})
    with pytest.raises(jsonschema.ValidationError, match="does not match"):
        jsonschema.validate(bad, schema)
    bad["spec"]["levels"] = [{"nodeLabel": HOSTNAME}, {"nodeLabel": LEAF}]
    with pytest.raises(AssertionError, match="lowest level"):
        check_cel(bad)
    with pytest.raises(AssertionError, match="label key"):
        check_label("fabric-stack/rail 1", "x")


def _kubeconform() -> str | None:
    found = shutil.which("kubeconform")
    gopath = Path(os.environ.get("GOPATH", Path.home() / "go")) / "bin" / "kubeconform"
    return found or (str(gopath) if gopath.is_file() else None)


def test_kubeconform_accepts_the_topology_and_refuses_a_bad_one(tmp_path: Path) -> None:
    tool = _kubeconform()
    if tool is None:
        pytest.skip("kubeconform not installed (scripts/kubeconform.sh installs it)")
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    shutil.copy(SCHEMA, schemas / "topology_v1beta2.json")
    loc = str(schemas) + "/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json"
    good = tmp_path / "kueue-topology.yaml"
    good.write_text(_files(PLANS["3-tier"])["k8s-topology/kueue-topology.yaml"])
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("nodeLabel: kubernetes.io/hostname", "levelz: x"))
    args = [tool, "-strict", "-summary", "-schema-location", loc]
    ok = subprocess.run([*args, str(good)], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "Valid: 1, Invalid: 0" in ok.stdout, ok.stdout + ok.stderr
    no = subprocess.run([*args, str(bad)], capture_output=True, text=True, timeout=60)
    assert no.returncode == 1 and "Invalid: 1" in no.stdout, no.stdout


def test_against_kueues_own_crd_when_a_copy_is_at_hand() -> None:
    crd_path = Path(os.environ.get("FABRIC_STACK_KUEUE_CRD", SHARED_CRD))
    if not crd_path.is_file():
        pytest.skip(f"no copy of Kueue's Topology CRD at {crd_path} (../shared not found)")
    crd = yaml.safe_load(crd_path.read_text())
    obj = _kueue(_files(PLANS["nvl72"])["k8s-topology/kueue-topology.yaml"])
    version = obj["apiVersion"].split("/")[1]
    (schema,) = [
        v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"] if v["name"] == version
    ]
    jsonschema.validate(obj, schema)


@pytest.mark.parametrize("plan", PLANS)
def test_nodes_json_is_a_node_list_with_valid_labels(plan: str) -> None:
    ctx = context(PLANS[plan])
    data = json.loads(_files(PLANS[plan])["k8s-topology/nodes.json"])
    assert (data["apiVersion"], data["kind"]) == ("v1", "List")
    servers = [d.name for d in ctx.topo.devices if d.role == "server"]
    assert [i["metadata"]["name"] for i in data["items"]] == servers
    view = scheduler_view(ctx.topo)
    for item in data["items"]:
        assert (item["apiVersion"], item["kind"]) == ("v1", "Node")
        labels = item["metadata"]["labels"]
        for key, value in labels.items():
            check_label(key, value)
        place = view.server(item["metadata"]["name"])
        assert labels[LEAF] == f"su{place.su}" and labels[SPINE] == f"pod{place.pod}"
        rails = {k: v for k, v in labels.items() if k.endswith("-leaf")}
        assert sorted(rails.values()) == sorted(leaf for _, _, leaf in place.leaves)
        assert len(rails) == view.rails * view.planes
    if plan == "nvl72":
        first = data["items"][0]["metadata"]["labels"]
        assert first["network.topology.nvidia.com/accelerator"] == "nvl72-01"
    if plan == "3-tier":
        assert data["items"][-1]["metadata"]["labels"]["fabric-stack/pod"] == "4"


@pytest.mark.skipif(shutil.which("sh") is None, reason="no /bin/sh")
def test_labels_sh_labels_exactly_what_nodes_json_says(tmp_path: Path) -> None:
    files = _files(PLANS["2-plane"])
    script = tmp_path / "labels.sh"
    script.write_text(files["k8s-topology/labels.sh"])
    assert subprocess.run(["sh", "-n", str(script)], timeout=30).returncode == 0
    fake = tmp_path / "kubectl"
    log = tmp_path / "calls"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n')
    fake.chmod(0o755)
    env = {**os.environ, "KUBECTL": str(fake)}
    subprocess.run(["sh", str(script)], env=env, check=True, timeout=60)
    got: dict[str, dict[str, str]] = {}
    for call in log.read_text().splitlines():
        words = call.split()
        assert words[:3] == ["label", "node", "--overwrite"], call
        got[words[3]] = dict(w.split("=", 1) for w in words[4:])
    want = {
        i["metadata"]["name"]: i["metadata"]["labels"]
        for i in json.loads(files["k8s-topology/nodes.json"])["items"]
    }
    assert got == want
    assert "fabric-stack/p2-rail8-leaf" in got["su1-node01"]
