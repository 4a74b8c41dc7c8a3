#!/usr/bin/env bash
# The main job end to end: bring up Kafka (KRaft, from Maven Central jars) and
# the ledger services if they are not running, drive a realistic stream of
# agent proposals through the live system (allowed, blocked, approved,
# denied, timed out), print the outcomes by reason code, export the committed
# log and verify it offline against the pinned trust root.
#   DEMO_PROPOSALS   proposals to drive (default 40)
#   LEDGER_HOME      installation directory (default .ledger)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
home="${LEDGER_HOME:-$root/.ledger}"
export LEDGER_HOME="$home"
proposals="${DEMO_PROPOSALS:-40}"
# Short confirmation deadlines so that timeouts happen within the demo.
export LEDGER_DEADLINES_MS="${LEDGER_DEADLINES_MS:-2:5000,3:4000,4:3000}"
ledger() { node "$root/services/ledger/bin/ledger.js" "$@"; }

[ -f services/ledger/dist/src/main.js ] || npm run build
bash scripts/postgres.sh start
bash scripts/kafka.sh start
ledger init
api_port="$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).apiPort)' "$home/config.json")"
started=""
ready_url="http://127.0.0.1:${LEDGER_API_PORT:-$api_port}/readyz"
if ready="$(curl -fsS "$ready_url" 2>/dev/null)"; then
  # An API is up: it must be this installation's (same trust root), not another's on the same port.
  if ! node -e 'const [r, t] = [JSON.parse(process.argv[1]), JSON.parse(require("fs").readFileSync(process.argv[2]))]; process.exit(JSON.stringify(r.rootKeys) === JSON.stringify(t.rootKeys) ? 0 : 1)' "$ready" "$home/trust-root.json"; then
    echo "demo: the API on port ${LEDGER_API_PORT:-$api_port} serves another installation (trust root differs from $home/trust-root.json); stop it or set LEDGER_API_PORT" >&2
    exit 1
  fi
else
  echo "== starting ledger serve --target all (log: $home/serve.log)"
  # node itself in the background (not the shell function), so $! is the process to stop.
  node "$root/services/ledger/bin/ledger.js" serve --target all >"$home/serve.log" 2>&1 &
  echo $! >"$home/serve.pid"
  started=1
  for _ in $(seq 1 240); do
    curl -fsS "http://127.0.0.1:${LEDGER_API_PORT:-$api_port}/readyz" >/dev/null 2>&1 && break
    kill -0 "$(cat "$home/serve.pid")" 2>/dev/null || { echo "ledger serve exited:"; tail -40 "$home/serve.log"; exit 1; }
    sleep 0.5
  done
fi
stop_serve() {
  if [ -n "$started" ] && [ -f "$home/serve.pid" ]; then
    kill "$(cat "$home/serve.pid")" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$(cat "$home/serve.pid")" 2>/dev/null || break; sleep 0.25; done
    rm -f "$home/serve.pid"
  fi
}
trap stop_serve EXIT
echo "== driving $proposals proposals through the live ledger"
ledger drive --proposals "$proposals"
sleep 2 # one checkpoint interval, so the export covers the newest entries
echo "== exporting the committed log"
ledger export --out "$home/export.ndjson"
echo "== verifying the export offline"
ledger verify-chain "$home/export.ndjson" --trust-root "$home/trust-root.json"
echo "== what the log holds, by statement type (screenings, escalations, grant writes, signals...)"
node -e '
const counts = {};
for (const line of require("fs").readFileSync(process.argv[1], "utf8").split("\n")) {
  const parsed = line === "" ? null : JSON.parse(line);
  if (parsed?.kind !== "entry") continue;
  const s = parsed.envelope.statement;
  const detail = s.type === "screening.verdict" ? `:${s.body.verdict}` : s.type === "escalation.raised" ? `:${s.body.level}` : s.type === "human.response" ? `:${s.body.assurance}` : "";
  counts[s.type + detail] = (counts[s.type + detail] ?? 0) + 1;
}
for (const [type, n] of Object.entries(counts).sort()) console.log(`  ${type.padEnd(32)} ${n}`);
' "$home/export.ndjson"
