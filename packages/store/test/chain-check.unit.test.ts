import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ZERO_HASH, type Entry } from '@agent-ledger/core';
import { checkLinks, type LinkCheck, type VerifiedHead } from '../src/chain-check.js';
import { LedgerBuilder, rehashed } from './support/ledger.js';

const empty: VerifiedHead = { size: 0, head: ZERO_HASH, sequencedAt: null, authorityIndex: null };

function failedAt(check: LinkCheck): number {
  assert.equal(check.ok, false, 'expected the batch not to link');
  return check.ok ? -1 : check.failure.index;
}

function eventsLedger(): { ledger: LedgerBuilder; partition: number; entries: Entry[] } {
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
  const agent = ledger.agent(0);
  for (let i = 0; i < 5; i++) ledger.propose(agent, { scope: `s${i}` });
  return { ledger, partition: 1, entries: ledger.entries(1) };
}

test('a chain from the start links, and its head is the last entry', () => {
  const { partition, entries } = eventsLedger();
  const check = checkLinks(partition, empty, entries, new Map());
  assert.ok(check.ok);
  assert.equal(check.fresh.length, 5);
  assert.equal(check.head.size, 5);
  assert.equal(check.head.head, entries[4]?.hash);
});

test('entries below the verified size are skipped when identical, refused when not', () => {
  const { partition, entries } = eventsLedger();
  const first = checkLinks(partition, empty, entries.slice(0, 3), new Map());
  assert.ok(first.ok);
  const stored = new Map(entries.slice(0, 3).map((e) => [e.index, e.hash]));
  const again = checkLinks(partition, first.head, entries, stored);
  assert.ok(again.ok);
  assert.equal(again.skipped, 3);
  assert.equal(again.fresh.length, 2);
  const forked = rehashed(entries[1] as Entry, { sequencedAt: '2030-01-01T00:00:00.000Z' });
  assert.equal(failedAt(checkLinks(partition, first.head, [forked], stored)), 1);
});

test('a changed field under the old hash, a broken prev, a gap and a foreign entry do not link', () => {
  const { ledger, partition, entries } = eventsLedger();
  const [e0, e1, e2] = entries as [Entry, Entry, Entry];
  const statement = e1.envelope.statement;
  const tampered: Entry = { ...e1, envelope: { ...e1.envelope, statement: { ...statement, body: { ...statement.body, recipient: 'globex' } } } };
  assert.equal(failedAt(checkLinks(partition, empty, [e0, tampered], new Map())), 1);
  assert.equal(failedAt(checkLinks(partition, empty, [e0, rehashed(e1, { prev: ZERO_HASH })], new Map())), 1);
  assert.equal(failedAt(checkLinks(partition, empty, [e0, e2], new Map())), 2);
  const genesis = ledger.entries(0)[0] as Entry;
  assert.equal(failedAt(checkLinks(partition, empty, [genesis], new Map())), 0);
});

test('sequencedAt never decreases and authority indexes keep their order', () => {
  const { partition, entries } = eventsLedger();
  const [e0] = entries as [Entry];
  const head: VerifiedHead = { size: 0, head: ZERO_HASH, sequencedAt: '2030-01-01T00:00:00.000Z', authorityIndex: null };
  assert.equal(failedAt(checkLinks(partition, head, [e0], new Map())), 0);
  const ahead: VerifiedHead = { size: 0, head: ZERO_HASH, sequencedAt: null, authorityIndex: e0.authorityIndex + 1 };
  assert.equal(failedAt(checkLinks(partition, ahead, [e0], new Map())), 0);
  const ledger = new LedgerBuilder({ eventPartitions: 1 });
  const genesis = ledger.entries(0)[0] as Entry;
  assert.equal(failedAt(checkLinks(0, empty, [rehashed(genesis, { authorityIndex: 1 })], new Map())), 0);
});
