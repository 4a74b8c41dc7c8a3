#!/usr/bin/env node
// The two ways to run the ledger side by side, in one run (compare ratios):
//  - baselines: one in-process decide() of the pure gate plus signing the decision statement (p50, µs), and
//    a raw kafkajs produce-to-consume round trip on the same broker at each offered rate (when Kafka answers);
//  - per mode (embedded: `ledger dev`'s embedded log and PGlite; Kafka and PostgreSQL, when both answer):
//    the load curve, proposal -> verified decision latency p50/p99 through the HTTP API at each offered
//    rate, and sequencer ingest (signed proposals admitted and chained per second, intake loaded in batches).
// The load curve is drawn to bench-out/load-curve.png (and .svg) beside the printed ratios.
// BENCH_RATES (proposals/s, default "10,50,100,200"; BENCH_RATE sets one), BENCH_SECONDS (per rate,
// default 5), BENCH_INGEST (default 3000), BENCH_MODES (default "embedded,kafka"). The broker is the
// first of LEDGER_KAFKA_BROKERS (default 127.0.0.1:9092).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import * as core from '@agent-ledger/core';
import { LedgerClient } from '@agent-ledger/client';
import { initHome, openEmbeddedStorage, serve, topicNames } from '@agent-ledger/ledger';
import { lineChartSvg, writeChart } from './chart.mjs';
import { decideAndSignP50 } from './decide-baseline.mjs';

const RATES = (process.env.BENCH_RATES ?? process.env.BENCH_RATE ?? '10,50,100,200').split(',').map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const INGEST = Number(process.env.BENCH_INGEST ?? 3000);
const MODES = (process.env.BENCH_MODES ?? 'embedded,kafka').split(',');
/** A rate counts as saturating the stack when less than this share of it is achieved. */
const SATURATED = 0.5;
const BROKER = (process.env.LEDGER_KAFKA_BROKERS ?? '127.0.0.1:9092').split(',')[0];
const out = join(dirname(fileURLToPath(import.meta.url)), '../../bench-out');
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
process.env.LEDGER_SIGNATURE_WORKERS ??= '1';
// A line per request would bury the figures.
process.env.LEDGER_LOG_LEVEL ??= 'warn';
// One agent drives every rate here: its statement budget (100/s by default, a per-agent guard) would cap the curve, not the ledger.
process.env.LEDGER_API_RATE_LIMIT ??= '1000000/1000000';

/**
 * Offers `rate` calls per second for SECONDS (open loop: each call starts on its schedule, whether or
 * not the ones before it have finished) and returns the latency of each call that succeeded, ms, the
 * rate achieved (calls completed per second, first completion to last) and the number that failed
 * (an overloaded stack answers some calls with a timeout: that ends the curve, it does not end the run).
 */
async function offer(rate, call) {
  const latencies = [];
  const completions = [];
  const waits = [];
  let failed = 0;
  let firstError;
  let fatal;
  const n = Math.max(2, Math.round(rate * SECONDS));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const delay = t0 + (i * 1000) / rate - performance.now();
    if (delay > 0) await sleep(delay);
    const sent = performance.now();
    waits.push(call(i).then(() => {
      const done = performance.now();
      latencies.push(done - sent);
      completions.push(done);
    }, (err) => {
      // Only an overload's answer (a timeout, UNAVAILABLE: retryable) counts as a failed call; a wrong answer ends the run.
      if (err?.retryable !== true) fatal ??= err;
      failed += 1;
      firstError ??= err;
    }));
  }
  await Promise.all(waits);
  if (fatal !== undefined) throw fatal;
  if (latencies.length < 2) throw firstError ?? new Error(`no call succeeded at ${rate}/s`);
  const span = (Math.max(...completions) - Math.min(...completions)) / 1000;
  return { rate, n, failed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), achieved: span > 0 ? (latencies.length - 1) / span : rate };
}
const failures = (point) => (point.failed > 0 ? `, ${point.failed} failed` : '');
const body = (i, label) => ({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: `ls -la /srv/app/${label}-${i}` }, query: 'bench', labels: [], channel: 'api', context: {} });

// Baseline: decide() in process and sign its decision statement.
const baseline = decideAndSignP50((i) => body(i, 'base'));
console.log(`baseline: one in-process decide() + signing its decision: p50 ${(baseline * 1000).toFixed(0)} µs`);

