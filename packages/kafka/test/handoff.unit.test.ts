import { test } from 'node:test';
import assert from 'node:assert/strict';
import { END, Handoff } from '../src/kafkajs/handoff.js';

const noKeepAlive = (): Promise<void> => Promise.resolve();

test('items are taken in order, a put resolves only once taken, and END follows finish', async () => {
  const handoff = new Handoff<number>();
  let firstTaken = false;
  const first = handoff.put(1, noKeepAlive).then(() => {
    firstTaken = true;
  });
  const second = handoff.put(2, noKeepAlive);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(firstTaken, false);
  assert.equal(await handoff.take(1000), 1);
  await first;
  assert.equal(firstTaken, true);
  handoff.finish();
  assert.equal(await handoff.take(1000), 2);
  await second;
  assert.equal(await handoff.take(1000), END);
});

test('a waiting take wakes for a put, a failure and a finish', async () => {
  const handoff = new Handoff<string>();
  const taking = handoff.take(1000);
  const putting = handoff.put('late', noKeepAlive);
  assert.equal(await taking, 'late');
  await putting;
  const failing = handoff.take(1000);
  handoff.fail(new Error('crashed'));
  handoff.fail(new Error('second failure is ignored'));
  await assert.rejects(failing, /crashed/);
  const other = new Handoff<string>();
  const ending = other.take(1000);
  other.finish();
  assert.equal(await ending, END);
});

test('a take that sees no progress fails retryable; close releases waiting puts', async () => {
  const handoff = new Handoff<string>();
  await assert.rejects(handoff.take(20), (err: unknown) => (err as { code?: unknown; retryable?: unknown }).code === 'UNAVAILABLE' && (err as { retryable?: unknown }).retryable === true);
  const pending = handoff.put('never taken', noKeepAlive);
  handoff.close();
  await pending;
  assert.equal(await handoff.take(20), END);
  await handoff.put('after close', noKeepAlive);
});
