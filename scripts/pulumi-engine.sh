#!/usr/bin/env bash
# Find or build the pinned Pulumi engine and link it into .venv/bin (called by `make engine`).
#
# Order: 1. $FABRIC_STACK_PULUMI_BIN (a directory holding pulumi and pulumi-language-python);
#        2. a `pulumi` on PATH (outside this project's .venv) at least PULUMI_VERSION, with
#           pulumi-language-python next to it (official installer, brew, ...);
#        3. a build of this exact release cached in ${XDG_CACHE_HOME:-~/.cache}/fabric-stack/;
#        4. a fresh build with the Go toolchain from the Go module proxy (minutes, once).
# Idempotent: when the cached build is in place it only refreshes the symlinks.
set -euo pipefail

# Single source of the Pulumi release (fabric_stack/adapters/pulumi/env.py and pyproject.toml
# must agree; tests/unit/test_pulumi_env.py checks that). Bump it together with
# scripts/pulumi-wrapper/go.mod.
PULUMI_VERSION=3.260.0
# Commit tagged pkg/v3.260.0. The upstream Python language host module has no version tags, so it
# can only be required at this commit (used when the Go proxy serves it; see build_langhost).
PULUMI_COMMIT=22df62fcb27a8482225087c1f739680ad18df0c3
# Go version that pulumi/pkg v3.260.0 declares in its go.mod.
GO_MIN=1.26.6

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV_BIN=$ROOT/.venv/bin
CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/fabric-stack
ENGINE_DIR=$CACHE_ROOT/pulumi-$PULUMI_VERSION
CACHE_BIN=$ENGINE_DIR/bin
# Linked into .venv/bin when present; the first two are required.
TOOLS=(pulumi pulumi-language-python pulumi-language-python-exec pulumi-resource-pulumi-python
  pulumi-analyzer-policy-python)
LANGHOST_UPSTREAM=github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3
START=$SECONDS

log() { printf '[%s] engine: %s\n' "$(date +%H:%M:%S)" "$*"; }
die() {
  local code=$1
  shift
  printf 'engine: error: %s\n' "$*" >&2
  exit "$code"
}

