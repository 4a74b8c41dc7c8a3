import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as store from '../src/index.js';

test('the package index exports exactly the documented names', () => {
  assert.deepEqual(Object.keys(store).sort(), [
    'DECISION_CHANNEL',
    'DEFAULT_PG_URL',
    'MAX_GRANT_CHAIN',
    'MAX_QUERY_LIMIT',
    'MIGRATIONS_DIR',
    'PROJECTION_TABLES',
    'Projection',
    'claimReadNonce',
    'createPool',
    'decisionFor',
    'decisionTrail',
    'enforcementRecords',
    'enforcementRowOf',
    'ensureDatabase',
    'expireReadNonces',
    'grantTrail',
    'hasNotifications',
    'isPostgresUnavailable',
    'listGrants',
    'listPending',
    'migrate',
    'openPglitePool',
    'pgUrlFromEnv',
    'postgresError',
    'projectionDigest',
    'refusalMetrics',
    'resetProjection',
  ]);
});

test('the Postgres URL comes from LEDGER_PG_URL, with a default', () => {
  assert.equal(store.pgUrlFromEnv({}), 'postgres://postgres@127.0.0.1:5432/ledger');
  assert.equal(store.pgUrlFromEnv({ LEDGER_PG_URL: '' }), store.DEFAULT_PG_URL);
  assert.equal(store.pgUrlFromEnv({ LEDGER_PG_URL: 'postgres://u@db:5433/x' }), 'postgres://u@db:5433/x');
});

test('ensureDatabase refuses a URL that names no database, before connecting', async () => {
  for (const url of ['not a url', 'mysql://h/db', 'postgres://h:5432/', `postgres://h/${'x'.repeat(64)}`]) {
    await assert.rejects(store.ensureDatabase(url), (err: unknown) => (err as { code?: unknown }).code === 'BAD_CONFIGURATION', url);
  }
});

test('a Postgres server that is not there is UNAVAILABLE and retryable, never a refusal code', async () => {
  await assert.rejects(store.ensureDatabase('postgres://postgres@127.0.0.1:1/ledger_x'), (err: unknown) => {
    const e = err as { code?: unknown; retryable?: unknown };
    return e.code === 'UNAVAILABLE' && e.retryable === true;
  });
  assert.equal(store.isPostgresUnavailable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })), true);
  assert.equal(store.isPostgresUnavailable(Object.assign(new Error('syntax error'), { code: '42601' })), false);
  assert.equal((store.postgresError(Object.assign(new Error('password authentication failed'), { code: '28P01' }), 'connect') as { code?: unknown }).code, 'BAD_CONFIGURATION');
});
