"""Family ``kubernetes``: kubeconform -strict rejects planted defects in roce-128's manifests
with its own message (`make validate` judges every rendered manifest)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.integration.validate.conftest import judge, rendered, require
from validate.kube import KUBERNETES

pytestmark = pytest.mark.validate


def _plant(path: Path, kind: str, edit: object) -> None:
    """Apply ``edit`` (a callable on the document) to the first ``kind`` document."""
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    doc = next(d for d in docs if d["kind"] == kind)
    assert callable(edit)
    edit(doc)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")


def test_unknown_field_in_a_sriov_network_is_rejected(tmp_path: Path) -> None:
    require(KUBERNETES)
    root = rendered(tmp_path, "roce-128")
    rel = "kubernetes/sriov-networks.yaml"
    _plant(root / rel, "SriovNetwork", lambda d: d["spec"].update(rdmaMode="exclusive"))
    (problem,) = judge(KUBERNETES, root, rel)
    assert problem.file == rel
    # kubeconform's own words (santhosh-tekuri/jsonschema via -strict's additionalProperties).
    assert "additional properties 'rdmaMode' not allowed" in problem.message


def test_wrong_type_in_an_mpijob_is_rejected(tmp_path: Path) -> None:
    require(KUBERNETES)
    root = rendered(tmp_path, "roce-128")
    rel = "kubernetes/nccl-tests-mpijob.yaml"
    _plant(root / rel, "MPIJob", lambda d: d["spec"].update(slotsPerWorker="eight"))
    (problem,) = judge(KUBERNETES, root, rel)
    assert "MPIJob" in problem.message and "slotsPerWorker" in problem.message
    assert "got string, want integer" in problem.message


def test_unknown_field_in_a_core_pod_is_rejected(tmp_path: Path) -> None:
    require(KUBERNETES)
    root = rendered(tmp_path, "roce-128")
    rel = "kubernetes/training-pod.yaml"
    _plant(root / rel, "Pod", lambda d: d["spec"].update(restartPolcy="Never"))
    (problem,) = judge(KUBERNETES, root, rel)
    assert "restartPolcy" in problem.message


def test_the_kueue_topology_is_judged_against_kueues_crd(tmp_path: Path) -> None:
    """kueue-topology.yaml is in the family's files and meets Kueue's own CRD
    (kubernetes-sigs/kueue ff69552e, ../shared/schemas/SOURCES.md): a level without
    its required nodeLabel is rejected in kubeconform's words."""
    require(KUBERNETES)
    root = rendered(tmp_path, "roce-128")
    rel = "k8s-topology/kueue-topology.yaml"
    assert root / rel in KUBERNETES.select(root)
    assert not judge(KUBERNETES, root, rel)
    _plant(root / rel, "Topology", lambda d: d["spec"]["levels"][0].pop("nodeLabel"))
    (problem,) = judge(KUBERNETES, root, rel)
    assert problem.file == rel
    assert "Topology" in problem.message and "nodeLabel" in problem.message
