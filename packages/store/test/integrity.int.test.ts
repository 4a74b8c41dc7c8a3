import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { ZERO_HASH, type Entry } from '@agent-ledger/core';
import { LedgerError } from '@agent-ledger/refusals';
import { Projection, projectionDigest, resetProjection } from '../src/index.js';
import { countRows, freshDatabase, type TestDatabase } from './support/database.js';
import { LedgerBuilder, newSigner, rehashed } from './support/ledger.js';

let db: TestDatabase;
let projection: Projection;

before(async () => {
  db = await freshDatabase('integrity');
  projection = new Projection(db.pool);
});

after(async () => {
  await db.drop();
});

beforeEach(async () => {
  await resetProjection(db.pool);
});

const TOPIC = 'ledger.entries';

function isCode(code: string): (err: unknown) => boolean {
  return (err: unknown) => err instanceof LedgerError && err.code === code;
}

/** One agent on one events partition: genesis, then `n` proposals with decisions. */
function ledgerWith(n: number): { ledger: LedgerBuilder; events: Entry[] } {
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
  const agent = ledger.agent(0);
  for (let i = 0; i < n; i++) {
    const proposal = ledger.propose(agent, { scope: `s${i}` });
    ledger.decide(agent, proposal.hash, 'allow');
  }
  return { ledger, events: ledger.entries(1) };
}

/** Projection state that must not move when a batch is refused (a halt changes only partition_heads). */
async function snapshot(): Promise<Record<string, number | string | null>> {
  const counts: Record<string, number | string | null> = { offset: await projection.offsetOf(TOPIC, 1) };
  for (const table of ['entries_seen', 'proposals', 'enforcement_records', 'keys', 'grants', 'refusals', 'refusal_metrics']) {
    counts[table] = await countRows(db.pool, table);
  }
  return counts;
}

function withRecipient(entry: Entry, recipient: string): Entry {
  const statement = entry.envelope.statement;
  return { ...entry, envelope: { ...entry.envelope, statement: { ...statement, body: { ...statement.body, recipient } } } };
}

const tamperings: { name: string; batch: (events: Entry[]) => { batch: Entry[]; index: number } }[] = [
  {
    name: 'a changed field under the old hash',
    batch: (e) => ({ batch: [...e.slice(4, 6), withRecipient(e[6] as Entry, 'globex'), ...e.slice(7, 10)], index: 6 }),
  },
  {
    name: 'a broken prev (the entry rehashed to match)',
    batch: (e) => ({ batch: [...e.slice(4, 7), rehashed(e[7] as Entry, { prev: (e[5] as Entry).hash }), ...e.slice(8, 10)], index: 7 }),
  },
  {
    name: 'a gap',
    batch: (e) => ({ batch: [...e.slice(4, 6), ...e.slice(7, 10)], index: 7 }),
  },
  {
    name: 'a redelivered index with other content',
    batch: (e) => ({ batch: [rehashed(e[2] as Entry, { sequencedAt: '2030-01-01T00:00:00.000Z' }), ...e.slice(4, 10)], index: 2 }),
  },
  {
    name: 'an entry of another partition',
    batch: (e) => ({ batch: [...e.slice(4, 6), rehashed(e[6] as Entry, { partition: 2 }), ...e.slice(7, 10)], index: 6 }),
  },
  {
    name: 'a sequencedAt earlier than the previous entry',
    batch: (e) => ({ batch: [...e.slice(4, 5), rehashed(e[5] as Entry, { sequencedAt: '2020-01-01T00:00:00.000Z' })], index: 5 }),
  },
];

for (const tampering of tamperings) {
  test(`${tampering.name} halts the partition, applies nothing of the batch, and later applies are refused`, { timeout: 30_000 }, async () => {
    const { ledger, events } = ledgerWith(5);
    await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '1' });
    await projection.apply(1, events.slice(0, 4), { topic: TOPIC, partition: 1, nextOffset: '4' });
    const before = await snapshot();

    const { batch, index } = tampering.batch(events);
    await assert.rejects(projection.apply(1, batch, { topic: TOPIC, partition: 1, nextOffset: '10' }), isCode('INTEGRITY_FAILURE'));
    assert.deepEqual(await snapshot(), before, 'offset and rows did not move');
    const head = await projection.head(1);
    assert.equal(head.size, 4);
    assert.equal(head.head, events[3]?.hash);
    assert.equal(head.halted?.code, 'INTEGRITY_FAILURE');
    assert.equal(head.halted?.index, index);
    assert.equal(typeof head.halted?.message, 'string');
    const rows = await db.pool.query('SELECT count(*)::int AS n FROM proposals');
    assert.deepEqual(rows.rows, [{ n: 2 }], 'only the first batch folded');

    // The genuine continuation is refused too: a halted partition needs an operator.
    await assert.rejects(projection.apply(1, events.slice(4), { topic: TOPIC, partition: 1, nextOffset: '10' }), isCode('INTEGRITY_FAILURE'));
    await assert.rejects(projection.apply(1, [], { topic: TOPIC, partition: 1, nextOffset: '10' }), isCode('INTEGRITY_FAILURE'));
    assert.equal(await projection.offsetOf(TOPIC, 1), '4');
    assert.equal((await projection.head(1)).halted?.index, index, 'the first halt is kept');
    // Other partitions go on.
    assert.equal((await projection.head(0)).halted, null);
  });
}

