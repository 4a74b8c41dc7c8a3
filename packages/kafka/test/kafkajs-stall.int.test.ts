import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { DEFAULT_BROKERS, createKafkaBus, type BusError, type LogBus, type Subscription } from '../src/index.js';
import { withDeadline } from '../src/kafkajs/deadline.js';
import { waitFor, within } from './support/waiting.js';

// A kafkajs consumer that stops fetching without a word (seen after broker
// faults: no crash, no error, heartbeats going on) is replaced by the
// subscription's stall watch once committed records wait for it. The stall is
// made real here: the test pauses the subscription's own kafkajs consumer,
// which then fetches nothing and reports nothing, as the stalled ones did.

const run = randomBytes(4).toString('hex');
/** The stall limit for this file (the watch reads it at every look); the smallest the setting takes. */
const STALL_MS = 5_000;

/** Every kafkajs consumer made in this process, newest last (the adapter makes its clients from the same module). */
const consumers: Consumer[] = [];
const makeConsumer = Kafka.prototype.consumer;
Kafka.prototype.consumer = function recorded(this: Kafka, ...args: Parameters<Kafka['consumer']>): Consumer {
  const consumer = makeConsumer.apply(this, args);
  consumers.push(consumer);
  return consumer;
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('kafkajs subscription stall watch', { timeout: 180_000 }, () => {
  let bus: LogBus;
  const previous = process.env.LEDGER_KAFKA_STALL_MS;
  const topics: string[] = [];

  before(() => {
    process.env.LEDGER_KAFKA_STALL_MS = String(STALL_MS);
    bus = createKafkaBus({ brokers: DEFAULT_BROKERS, clientId: `stall.${run}` });
  });

  after(async () => {
    if (previous === undefined) delete process.env.LEDGER_KAFKA_STALL_MS;
    else process.env.LEDGER_KAFKA_STALL_MS = previous;
    await bus.close();
    const admin = new Kafka({ clientId: `stall-cleanup.${run}`, brokers: [...DEFAULT_BROKERS], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.deleteTopics({ topics, timeout: 30_000 }).catch(() => undefined);
    await admin.disconnect();
  });

  async function subscribed(name: string, onBatch: (values: string[]) => Promise<void>): Promise<{ subscription: Subscription; errors: [BusError, boolean][]; consumer: Consumer }> {
    topics.push(name);
    await bus.ensureTopics([{ name, partitions: 1 }]);
    const errors: [BusError, boolean][] = [];
    const before = consumers.length;
    const subscription = await bus.subscribe({
      groupId: `${name}.group`,
      topics: [name],
      fromBeginning: true,
      commitOffsets: true,
      onBatch: (batch) => onBatch(batch.records.map((r) => r.value.toString('utf8'))),
      onError: (error, stopped) => errors.push([error, stopped]),
    });
    const consumer = consumers.slice(before).at(-1);
    assert.ok(consumer !== undefined, 'the subscription made a kafkajs consumer');
    return { subscription, errors, consumer };
  }

  const restartsOf = (subscription: Subscription): number => (subscription as unknown as { restarts: number }).restarts;

  test('a consumer that stops fetching while records wait is replaced, and every record arrives once', async () => {
    const name = `stall.paused.${run}`;
    const seen: string[] = [];
    const { subscription, errors, consumer } = await subscribed(name, async (values) => {
      seen.push(...values);
    });
    await bus.publish(['a', 'b', 'c'].map((value) => ({ topic: name, partition: 0, value })));
    await waitFor(() => seen.length === 3, 30_000, 'the first three records');

    // The stall: kafkajs keeps the member in its group and heartbeating, and fetches nothing.
    consumer.pause([{ topic: name }]);
    await bus.publish(['d', 'e', 'f'].map((value) => ({ topic: name, partition: 0, value })));
    await waitFor(() => seen.length >= 6, 90_000, 'the records published while the consumer was stalled');
    await sleep(1_000);

    assert.deepEqual(seen, ['a', 'b', 'c', 'd', 'e', 'f'], 'each record once, in order');
    assert.equal(restartsOf(subscription), 1, 'replaced once');
    const reported = errors.filter(([e]) => e.code === 'UNAVAILABLE' && /its consumer is replaced/.test(e.message));
    assert.equal(reported.length, 1, 'the replacement is reported to onError');
    assert.ok(reported.every(([e, stopped]) => e.retryable && !stopped), 'as a retryable error, the subscription going on');
    assert.match(reported[0]?.[0].message ?? '', new RegExp(`${name}/0: offset 3 read, 6 committed`), 'naming the partition and how far it was read');
  });

  test('an idle consumer with nothing waiting, and a handler slower than the stall limit, are left alone; the slow batch is said', async () => {
    const name = `stall.quiet.${run}`;
    const seen: string[] = [];
    let slow = true;
    const { subscription, errors } = await subscribed(name, async (values) => {
      // The first batch takes three stall limits (the sequencer's recovery can): that is not a stall.
      if (slow) {
        slow = false;
        await sleep(3 * STALL_MS);
      }
      seen.push(...values);
    });
    await bus.publish([{ topic: name, partition: 0, value: 'x' }]);
    await waitFor(() => seen.length === 1, 60_000, 'the slow batch handled');
    await bus.publish([{ topic: name, partition: 0, value: 'y' }]);
    await waitFor(() => seen.length === 2, 30_000, 'the next record');
    // Idle and caught up for more than two stall limits.
    await sleep(2 * STALL_MS + 6_000);
    assert.deepEqual(seen, ['x', 'y']);
    assert.equal(restartsOf(subscription), 0, 'never replaced');
    // The slow batch is said (once per stall limit while it runs), naming where it is; nothing else is.
    const slowSaid = errors.filter(([e]) => new RegExp(`the handler has worked on one batch \\(${name}/0 from offset 0\\) for \\d+ s`).test(e.message));
    assert.ok(slowSaid.length >= 1 && slowSaid.length <= 3, `the slow batch said once per stall limit: ${errors.map(([e]) => e.message).join(' | ')}`);
    assert.ok(slowSaid.every(([e, stopped]) => e.code === 'UNAVAILABLE' && !stopped), 'as a warning, the subscription going on');
    assert.equal(errors.length, slowSaid.length, `nothing else reported: ${errors.map(([e]) => e.message).join(' | ')}`);
  });
});

describe('bounded steps', () => {
  test('withDeadline passes a result through, and fails a step that never settles retryably, naming it', async () => {
    assert.equal(await withDeadline(Promise.resolve(7), 1_000, 'a quick step'), 7);
    await assert.rejects(withDeadline(Promise.reject(new Error('own failure')), 1_000, 'a failing step'), /own failure/);
    const never = new Promise<number>(() => undefined);
    await within(
      5_000,
      'the deadline fires',
      assert.rejects(withDeadline(never, 50, 'a step that never returns'), (err: unknown) => {
        const e = err as BusError;
        return e.code === 'UNAVAILABLE' && e.retryable && /a step that never returns did not finish within 50 ms/.test(e.message);
      }),
    );
  });
});
