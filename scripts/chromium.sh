#!/usr/bin/env bash
# Makes sure Debian's chromium is installed at /usr/bin/chromium (the browser
# the end-to-end tests drive with playwright-core; no browser is downloaded by
# playwright). Idempotent: does nothing but print the version when present.
set -euo pipefail
CHROMIUM=/usr/bin/chromium
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "== installing Debian's chromium"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y --no-install-recommends chromium
fi
"$CHROMIUM" --version
