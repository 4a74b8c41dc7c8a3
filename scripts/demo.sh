#!/usr/bin/env bash
# The main job end to end: bring up the ledger if it is not running, drive a
# realistic stream of agent proposals through the live system (allowed,
# blocked, approved, denied, timed out), print the outcomes by reason code,
# export the committed log and verify it offline against the pinned trust root.
#
#   bash scripts/demo.sh           embedded (the default, `npm run demo`): `ledger dev`, one Node
#                                  process on an embedded log and an embedded Postgres (PGlite)
#                                  under $LEDGER_HOME; nothing to install beyond Node
#   bash scripts/demo.sh --kafka   Kafka and PostgreSQL (`npm run demo:kafka`): a single-node KRaft
#                                  broker from Maven Central jars (scripts/kafka.sh; a broker that
#                                  already answers on KAFKA_PORT is used), Postgres on 127.0.0.1:5432
#                                  (scripts/postgres.sh), and `ledger serve --target all`
#
#   DEMO_PROPOSALS         proposals to drive (default 40)
#   LEDGER_HOME            installation directory (default .ledger embedded, .ledger-kafka on Kafka)
#   LEDGER_API_PORT        API port (default: the installation's, 8787)
#   KAFKA_PORT             --kafka: the broker's client port (default 9092); LEDGER_KAFKA_BROKERS follows it
#   KAFKA_CONTROLLER_PORT  --kafka: the KRaft controller port of a broker started here (default 9093)
#   LEDGER_KAFKA_BROKERS   --kafka: brokers the ledger uses (default 127.0.0.1:$KAFKA_PORT)
#   LEDGER_PG_URL          --kafka: the Postgres URL (default: the installation's, on 127.0.0.1:5432)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
mode=embedded
case "${1:-}" in
  "") ;;
  --kafka) mode=kafka ;;
  *) echo "usage: scripts/demo.sh [--kafka]" >&2; exit 2 ;;
esac
if [ "$mode" = kafka ]; then
  home="${LEDGER_HOME:-$root/.ledger-kafka}"
  if [ -n "${KAFKA_PORT:-}" ] && [ -z "${LEDGER_KAFKA_BROKERS:-}" ]; then export LEDGER_KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT"; fi
else
  home="${LEDGER_HOME:-$root/.ledger}"
fi
export LEDGER_HOME="$home"
proposals="${DEMO_PROPOSALS:-40}"
# Short confirmation deadlines so that timeouts happen within the demo.
export LEDGER_DEADLINES_MS="${LEDGER_DEADLINES_MS:-2:5000,3:4000,4:3000}"
ledger() { node "$root/services/ledger/bin/ledger.js" "$@"; }
storage_of() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).storage ?? "kafka")' "$home/config.json"; }

[ -f services/ledger/dist/src/main.js ] || npm run build
if [ "$mode" = kafka ]; then
  bash scripts/postgres.sh start
  bash scripts/kafka.sh start
  ledger init
  if [ "$(storage_of)" != kafka ]; then
    echo "demo: $home keeps its log embedded (ledger dev); run npm run demo, or set LEDGER_HOME to another directory" >&2
    exit 1
  fi
  start=(serve --target all)
else
  if [ -f "$home/config.json" ] && [ "$(storage_of)" != embedded ]; then
    echo "demo: $home keeps its log on Kafka and Postgres; run npm run demo:kafka, or set LEDGER_HOME to another directory" >&2
    exit 1
  fi
  start=(dev)
fi
api_port_of() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).apiPort)' "$home/config.json"; }
started=""
if [ -f "$home/config.json" ]; then port="${LEDGER_API_PORT:-$(api_port_of)}"; else port="${LEDGER_API_PORT:-8787}"; fi
ready_url="http://127.0.0.1:$port/readyz"
if [ -f "$home/config.json" ] && ready="$(curl -fsS "$ready_url" 2>/dev/null)"; then
  # An API is up: it must be this installation's (same trust root), not another's on the same port.
  if ! node -e 'const [r, t] = [JSON.parse(process.argv[1]), JSON.parse(require("fs").readFileSync(process.argv[2]))]; process.exit(JSON.stringify(r.rootKeys) === JSON.stringify(t.rootKeys) ? 0 : 1)' "$ready" "$home/trust-root.json"; then
    echo "demo: the API on port $port serves another installation (trust root differs from $home/trust-root.json); stop it or set LEDGER_API_PORT" >&2
    exit 1
  fi
else
  mkdir -p "$home"
  echo "== starting ledger ${start[*]} (log: $home/serve.log)"
  # node itself in the background (not the shell function), so $! is the process to stop.
  node "$root/services/ledger/bin/ledger.js" "${start[@]}" >"$home/serve.log" 2>&1 &
  echo $! >"$home/serve.pid"
  started=1
  for _ in $(seq 1 240); do
    curl -fsS "$ready_url" >/dev/null 2>&1 && break
    kill -0 "$(cat "$home/serve.pid")" 2>/dev/null || { echo "ledger ${start[*]} exited:"; tail -40 "$home/serve.log"; exit 1; }
    sleep 0.5
  done
  curl -fsS "$ready_url" >/dev/null 2>&1 || { echo "ledger ${start[*]} did not become ready:"; tail -40 "$home/serve.log"; exit 1; }
fi
stop_serve() {
  if [ -n "$started" ] && [ -f "$home/serve.pid" ]; then
    kill "$(cat "$home/serve.pid")" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$(cat "$home/serve.pid")" 2>/dev/null || break; sleep 0.25; done
    rm -f "$home/serve.pid"
  fi
}
trap stop_serve EXIT
echo "== driving $proposals proposals through the live ledger ($mode)"
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
