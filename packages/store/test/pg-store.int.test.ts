import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Projection, migrate, projectionDigest } from '../src/index.js';
import { freshDatabase } from './support/database.js';
import { LedgerBuilder, newSigner } from './support/ledger.js';
import { freshPglite } from './support/pglite.js';
import { buildScenario } from './support/scenario.js';
import { foldLedger, queryAnswers, runStoreContract } from './store.contract.js';

runStoreContract({
  name: 'pg (PostgreSQL server)',
  async open(label) {
    const db = await freshDatabase(label, { migrated: false });
    const listeners: pg.Client[] = [];
    return {
      pool: db.pool,
      async listen(channel, onPayload) {
        const client = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5000 });
        await client.connect();
        client.on('notification', (message) => {
          if (message.channel === channel && message.payload !== undefined) onPayload(message.payload);
        });
        await client.query(`LISTEN ${channel}`);
        listeners.push(client);
        return () => client.end();
      },
      async drop() {
        await Promise.all(listeners.map((c) => c.end().catch(() => undefined)));
        await db.drop();
      },
    };
  },
});

test('one ledger folded into PostgreSQL and into PGlite gives byte-identical tables and identical query answers', { timeout: 300_000 }, async () => {
  const ledger = new LedgerBuilder({ eventPartitions: 3, agents: 6 });
  buildScenario(ledger, 80, newSigner);
  const server = await freshDatabase('cross', { migrated: false });
  const embedded = await freshPglite('cross');
  try {
    const answers = [];
    const digests = [];
    for (const pool of [server.pool, embedded.pool]) {
      await migrate(pool);
      await foldLedger(new Projection(pool), ledger, 37, ledger.partitions);
      digests.push(await projectionDigest(pool));
      answers.push(await queryAnswers(pool, ledger));
    }
    assert.equal(digests[1], digests[0]);
    assert.deepEqual(answers[1], answers[0]);
  } finally {
    await embedded.drop();
    await server.drop();
  }
});
