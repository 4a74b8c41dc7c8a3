import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { BusError } from '../src/index.js';
import { UNREACHABLE_CODE, WriterFencedError } from '../src/index.js';
import type { InBatch, InRecord, LogBus, OutRecord, SubscribeOptions, Subscription } from '../src/index.js';
import { drain, hasCode, waitFor, within } from './support/waiting.js';

/** What an adapter provides to run the contract against a real cluster. */
export interface LogBusHarness {
  /** Names the adapter in test output. */
  readonly name: string;
  /** A new bus. Tests open several, to stand for separate processes (a restarted consumer, a second writer). */
  makeBus(): LogBus;
  /** Deletes the suite's topics and consumer groups; called once, after every bus is closed. */
  cleanup(created: { readonly topics: readonly string[]; readonly groups: readonly string[] }): Promise<void>;
}

/** Bound of every single wait in the suite. */
const WAIT_MS = 30_000;
/** How long a test watches for records that must NOT arrive. */
const QUIET_MS = 1_000;
/** Over the 1024-byte `max.message.bytes` of the topics that use it: the broker refuses it, failing the transaction mid-way. */
const OVERSIZED = 'x'.repeat(4096);

interface Inbox {
  readonly subscription: Subscription;
  readonly batches: InBatch[];
  records(): InRecord[];
  values(): string[];
  /** Waits until at least `count` records arrived. */
  until(count: number, what: string): Promise<void>;
}

async function listen(bus: LogBus, options: Omit<SubscribeOptions, 'onBatch'>, handler?: (batch: InBatch) => Promise<void>): Promise<Inbox> {
  const batches: InBatch[] = [];
  const subscription = await within(
    WAIT_MS,
    `join ${options.groupId}`,
    bus.subscribe({
      ...options,
      onBatch: async (batch) => {
        await handler?.(batch);
        batches.push(batch);
      },
    }),
  );
  const records = (): InRecord[] => batches.flatMap((b) => b.records);
  return {
    subscription,
    batches,
    records,
    values: () => records().map((r) => r.value.toString('utf8')),
    until: (count, what) => waitFor(() => records().length >= count, WAIT_MS, what),
  };
}

const quiet = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, QUIET_MS));
const values = (records: readonly InRecord[]): string[] => records.map((r) => r.value.toString('utf8'));
const nextOffset = (batch: InBatch): string => (BigInt(batch.records.at(-1)?.offset ?? '-1') + 1n).toString();

/**
 * The behaviour every `LogBus` adapter must show against a real cluster. Call
 * it at the top level of an `*.int.test.ts` file. Topic and group names carry
 * a random suffix, and everything is deleted at the end.
 */
