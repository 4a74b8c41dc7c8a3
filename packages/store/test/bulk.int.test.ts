import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { textArrayLiteral } from '../src/bulk.js';
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
