import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { Entry } from '@agent-ledger/core';
import { DECISION_CHANNEL, Projection } from '../src/index.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { LedgerBuilder } from './support/ledger.js';

let db: TestDatabase;
let listener: pg.Client;
const received: string[] = [];
let wake: (() => void) | undefined;

before(async () => {
  db = await freshDatabase('notify');
  listener = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5000 });
  await listener.connect();
  listener.on('notification', (message) => {
    if (message.channel === DECISION_CHANNEL && message.payload !== undefined) received.push(message.payload);
    wake?.();
  });
  await listener.query(`LISTEN ${DECISION_CHANNEL}`);
});

after(async () => {
  await listener.end();
  await db.drop();
});

/** Waits until `count` notifications arrived or `ms` passed; returns what arrived. */
async function notifications(count: number, ms: number): Promise<string[]> {
  const deadline = Date.now() + ms;
  while (received.length < count && Date.now() < deadline) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, deadline - Date.now());
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  wake = undefined;
  return received.splice(0, received.length);
}

test('each applied decision is announced on the decision channel at commit', { timeout: 30_000 }, async () => {
  const projection = new Projection(db.pool);
  const ledger = new LedgerBuilder({ eventPartitions: 1, agents: 1 });
  const agent = ledger.agent(0);
  const hashes: string[] = [];
  for (let i = 0; i < 3; i++) {
    const proposal = ledger.propose(agent, { scope: `s${i}` });
    ledger.classify(agent, proposal.hash, 1, 5);
    ledger.decide(agent, proposal.hash, 'allow');
    hashes.push(proposal.hash);
  }
  await projection.apply(0, ledger.entries(0), { topic: 't', partition: 0, nextOffset: '1' });
  assert.deepEqual(await notifications(1, 300), [], 'no decision, no notification');

  const events = ledger.entries(1);
  await projection.apply(1, events, { topic: 't', partition: 1, nextOffset: String(events.length) });
  assert.deepEqual(await notifications(3, 5000), hashes);

  // A redelivery applies nothing and announces nothing.
  await projection.apply(1, events, { topic: 't', partition: 1, nextOffset: String(events.length) });
  assert.deepEqual(await notifications(1, 300), []);

  // A batch that rolls back announces nothing either: NOTIFY is transactional.
  const later = ledger.propose(agent, { scope: 'later' });
  const decision = ledger.decide(agent, later.hash, 'block', { code: 'POLICY_VIOLATION' });
  const replayed = ledger.append(later.entry.envelope);
  const batch: Entry[] = [later.entry, decision.entry, replayed];
  await assert.rejects(projection.apply(1, batch, { topic: 't', partition: 1, nextOffset: '99' }));
  assert.deepEqual(await notifications(1, 300), []);
  await projection.apply(1, batch.slice(0, 2), { topic: 't', partition: 1, nextOffset: '98' });
  assert.deepEqual(await notifications(1, 5000), [later.hash]);
});
