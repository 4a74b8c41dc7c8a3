import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { arrayLiteral, textArrayLiteral } from '../src/bulk.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

let db: TestDatabase;

before(async () => {
  db = await freshDatabase('bulk');
});

after(async () => {
  await db.drop();
});

test('a text array travels as its array literal and reads back unchanged', { timeout: 30_000 }, async () => {
  const arrays: string[][] = [
    [],
    [''],
    ['admin'],
    ['approver:dana', 'approver:erin'],
    ['NULL', 'null', ' spaced ', 'a,b', '{braces}', 'quo"te', 'back\\slash', '\\"', 'tab\there', 'new\nline', 'é', '日本', '🙂'],
  ];
  // Each literal goes inside a text[] parameter, as the projection's writes send array columns.
  const result = await db.pool.query<{ value: string[] }>('SELECT x::text[] AS value FROM unnest($1::text[]) WITH ORDINALITY AS u(x, n) ORDER BY n', [
    arrays.map(textArrayLiteral),
  ]);
  assert.deepEqual(
    result.rows.map((r) => r.value),
    arrays,
  );
});

test('a column travels as one array literal and reads back unchanged, nulls and numbers included', { timeout: 30_000 }, async () => {
  const texts = ['plain', '', 'NULL', null, 'a,b', '{x}', 'quo"te', 'back\\slash', ' ', 'é🙂'];
  const integers = [0, 1, null, 9007199254740991, -5];
  const floats = [0, 0.1, 1e-7, 123456789.125, -2.5, 1 / 3, null];
  const times = ['2026-11-01T08:00:01.001Z', null];
  const result = await db.pool.query<{ t: (string | null)[]; i: (string | null)[]; f: (number | null)[]; ts: (Date | null)[] }>(
    'SELECT $1::text[] AS t, $2::bigint[] AS i, $3::double precision[] AS f, $4::timestamptz[] AS ts',
    [arrayLiteral(texts), arrayLiteral(integers), arrayLiteral(floats), arrayLiteral(times)],
  );
  const row = result.rows[0];
  assert.ok(row !== undefined);
  assert.deepEqual(row.t, texts);
  assert.deepEqual(row.i.map((v) => (v === null ? null : Number(v))), integers);
  assert.deepEqual(row.f, floats);
  assert.deepEqual(row.ts.map((v) => (v === null ? null : v.toISOString())), times);
});
