#!/usr/bin/env bash
# Install the real validators `make validate` runs (Debian packages) if any is missing; idempotent.
#
#   scripts/validate-deps.sh     frr frr-pythontools netplan.io libyang2 libyang2-tools opensm ibsim-utils iproute2
#                                shellcheck
#
# vtysh --dryrun and frr-reload.py --test judge the FRR files, netplan generate the netplan
# files, libyang (yanglint) the SONiC config_db.json against SONiC's YANG models, opensm the
# OpenSM configs and partitions (opensm -o on a two-node ibsim subnet: ibsim-utils); the host
# scripts run in a network namespace (iproute2); shellcheck (with sh -n) judges the RoCE NIC
# QoS scripts, whose tools (mlnx_qos, cma_roce_tos) need a ConnectX.
# Debian would start frr as a system service on install: a policy-rc.d that answers 101
# keeps invoke-rc.d from starting it.
set -euo pipefail

PACKAGES=(frr frr-pythontools netplan.io libyang2 libyang2-tools opensm ibsim-utils iproute2
  shellcheck)

say() { printf 'validate-deps: %s\n' "$*" >&2; }

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