test('a halt on a partition never applied is recorded with size 0', { timeout: 30_000 }, async () => {
  const { events } = ledgerWith(2);
  await assert.rejects(projection.apply(1, events.slice(1), { topic: TOPIC, partition: 1, nextOffset: '4' }), isCode('INTEGRITY_FAILURE'));
  const head = await projection.head(1);
  assert.deepEqual({ size: head.size, head: head.head, index: head.halted?.index }, { size: 0, head: ZERO_HASH, index: 1 });
  assert.equal(await projection.offsetOf(TOPIC, 1), null);
});

test('a batch whose second half breaks a constraint commits neither rows nor offset', { timeout: 30_000 }, async () => {
  const { ledger, events } = ledgerWith(3);
  const agent = ledger.agent(0);
  await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '1' });
  await projection.apply(1, events, { topic: TOPIC, partition: 1, nextOffset: String(events.length) });
  const before = await snapshot();
  const digest = await projectionDigest(db.pool);

  // First half: new proposals and decisions. Second half: a proposal the
  // sequencer failed to deduplicate (the same signed statement again), which
  // links correctly but repeats a primary key.
  const firstHalf: Entry[] = [];
  for (let i = 0; i < 4; i++) {
    const proposal = ledger.propose(agent, { scope: `later-${i}` });
    firstHalf.push(proposal.entry, ledger.decide(agent, proposal.hash, 'allow').entry);
  }
  const replayed = ledger.append((firstHalf[0] as Entry).envelope);
  const batch = [...firstHalf, replayed];
  const size = ledger.entries(1).length;

  const failure = await projection.apply(1, batch, { topic: TOPIC, partition: 1, nextOffset: String(size) }).then(
    () => assert.fail('the batch should not commit'),
    (err: unknown) => err,
  );
  assert.ok(failure instanceof LedgerError);
  assert.equal(failure.code, 'INTEGRITY_FAILURE');
  assert.equal(failure.retryable, false);
  assert.equal((failure.cause as { code?: unknown }).code, '23505', 'unique_violation from Postgres');

  assert.deepEqual(await snapshot(), before, 'neither rows nor offset moved');
  assert.equal(await projectionDigest(db.pool), digest);
  const head = await projection.head(1);
  assert.deepEqual(head, { size: events.length, head: events.at(-1)?.hash, halted: null }, 'the chain linked, so the partition is not halted');

  // The first half alone commits, with its offset.
  const result = await projection.apply(1, firstHalf, { topic: TOPIC, partition: 1, nextOffset: String(size - 1) });
  assert.equal(result.applied, firstHalf.length);
  assert.equal(await projection.offsetOf(TOPIC, 1), String(size - 1));
});

test('a key registered twice fails on the keys table and rolls back the authority batch', { timeout: 30_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
  const key = newSigner('service:screen');
  ledger.say('key.registered', { keyId: key.keyId, principal: key.principal, roles: ['service'] }, ledger.admin);
  ledger.proposeGrant('g-1', ledger.agent(0));
  ledger.say('key.registered', { keyId: key.keyId, principal: key.principal, roles: ['service'] }, ledger.admin2);
  await assert.rejects(projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '4' }), isCode('INTEGRITY_FAILURE'));
  assert.equal(await countRows(db.pool, 'keys'), 0);
  assert.equal(await countRows(db.pool, 'grants'), 0);
  assert.equal(await countRows(db.pool, 'entries_seen'), 0);
  assert.equal(await projection.offsetOf(TOPIC, 0), null);
});

test('concurrent applies of one partition serialise: each entry is folded once', { timeout: 30_000 }, async () => {
  const { ledger, events } = ledgerWith(20);
  await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '1' });
  const results = await Promise.all(
    Array.from({ length: 4 }, () => projection.apply(1, events, { topic: TOPIC, partition: 1, nextOffset: String(events.length) })),
  );
  assert.deepEqual(results.map((r) => r.applied).sort((a, b) => b - a), [events.length, 0, 0, 0]);
  assert.equal(await countRows(db.pool, 'entries_seen'), events.length + 1);
});

test('a large batch is checked whole: a tampered entry near its end halts with nothing of the batch applied', { timeout: 60_000 }, async () => {
  const { ledger, events } = ledgerWith(230);
  await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '1' });
  await projection.apply(1, events.slice(0, 4), { topic: TOPIC, partition: 1, nextOffset: '4' });
  const before = await snapshot();
  // 450 entries: the earlier parts link (and are sent to the database) before the tampered one is reached.
  const batch = [...events.slice(4, 440), withRecipient(events[440] as Entry, 'globex'), ...events.slice(441, 454)];
  await assert.rejects(projection.apply(1, batch, { topic: TOPIC, partition: 1, nextOffset: '454' }), isCode('INTEGRITY_FAILURE'));
  assert.deepEqual(await snapshot(), before, 'offset and rows did not move');
  const head = await projection.head(1);
  assert.deepEqual({ size: head.size, index: head.halted?.index }, { size: 4, index: 440 });
});

test('a large batch that repeats its own earlier entries skips the repeats and applies the rest', { timeout: 60_000 }, async () => {
  const { ledger, events } = ledgerWith(220);
  await projection.apply(0, ledger.entries(0), { topic: TOPIC, partition: 0, nextOffset: '1' });
  const batch = [...events.slice(0, 300), ...events.slice(10, 20), ...events.slice(300, 440)];
  const result = await projection.apply(1, batch, { topic: TOPIC, partition: 1, nextOffset: '440' });
  assert.deepEqual({ applied: result.applied, skipped: result.skipped, size: result.size, head: result.head }, { applied: 440, skipped: 10, size: 440, head: events[439]?.hash });
  assert.equal(await countRows(db.pool, 'entries_seen'), 441);
  assert.equal(await countRows(db.pool, 'enforcement_records'), 220);
});
