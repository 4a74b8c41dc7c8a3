#!/usr/bin/env node
// Benchmarks of the live ledger on the real broker and Postgres, each beside a
// baseline measured in the same run (compare ratios, not absolute numbers):
//  1. sequencer ingest (events/s) vs the single-core ed25519 verify rate;
//  2. proposal-to-signed-decision latency p50/p99 at a fixed offered rate vs
//     a raw kafkajs produce-to-consume round trip on the same broker;
//  3. projection rebuild (entries/s) of the log written in 1 vs a raw batched
//     pg insert of the same entries as rows.
// Needs `bash scripts/kafka.sh start` and Postgres. BENCH_INGEST (default 4000),
// BENCH_RATE (proposals/s, default 20), BENCH_SECONDS (default 10).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, verify as rawVerify, createPublicKey } from 'node:crypto';
import pg from 'pg';
import { Kafka, logLevel } from 'kafkajs';
import * as core from '@agent-ledger/core';
import { createKafkaBus } from '@agent-ledger/kafka';
import { LedgerClient } from '@agent-ledger/client';
import { ensureDatabase, migrate, resetProjection } from '@agent-ledger/store';
import { Projector, entryLocation, initHome, serve, topicNames } from '@agent-ledger/ledger';
import { TRAFFIC, grantWhenAsked } from './granted.mjs';

