import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Entry } from '@agent-ledger/core';
import { LedgerError } from '@agent-ledger/refusals';
import {
  DECISION_CHANNEL,
  Projection,
  claimReadNonce,
  expireReadNonces,
  decisionFor,
  enforcementRecords,
  grantTrail,
  listGrants,
  listPending,
  migrate,
  projectionDigest,
  refusalMetrics,
  resetProjection,
  type SqlPool,
} from '../src/index.js';
import { LedgerBuilder, newSigner, rehashed } from './support/ledger.js';
import { buildScenario } from './support/scenario.js';

/** One database of an adapter, made for the suite. */
export interface StoreUnderTest {
  readonly pool: SqlPool;
  /** Subscribes to a NOTIFY channel the way the API does for this adapter; resolves with the unsubscribe. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** Closes it and removes its data. */
  drop(): Promise<void>;
}

/** What an adapter provides to run the store contract. */
export interface StoreHarness {
  readonly name: string;
  /** A new, empty (not migrated) database. */
  open(label: string): Promise<StoreUnderTest>;
}

const TOPIC = 'ledger.entries';

async function count(pool: SqlPool, table: string): Promise<number> {
  const result = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
  return Number(result.rows[0]?.n ?? 0);
}

/** Folds every partition in batches of `batchSize`, partitions interleaved in `order`. */
export async function foldLedger(projection: Projection, ledger: LedgerBuilder, batchSize: number, order: readonly number[]): Promise<void> {
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

/** Everything the query helpers answer about a folded ledger: two adapters holding one ledger answer the same. */
export async function queryAnswers(pool: SqlPool, ledger: LedgerBuilder): Promise<unknown> {
  const now = new Date('2026-11-01T00:00:00.000Z');
  const grants = await listGrants(pool, {});
  const proposals = await pool.query<{ proposal_hash: string }>('SELECT proposal_hash FROM proposals ORDER BY proposal_hash LIMIT 20');
  return {
    pending: await listPending(pool, { now, limit: 1000 }),
    grants,
    metrics: await refusalMetrics(pool, {}),
    records: await enforcementRecords(pool, { limit: 1000 }),
    decisions: await Promise.all(proposals.rows.map((r) => decisionFor(pool, r.proposal_hash))),
    trails: await Promise.all(grants.slice(0, 10).map((g) => grantTrail(pool, g.grantId))),
    size: ledger.size,
  };
}

/**
 * The behaviour every store adapter must show, over the same PostgreSQL:
 * migrations, the projection fold (byte-identical on rebuild), its integrity
 * halts and constraint failures, NOTIFY at commit only, and concurrent use.
 */
export function runStoreContract(harness: StoreHarness): void {
  describe(`store contract: ${harness.name}`, { timeout: 300_000 }, () => {
    let db: StoreUnderTest;
    let projection: Projection;

    before(async () => {
      db = await harness.open('contract');
      await migrate(db.pool);
      projection = new Projection(db.pool);
    });

    after(async () => {
      await db.drop();
    });

    beforeEach(async () => {
      await resetProjection(db.pool);
    });

    test('migrations apply once: a second run changes nothing', async () => {
      const before = await db.pool.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations ORDER BY version');
      assert.ok(before.rows.length >= 4);
      await migrate(db.pool);
      const again = await db.pool.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations ORDER BY version');
      assert.deepEqual(again.rows, before.rows);
    });

    test('a fold of every statement type fills every table; a rebuild in other batch sizes gives byte-identical tables', async () => {
      const ledger = new LedgerBuilder({ eventPartitions: 3, agents: 6 });
      buildScenario(ledger, 80, newSigner);
      await foldLedger(projection, ledger, 50, ledger.partitions);
      const digest = await projectionDigest(db.pool);
      assert.equal(await count(db.pool, 'entries_seen'), ledger.size);
      for (const table of ['keys', 'grants', 'grant_events', 'proposals', 'pending_approvals', 'enforcement_records', 'refusals', 'refusal_metrics']) {
        assert.ok((await count(db.pool, table)) > 0, `${table} has rows`);
      }
      const outcomes = await db.pool.query<{ outcome: string }>('SELECT DISTINCT outcome FROM enforcement_records ORDER BY outcome');
      assert.deepEqual(outcomes.rows.map((r) => r.outcome), ['allow', 'block', 'deny', 'verify_first']);
      // int8 columns arrive as exact decimal strings in both adapters, never as floats.
      const offset = await projection.offsetOf(TOPIC, 1);
      assert.equal(typeof offset, 'string');
      const answers = await queryAnswers(db.pool, ledger);
      for (const batchSize of [1, 500]) {
        await resetProjection(db.pool);
        await foldLedger(projection, ledger, batchSize, [...ledger.partitions].reverse());
        assert.equal(await projectionDigest(db.pool), digest, `batches of ${batchSize}`);
        assert.deepEqual(await queryAnswers(db.pool, ledger), answers);
      }
      // Redelivery applies nothing.
      const events = ledger.entries(1);
      const again = await projection.apply(1, events, { topic: TOPIC, partition: 1, nextOffset: String(events.length) });
      assert.equal(again.applied, 0);
      assert.equal(await projectionDigest(db.pool), digest);
    });

    test('an entry that does not link halts its partition for good, committing nothing of its batch', async () => {
      const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
      const agent = ledger.agent(0);
      for (let i = 0; i < 6; i++) ledger.decide(agent, ledger.propose(agent, { scope: `s${i}` }).hash, 'allow');
      await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: String(ledger.entries(0).length) });
      const events = ledger.entries(1);
      await projection.apply(1, events.slice(0, 4), { topic: TOPIC, partition: 1, nextOffset: '4' });
      const tampered = [...events.slice(4, 6), rehashed(events[6] as Entry, { prev: (events[4] as Entry).hash }), ...events.slice(7)];
      const isIntegrity = (err: unknown): boolean => err instanceof LedgerError && err.code === 'INTEGRITY_FAILURE';
      await assert.rejects(projection.apply(1, tampered, { topic: TOPIC, partition: 1, nextOffset: '12' }), isIntegrity);
      assert.equal((await projection.head(1)).halted?.index, 6);
      assert.equal(await projection.offsetOf(TOPIC, 1), '4');
      await assert.rejects(projection.apply(1, events.slice(4), { topic: TOPIC, partition: 1, nextOffset: '12' }), isIntegrity);
      // The session is usable after the failed transactions.
      assert.equal(await count(db.pool, 'entries_seen'), ledger.entries(0).length + 4);
    });

    test('a decision is announced at commit, and not when its batch rolls back', async () => {
      const received: string[] = [];
      const unlisten = await db.listen(DECISION_CHANNEL, (payload) => received.push(payload));
      try {
        const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
        const agent = ledger.agent(0);
        const proposal = ledger.propose(agent, { scope: 'n1' });
        ledger.decide(agent, proposal.hash, 'allow');
        await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '1' });
        await projection.apply(1, ledger.entries(1), { topic: TOPIC, partition: 1, nextOffset: '2' });
        const later = ledger.propose(agent, { scope: 'n2' });
        const decided = ledger.decide(agent, later.hash, 'block', { code: 'POLICY_VIOLATION' });
        const replayed = ledger.append(later.entry.envelope);
        await assert.rejects(projection.apply(1, [later.entry, decided.entry, replayed], { topic: TOPIC, partition: 1, nextOffset: '99' }));
        const deadline = Date.now() + 10_000;
        while (received.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.deepEqual(received, [proposal.hash]);
      } finally {
        await unlisten();
      }
    });

    test('a signed read\'s (key, nonce) is claimed once: concurrent claims give exactly one true; expiry frees it; a reset leaves the nonces alone', async () => {
      const keyId = 'ab'.repeat(32);
      const otherKey = 'cd'.repeat(32);
      const nonce = '0123456789abcdef'.repeat(2);
      const now = 1_800_000_000_000;
      assert.equal(await claimReadNonce(db.pool, { keyId, nonce, expiresAtMs: now + 60_000, nowMs: now }), true);
      assert.equal(await claimReadNonce(db.pool, { keyId, nonce, expiresAtMs: now + 60_000, nowMs: now + 1 }), false, 'the same pair again');
      assert.equal(await claimReadNonce(db.pool, { keyId: otherKey, nonce, expiresAtMs: now + 60_000, nowMs: now }), true, 'another key, same nonce');
      // Many claims of one fresh pair at once, on several sessions: one wins.
      const fresh = 'fe'.repeat(16);
      const claims = await Promise.all(Array.from({ length: 16 }, () => claimReadNonce(db.pool, { keyId, nonce: fresh, expiresAtMs: now + 60_000, nowMs: now })));
      assert.equal(claims.filter(Boolean).length, 1);
      // The projection's reset is not the nonces' business.
      await resetProjection(db.pool);
      assert.equal(await claimReadNonce(db.pool, { keyId, nonce, expiresAtMs: now + 60_000, nowMs: now + 2 }), false, 'kept through a projection reset');
      // An expired row not yet deleted is taken over; expiry deletes only what expired.
      assert.equal(await claimReadNonce(db.pool, { keyId, nonce, expiresAtMs: now + 200_000, nowMs: now + 60_001 }), true, 'taken over after expiry');
      assert.equal(await expireReadNonces(db.pool, now + 60_001), 2);
      assert.equal(await count(db.pool, 'read_nonces'), 1);
      assert.equal(await expireReadNonces(db.pool, now + 200_001), 1);
      // Malformed claims are refused before any query.
      const invalid = (err: unknown): boolean => err instanceof LedgerError && err.code === 'SCHEMA_INVALID';
      await assert.rejects(claimReadNonce(db.pool, { keyId: 'AB'.repeat(32), nonce, expiresAtMs: now, nowMs: now }), invalid);
      await assert.rejects(claimReadNonce(db.pool, { keyId, nonce: `${nonce}'`, expiresAtMs: now, nowMs: now }), invalid);
      await assert.rejects(claimReadNonce(db.pool, { keyId, nonce, expiresAtMs: Number.NaN, nowMs: now }), invalid);
      await assert.rejects(expireReadNonces(db.pool, -1), invalid);
    });

    test('concurrent folds of different partitions and reads interleave without mixing transactions', async () => {
      const ledger = new LedgerBuilder({ eventPartitions: 3, agents: 6 });
      buildScenario(ledger, 40, newSigner);
      await foldLedger(projection, ledger, 1_000, [0]);
      const reads: Promise<unknown>[] = [];
      await Promise.all(
        ledger.partitions.filter((p) => p !== 0).map(async (p) => {
          const entries = ledger.entries(p);
          for (let from = 0; from < entries.length; from += 5) {
            reads.push(listPending(db.pool, { limit: 10 }), refusalMetrics(db.pool, {}));
            await projection.apply(p, entries.slice(from, from + 5), { topic: TOPIC, partition: p, nextOffset: String(Math.min(entries.length, from + 5)) });
          }
        }),
      );
      await Promise.all(reads);
      const concurrent = await projectionDigest(db.pool);
      await resetProjection(db.pool);
      await foldLedger(projection, ledger, 1_000, ledger.partitions);
      assert.equal(await projectionDigest(db.pool), concurrent);
    });
  });
}
