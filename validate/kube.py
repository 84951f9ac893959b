"""Family ``kubernetes``: kubeconform ``-strict`` on every rendered manifest.

Files: ``kubernetes/*.yaml``, ``k8s-topology/nodes.json`` (a ``v1`` ``List`` of
``Node``) and ``k8s-topology/kueue-topology.yaml``. One kubeconform call per scenario,
against two offline schema locations:

* **CRDs** — the upstream CRDs in ``../shared/schemas/crds/`` (SR-IOV operator, NAD,
  NVIDIA network operator, whereabouts, MPI operator, Kueue; ``SOURCES.md`` there gives each
  repository and commit), converted at validation time into JSON schemas under
  ``.state/cache/kube-crd-schemas/`` by :func:`crd_schemas`: the logic of kubeconform's
  ``scripts/openapi2jsonschema.py`` (yannh/kubeconform v0.8.0), i.e. every object schema
  with ``properties`` gets ``additionalProperties: false`` (kubectl's behaviour) and
  ``format: int-or-string`` becomes ``oneOf`` string/integer; file name
  ``<kind>_<version>.json``; the root object is left open as upstream does by default
  (several CRDs, the NAD's among them, list only ``spec`` at the root). One deliberate
  difference: an object marked ``x-kubernetes-preserve-unknown-fields: true`` keeps
  accepting unknown fields, as the API server does.
* **Core kinds** (Pod, Node, List …) — kubeconform downloads those from GitHub by default,
  and there is no network here but package registries. ``scripts/kube-schemas.sh`` takes
  them from the PyPI package ``kubernetes-validate`` 1.37.0 (``pip download``, not
  installed): its ``v1.31.0-local-strict`` tree is yannh/kubernetes-json-schema's layout,
  the same file names kubeconform's default location uses.

``k8s-topology/kueue-topology.yaml`` (Kueue ``Topology``) is judged against Kueue's own
CRD, ``../shared/schemas/crds/kueue/config/components/crd/bases/kueue.x-k8s.io_topologies.yaml``
(kubernetes-sigs/kueue ff69552e, per ``../shared/schemas/SOURCES.md``), converted like the
others (``topology_v1beta2.json``). kubeconform does not evaluate the CRD's CEL rules
(``x-kubernetes-validations``: levels unique, ``kubernetes.io/hostname`` only last); those
are checked in Python by tests/unit/test_artifacts_k8s_topology.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from validate.core import FileProblem
from validate.schemas import REPO, shared_crds

CACHE = REPO / ".state" / "cache"
CRD_SCHEMAS = CACHE / "kube-crd-schemas"
CORE_SCRIPT = REPO / "scripts" / "kube-schemas.sh"
KUBECONFORM_SCRIPT = REPO / "scripts" / "kubeconform.sh"
K8S_VERSION = "v1.31.0"
"""Kubernetes version of the core-kind schemas (the tree scripts/kube-schemas.sh unpacks)."""


def core_schemas() -> Path:
    """The unpacked core-kind schema folder (may not exist yet)."""
    return CACHE / "kube-schemas" / f"{K8S_VERSION}-local-strict"


def kubeconform_bin() -> str | None:
    """kubeconform on PATH, or where scripts/kubeconform.sh installs it (GOPATH/bin)."""
    found = shutil.which("kubeconform")
    if found:
        return found
    for gopath in (os.environ.get("GOPATH"), str(Path.home() / "go")):
        if gopath and (Path(gopath) / "bin" / "kubeconform").is_file():
            return str(Path(gopath) / "bin" / "kubeconform")
    return None


def strict_schema(node: Any, root: bool = False) -> Any:
    """openapi2jsonschema's additional_properties + replace_int_or_string, in one walk
    (``root``: the CRD's top object, left open as upstream does)."""
    if isinstance(node, list):
        return [strict_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    if node.get("format") == "int-or-string":
        return {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    keep = bool(node.get("x-kubernetes-preserve-unknown-fields")) or root
    out = {k: strict_schema(v) for k, v in node.items()}
    if "properties" in out and "additionalProperties" not in out and not keep:
        out["additionalProperties"] = False
    return out


def crd_documents(path: Path) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions in one YAML file."""
    with path.open(encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if isinstance(d, dict)]
    return [d for d in docs if d.get("kind") == "CustomResourceDefinition"]


def crd_schemas(src: Path | None = None, out: Path = CRD_SCHEMAS) -> Path:
    """Convert every CRD under ``src`` into ``out/<kind>_<version>.json``; return ``out``.

    Rewritten on each call (cheap: a dozen files), so a refreshed ../shared is picked up.
    """
    out.mkdir(parents=True, exist_ok=True)
    for crd_file in sorted((src or shared_crds()).rglob("*.yaml")):
        for crd in crd_documents(crd_file):
            kind = crd["spec"]["names"]["kind"].lower()
            for version in crd["spec"].get("versions", []):
                schema = version.get("schema", {}).get("openAPIV3Schema")
                if schema is None:
                    continue
                target = out / f"{kind}_{version['name'].lower()}.json"
                target.write_text(
                    json.dumps(strict_schema(schema, root=True), indent=1), encoding="utf-8"
                )
    return out


def kubeconform_args(files: Sequence[Path]) -> list[str]:
    """The kubeconform command line (without the binary) over ``files``: strict, offline."""
    return [
        "-strict",
        "-summary=false",
        "-output",
        "json",
        "-schema-location",
        str(core_schemas()) + "/{{ .ResourceKind }}{{ .KindSuffix }}.json",
        "-schema-location",
        str(CRD_SCHEMAS) + "/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json",
        *(str(f) for f in files),
    ]


def parse_output(root: Path, stdout: str) -> list[FileProblem]:
    """kubeconform's JSON report → one problem per invalid (or unjudgeable) resource."""
    report = json.loads(stdout or "{}")
    problems = []
    for r in report.get("resources") or []:
        if r.get("status") in ("statusValid", "statusSkipped", "statusEmpty"):
            continue
        path = Path(r.get("filename", "?"))
        rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        what = f"{r.get('kind', '?')} {r.get('name', '?')}"
        problems.append(FileProblem(rel, f"{what}: {r.get('msg', r.get('status'))}"))
    return problems


class KubeconformValidator:
    """kubeconform -strict over a scenario's Kubernetes manifests (upstream CRDs + core)."""

    name = "kubernetes"
    tool = "kubeconform -strict"

    def missing(self) -> str | None:
        """Why kubeconform cannot run (and what installs it), or None."""
        if kubeconform_bin() is None:
            return f"kubeconform not found: run bash {KUBECONFORM_SCRIPT.relative_to(REPO)}"
        if not (core_schemas() / "pod-v1.json").is_file():
            return f"core-kind schemas missing: run bash {CORE_SCRIPT.relative_to(REPO)}"
        if not any(shared_crds().rglob("*.yaml")):
            return f"upstream CRDs missing: {shared_crds()} (../shared/schemas/crds)"
        return None

    def select(self, root: Path) -> list[Path]:
        """kubernetes/*.yaml, k8s-topology/nodes.json and kueue-topology.yaml under ``root``."""
        files = sorted((root / "kubernetes").glob("*.yaml"))
        topo = [root / "k8s-topology" / n for n in ("nodes.json", "kueue-topology.yaml")]
        return files + [f for f in topo if f.is_file()]

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """One kubeconform call over ``files``; its message per rejected resource."""
        if not files:
            return []
        binary = kubeconform_bin()
        assert binary is not None  # missing() is checked first
        crd_schemas()
        run = subprocess.run(
            [binary, *kubeconform_args(files)],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if run.returncode not in (0, 1):  # 1: some resource invalid; anything else: broken
            return [FileProblem(str(files[0]), f"kubeconform failed: {run.stderr.strip()}")]
        return parse_output(root, run.stdout)


KUBERNETES = KubeconformValidator()
"""The family's validator object (registered in :mod:`validate.registry`)."""
