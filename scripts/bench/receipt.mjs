#!/usr/bin/env node
// What checking a receipt costs an executor, on the real broker and Postgres,
// each beside baselines measured in the same run (compare ratios):
//  - a raw API round trip (GET /v1/checkpoints/latest: HTTP, no signing, no log);
//  - proposal -> signed decision (proposeAndWait: the decision's signature checked, no receipt);
//  - proposal -> decision with its receipt verified offline (decide(): what guard() does before the tool runs),
// one call at a time, alternating, under the installation's default checkpoint
// interval and under a short one: the receipt waits for the checkpoint that
// covers the decision, so the interval is most of the added latency.
// Needs `bash scripts/kafka.sh start` and Postgres. BENCH_RECEIPTS (calls of each kind, default 40),
// BENCH_SHORT_INTERVAL_MS (default 100).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LedgerClient, fetchTrust, signedFetch, verifyReceipt } from '@agent-ledger/client';
import { LedgerHome, initHome, serve } from '@agent-ledger/ledger';

const CALLS = Number(process.env.BENCH_RECEIPTS ?? 40);
const SHORT = Number(process.env.BENCH_SHORT_INTERVAL_MS ?? 100);
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const fmt = (xs) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;

function freshHome(intervalMs) {
  const id = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-'));
  initHome(dir, { origin: `ledger.bench/${id}`, eventPartitions: 2, topicPrefix: `b${id}`, pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_b${id}`, apiPort: 0 });
  if (intervalMs !== undefined) {
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), `${JSON.stringify({ ...config, checkpointIntervalMs: intervalMs }, null, 2)}\n`);
  }
  return LedgerHome.open(dir);
}

const operation = (i) => ({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: 'ls -la', i }, query: 'bench', labels: [], channel: 'api', context: { nonce: randomBytes(4).toString('hex') } });

async function measure(intervalMs) {
  const home = freshHome(intervalMs);
  const running = await serve(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']);
  let trust;
  for (let tries = 0; trust === undefined; tries++) {
    trust = await fetchTrust(running.apiUrl, { trustRoot: home.trustRoot }).catch((err) => { if (tries > 100) throw err; return undefined; });
    if (trust === undefined) await new Promise((r) => setTimeout(r, 100));
  }
  const client = new LedgerClient({ baseUrl: running.apiUrl, signer: home.key('agent-build-bot'), trust });
  for (let i = 0; i < 5; i++) {
    await client.proposeAndWait(operation(-1 - i));
    await client.decide(operation(-1 - i));
  }
  // A plain read is a signed one too (the API answers reads to registered keys only).
  const signedRead = signedFetch(home.key('agent-build-bot'));
  const raw = [];
  const signed = [];
  const receipted = [];
  const offline = [];
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    const answer = await signedRead(`${running.apiUrl}/v1/checkpoints/latest?partition=0`);
    await answer.json();
    raw.push(performance.now() - t);
    t = performance.now();
    const plain = await client.proposeAndWait(operation(i));
    signed.push(performance.now() - t);
    if (plain.outcome !== 'allow') throw new Error(`bench operation not allowed: ${plain.outcome}`);
    t = performance.now();
    const checked = await client.decide(operation(i));
    receipted.push(performance.now() - t);
    if (checked.outcome !== 'allow') throw new Error(`bench operation not allowed: ${checked.outcome}`);
    t = performance.now();
    const verdict = verifyReceipt(checked.receipt, trust, { proposalHash: checked.proposal, agentId: client.principal });
    offline.push(performance.now() - t);
    if (!verdict.ok) throw new Error(`receipt did not verify: ${verdict.code}`);
  }
  await running.stop();
  const label = `checkpoint interval ${home.config.checkpointIntervalMs} ms`;
  console.log(`${label}: raw API round trip ${fmt(raw)}   proposal -> signed decision ${fmt(signed)}   proposal -> decision + verified receipt ${fmt(receipted)}`);
  console.log(`${label}: receipt vs raw API p50 ratio ${(percentile(receipted, 50) / percentile(raw, 50)).toFixed(1)}x   receipt vs signed decision p50 ratio ${(percentile(receipted, 50) / percentile(signed, 50)).toFixed(2)}x (+${(percentile(receipted, 50) - percentile(signed, 50)).toFixed(1)} ms for the covering checkpoint and the proof)   offline verifyReceipt ${fmt(offline)}`);
}

await measure(undefined);
await measure(SHORT);
process.exit(0);
