import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ensureDatabase, migrate } from '../src/index.js';
import { databaseUrl, dropDatabase, freshDatabase, randomDatabaseName, type TestDatabase } from './support/database.js';

let db: TestDatabase;

before(async () => {
  db = await freshDatabase('migrate', { migrated: false });
});

after(async () => {
  await db.drop();
});

test('ensureDatabase creates a missing database once, also when called concurrently', { timeout: 30_000 }, async () => {
  const name = randomDatabaseName('ensure');
  try {
    await Promise.all([ensureDatabase(databaseUrl(name)), ensureDatabase(databaseUrl(name)), ensureDatabase(databaseUrl(name))]);
    await ensureDatabase(databaseUrl(name));
    const found = await db.pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    assert.equal(found.rowCount, 1);
  } finally {
    await dropDatabase(name);
  }
});

test('migrations apply once, even from several processes starting at once', { timeout: 30_000 }, async () => {
  // Separate pools stand for separate processes: each has its own sessions.
  const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: db.url, max: 2, connectionTimeoutMillis: 5000 }));
  try {
    await Promise.all(pools.map((pool) => migrate(pool)));
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
  }
  const applied = await db.pool.query<{ version: number; name: string; applied_at: Date }>('SELECT version, name, applied_at FROM schema_migrations ORDER BY version');
  assert.deepEqual(
    applied.rows.map((r) => [r.version, r.name]),
    [
      [1, '001_projection.sql'],
      [2, '002_hex_checks.sql'],
      [3, '003_grant_trail.sql'],
      [4, '004_grant_constraints.sql'],
      [5, '005_statement_ids.sql'],
      [6, '006_read_nonces.sql'],
      [7, '007_entry_authors.sql'],
    ],
  );
  await migrate(db.pool);
  const again = await db.pool.query<{ applied_at: Date }>('SELECT applied_at FROM schema_migrations ORDER BY version');
  assert.deepEqual(again.rows.map((r) => r.applied_at.getTime()), applied.rows.map((r) => r.applied_at.getTime()), 'a second run changes nothing');
  const tables = await db.pool.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  );
  assert.deepEqual(
    tables.rows.map((r) => r.table_name),
    ['enforcement_records', 'entries_seen', 'grant_events', 'grant_policy', 'grants', 'keys', 'partition_heads', 'pending_approvals', 'projector_offsets', 'proposals', 'read_nonces', 'refusal_metrics', 'refusals', 'schema_migrations'],
  );
});

test('migrations run in version order, a new one later, and an applied one may not change', { timeout: 30_000 }, async () => {
  const other = await freshDatabase('migrate_dir', { migrated: false });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'store-migrations-'));
    writeFileSync(join(dir, '002_second.sql'), 'INSERT INTO steps VALUES (2);');
    writeFileSync(join(dir, '001_first.sql'), 'CREATE TABLE steps (n integer PRIMARY KEY); INSERT INTO steps VALUES (1);');
    await Promise.all([migrate(other.pool, { directory: dir }), migrate(other.pool, { directory: dir })]);
    writeFileSync(join(dir, '003_third.sql'), 'INSERT INTO steps VALUES (3);');
    await migrate(other.pool, { directory: dir });
    const steps = await other.pool.query<{ n: number }>('SELECT n FROM steps ORDER BY n');
    assert.deepEqual(steps.rows.map((r) => r.n), [1, 2, 3]);

    writeFileSync(join(dir, '002_second.sql'), 'INSERT INTO steps VALUES (22);');
    await assert.rejects(migrate(other.pool, { directory: dir }), (err: unknown) => (err as { code?: unknown }).code === 'INTEGRITY_FAILURE');

    const broken = mkdtempSync(join(tmpdir(), 'store-migrations-'));
    writeFileSync(join(broken, 'first.sql'), 'SELECT 1;');
    await assert.rejects(migrate(other.pool, { directory: broken }), (err: unknown) => (err as { code?: unknown }).code === 'SCHEMA_INVALID');
  } finally {
    await other.drop();
  }
});

test('a failing migration leaves nothing behind and releases the lock', { timeout: 30_000 }, async () => {
  const other = await freshDatabase('migrate_fail', { migrated: false });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'store-migrations-'));
    writeFileSync(join(dir, '001_first.sql'), 'CREATE TABLE steps (n integer PRIMARY KEY);');
    writeFileSync(join(dir, '002_bad.sql'), 'CREATE TABLE half (n integer); INSERT INTO nowhere VALUES (1);');
    await assert.rejects(migrate(other.pool, { directory: dir }), (err: unknown) => (err as { code?: unknown }).code === '42P01');
    const half = await other.pool.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'half'");
    assert.equal(half.rowCount, 0, 'the failed migration rolled back');
    writeFileSync(join(dir, '002_bad.sql'), 'CREATE TABLE half (n integer);');
    await migrate(other.pool, { directory: dir });
    const versions = await other.pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(versions.rows.map((r) => r.version), [1, 2]);
  } finally {
    await other.drop();
  }
});

test('hash columns accept exactly 64 lowercase hex characters, the rule of the first migration', { timeout: 30_000 }, async () => {
  await migrate(db.pool);
  const valid = 'ab'.repeat(32);
  const refused = [
    'AB'.repeat(32), // upper case
    'ab'.repeat(31) + 'a', // 63 characters
    'ab'.repeat(32) + 'a', // 65 characters
    'ab'.repeat(31) + 'é', // 64 bytes, 63 characters, one not hex
    'ab'.repeat(31) + 'a\n', // a trailing newline
    'g'.repeat(64), // not hex
    '', // empty
  ];
  const client = await db.pool.connect();
  try {
    const attempts: [string, (value: string) => Promise<unknown>][] = [
      [
        'entries_seen.hash',
        (value) =>
          client.query(
            "INSERT INTO entries_seen (partition, index, hash, statement_hash, type, sequenced_at, authority_index) VALUES (1, 0, $1, 's', 't', '2026-11-01T00:00:00Z', 0)",
            [value],
          ),
      ],
      ['keys.key_id', (value) => client.query("INSERT INTO keys (key_id, principal, roles, registered_at) VALUES ($1, 'agent:a', '{agent}', 0)", [value])],
      ['partition_heads.head', (value) => client.query('INSERT INTO partition_heads (partition, size, head) VALUES (7, 0, $1)', [value])],
    ];
    for (const [column, insert] of attempts) {
      for (const value of refused) {
        await client.query('BEGIN');
        await assert.rejects(insert(value), (err: unknown) => (err as { code?: unknown }).code === '23514', `${column} refuses ${JSON.stringify(value)}`);
        await client.query('ROLLBACK');
      }
      await client.query('BEGIN');
      await insert(valid);
      await client.query('ROLLBACK');
    }
  } finally {
    client.release();
  }
});