const INGEST = Number(process.env.BENCH_INGEST ?? 4000);
const RATE = Number(process.env.BENCH_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// One agent drives the rate here: its statement budget (100/s by default, a per-agent guard) would cap the bench, not the ledger.
process.env.LEDGER_API_RATE_LIMIT ??= '1000000/1000000';

function freshHome() {
  const id = randomBytes(4).toString('hex');
  return initHome(mkdtempSync(join(tmpdir(), 'ledger-bench-')), { origin: `ledger.bench/${id}`, eventPartitions: 2, topicPrefix: `b${id}`, pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_b${id}`, apiPort: 0 });
}

// 1. Sequencer ingest, and 3. projection rebuild of the log it wrote.
const ingestHome = freshHome();
{
  const home = ingestHome;
  const topics = topicNames(home.config.topicPrefix);
  const running = await serve(home, ['sequencer']);
  const agent = home.key('agent-build-bot');
  const p = core.eventPartitionOf(agent.principal, home.config.eventPartitions);
  const envelopes = [];
  for (let i = 0; i < INGEST; i++) {
    const st = core.createStatement('proposal.submitted', { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: `ls ${i}` }, query: 'bench', labels: [], channel: 'api', context: {} }, agent);
    envelopes.push(core.signStatement(st, [agent], core.nodeEd25519));
  }
  // Single-core verify of the same signatures (the sequencer verifies each once).
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(agent.keyId, 'hex')]), format: 'der', type: 'spki' });
  const items = envelopes.map((e) => [Buffer.from(core.signingMessage(core.canonicalJson(e.statement))), Buffer.from(e.signatures[0].sig, 'base64')]);
  let t = performance.now();
  for (const [m, s] of items) rawVerify(null, m, key, s);
  const verifyRate = INGEST / ((performance.now() - t) / 1000);
  const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'bench' });
  const endOf = async () => BigInt((await bus.endOffsets(topics.events)).get(p - 1) ?? '0');
  // Intake is loaded while the sequencer is down; then it restarts, recovers its
  // chain head and drains the backlog. The rate counts the drain alone, from the
  // first new entry to the last, so recovery time is reported apart.
  await running.stop();
  const before = await endOf();
  for (let i = 0; i < envelopes.length; i += 500) await bus.publish(envelopes.slice(i, i + 500).map((e) => ({ topic: topics.intake, partition: p, key: agent.principal, value: JSON.stringify(e) })));
  const restart = performance.now();
  const again = await serve(home, ['sequencer']);
  let first;
  let firstEnd;
  let last = before;
  let lastChange = performance.now();
  for (;;) {
    const end = await endOf();
    const now = performance.now();
    if (first === undefined && end > before) {
      first = now;
      firstEnd = end;
    }
    if (end !== last) {
      last = end;
      lastChange = now;
    }
    // Offsets also count one marker per transaction: wait until the end stops moving.
    if (end - before >= BigInt(INGEST) && now - lastChange > 500) break;
    await sleep(5);
  }
  await again.stop();
  let drained = 0;
  let beforeFirst = 0;
  for await (const r of bus.readRange(topics.events, p - 1, String(before))) {
    drained++;
    if (BigInt(r.offset) < firstEnd) beforeFirst++;
  }
  if (drained < INGEST) throw new Error(`only ${drained} of ${INGEST} proposals were sequenced`);
  const counted = drained - beforeFirst;
  const ingestRate = counted / ((lastChange - first) / 1000);
  await bus.close();
  console.log(`sequencer ingest ${ingestRate.toFixed(0)} events/s (${counted} entries drained; restart and recovery ${((first - restart) / 1000).toFixed(1)} s not counted)   single-core verify ${verifyRate.toFixed(0)}/s   ratio ${(ingestRate / verifyRate).toFixed(2)}`);
}

// 2. Proposal-to-decision latency, and 3. projection rebuild.
{
  const home = freshHome();
  const running = await serve(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']);
  const client = new LedgerClient({ baseUrl: running.apiUrl, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
  await grantWhenAsked(home, running.apiUrl, { agentId: home.key('agent-build-bot').principal, actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace' }, (i) => client.proposeAndWait({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: 'ls', grant: i }, query: 'warm-up', labels: [], channel: 'api', context: {} }));
  for (let i = 0; i < 5; i++) await client.proposeAndWait({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: 'ls', warm: i }, query: 'warm-up', labels: [], channel: 'api', context: {} });
  const latencies = [];
  const waits = [];
  const n = RATE * SECONDS;
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const due = start + (i * 1000) / RATE;
    const delay = due - performance.now();
    if (delay > 0) await sleep(delay);
    const sent = performance.now();
    waits.push(client.proposeAndWait({ tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: 'ls -la', i }, query: 'bench', labels: [], channel: 'api', context: {} }, 60_000).then((d) => { if (d.outcome !== 'allow') throw new Error(d.outcome); latencies.push(performance.now() - sent); }));
  }
  await Promise.all(waits);

  // Raw kafkajs produce-to-consume round trip on the same broker, same rate.
  const kafka = new Kafka({ clientId: 'raw-bench', brokers: home.config.kafkaBrokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topic = `raw-bench-${randomBytes(3).toString('hex')}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId: `${topic}-g` });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const sentAt = new Map();
  const raw = [];
  let done;
  const finished = new Promise((r) => (done = r));
  await consumer.run({ eachMessage: async ({ message }) => { const k = message.key.toString(); raw.push(performance.now() - sentAt.get(k)); if (raw.length === n) done(); } });
  await sleep(3000);
  const rawStart = performance.now();
  for (let i = 0; i < n; i++) {
    const due = rawStart + (i * 1000) / RATE;
    const delay = due - performance.now();
    if (delay > 0) await sleep(delay);
    sentAt.set(String(i), performance.now());
    await producer.send({ topic, acks: -1, messages: [{ key: String(i), value: 'x'.repeat(900) }] });
  }
  await finished;
  await consumer.disconnect();
  await producer.disconnect();
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  console.log(`proposal -> verified decision at ${RATE}/s (BENCH_TRAFFIC=${TRAFFIC}, LEDGER_INLINE_DECISIONS=${process.env.LEDGER_INLINE_DECISIONS ?? 'on'}: ${running.sequencers.reduce((n, s) => n + s.counters.inlineDecisions, 0)} inline): p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms   raw kafkajs round trip: p50 ${percentile(raw, 50).toFixed(1)} ms, p99 ${percentile(raw, 99).toFixed(1)} ms   p50 ratio ${(percentile(latencies, 50) / percentile(raw, 50)).toFixed(1)}x`);

  await running.stop();
}
// 3. Projection rebuild: the log written in part 1, folded from offset 0 into
// an empty database, beside a raw batched insert of the same entries as rows.
{
  const home = ingestHome;
  const topics = topicNames(home.config.topicPrefix);
  const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'bench-rebuild' });
  const entries = [];
  for (let p = 0; p <= home.config.eventPartitions; p++) {
    const { topic, partition } = entryLocation(topics, p);
    for await (const r of bus.readRange(topic, partition, '0')) entries.push(JSON.parse(r.value.toString()));
  }
  // The ingest installation ran the sequencer alone, which never creates the projection's database and tables.
  await ensureDatabase(home.config.pgUrl);
  const pool = new pg.Pool({ connectionString: home.config.pgUrl });
  await migrate(pool);
  await resetProjection(pool);
  const heads = async () => Number((await pool.query('SELECT coalesce(sum(size), 0)::int AS n FROM partition_heads')).rows[0].n);
  let t = performance.now();
  const rebuild = new Projector(bus, pool, home.config.eventPartitions, topics);
  const started = rebuild.start();
  while ((await heads()) < entries.length) await sleep(5);
  const rebuildRate = entries.length / ((performance.now() - t) / 1000);
  await started;
  await rebuild.stop();
  await pool.query('CREATE TEMP TABLE raw_rows (partition int, index bigint, hash text, type text, sequenced_at timestamptz, body jsonb)');
  const client2 = await pool.connect();
  t = performance.now();
  for (let i = 0; i < entries.length; i += 500) {
    const values = [];
    const params = [];
    for (const e of entries.slice(i, i + 500)) {
      const b = params.length;
      values.push(`($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5},$${b + 6})`);
      params.push(e.partition, e.index, e.hash, e.envelope.statement.type, e.sequencedAt, JSON.stringify(e.envelope));
    }
    await client2.query(`INSERT INTO raw_rows VALUES ${values.join(',')}`, params);
  }
  const insertRate = entries.length / ((performance.now() - t) / 1000);
  client2.release();
  await pool.end();
  await bus.close();
  console.log(`projection rebuild ${rebuildRate.toFixed(0)} entries/s (${entries.length} entries from offset 0)   raw batched pg insert of the same entries ${insertRate.toFixed(0)} rows/s   ratio ${(rebuildRate / insertRate).toFixed(2)}`);
}
process.exit(0);
