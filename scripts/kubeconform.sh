#!/usr/bin/env bash
# Install kubeconform (a pinned release) with `go install` from the Go module proxy if missing;
# idempotent. Prints the binary's path on stdout.
#
#   scripts/kubeconform.sh     -> $(go env GOPATH)/bin/kubeconform
#
# tests/unit/test_artifacts_k8s_topology.py validates the rendered Kueue Topology with it
# (against tests/data/kueue/topology.schema.json); without Go the test says it was skipped.
set -euo pipefail

VERSION=v0.8.0

say() { printf 'kubeconform: %s\n' "$*" >&2; }

if command -v kubeconform >/dev/null 2>&1; then
  command -v kubeconform
  exit 0
fi
GO=$(command -v go || true)
[ -n "$GO" ] || { [ -x /usr/local/go/bin/go ] && GO=/usr/local/go/bin/go; }
if [ -z "$GO" ]; then
  say "no Go toolchain: kubeconform not installed (the Kueue test will skip its kubeconform part)"
  exit 0
fi
bin="$("$GO" env GOPATH)/bin/kubeconform"
if [ -x "$bin" ]; then # `go install` builds report "development" for -v: presence is the check
  echo "$bin"
  exit 0
fi
say "installing github.com/yannh/kubeconform/cmd/kubeconform@$VERSION"
"$GO" install "github.com/yannh/kubeconform/cmd/kubeconform@$VERSION" >&2
echo "$bin"
