#!/usr/bin/env bash
# Makes sure promtool (Debian's prometheus package) is installed: the metrics
# test runs `promtool check metrics` on a live /metrics. Idempotent: does
# nothing but print the version when present.
set -euo pipefail
if ! command -v promtool >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "== installing Debian's prometheus (for promtool)"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y --no-install-recommends prometheus
fi
promtool --version | head -1
