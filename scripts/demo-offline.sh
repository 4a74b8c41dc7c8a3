#!/usr/bin/env bash
# Offline demo: synthesize a realistic signed ledger (no Kafka, no Postgres),
# then verify it as an auditor would, with nothing but the bundle and the
# pinned trust root. DEMO_EVENTS sets the size (default 100000).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
events="${DEMO_EVENTS:-100000}"
out="$root/.ledger/demo"
mkdir -p "$out"
chmod 700 "$root/.ledger"
[ -f services/ledger/dist/src/main.js ] || npm run build
npx ledger demo --events "$events" --out "$out/bundle.ndjson" --trust-root-out "$out/trust-root.json"
npx ledger verify-chain "$out/bundle.ndjson" --trust-root "$out/trust-root.json"
