#!/usr/bin/env bash
# Install Debian's chromium (headless --print-to-pdf renders the design report's PDF); idempotent.
#
#   scripts/pdf-deps.sh
#
# `fabric-stack render report --pdf` prints report/design-report.html to design-report.pdf with
# it; CI runs this first so the PDF test never skips there.
set -euo pipefail

say() { printf 'pdf-deps: %s\n' "$*" >&2; }

if command -v chromium >/dev/null 2>&1; then
  say "present: $(chromium --version 2>/dev/null || echo chromium)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "error: chromium is missing; install it as root: sudo apt-get install chromium"
  exit 2
fi
command -v apt-get >/dev/null 2>&1 || {
  say "error: chromium is missing and there is no apt-get on this machine"
  exit 2
}
say "installing chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends chromium >/dev/null || {
  apt-get update >/dev/null
  apt-get install -y --no-install-recommends chromium >/dev/null
}
say "installed: $(chromium --version 2>/dev/null || echo chromium)"
