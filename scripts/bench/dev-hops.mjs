#!/usr/bin/env node
// Where one proposal's time goes in `ledger dev` (embedded log and PGlite, every role in one process):
// proposals one at a time (closed loop, BENCH_GAP_MS apart, default 100), each followed through the log by a
// reader of its own on the same embedded log, which notes when each hop's record became readable:
//   POST answered -> proposal on intake -> proposal entry on events -> decision statement on intake ->
//   decision entry on events -> projector's NOTIFY (PGlite) -> checkpoint covering the decision entry ->
//   client has the decision and its receipt (what proposeAndWait returns, verified).
// Prints the median and p99 of each hop's time since the proposal was sent, and the decide()+sign baseline.
// BENCH_PROPOSALS (default 60).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { LedgerClient } from '@agent-ledger/client';
import { initHome, openEmbeddedStorage, serve, topicNames } from '@agent-ledger/ledger';
import { decideAndSignP50 } from './decide-baseline.mjs';
import { TRAFFIC, grantWhenAsked } from './granted.mjs';

const N = Number(process.env.BENCH_PROPOSALS ?? 60);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 100);
process.env.LEDGER_SIGNATURE_WORKERS ??= '1';
process.env.LEDGER_LOG_LEVEL ??= 'warn';
// One agent drives every rate here: its statement budget (100/s by default, a per-agent guard) would cap the curve, not the ledger.
process.env.LEDGER_API_RATE_LIMIT ??= '1000000/1000000';
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const body = (i) => ({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: `ls -la /srv/app/hop-${i}` }, query: 'bench', labels: [], channel: 'api', context: {} });

const baseline = decideAndSignP50(body);

const dir = mkdtempSync(join(tmpdir(), 'ledger-hops-'));
const id = randomBytes(4).toString('hex');
const home = initHome(dir, { origin: `ledger.bench/${id}`, eventPartitions: 2, topicPrefix: `h${id}`, pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_h${id}`, apiPort: 0, storage: 'embedded' });
const storage = await openEmbeddedStorage(home);
const running = await serve(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem'], { storage });
const topics = topicNames(home.config.topicPrefix);
const client = new LedgerClient({ baseUrl: running.apiUrl, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
await grantWhenAsked(home, running.apiUrl, { agentId: home.key('agent-build-bot').principal, actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace' }, (i) => client.proposeAndWait(body(`grant${i}`), 60_000));
for (let i = 0; i < 5; i++) await client.proposeAndWait(body(`warm${i}`), 60_000);

// The current proposal's trace: hop name -> ms since sent.
let current = null;
/** Newest checkpoint size read, by ledger partition. */
const sealed = new Map();
const mark = (hop) => { if (current !== null && current.hops[hop] === undefined) current.hops[hop] = performance.now() - current.sent; };
const sub = await running.bus.subscribe({
  groupId: `hops-${id}`,
  topics: [topics.intake, topics.events, topics.checkpoints],
  fromBeginning: false,
  commitOffsets: false,
  onBatch: async (batch) => {
    if (current === null) return;
    for (const r of batch.records) {
      const text = Buffer.from(r.value).toString('utf8');
      if (batch.topic === topics.intake) {
        if (text.includes(current.label)) mark('intake: proposal');
        else if (current.hash !== undefined && text.includes(current.hash)) mark('intake: decision');
      } else if (batch.topic === topics.events) {
        if (text.includes(current.label)) mark('events: proposal entry');
        else if (current.hash !== undefined && text.includes(current.hash) && text.includes('decision.recorded')) {
          mark('events: decision entry');
          const entry = JSON.parse(text);
          current.decisionAt = { partition: batch.partition + 1, index: entry.index };
          // A checkpoint committed with the decision may have been read first (another topic's reader).
          if ((sealed.get(current.decisionAt.partition) ?? 0) > entry.index) mark('checkpoint covers decision');
        }
      } else if (batch.topic === topics.checkpoints) {
        const cp = JSON.parse(text);
        sealed.set(cp.partition, Math.max(sealed.get(cp.partition) ?? 0, cp.size));
        if (current.decisionAt !== undefined && cp.partition === current.decisionAt.partition && cp.size > current.decisionAt.index) mark('checkpoint covers decision');
      }
    }
  },
});
const unlisten = await storage.pool.listen('ledger_decisions', (payload) => { if (current?.hash !== undefined && payload.includes(current.hash.slice(0, 16))) mark('projector NOTIFY'); });

const traces = [];
for (let i = 0; i < N; i++) {
  current = { label: `hop-${i}`, sent: performance.now(), hops: {} };
  const { statementHash } = await client.propose(body(i));
  current.hash = statementHash;
  mark('POST answered');
  await client.fetchDecisionReceipt(statementHash, 60_000);
  mark('client: decision + receipt');
  traces.push(current.hops);
  current = null;
  await sleep(GAP_MS);
}
await unlisten();
await sub.stop();
const order = ['intake: proposal', 'POST answered', 'events: proposal entry', 'intake: decision', 'events: decision entry', 'projector NOTIFY', 'checkpoint covers decision', 'client: decision + receipt'];
console.log(`baseline: one in-process decide() + signing its decision: p50 ${(baseline * 1000).toFixed(0)} µs`);
console.log(`ledger dev hop trace, ${N} proposals one at a time, ${GAP_MS} ms apart (BENCH_TRAFFIC=${TRAFFIC}, LEDGER_INLINE_DECISIONS=${process.env.LEDGER_INLINE_DECISIONS ?? 'on'}: ${running.sequencers.reduce((n, s) => n + s.counters.inlineDecisions, 0)} first decisions chained with their proposal): ms since the proposal was sent (p50 / p99)`);
let prev = 0;
for (const hop of order) {
  const xs = traces.map((t) => t[hop]).filter((x) => x !== undefined);
  if (xs.length === 0) { console.log(`  ${hop.padEnd(28)} not seen`); continue; }
  const p50 = percentile(xs, 50);
  console.log(`  ${hop.padEnd(28)} ${p50.toFixed(1).padStart(7)} / ${percentile(xs, 99).toFixed(1).padStart(7)} ms   (+${(p50 - prev).toFixed(1)} ms p50 after the hop above; seen ${xs.length}/${N})`);
  prev = p50;
}
await running.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
