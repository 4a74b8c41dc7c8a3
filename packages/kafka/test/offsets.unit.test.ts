import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkPartition, parseOffset } from '../src/offsets.js';

const isSchemaInvalid = (err: unknown): boolean => (err as { code?: unknown }).code === 'BAD_ARGUMENT';

test('offsets are canonical non-negative decimal int64 strings', () => {
  assert.equal(parseOffset('0', 'o'), 0n);
  assert.equal(parseOffset('9223372036854775807', 'o'), 9223372036854775807n);
  for (const bad of ['', '-1', '01', '1.0', ' 1', '0x10', '9223372036854775808', '99999999999999999999']) {
    assert.throws(() => parseOffset(bad, 'o'), isSchemaInvalid, bad);
  }
  assert.throws(() => parseOffset(5 as unknown as string, 'o'), isSchemaInvalid);
});

test('partitions are non-negative safe integers', () => {
  checkPartition(0, 'p');
  checkPartition(4, 'p');
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) assert.throws(() => checkPartition(bad, 'p'), isSchemaInvalid, String(bad));
});
