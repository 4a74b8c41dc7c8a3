import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Entry } from '@agent-ledger/core';
import { Projection, projectionDigest, resetProjection } from '../src/index.js';
import { countRows, freshDatabase, type TestDatabase } from './support/database.js';
import { LedgerBuilder, newSigner } from './support/ledger.js';
import { buildScenario } from './support/scenario.js';

let db: TestDatabase;

before(async () => {
  db = await freshDatabase('rebuild');
});

after(async () => {
  await db.drop();
});

const TOPIC = 'ledger.entries';

/**
 * Feeds every partition in batches of `batchSize`, visiting partitions in the
 * given order round by round, so partitions interleave differently per run.
 */
async function fold(projection: Projection, ledger: LedgerBuilder, batchSize: number, order: readonly number[]): Promise<void> {
  const cursors = new Map(order.map((p) => [p, 0]));
  for (let progressed = true; progressed; ) {
    progressed = false;
    for (const p of order) {
      const entries = ledger.entries(p);
      const from = cursors.get(p) ?? 0;
      if (from >= entries.length) continue;
      const batch: Entry[] = entries.slice(from, from + batchSize);
      await projection.apply(p, batch, { topic: TOPIC, partition: p, nextOffset: String(from + batch.length) });
      cursors.set(p, from + batch.length);
      progressed = true;
    }
  }
}

test('a rebuild from offset 0 in other batch sizes and interleavings gives byte-identical tables', { timeout: 120_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 3, agents: 6 });
  buildScenario(ledger, 120, newSigner);
  assert.ok(ledger.size >= 300, `a few hundred entries (${ledger.size})`);
  for (const p of ledger.partitions) assert.ok(ledger.entries(p).length > 20, `partition ${p} has entries`);

  const projection = new Projection(db.pool);
  await fold(projection, ledger, 50, ledger.partitions);
  const digest = await projectionDigest(db.pool);
  assert.equal(await countRows(db.pool, 'entries_seen'), ledger.size);
  for (const table of ['keys', 'grants', 'grant_policy', 'grant_events', 'proposals', 'pending_approvals', 'enforcement_records', 'refusals', 'refusal_metrics']) {
    assert.ok((await countRows(db.pool, table)) > 0, `${table} has rows`);
  }
  const outcomes = await db.pool.query<{ outcome: string }>('SELECT DISTINCT outcome FROM enforcement_records ORDER BY outcome');
  assert.deepEqual(outcomes.rows.map((r) => r.outcome), ['allow', 'block', 'deny', 'verify_first']);
  const approvals = await db.pool.query<{ status: string }>('SELECT DISTINCT status FROM pending_approvals ORDER BY status');
  assert.deepEqual(approvals.rows.map((r) => r.status), ['approved', 'denied', 'pending', 'timed_out']);
  const grantStatuses = await db.pool.query<{ status: string }>('SELECT DISTINCT status FROM grants ORDER BY status');
  assert.deepEqual(grantStatuses.rows.map((r) => r.status), ['active', 'proposed', 'revoked']);
  const eventKinds = await db.pool.query<{ kind: string; took_effect: boolean }>('SELECT DISTINCT kind, took_effect FROM grant_events ORDER BY kind, took_effect');
  assert.deepEqual(
    eventKinds.rows.map((r) => `${r.kind}:${r.took_effect}`),
    ['cosigned:true', 'proposed:false', 'proposed:true', 'reauthorized:false', 'reauthorized:true', 'revoked:true', 'revoked_via_ancestor:true'],
    'writes that took effect and writes that wait, direct and cascaded revocations',
  );

  const reversed = [...ledger.partitions].reverse();
  for (const [batchSize, order] of [
    [1, reversed],
    [7, ledger.partitions],
    [500, reversed],
  ] as const) {
    await resetProjection(db.pool);
    assert.equal(await countRows(db.pool, 'entries_seen'), 0);
    await fold(projection, ledger, batchSize, order);
    assert.equal(await projectionDigest(db.pool), digest, `batches of ${batchSize}`);
  }

  // The digest sees content: one changed value changes it.
  await db.pool.query("UPDATE proposals SET scope = scope || '!' WHERE proposal_hash = (SELECT min(proposal_hash) FROM proposals)");
  assert.notEqual(await projectionDigest(db.pool), digest);
});
