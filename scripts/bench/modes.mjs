#!/usr/bin/env node
// The two ways to run the ledger side by side, in one run (compare ratios):
//  - baseline: one in-process decide() of the pure gate plus signing the decision statement (p50, µs);
//  - per mode (embedded: `ledger dev`'s embedded log and PGlite; Kafka and PostgreSQL, when both answer):
//    proposal -> verified decision latency p50/p99 through the HTTP API at a fixed offered rate, and
//    sequencer ingest (signed proposals admitted and chained per second, intake loaded in batches).
// BENCH_RATE (proposals/s, default 20), BENCH_SECONDS (default 10), BENCH_INGEST (default 3000),
// BENCH_MODES (default "embedded,kafka").
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as core from '@agent-ledger/core';
import { decide, initialState } from '@agent-ledger/gate';
import { LedgerClient } from '@agent-ledger/client';
import { initHome, newSigner, openEmbeddedStorage, serve, topicNames } from '@agent-ledger/ledger';

const RATE = Number(process.env.BENCH_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const INGEST = Number(process.env.BENCH_INGEST ?? 3000);
const MODES = (process.env.BENCH_MODES ?? 'embedded,kafka').split(',');
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
process.env.LEDGER_SIGNATURE_WORKERS ??= '1';

const body = (i, label) => ({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: `ls -la /srv/app/${label}-${i}` }, query: 'bench', labels: [], channel: 'api', context: {} });

// Baseline: decide() in process and sign its decision statement.
const baseline = (() => {
  const signer = newSigner('service:gate');
  const state = initialState();
  const times = [];
  for (let i = 0; i < 3000; i++) {
    const t = performance.now();
    const decision = decide({ now: Date.now(), channel: 'api', context: {}, proposal: { agentId: 'agent:build-bot', ...body(i, 'base') } }, state);
    const statement = core.createStatement('decision.recorded', { agentId: 'agent:build-bot', proposal: 'a'.repeat(64), outcome: decision.outcome, code: decision.code, tier: decision.tier, risk: decision.risk, authorityIndex: 1, grantId: null, grantEntry: null, rulesVersion: 2 }, signer);
    core.signStatement(statement, [signer], core.nodeEd25519);
    if (i >= 500) times.push(performance.now() - t);
  }
  return percentile(times, 50);
})();
console.log(`baseline: one in-process decide() + signing its decision: p50 ${(baseline * 1000).toFixed(0)} µs`);

function kafkaUp() {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 9092 });
    const done = (up) => { socket.destroy(); resolve(up); };
    socket.setTimeout(2000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(Buffer.from('00000017000300046b666b3100086b61666b612e7368ffffffff00', 'hex')));
    socket.on('data', (chunk) => done(chunk.length >= 8 && chunk.readUInt32BE(4) === 0x6b666b31));
  });
}

async function install(mode) {
  const id = randomBytes(4).toString('hex');
  const dir = mkdtempSync(join(tmpdir(), `ledger-bench-${mode}-`));
  const home = initHome(dir, { origin: `ledger.bench/${id}`, eventPartitions: 2, topicPrefix: `m${id}`, pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_m${id}`, apiPort: 0, ...(mode === 'embedded' ? { storage: 'embedded' } : {}) });
  const start = async (roles) => (mode === 'embedded' ? serve(home, roles, { storage: await openEmbeddedStorage(home) }) : serve(home, roles));
  return { home, dir, start };
}

const results = [];
for (const mode of MODES) {
  if (mode === 'kafka' && !(await kafkaUp())) {
    console.log('kafka: no broker answers on 127.0.0.1:9092: Kafka mode not measured');
    continue;
  }
  // Latency: every role, proposals through the API at a fixed rate.
  const { home, dir, start } = await install(mode);
  const running = await start(['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']);
  const client = new LedgerClient({ baseUrl: running.apiUrl, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
  for (let i = 0; i < 10; i++) await client.proposeAndWait(body(i, 'warm'), 60_000);
  const latencies = [];
  const waits = [];
  const n = RATE * SECONDS;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const delay = t0 + (i * 1000) / RATE - performance.now();
    if (delay > 0) await sleep(delay);
    const sent = performance.now();
    waits.push(client.proposeAndWait(body(i, 'lat'), 60_000).then((d) => { if (d.outcome !== 'allow') throw new Error(d.outcome); latencies.push(performance.now() - sent); }));
  }
  await Promise.all(waits);
  await running.stop();

  // Ingest: signed proposals loaded into intake while only the sequencer runs; entries chained per second.
  const ingest = await install(mode);
  const seq = await ingest.start(['sequencer']);
  const topics = topicNames(ingest.home.config.topicPrefix);
  const agent = ingest.home.key('agent-build-bot');
  const p = core.eventPartitionOf(agent.principal, ingest.home.config.eventPartitions);
  const envelopes = Array.from({ length: INGEST }, (_, i) => core.signStatement(core.createStatement('proposal.submitted', { agentId: agent.principal, ...body(i, 'ingest') }, agent), [agent], core.nodeEd25519));
  const count = async () => { let k = 0; for await (const r of seq.bus.readRange(topics.events, p - 1, '0')) if (r) k++; return k; };
  const before = await count();
  const ti = performance.now();
  for (let i = 0; i < envelopes.length; i += 500) await seq.bus.publish(envelopes.slice(i, i + 500).map((e) => ({ topic: topics.intake, partition: p, key: agent.principal, value: JSON.stringify(e) })));
  while ((await count()) - before < INGEST) await sleep(20);
  const ingestRate = INGEST / ((performance.now() - ti) / 1000);
  await seq.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(ingest.dir, { recursive: true, force: true });
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  results.push({ mode, p50, p99, ingestRate });
  console.log(`${mode.padEnd(8)} proposal -> verified decision at ${RATE}/s: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${n} proposals)   ingest ${ingestRate.toFixed(0)} proposals/s (${INGEST})   p50 / baseline ${(p50 / baseline).toFixed(1)}x`);
}
const embedded = results.find((r) => r.mode === 'embedded');
const kafka = results.find((r) => r.mode === 'kafka');
if (embedded !== undefined && kafka !== undefined) {
  console.log(`embedded / kafka: p50 ${(embedded.p50 / kafka.p50).toFixed(2)}x, p99 ${(embedded.p99 / kafka.p99).toFixed(2)}x, ingest ${(embedded.ingestRate / kafka.ingestRate).toFixed(2)}x`);
}
process.exit(0);
