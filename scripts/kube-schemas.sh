#!/usr/bin/env bash
# Offline JSON schemas of the Kubernetes core kinds (Pod, …) for kubeconform; idempotent.
# Prints the schema directory on stdout.
#
#   scripts/kube-schemas.sh     -> .state/cache/kube-schemas/<K8S>-local-strict
#
# kubeconform fetches core-kind schemas from GitHub by default; there is no network here but
# package registries, so the schemas come from the PyPI package kubernetes-validate (it ships
# yannh/kubernetes-json-schema's layout, generated from Kubernetes' OpenAPI spec), fetched
# with pip download (no install) and unpacked for one Kubernetes version. Its schemas name
# their definitions by absolute URL ("$id": "https://kubernetes.io/api/<kind>/…",
# "$ref": "/api/_definitions.json#…", resolved by kubernetes-validate's own registry); the
# unpacking drops "$id" and makes the refs relative ("_definitions.json#…"), so kubeconform's
# file loader resolves them offline. No other change.
# Source: https://pypi.org/project/kubernetes-validate/ (1.37.0)
set -euo pipefail

PKG_VERSION=1.37.0
K8S=${K8S_SCHEMA_VERSION:-v1.31.0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cache="$ROOT/.state/cache/kube-schemas"
dir="$cache/$K8S-local-strict"

say() { printf 'kube-schemas: %s\n' "$*" >&2; }

if [ -f "$dir/pod-v1.json" ]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$cache"
PY=${PYTHON:-$ROOT/.venv/bin/python}
whl="$cache/kubernetes_validate-$PKG_VERSION-py3-none-any.whl"
if [ ! -f "$whl" ]; then
  say "pip download kubernetes-validate==$PKG_VERSION (schemas only, not installed)"
  "$PY" -m pip download --quiet --no-deps "kubernetes-validate==$PKG_VERSION" -d "$cache" >&2
fi
"$PY" - "$whl" "$K8S-local-strict" "$cache" <<'PY'
import json, os, sys, zipfile
whl, want, out = sys.argv[1:]


def local(node):
    """Drop $id and make /api/_definitions.json refs relative (see the header)."""
    if isinstance(node, list):
        return [local(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: local(v) for k, v in node.items() if k != "$id"}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith("/api/_definitions.json#"):
        out["$ref"] = ref.removeprefix("/api/")
    return out


prefix = f"kubernetes_validate/kubernetes-json-schema/{want}/"
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit(f"kube-schemas: {want} not in {whl}")
    for n in names:
        target = f"{out}/{want}/{n[len(prefix):]}"
        os.makedirs(os.path.dirname(target), exist_ok=True)
        data = z.read(n)
        if n.endswith(".json"):
            data = json.dumps(local(json.loads(data))).encode()
        with open(target, "wb") as f:
            f.write(data)
PY
echo "$dir"
