import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { openPglitePool } from '../src/index.js';

// PGlite runs on a worker thread: what crosses the thread boundary must arrive as node-postgres would hand it.

test('rows, bytea, int8, SQLSTATE errors and notifications cross the worker boundary unchanged', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-pglite-worker-'));
  const pool = await openPglitePool(dir);
  try {
    await pool.query('CREATE TABLE t (id int8 PRIMARY KEY, blob bytea, blobs bytea[], amount numeric)');
    await pool.query('INSERT INTO t VALUES ($1, $2, $3, $4)', ['9007199254740993', Buffer.from([0, 1, 254, 255]), [Buffer.from('a'), Buffer.from('b')], '12.50']);
    const { rows } = await pool.query<{ id: string; blob: Buffer; blobs: Buffer[]; amount: string }>('SELECT * FROM t');
    assert.equal(rows[0]?.id, '9007199254740993', 'int8 as an exact string');
    assert.equal(rows[0]?.amount, '12.50');
    assert.ok(Buffer.isBuffer(rows[0]?.blob), 'bytea is a Buffer again');
    assert.deepEqual([...(rows[0]?.blob ?? [])], [0, 1, 254, 255]);
    assert.ok(rows[0]?.blobs.every((b) => Buffer.isBuffer(b)));
    assert.deepEqual(rows[0]?.blobs.map((b) => b.toString()), ['a', 'b']);
    const duplicate = await pool.query('INSERT INTO t (id) VALUES (9007199254740993)').then(() => null, (err: unknown) => err);
    assert.ok(duplicate instanceof Error);
    assert.equal((duplicate as { code?: string }).code, '23505', 'the SQLSTATE the store reads');
    // A transaction on a session, then a notification delivered once it commits, and none after unlisten.
    const heard: string[] = [];
    const unlisten = await pool.listen('wake', (payload) => heard.push(payload));
    const client = await pool.connect();
    await client.query('BEGIN');
    await client.query("SELECT pg_notify('wake', 'one')");
    await client.query('COMMIT');
    client.release();
    for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(heard, ['one']);
    await unlisten();
    await pool.query("SELECT pg_notify('wake', 'two')");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(heard, ['one']);
  } finally {
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }
  const closed = await pool.query('SELECT 1').then(() => null, (err: unknown) => err);
  assert.ok(closed instanceof OperationalError && closed.code === OperationalCode.UNAVAILABLE);
});

test('an open, idle pool does not keep the process alive, and one waiting for an answer does', () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-pglite-idle-'));
  try {
    const index = fileURLToPath(new URL('../src/index.js', import.meta.url));
    // The script awaits a query (the worker must hold the process open for it) and never ends the pool.
    const script = `const { openPglitePool } = await import(${JSON.stringify(index)}); const pool = await openPglitePool(${JSON.stringify(dir)}); const { rows } = await pool.query('SELECT 41 + 1 AS n'); console.log('answer', rows[0].n);`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /answer 42/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