# version_ge A B: true when version A >= version B (leading "v" and "-suffix" ignored).
version_ge() {
  local a=${1#v} b=${2#v}
  a=${a%%[-+]*}
  b=${b%%[-+]*}
  [ "$(printf '%s\n%s\n' "$b" "$a" | sort -V | head -n 1)" = "$b" ]
}

# pulumi_version DIR: the version DIR/pulumi reports ("" when it does not run).
pulumi_version() {
  PULUMI_SKIP_UPDATE_CHECK=true timeout 60 "$1/pulumi" version 2>/dev/null | head -n 1 | tr -d '[:space:]' ||
    true
}

link_into_venv() {
  local dir=$1 from=$2 tool
  [ -d "$VENV_BIN" ] || die 1 "$VENV_BIN does not exist: run 'make setup' (it creates the venv first)"
  for tool in "${TOOLS[@]}"; do
    if [ -e "$dir/$tool" ]; then
      # a link already in place is left alone (a venv shared by several work trees)
      [ "$(readlink "$VENV_BIN/$tool" 2>/dev/null)" = "$dir/$tool" ] || ln -sfn "$dir/$tool" "$VENV_BIN/$tool"
    elif [ -L "$VENV_BIN/$tool" ]; then
      rm -f "$VENV_BIN/$tool" # left over from an engine that had it
    fi
  done
  log "pulumi $(pulumi_version "$dir") from $dir ($from), linked into .venv/bin [$((SECONDS - START))s]"
}

# usable DIR: DIR has pulumi >= PULUMI_VERSION and a Python language host next to it.
usable() {
  local dir=$1 v
  [ -x "$dir/pulumi" ] && [ -x "$dir/pulumi-language-python" ] || return 1
  v=$(pulumi_version "$dir")
  [ -n "$v" ] && version_ge "$v" "$PULUMI_VERSION"
}

# 1. Explicit override.
if [ -n "${FABRIC_STACK_PULUMI_BIN:-}" ]; then
  dir=$(cd "$FABRIC_STACK_PULUMI_BIN" 2>/dev/null && pwd) ||
    die 2 "FABRIC_STACK_PULUMI_BIN=$FABRIC_STACK_PULUMI_BIN is not a directory"
  usable "$dir" || die 2 "FABRIC_STACK_PULUMI_BIN=$dir needs pulumi >= $PULUMI_VERSION and" \
    "pulumi-language-python (found: pulumi $(pulumi_version "$dir"))"
  link_into_venv "$dir" "FABRIC_STACK_PULUMI_BIN"
  exit 0
fi

# 2. The user's own install on PATH (skipping this project's .venv/bin, where our links live).
user_pulumi=""
IFS=: read -r -a path_dirs <<<"${PATH:-}"
for d in "${path_dirs[@]}"; do
  if [ -z "$d" ] || [ ! -x "$d/pulumi" ]; then continue; fi
  real=$(cd "$d" 2>/dev/null && pwd -P) || continue
  [ "$real" = "$(cd "$VENV_BIN" 2>/dev/null && pwd -P)" ] && continue
  [ "$real" = "$(cd "$CACHE_BIN" 2>/dev/null && pwd -P)" ] && continue
  user_pulumi=$real
  break
done
if [ -n "$user_pulumi" ]; then
  if usable "$user_pulumi"; then
    link_into_venv "$user_pulumi" "your install on PATH"
    exit 0
  fi
  log "ignoring $user_pulumi/pulumi ($(pulumi_version "$user_pulumi")): need >= $PULUMI_VERSION with" \
    "pulumi-language-python next to it"
fi

# 3. Our cached build of exactly this release.
cached_ok() {
  [ -x "$CACHE_BIN/pulumi-language-python" ] && [ -x "$CACHE_BIN/pulumi-language-python-exec" ] &&
    [ -x "$CACHE_BIN/pulumi-resource-pulumi-python" ] &&
    [ "$(pulumi_version "$CACHE_BIN")" = "v$PULUMI_VERSION" ]
}
# fabric-stack's language host is built from this repo: the cache records a hash of its source
# (HOST_STAMP, absent when the cache holds upstream's host) and rebuilds the host when it changes.
HOST_STAMP=$ENGINE_DIR/LANGHOST-SOURCE
host_src_hash() {
  (cd "$ROOT/scripts/pulumi-wrapper" && cat go.mod go.sum pulumi-language-python/*.go) | sha256sum |
    cut -c1-16
}
host_stale() { [ -f "$HOST_STAMP" ] && [ "$(cat "$HOST_STAMP")" != "$(host_src_hash)" ]; }

need_msg="install Go >= $GO_MIN (https://go.dev/dl/; 'make setup' then builds the engine once, a few"
need_msg+=" minutes) or the Pulumi CLI >= $PULUMI_VERSION (https://www.pulumi.com/docs/install/; or set"
need_msg+=" FABRIC_STACK_PULUMI_BIN to the directory holding pulumi and pulumi-language-python)"
go_v=""
if command -v go >/dev/null 2>&1; then go_v=$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null || true); fi
go_ok() { [ -n "$go_v" ] && version_ge "${go_v#go}" "$GO_MIN"; }

# Work under a per-version lock in a temp dir next to the cache (same file system: `mv` is atomic).
# Whatever ends the script, the temp dir goes; an install is only ever a finished directory.
start_work() {
  export GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off GOFLAGS=-buildvcs=false
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.pulumi-$PULUMI_VERSION.lock"
  if ! flock -n 9; then
    log "another build of pulumi $PULUMI_VERSION is running; waiting for it"
    flock 9
    if cached_ok && ! host_stale; then
      link_into_venv "$CACHE_BIN" "cached build"
      exit 0
    fi
  fi
  rm -rf "$CACHE_ROOT/.build-$PULUMI_VERSION".* # left by a build that was killed (we hold the lock)
  tmp=$(mktemp -d "$CACHE_ROOT/.build-$PULUMI_VERSION.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP
  cp -R "$ROOT/scripts/pulumi-wrapper" "$tmp/src"
  chmod -R u+w "$tmp/src"
  cd "$tmp/src"
}

# build_own_host OUT: compile scripts/pulumi-wrapper/pulumi-language-python (from $tmp/src) to OUT.
build_own_host() {
  cp "$ROOT/scripts/pulumi-wrapper/go.mod" "$ROOT/scripts/pulumi-wrapper/go.sum" "$tmp/src/"
  go build -trimpath -ldflags "-s -w -X main.version=$PULUMI_VERSION" -o "$1" ./pulumi-language-python
}

if cached_ok; then
  if host_stale; then
    if go_ok; then
      start_work
      log "scripts/pulumi-wrapper changed: rebuilding the cached pulumi-language-python"
      build_own_host "$tmp/pulumi-language-python"
      mv -f "$tmp/pulumi-language-python" "$CACHE_BIN/pulumi-language-python"
      host_src_hash >"$HOST_STAMP"
      cd "$ROOT"
    else
      log "warning: scripts/pulumi-wrapper changed but there is no Go >= $GO_MIN to rebuild" \
        "pulumi-language-python; keeping the cached one"
    fi
  fi
  link_into_venv "$CACHE_BIN" "cached build"
  exit 0
fi

# 4. Build it. Needs Go >= GO_MIN and the Go module proxy.
if [ -z "$go_v" ]; then
  die 2 "no Pulumi CLI >= $PULUMI_VERSION and no Go toolchain found: $need_msg"
fi
go_ok || die 2 "no Pulumi CLI >= $PULUMI_VERSION found and $(command -v go) is $go_v: $need_msg"

start_work
out=$tmp/pulumi-$PULUMI_VERSION/bin
mkdir -p "$out"
log "building pulumi $PULUMI_VERSION with $go_v into $CACHE_BIN (first time only: ~4 minutes on 2 cores;" \
  "Go's caches grow by ~1.4 GB of modules and ~1.7 GB of build cache)"

# Go's -v/-x output is long: print a count with a timestamp every EVERY matching lines, drop the
# download chatter, and pass anything else (compiler errors) through verbatim.
progress() {
  local what=$1 every=$2 pattern=$3 n=0 line item
  while IFS= read -r line; do
    if [[ $line =~ $pattern ]]; then
      n=$((n + 1))
      if ((n % every == 0)); then
        item=${line#\# get }
        item=${item%%: 200*}
        printf '[%(%H:%M:%S)T]   %s: %d so far (%s)\n' -1 "$what" "$n" "${item#*://*/}"
      fi
    elif [[ $line != "# get "* && $line != "go: downloading "* ]]; then
      printf '%s\n' "$line"
    fi
  done
  printf '[%(%H:%M:%S)T]   %s: %d\n' -1 "$what" "$n"
}

log "step 1/5: downloading modules"
go mod download -x 2>&1 | progress "modules downloaded" 50 '\.zip: 200'

log "step 2/5: compiling pulumi (github.com/pulumi/pulumi/pkg/v3/cmd/pulumi)"
ldflags="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$PULUMI_VERSION"
go build -v -trimpath -ldflags "$ldflags" -o "$out/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi 2>&1 |
  progress "packages compiled" 200 '^[A-Za-z0-9._~/-]+$'

log "step 3/5: compiling pulumi-language-python"
# Prefer upstream's language host at the release commit. The Go proxy this project's machines use
# does not serve that module (no tags, every version refused): then our own host is built.
if go get "$LANGHOST_UPSTREAM@$PULUMI_COMMIT" >"$tmp/langhost.log" 2>&1 &&
  go build -trimpath -ldflags "$ldflags" -o "$out/pulumi-language-python" "$LANGHOST_UPSTREAM" \
    >>"$tmp/langhost.log" 2>&1; then
  langhost="upstream $LANGHOST_UPSTREAM@$PULUMI_COMMIT"
else
  why=$(grep -m1 -oE '[0-9]{3} [A-Z][A-Za-z ]+|not available|unknown revision|no such host' \
    "$tmp/langhost.log" || tail -n 1 "$tmp/langhost.log")
  log "  upstream host $LANGHOST_UPSTREAM@${PULUMI_COMMIT:0:12} not available from GOPROXY ($why)"
  log "  building fabric-stack's host instead (scripts/pulumi-wrapper/pulumi-language-python)"
  build_own_host "$out/pulumi-language-python"
  host_src_hash >"$tmp/pulumi-$PULUMI_VERSION/LANGHOST-SOURCE"
  langhost="fabric-stack host"
fi

log "step 4/5: copying the Python runtime scripts from the pulumi/sdk module"
sdk_dir=$(go list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)
if [ -z "$sdk_dir" ] || [ ! -d "$sdk_dir/python" ]; then
  die 1 "the pulumi/sdk module is not in the Go module cache ($sdk_dir)"
fi
cp "$sdk_dir/python/cmd/pulumi-language-python-exec" "$sdk_dir/python/dist/pulumi-resource-pulumi-python" "$out/"
# Older releases (3.90 did) also shipped a policy-pack launcher, pulumi-analyzer-policy-python;
# 3.260 has none: the engine runs Python policy packs through the language host (RunPlugin).
if [ -f "$sdk_dir/python/dist/pulumi-analyzer-policy-python" ]; then
  cp "$sdk_dir/python/dist/pulumi-analyzer-policy-python" "$out/"
fi
chmod 0755 "$out"/*

log "step 5/5: checking and installing into $ENGINE_DIR"
built=$(pulumi_version "$out")
[ "$built" = "v$PULUMI_VERSION" ] || die 1 "the built pulumi reports '$built', expected v$PULUMI_VERSION"
printf 'pulumi %s built %s with %s; pulumi-language-python: %s\n' "$PULUMI_VERSION" \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$go_v" "$langhost" >"$tmp/pulumi-$PULUMI_VERSION/BUILD-INFO"
rm -rf "$ENGINE_DIR" # an incomplete or wrong earlier install (cached_ok failed)
mv -T "$tmp/pulumi-$PULUMI_VERSION" "$ENGINE_DIR"
cd "$ROOT"
link_into_venv "$CACHE_BIN" "built now, language host: $langhost"
