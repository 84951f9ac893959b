#!/usr/bin/env bash
# Install the digital twin's Debian packages if any is missing; idempotent.
#
#   scripts/twin-deps.sh     ibsim-utils opensm infiniband-diags lldpd frr iproute2 iperf3
#
# The twin (fabric-stack twin, see docs/twin.md) runs these real daemons inside its own
# network namespaces and ibsim's socket; iperf3 is the real traffic `twin traffic` sends over
# the rail addresses. Debian would start lldpd and frr as system services on install (and iperf3's
# daemon if its debconf question were answered yes; noninteractive keeps its default, no): a
# policy-rc.d that answers 101 keeps invoke-rc.d from starting them (the twin starts its own,
# per namespace, and nothing else may run on the host).
set -euo pipefail

PACKAGES=(ibsim-utils opensm infiniband-diags lldpd frr iproute2 iperf3)

say() { printf 'twin-deps: %s\n' "$*" >&2; }

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