function kafkaUp() {
  return new Promise((resolve) => {
    const [host, port] = BROKER.split(':');
    const socket = connect({ host, port: Number(port) });
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
    console.log(`kafka: no broker answers on ${BROKER}: Kafka mode not measured`);
    continue;
  }
  // Latency: every role, proposals through the API at each offered rate, lowest first.
  const { home, dir, start } = await install(mode);
  const running = await start(['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']);
  const client = new LedgerClient({ baseUrl: running.apiUrl, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
  for (let i = 0; i < 10; i++) await client.proposeAndWait(body(i, 'warm'), 60_000);
  const curve = [];
  for (const rate of RATES) {
    const point = await offer(rate, async (i) => {
      const d = await client.proposeAndWait(body(i, `lat${rate}`), 60_000);
      if (d.outcome !== 'allow') throw new Error(d.outcome);
    });
    curve.push(point);
    console.log(`${mode.padEnd(8)} proposal -> verified decision at ${rate}/s: p50 ${point.p50.toFixed(1)} ms, p99 ${point.p99.toFixed(1)} ms (${point.n} proposals, ${point.achieved.toFixed(0)}/s achieved${failures(point)})   p50 / decide+sign ${(point.p50 / baseline).toFixed(0)}x`);
    // Past saturation a higher offered rate only lengthens the queue (and the run): the curve ends here.
    if (point.achieved < SATURATED * rate || point.failed > 0) {
      console.log(`${mode.padEnd(8)} saturated at ${rate}/s (${point.achieved.toFixed(0)}/s achieved): higher rates not offered`);
      break;
    }
  }
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
  results.push({ mode, curve, ingestRate });
  console.log(`${mode.padEnd(8)} ingest ${ingestRate.toFixed(0)} proposals/s (${INGEST})`);
}

// Baseline of the curve: a raw kafkajs produce (acks all) to consume round trip of a record the size of a
// proposal, on the same broker, at the same offered rates.
const raw = [];
if (await kafkaUp()) {
  const kafka = new Kafka({ clientId: 'raw-bench', brokers: [BROKER], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topic = `raw-bench-${randomBytes(3).toString('hex')}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  // Sends overlap, as proposals do at a high offered rate (one request in flight would queue them).
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: `${topic}-g` });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const arrived = new Map();
  await consumer.run({ eachMessage: async ({ message }) => { arrived.get(message.key.toString())?.(); } });
  // The consumer has joined its group when a first record comes back.
  for (let warm = 0; ; warm++) {
    const back = new Promise((resolve) => arrived.set(`warm-${warm}`, resolve));
    await producer.send({ topic, acks: -1, messages: [{ key: `warm-${warm}`, value: 'x' }] });
    if (await Promise.race([back.then(() => true), sleep(1000).then(() => false)])) break;
  }
  for (const rate of RATES) {
    const point = await offer(rate, async (i) => {
      const key = `${rate}-${i}`;
      const back = new Promise((resolve) => arrived.set(key, resolve));
      await producer.send({ topic, acks: -1, messages: [{ key, value: 'x'.repeat(900) }] });
      await back;
      arrived.delete(key);
    });
    raw.push(point);
    console.log(`raw      kafkajs produce -> consume at ${rate}/s: p50 ${point.p50.toFixed(1)} ms, p99 ${point.p99.toFixed(1)} ms (${point.achieved.toFixed(0)}/s achieved${failures(point)})`);
    if (point.achieved < SATURATED * rate || point.failed > 0) break;
  }
  await consumer.disconnect();
  await producer.disconnect();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
}

console.log('\nsummary (ratios in this run):');
for (const { mode, curve } of results) {
  for (const point of curve) {
    const base = raw.find((r) => r.rate === point.rate);
    const vsRaw = base === undefined ? '' : `, p50 / raw round trip ${(point.p50 / base.p50).toFixed(1)}x, p99 / raw ${(point.p99 / base.p99).toFixed(1)}x`;
    console.log(`  ${mode} at ${point.rate}/s: p50 ${point.p50.toFixed(1)} ms, p99 ${point.p99.toFixed(1)} ms${failures(point)}${vsRaw}`);
  }
}
const embedded = results.find((r) => r.mode === 'embedded');
const kafka = results.find((r) => r.mode === 'kafka');
if (embedded !== undefined && kafka !== undefined) {
  for (let i = 0; i < Math.min(embedded.curve.length, kafka.curve.length); i++) {
    const e = embedded.curve[i];
    const k = kafka.curve[i];
    console.log(`  embedded / kafka at ${RATES[i]}/s: p50 ${(e.p50 / k.p50).toFixed(2)}x, p99 ${(e.p99 / k.p99).toFixed(2)}x`);
  }
  console.log(`  embedded / kafka ingest ${(embedded.ingestRate / kafka.ingestRate).toFixed(2)}x`);
}

// The chart: each mode's p50 (solid) and p99 (dashed) against the offered rate, the raw round trip under them.
if (results.length > 0) {
  const colors = { kafka: '#1f77b4', embedded: '#d62728' };
  const names = { kafka: 'Kafka mode', embedded: 'dev mode (embedded)' };
  const series = [];
  for (const { mode, curve } of results) {
    // A rate the stack could not keep up with is labelled with the rate it achieved.
    const notes = curve.filter((c) => c.achieved < 0.9 * c.rate || c.failed > 0).map((c) => [c.rate, c.p50, `${c.achieved.toFixed(0)}/s achieved${failures(c)}`]);
    series.push({ name: `${names[mode] ?? mode} p50`, color: colors[mode] ?? '#9467bd', points: curve.map((c) => [c.rate, c.p50]), notes });
    series.push({ name: `${names[mode] ?? mode} p99`, color: colors[mode] ?? '#9467bd', dash: '7 5', points: curve.map((c) => [c.rate, c.p99]) });
  }
  if (raw.length > 0) {
    const notes = raw.filter((c) => c.achieved < 0.9 * c.rate || c.failed > 0).map((c) => [c.rate, c.p50, `${c.achieved.toFixed(0)}/s achieved${failures(c)}`]);
    series.push({ name: 'raw kafkajs round trip p50', color: '#777777', points: raw.map((c) => [c.rate, c.p50]), notes });
    series.push({ name: 'raw kafkajs round trip p99', color: '#777777', dash: '7 5', points: raw.map((c) => [c.rate, c.p99]) });
  }
  series.push({ name: 'in-process decide()+sign p50', color: '#2ca02c', dash: '2 4', horizontal: true, points: [[RATES[0], baseline]] });
  const svg = lineChartSvg({
    title: 'Proposal → verified decision latency vs offered rate',
    subtitle: `open loop, ${SECONDS} s per rate, ${new Date().toISOString().slice(0, 16)}Z; both axes logarithmic`,
    xLabel: 'offered rate (proposals/s)',
    yLabel: 'latency (ms)',
    series,
  });
  mkdirSync(out, { recursive: true });
  const png = await writeChart(svg, join(out, 'load-curve.svg'), join(out, 'load-curve.png'));
  if (png !== null) console.log(`\nload curve: ${png}`);
}
process.exit(0);
