#!/usr/bin/env bash
# An agent in plain shell (curl, jq, openssl): sign a proposal, submit it, wait
# for the decision and its receipt, check the receipt, run the command only on a
# verified allow, and record a refusal on the log otherwise. docs/http.md explains
# each step. Usage: examples/curl-agent.sh 'ls -la /srv/app'
set -euo pipefail
COMMAND=${1:-ls -la /srv/app}
HOME_DIR=${LEDGER_HOME:-.ledger}
API=${LEDGER_API:-http://127.0.0.1:8787}
KEY=${LEDGER_KEY:-$HOME_DIR/keys/agent-build-bot.key}
LEDGER=${LEDGER_CLI:-npx ledger}
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT

PRINCIPAL=$(jq -r .principal "$KEY"); KEY_ID=$(jq -r .keyId "$KEY")
# The 32-byte seed as a PKCS#8 Ed25519 private key (RFC 8410), for openssl.
printf '302e020100300506032b657004220420%s' "$(jq -r .seed "$KEY")" | xxd -r -p | openssl pkey -inform DER -out "$WORK/key.pem"

# sign TYPE BODY_JSON: prints the envelope. Canonical bytes: jq -cS equals RFC 8785 for
# ASCII strings without control characters and integer numbers, which is all this script writes.
sign() {
  local ms issued rand id
  ms=$(date +%s%3N)
  issued=$(date -u -d "@$((ms / 1000)).$(printf %03d $((ms % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ)
  rand=$(openssl rand -hex 10); ms=$(printf %012x "$ms")
  id="${ms:0:8}-${ms:8:4}-7${rand:0:3}-$(printf %x $((0x8 | (0x${rand:3:1} & 0x3))))${rand:4:3}-${rand:7:12}"
  jq -cS -n --arg id "$id" --arg type "$1" --arg at "$issued" --arg p "$PRINCIPAL" --arg k "$KEY_ID" --argjson body "$2" \
    '{v: 1, id: $id, type: $type, issuedAt: $at, author: {principal: $p, keyId: $k}, body: $body}' > "$WORK/statement.json"
  { printf 'agent-ledger/statement/v1\n'; tr -d '\n' < "$WORK/statement.json"; } > "$WORK/message.bin"
  local sig; sig=$(openssl pkeyutl -sign -rawin -inkey "$WORK/key.pem" -in "$WORK/message.bin" | base64 -w0)
  jq -c --arg k "$KEY_ID" --arg s "$sig" '{statement: ., signatures: [{keyId: $k, sig: $s}]}' "$WORK/statement.json"
}

# The installation the reads are for (aud): the statement hash of the genesis in the pinned trust
# document (`curl -s $API/v1/installation | jq -r .installation` when nothing is pinned).
AUD=$(jq -cS .genesis.statement "$HOME_DIR/trust.json" | tr -d '\n' | sha256sum | cut -c1-64)

# get PATH: a signed read (docs/http.md, "Signed reads"). The key signs
# "agent-ledger/read/v2\nGET\nAUD\nPATH\nTIMESTAMP_MS\nNONCE\n" (no body); the API answers
# an agent only about its own proposals, decisions and receipts.
get() {
  local ts nonce sig
  ts=$(date +%s%3N); nonce=$(openssl rand -hex 16)
  printf 'agent-ledger/read/v2\nGET\n%s\n%s\n%s\n%s\n' "$AUD" "$1" "$ts" "$nonce" > "$WORK/read.bin"
  sig=$(openssl pkeyutl -sign -rawin -inkey "$WORK/key.pem" -in "$WORK/read.bin" | base64 -w0)
  curl -sf ${LEDGER_API_CA:+--cacert "$LEDGER_API_CA"} -H "authorization: Ledger-Ed25519 keyId=$KEY_ID,aud=$AUD,ts=$ts,nonce=$nonce,sig=$sig" "$API$1"
}

BODY=$(jq -cn --arg p "$PRINCIPAL" --arg c "$COMMAND" '{agentId: $p, tool: "shell", actionType: "shell.exec", targetResource: "host/build-01",
  recipient: "none", scope: "workspace", args: {command: $c}, query: "run a command", labels: [], channel: "api", context: {}}')
HASH=$(sign proposal.submitted "$BODY" | curl -sf ${LEDGER_API_CA:+--cacert "$LEDGER_API_CA"} -H 'content-type: application/json' --data-binary @- "$API/v1/statements" | jq -r .statementHash)
[ "$HASH" = "$(tr -d '\n' < "$WORK/statement.json" | sha256sum | cut -c1-64)" ] || { echo "the API acknowledged another statement" >&2; exit 2; }

# refuse CODE DETAIL [EVIDENCE_FILE]: the executor's refusal, signed by this agent and recorded on the log; nothing runs.
refuse() {
  local evidence=null
  [ -n "${3:-}" ] && evidence=$(jq -cS . "$3" | tr -d '\n' | sha256sum | cut -c1-64 | jq -R .)
  REFUSAL=$(jq -cn --arg p "$PRINCIPAL" --arg h "$HASH" --arg c "$1" --arg d "$(tr -cd '[:print:]' <<< "$2")" --argjson e "$evidence" \
    '{agentId: $p, proposal: $h, code: $c, refusal: "REFUSED: \($c): the executor refused the decision: \($d)", claimed: null, evidence: $e}')
  sign execution.refused "$REFUSAL" | curl -sf ${LEDGER_API_CA:+--cacert "$LEDGER_API_CA"} -H 'content-type: application/json' --data-binary @- "$API/v1/statements" > /dev/null
  echo "refused by the executor: $1" >&2; exit 1
}

# Reads are signed for the pinned installation: an API of another one could never answer them with a decision that verifies.
SERVED=$(curl -sf ${LEDGER_API_CA:+--cacert "$LEDGER_API_CA"} "$API/v1/installation" | jq -r .installation)
[ "$SERVED" = "$AUD" ] || refuse INTEGRITY_FAILURE "the API is of another log: it serves installation ${SERVED:0:16}, the pinned trust is of ${AUD:0:16}"

# The final decision (long-poll), then its receipt (waits for the covering checkpoint).
for try in 1 2 3 4; do  # up to 100 s; then nothing runs
  get "/v1/decisions/$HASH?waitMs=25000" > "$WORK/decision.json" && jq -e .entry "$WORK/decision.json" > /dev/null && break
  [ "$try" = 4 ] && { echo "no decision: not running it" >&2; exit 2; }
done
POSITION=$(jq -r '"\(.entry.partition)/\(.entry.index)"' "$WORK/decision.json")
get "/v1/receipts/$POSITION?waitMs=10000" > "$WORK/receipt.json"

if VERDICT=$($LEDGER verify-receipt "$WORK/receipt.json" --trust "$HOME_DIR/trust.json" --proposal "$HASH" --agent "$PRINCIPAL" --json); then
  OUTCOME=$(jq -r .entry.envelope.statement.body.outcome "$WORK/receipt.json")
  if [ "$OUTCOME" = allow ]; then echo "allow ($POSITION): running"; sh -c "$COMMAND"; else echo "$OUTCOME ($POSITION): refused, $(jq -r .entry.envelope.statement.body.code "$WORK/receipt.json"): not run"; fi
else
  refuse "$(jq -r .code <<< "$VERDICT")" "$(jq -r .message <<< "$VERDICT")" "$WORK/receipt.json"
fi
