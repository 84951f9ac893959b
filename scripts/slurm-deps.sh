#!/usr/bin/env bash
# Install Slurm's controller and client from Debian if missing; idempotent.
#
#   scripts/slurm-deps.sh     slurmctld slurm-client
#
# tests/integration/slurm/ starts a throw-away slurmctld on loopback with a generated
# slurm.conf (TopologyPlugin=topology/tree) and reads `scontrol show topology` back, to check
# that the rendered slurm/topology.conf loads in the real scheduler (see docs/render-targets.md).
# Debian would start slurmctld (and munge, a dependency) as system services on install: a
# policy-rc.d that answers 101 keeps invoke-rc.d from starting them (the test starts its own
# controller, with its own config, and nothing else may run on the host).
set -euo pipefail

PACKAGES=(slurmctld slurm-client)

say() { printf 'slurm-deps: %s\n' "$*" >&2; }

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" = 0 ]; then
  say "present: ${PACKAGES[*]}"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "error: missing ${missing[*]}; install them as root: sudo apt-get install ${missing[*]}"
  exit 2
fi
command -v apt-get >/dev/null 2>&1 || {
  say "error: missing ${missing[*]} and no apt-get on this machine"
  exit 2
}

say "installing ${missing[*]} with apt-get (services are not started)"
policy=/usr/sbin/policy-rc.d
added_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" # 101: invoke-rc.d must not start services
  chmod 0755 "$policy"
  added_policy=1
fi
log=$(mktemp)
rc=0
{
  apt-get -o DPkg::Lock::Timeout=600 update -qq || true
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends -o Dpkg::Options::=--force-confdef \
    -o Dpkg::Options::=--force-confold "${missing[@]}"
} >"$log" 2>&1 || rc=$?
[ -z "$added_policy" ] || rm -f "$policy"
if [ "$rc" != 0 ]; then
  tail -n 30 "$log" >&2
  rm -f "$log"
  say "error: apt-get install ${missing[*]} failed (exit $rc)"
  exit 1
fi
rm -f "$log"
say "installed: ${missing[*]}"