export function runLogBusContract(harness: LogBusHarness): void {
  describe(`LogBus contract: ${harness.name}`, { timeout: 300_000 }, () => {
    const run = randomBytes(4).toString('hex');
    const topics: string[] = [];
    const groups: string[] = [];
    const buses: LogBus[] = [];
    let bus: LogBus;

    const topic = (label: string): string => {
      const name = `contract.${label}.${run}`;
      topics.push(name);
      return name;
    };
    const group = (label: string): string => {
      const name = `contract.${label}.${run}`;
      groups.push(name);
      return name;
    };
    const openBus = (): LogBus => {
      const opened = harness.makeBus();
      buses.push(opened);
      return opened;
    };

    before(() => {
      bus = openBus();
    });

    after(async () => {
      await Promise.all(buses.map((b) => b.close()));
      await harness.cleanup({ topics, groups });
    });

    test('ensureTopics creates once, accepts the same spec again and refuses a different partition count or setting', async () => {
      const name = topic('ensure');
      const spec = { name, partitions: 3, config: { 'retention.ms': '-1' } };
      await bus.ensureTopics([spec]);
      await bus.ensureTopics([spec]);
      const ends = await bus.endOffsets(name);
      assert.deepEqual(
        [...ends.entries()].sort(([a], [b]) => a - b),
        [
          [0, '0'],
          [1, '0'],
          [2, '0'],
        ],
      );
      await assert.rejects(bus.ensureTopics([{ ...spec, partitions: 2 }]), hasCode('INTEGRITY_FAILURE', false));
      await assert.rejects(bus.ensureTopics([{ ...spec, partitions: 4 }]), hasCode('INTEGRITY_FAILURE', false));
      await assert.rejects(bus.ensureTopics([{ ...spec, config: { 'retention.ms': '60000' } }]), hasCode('INTEGRITY_FAILURE', false));
      await assert.rejects(bus.ensureTopics([{ name, partitions: 0 }]), hasCode('BAD_ARGUMENT', false));
      await assert.rejects(bus.ensureTopics([spec, spec]), hasCode('BAD_ARGUMENT', false));
    });

    test('publish and subscribe round-trip keys, headers and bytes; a restarted member resumes after the committed offset', async () => {
      const name = topic('roundtrip');
      await bus.ensureTopics([{ name, partitions: 2 }]);
      await bus.publish([
        { topic: name, partition: 0, key: 'agent-1', value: 'first', headers: { 'content-type': 'application/json', trace: 'ä-1' } },
        { topic: name, partition: 1, key: null, value: Buffer.from([0, 1, 2, 255]) },
        { topic: name, partition: 0, value: 'second' },
      ]);
      const groupId = group('roundtrip');
      const options = { groupId, topics: [name], fromBeginning: true, commitOffsets: true };
      const first = await listen(bus, options);
      await first.until(3, 'the three published records');
      const p0 = first.records().filter((r) => r.partition === 0);
      const p1 = first.records().filter((r) => r.partition === 1);
      assert.deepEqual(
        p0.map((r) => [r.topic, r.offset, r.key, r.value.toString('utf8'), r.headers]),
        [
          [name, '0', 'agent-1', 'first', { 'content-type': 'application/json', trace: 'ä-1' }],
          [name, '1', null, 'second', {}],
        ],
      );
      assert.equal(p1.length, 1);
      assert.deepEqual([...(p1[0]?.value ?? [])], [0, 1, 2, 255]);
      assert.equal(p1[0]?.key, null);
      assert.match(p1[0]?.timestamp ?? '', /^[0-9]+$/);
      await first.subscription.stop();

      await bus.publish([{ topic: name, partition: 1, value: 'third' }]);
      const restarted = await listen(openBus(), options);
      await restarted.until(1, 'the record published after the restart');
      await quiet();
      assert.deepEqual(restarted.values(), ['third']);
      await restarted.subscription.stop();
    });

    test('publish refuses a partition the topic does not have, and malformed records, writing nothing', async () => {
      const name = topic('badpartition');
      await bus.ensureTopics([{ name, partitions: 1 }]);
      await assert.rejects(bus.publish([{ topic: name, partition: 0, value: 'fine' }, { topic: name, partition: 1, value: 'lost?' }]), hasCode('INTEGRITY_FAILURE', false));
      await assert.rejects(bus.publish([{ topic: name, partition: -1, value: 'x' }]), hasCode('BAD_ARGUMENT', false));
      await assert.rejects(bus.publish([{ topic: name, partition: 0.5, value: 'x' }]), hasCode('BAD_ARGUMENT', false));
      assert.equal((await bus.endOffsets(name)).get(0), '0');
    });

    test('a transaction commits records and the consumed offset together; a restarted member resumes after it', async () => {
      const input = topic('tx-in');
      const output = topic('tx-out');
      await bus.ensureTopics([
        { name: input, partitions: 2 },
        { name: output, partitions: 1 },
      ]);
      await bus.publish(['in0', 'in1', 'in2'].map((value) => ({ topic: input, partition: 0, value })));
      const groupId = group('tx');
      const writer = await bus.writer(`contract.tx.${run}`);
      const derive = async (batch: InBatch): Promise<void> => {
        const out: OutRecord[] = batch.records.map((r) => ({ topic: output, partition: 0, key: r.key, value: `out:${r.value.toString('utf8')}` }));
        await writer.commit(out, { groupId, topic: batch.topic, partition: batch.partition, nextOffset: nextOffset(batch) });
      };
      const options = { groupId, topics: [input], fromBeginning: true, commitOffsets: false };
      const first = await listen(bus, options, derive);
      await first.until(3, 'the first three inputs');
      await first.subscription.stop();

      await bus.publish(['in3', 'in4'].map((value) => ({ topic: input, partition: 0, value })));
      const restarted = await listen(openBus(), options, derive);
      await restarted.until(2, 'the two later inputs');
      await quiet();
      assert.deepEqual(
        restarted.records().map((r) => r.offset),
        ['3', '4'],
      );
      await restarted.subscription.stop();
      const derived = await drain(bus.readRange(output, 0, '0'), WAIT_MS, 'read the derived records');
      assert.deepEqual(values(derived), ['out:in0', 'out:in1', 'out:in2', 'out:in3', 'out:in4']);

      // The committed offsets are readable, and a member of a group of its own takes the partitions at once from them.
      const committed = await bus.committedOffsets(groupId, input);
      assert.equal(committed.get(0), '5');
      assert.equal(committed.get(1) ?? null, null);
      assert.equal((await bus.committedOffsets(group('never'), input)).get(0) ?? null, null);
      await bus.publish(['in5'].map((value) => ({ topic: input, partition: 0, value })));
      const own = await listen(openBus(), { groupId: group('own-member'), topics: [input], fromBeginning: true, commitOffsets: false, positions: { offsetsOf: groupId, partitions: [0] } }, derive);
      await own.until(1, 'the input after the committed offset');
      await quiet();
      assert.deepEqual(own.records().map((r) => r.offset), ['5']);
      await own.subscription.stop();
      await writer.close();
    });

    test('records of a transaction that failed mid-way are never seen, and the recreated producer commits again', async () => {
      const name = topic('abort');
      await bus.ensureTopics([{ name, partitions: 2, config: { 'max.message.bytes': '1024' } }]);
      const watcher = await listen(bus, { groupId: group('abort'), topics: [name], fromBeginning: true, commitOffsets: true });
      const writer = await bus.writer(`contract.abort.${run}`);
      await assert.rejects(
        writer.commit([
          { topic: name, partition: 0, value: 'doomed' },
          { topic: name, partition: 1, value: OVERSIZED },
        ]),
        (err: unknown) => !(err instanceof WriterFencedError) && hasCode('BAD_ARGUMENT', false)(err),
      );
      await writer.commit([{ topic: name, partition: 0, value: 'kept' }]);
      await watcher.until(1, 'the committed record');
      await quiet();
      assert.deepEqual(watcher.values(), ['kept']);
      const read = await drain(bus.readRange(name, 0, '0'), WAIT_MS, 'read partition 0');
      assert.deepEqual(values(read), ['kept']);
      // The aborted record was written (it holds offset 0); it is only hidden.
      assert.notEqual(read[0]?.offset, '0');
      await watcher.subscription.stop();
      await writer.close();
    });

    test('a writer fenced by a newer one with the same id throws WriterFencedError for good, and its records never appear', async () => {
      const name = topic('fence');
      await bus.ensureTopics([{ name, partitions: 1 }]);
      const id = `contract.fence.${run}`;
      const zombie = await bus.writer(id);
      await zombie.commit([{ topic: name, partition: 0, value: 'a1' }]);
      const successor = await openBus().writer(id);
      const fenced = (err: unknown): boolean => err instanceof WriterFencedError && hasCode('INTEGRITY_FAILURE', false)(err);
      await assert.rejects(zombie.commit([{ topic: name, partition: 0, value: 'a2' }]), fenced);
      await assert.rejects(zombie.commit([{ topic: name, partition: 0, value: 'a3' }]), fenced);
      await successor.commit([{ topic: name, partition: 0, value: 'b1' }]);
      const read = await drain(bus.readRange(name, 0, '0'), WAIT_MS, 'read the fenced partition');
      assert.deepEqual(values(read), ['a1', 'b1']);
      await zombie.close();
      await successor.close();
    });

    test('a resolved commit is readable at once, and concurrent commits on one writer are serialised', async () => {
      const name = topic('visible');
      await bus.ensureTopics([{ name, partitions: 2 }]);
      const writer = await bus.writer(`contract.visible.${run}`);
      for (let i = 0; i < 10; i++) {
        await writer.commit([
          { topic: name, partition: 0, value: `p0-${i}` },
          { topic: name, partition: 1, value: `p1-${i}` },
        ]);
        const read = await drain(bus.readRange(name, 1, '0'), WAIT_MS, `read after commit ${i}`);
        assert.equal(read.at(-1)?.value.toString('utf8'), `p1-${i}`);
      }
      await Promise.all(['c0', 'c1', 'c2', 'c3'].map((value) => writer.commit([{ topic: name, partition: 0, value }])));
      const read = await drain(bus.readRange(name, 0, '0'), WAIT_MS, 'read the concurrent commits');
      assert.deepEqual(values(read).slice(10).sort(), ['c0', 'c1', 'c2', 'c3']);
      await writer.close();
    });

    test('a writer refuses records for a missing partition before starting a transaction, and stays usable', async () => {
      const name = topic('writer-check');
      await bus.ensureTopics([{ name, partitions: 1 }]);
      const writer = await bus.writer(`contract.check.${run}`);
      await assert.rejects(writer.commit([{ topic: name, partition: 3, value: 'nowhere' }]), hasCode('INTEGRITY_FAILURE', false));
      await assert.rejects(
        writer.commit([], { groupId: 'g', topic: name, partition: 0, nextOffset: '-1' }),
        hasCode('BAD_ARGUMENT', false),
      );
      await writer.commit([]);
      await writer.commit([{ topic: name, partition: 0, value: 'here' }]);
      assert.deepEqual(values(await drain(bus.readRange(name, 0, '0'), WAIT_MS, 'read')), ['here']);
      await writer.close();
      await writer.close();
      await assert.rejects(writer.commit([{ topic: name, partition: 0, value: 'late' }]), hasCode(UNREACHABLE_CODE, false));
    });

    test('readRange yields exactly the committed records from an offset to the end as of the call, and ends', async () => {
      const name = topic('range');
      await bus.ensureTopics([{ name, partitions: 2, config: { 'max.message.bytes': '1024' } }]);
      const writer = await bus.writer(`contract.range.${run}`);
      await writer.commit([
        { topic: name, partition: 0, value: 'r0' },
        { topic: name, partition: 0, value: 'r1' },
      ]);
      await bus.publish([{ topic: name, partition: 0, value: 'r2' }]);
      // Partition 0 now ends with an aborted transaction; partition 1 holds only its abort marker.
      await assert.rejects(
        writer.commit([
          { topic: name, partition: 0, value: 'aborted' },
          { topic: name, partition: 1, value: OVERSIZED },
        ]),
      );

      const all = await drain(bus.readRange(name, 0, '0'), WAIT_MS, 'read partition 0 from the start');
      assert.deepEqual(values(all), ['r0', 'r1', 'r2']);
      assert.ok(all.every((r, i) => i === 0 || BigInt(r.offset) > BigInt(all[i - 1]?.offset ?? '0')));
      assert.ok(all.every((r) => r.topic === name && r.partition === 0));
      const second = all[1]?.offset ?? '';
      assert.deepEqual(values(await drain(bus.readRange(name, 0, second), WAIT_MS, 'read from r1')), ['r1', 'r2']);
      assert.deepEqual(await drain(bus.readRange(name, 1, '0'), WAIT_MS, 'read a partition holding only a marker'), []);

      const end = (await bus.endOffsets(name)).get(0) ?? '';
      assert.deepEqual(await drain(bus.readRange(name, 0, end), WAIT_MS, 'read from the end'), []);
      // By time: from the first record at or after a timestamp; the end when none is that late.
      assert.equal((await bus.offsetsForTime(name, 0)).get(0), all[0]?.offset);
      assert.equal((await bus.offsetsForTime(name, Number(all[1]?.timestamp))).get(0) !== undefined, true);
      assert.ok(BigInt((await bus.offsetsForTime(name, Number(all[1]?.timestamp))).get(0) ?? '-1') <= BigInt(second));
      assert.equal((await bus.offsetsForTime(name, Date.now() + 86_400_000)).get(0), end);
      await assert.rejects(drain(bus.readRange(name, 0, (BigInt(end) + 1n).toString()), WAIT_MS, 'read past the end'), hasCode('INTEGRITY_FAILURE', false));
      await assert.rejects(drain(bus.readRange(name, 7, '0'), WAIT_MS, 'read a missing partition'), hasCode('INTEGRITY_FAILURE', false));
      await assert.rejects(drain(bus.readRange(name, 0, '-1'), WAIT_MS, 'read from a negative offset'), hasCode('BAD_ARGUMENT', false));
      await assert.rejects(drain(bus.readRange(name, 0, '01'), WAIT_MS, 'read from a non-canonical offset'), hasCode('BAD_ARGUMENT', false));

      const pending = bus.readRange(name, 0, '0');
      await writer.commit([{ topic: name, partition: 0, value: 'r3' }]);
      assert.deepEqual(values(await drain(pending, WAIT_MS, 'read started before r3')), ['r0', 'r1', 'r2']);
      assert.deepEqual(values(await drain(bus.readRange(name, 0, '0'), WAIT_MS, 'read after r3')), ['r0', 'r1', 'r2', 'r3']);
      await writer.close();
    });

    test('a batch whose handler throws is delivered again from the same offset, never skipped or committed', async () => {
      const name = topic('retry');
      await bus.ensureTopics([{ name, partitions: 1 }]);
      await bus.publish(['m0', 'm1'].map((value) => ({ topic: name, partition: 0, value })));
      const groupId = group('retry');
      const firstOffsets: string[] = [];
      const handled: InRecord[] = [];
      const errors: [BusError, boolean][] = [];
      const subscription = await within(
        WAIT_MS,
        'join',
        bus.subscribe({
          groupId,
          topics: [name],
          fromBeginning: true,
          commitOffsets: true,
          onBatch: async (batch) => {
            firstOffsets.push(batch.records[0]?.offset ?? '');
            // A bug (TypeError: kafkajs would give up on it) and then a plain failure.
            if (firstOffsets.length === 1) throw new TypeError('handler bug');
            if (firstOffsets.length === 2) throw new Error('database unavailable');
            handled.push(...batch.records);
          },
          onError: (error, stopped) => errors.push([error, stopped]),
        }),
      );
      await waitFor(() => handled.length >= 2, WAIT_MS, 'the batch after two failures');
      assert.deepEqual(firstOffsets.slice(0, 3), ['0', '0', '0']);
      assert.deepEqual(values(handled), ['m0', 'm1']);
      assert.ok(errors.length >= 2);
      // The TypeError arrives wrapped as a retryable INTERNAL OperationalError; the plain Error too; the subscription never stopped.
      assert.ok(errors.every(([e, stopped]) => e.retryable && !stopped));
      assert.ok(errors.some(([e]) => e.code === 'INTERNAL'), 'an untyped handler failure is INTERNAL, never a refusal code');
      await subscription.stop();

      await bus.publish([{ topic: name, partition: 0, value: 'm2' }]);
      const restarted = await listen(openBus(), { groupId, topics: [name], fromBeginning: true, commitOffsets: true });
      await restarted.until(1, 'the record after the handled batch');
      await quiet();
      assert.deepEqual(restarted.values(), ['m2']);
      await restarted.subscription.stop();
    });

    test('a closed bus refuses work', async () => {
      const closed = openBus();
      await closed.close();
      await closed.close();
      await assert.rejects(closed.endOffsets('any'), hasCode(UNREACHABLE_CODE, false));
      await assert.rejects(closed.writer('any'), hasCode(UNREACHABLE_CODE, false));
    });
  });
}
