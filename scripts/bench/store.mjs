#!/usr/bin/env node
// The Postgres projection rebuild beside a raw batched pg insert of the same
// entries, measured in the same run on the same database (machines are noisy:
// compare the ratio, not the absolute numbers).
//
// A realistic ledger is built in memory with the store's test builders
// (genesis signed by two root keys, key registrations and revocations, grants
// proposed, co-signed, revoked and reauthorized; on the events partitions
// proposals, classifications, confirmations, human approvals and denials,
// timeouts, escalations, decisions, refusals, rejected intake). Then, in a
// fresh database, for each batch size:
//   (a) Projection.apply over the whole log from an empty projection, one
//       partition after the other in batches of that size, as the projector's
//       catch-up does (it cuts batches of 500; live Kafka batches vary);
//   (b) one multi-row INSERT per batch of the same entries as rows
//       (partition, index, hash, type, sequenced_at, body jsonb) into a logged
//       table keyed by (partition, index), body being the signed envelope.
// projectionDigest is printed after the first fold and after every rebuild:
// a rebuild from offset 0 must give byte-identical tables.
//
//   npx tsc -b packages/store && node scripts/bench/store.mjs
//   BENCH_ENTRIES=20000 BENCH_BATCHES=500,2000 BENCH_REPEAT=2 node scripts/bench/store.mjs
import pg from 'pg';
import { Projection, projectionDigest, resetProjection } from '@agent-ledger/store';
import { freshDatabase } from '../../packages/store/dist/test/support/database.js';
import { LedgerBuilder, newSigner } from '../../packages/store/dist/test/support/ledger.js';
import { buildScenario } from '../../packages/store/dist/test/support/scenario.js';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 50_000);
const BATCHES = (process.env.BENCH_BATCHES ?? '500,2000').split(',').map(Number);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const RAW_BODY = process.env.BENCH_RAW_BODY ?? 'envelope';
const EVENT_PARTITIONS = 4;
const AGENTS = 16;
const TOPIC = 'ledger.bench';

// --- the ledger -----------------------------------------------------------
// buildScenario names grants by round, so it runs once, with enough rounds.
const sample = new LedgerBuilder({ eventPartitions: EVENT_PARTITIONS, agents: AGENTS });
buildScenario(sample, 200, newSigner);
const perRound = (sample.size - 1) / 200;
const ledger = new LedgerBuilder({ eventPartitions: EVENT_PARTITIONS, agents: AGENTS });
let t = performance.now();
buildScenario(ledger, Math.ceil((ENTRIES - 1) / perRound), newSigner);
const types = new Map();
for (const p of ledger.partitions) for (const e of ledger.entries(p)) types.set(e.envelope.statement.type, (types.get(e.envelope.statement.type) ?? 0) + 1);
console.log(`ledger: ${ledger.size} entries in ${ledger.partitions.length} partitions (${ledger.partitions.map((p) => ledger.entries(p).length).join(' / ')}), built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
console.log(`  ${[...types].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k} ${n}`).join(', ')}`);

// --- the database ---------------------------------------------------------
const db = await freshDatabase('bench');
const pool = db.pool;
// Round trips: every query any connection sends (the store uses this same pg module).
let roundTrips = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  roundTrips += 1;
  return query.apply(this, args);
};
await pool.query(`CREATE TABLE raw_entries (partition integer NOT NULL, index bigint NOT NULL, hash text NOT NULL, type text NOT NULL,
  sequenced_at timestamptz NOT NULL, body jsonb NOT NULL, PRIMARY KEY (partition, index))`);

const projection = new Projection(pool);

/** Projection.apply over every partition from an empty projection. Returns ms and batches. */
async function rebuild(batchSize) {
  await resetProjection(pool);
  await pool.query('VACUUM ANALYZE');
  let batches = 0;
  const trips = roundTrips;
  const start = performance.now();
  for (const p of ledger.partitions) {
    const entries = ledger.entries(p);
    for (let from = 0; from < entries.length; from += batchSize) {
      const batch = entries.slice(from, from + batchSize);
      await projection.apply(p, batch, { topic: TOPIC, partition: p, nextOffset: String(from + batch.length) });
      batches += 1;
    }
  }
  return { ms: performance.now() - start, batches, trips: roundTrips - trips };
}

/** One multi-row INSERT per batch of the same entries as rows, into an empty table. */
async function rawInsert(batchSize) {
  await pool.query('TRUNCATE raw_entries');
  await pool.query('VACUUM ANALYZE raw_entries');
  const client = await pool.connect();
  let batches = 0;
  const start = performance.now();
  try {
    for (const p of ledger.partitions) {
      const entries = ledger.entries(p);
      for (let from = 0; from < entries.length; from += batchSize) {
        const values = [];
        const params = [];
        for (const e of entries.slice(from, from + batchSize)) {
          const b = params.length;
          values.push(`($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5},$${b + 6})`);
          params.push(e.partition, e.index, e.hash, e.envelope.statement.type, e.sequencedAt, JSON.stringify(RAW_BODY === 'statement' ? e.envelope.statement.body : e.envelope));
        }
        await client.query(`INSERT INTO raw_entries (partition, index, hash, type, sequenced_at, body) VALUES ${values.join(',')}`, params);
        batches += 1;
      }
    }
  } finally {
    client.release();
  }
  return { ms: performance.now() - start, batches };
}

const rate = (n, ms) => (n / ms) * 1000;
const results = [];
let reference;
try {
  // A first fold, untimed (warms the JIT and the catalog caches); its digest is the reference.
  await rebuild(500);
  reference = await projectionDigest(pool);
  console.log(`projectionDigest after the first fold:  ${reference}`);
  for (let round = 0; round < REPEAT; round++) {
    for (const batchSize of BATCHES) {
      const ours = await rebuild(batchSize);
      const trips = ours.trips / ours.batches;
      const digest = await projectionDigest(pool);
      const raw = await rawInsert(batchSize);
      const row = { batchSize, ours: rate(ledger.size, ours.ms), raw: rate(ledger.size, raw.ms), trips, same: digest === reference };
      results.push(row);
      console.log(
        `batch ${String(batchSize).padStart(5)}: rebuild ${row.ours.toFixed(0).padStart(6)} entries/s (${trips.toFixed(1)} queries/batch)` +
          `   raw batched insert ${row.raw.toFixed(0).padStart(6)} rows/s   ratio ${(row.ours / row.raw).toFixed(2)}` +
          `   digest ${digest.slice(0, 16)}… ${row.same ? 'identical' : 'DIFFERENT'}`,
      );
    }
  }
} finally {
  await db.drop();
}
// Each rebuild is paired with the raw insert run right after it (the machine's load drifts): the ratio is per pair.
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`median of ${REPEAT} runs:`);
for (const batchSize of BATCHES) {
  const rows = results.filter((r) => r.batchSize === batchSize);
  const ratios = rows.map((r) => r.ours / r.raw);
  console.log(
    `  batch ${String(batchSize).padStart(5)}: rebuild ${median(rows.map((r) => r.ours)).toFixed(0)} entries/s, raw ${median(rows.map((r) => r.raw)).toFixed(0)} rows/s,` +
      ` ratio ${median(ratios).toFixed(2)} (runs: ${ratios.map((x) => x.toFixed(2)).join(', ')})`,
  );
}
if (results.some((r) => !r.same)) {
  console.error('a rebuild gave different tables');
  process.exit(1);
}
