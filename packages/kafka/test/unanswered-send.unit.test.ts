import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin, Kafka, RecordMetadata } from 'kafkajs';
import type { OutRecord } from '../src/index.js';
import { PartitionCounts } from '../src/kafkajs/partition-counts.js';
import { unanswered } from '../src/kafkajs/records.js';
import { KafkajsTransactionalWriter } from '../src/kafkajs/writer.js';

// kafkajs 2.2.4's sendBatch retries a failed Produce only to brokers that have
// not answered yet: when a partition's leader moves, mid-call, to a broker
// that already answered for the call's other partitions, nothing is resent
// for it and the call resolves anyway. The adapter checks every partition it
// wrote to has an answer; these tests stand in for the broker with a client
// that answers as kafkajs did in that case.

const meta = (topicName: string, partition: number, baseOffset = '0'): RecordMetadata => ({ topicName, partition, errorCode: 0, baseOffset });
const record = (topic: string, partition: number, value: string): OutRecord => ({ topic, partition, value });

test('unanswered: the records of partitions the send did not answer for, and only those', () => {
  const records = [record('events', 1, 'e1'), record('events', 1, 'e2'), record('checkpoints', 2, 'c'), record('events', 0, 'x')];
  assert.deepEqual(unanswered(records, [meta('events', 1), meta('checkpoints', 2), meta('events', 0)]), []);
  assert.deepEqual(
    unanswered(records, [meta('checkpoints', 2), meta('events', 0)]).map((r) => r.value),
    ['e1', 'e2'],
    'the partition whose leader moved',
  );
  assert.deepEqual(unanswered(records, [{ ...meta('events', 1), errorCode: 6 }, meta('checkpoints', 2), meta('events', 0)]).map((r) => r.value), ['e1', 'e2'], 'an answer with an error is no answer');
  assert.deepEqual(unanswered(records, [meta('events', 2), meta('other', 1), meta('checkpoints', 2), meta('events', 0)]).map((r) => r.value), ['e1', 'e2'], 'same partition of another topic, another partition of the same topic');
});

/** A kafkajs client whose transactions answer sendBatch with `answer(records)`, recording what was called. */
function fakeKafka(answer: (topics: { topic: string; messages: { partition?: number }[] }[]) => RecordMetadata[]): { kafka: Kafka; calls: string[] } {
  const calls: string[] = [];
  const producer = {
    connect: async () => {
      calls.push('connect');
    },
    disconnect: async () => {
      calls.push('disconnect');
    },
    transaction: async () => {
      let active = true;
      calls.push('begin');
      return {
        isActive: () => active,
        sendBatch: async ({ topicMessages }: { topicMessages: { topic: string; messages: { partition?: number }[] }[] }) => {
          calls.push('send');
          return answer(topicMessages);
        },
        sendOffsets: async () => {
          calls.push('offsets');
        },
        commit: async () => {
          active = false;
          calls.push('commit');
        },
        abort: async () => {
          active = false;
          calls.push('abort');
        },
      };
    },
  };
  return { kafka: { producer: () => producer, logger: () => ({ namespace: () => ({ error: () => undefined, warn: () => undefined }) }) } as unknown as Kafka, calls };
}

async function openWriter(kafka: Kafka): Promise<KafkajsTransactionalWriter> {
  // Everything written is readable at once (the commit's visibility check returns on its first look).
  const admin = {
    fetchTopicOffsets: async () => [0, 1, 2, 3].map((partition) => ({ partition, offset: '1000', high: '1000', low: '0' })),
    fetchOffsets: async () => [{ topic: 'intake', partitions: [{ partition: 2, offset: '10' }] }],
  } as unknown as Admin;
  return KafkajsTransactionalWriter.open({ kafka, partitions: new PartitionCounts(async () => 4), admin: async () => admin, onClose: () => undefined }, 'unanswered-test');
}

test('a transaction whose send left a partition unwritten is aborted, never committed, and fails retryably', async () => {
  // The answer kafkajs gave: the checkpoint partition only, the events partition dropped.
  const { kafka, calls } = fakeKafka(() => [meta('checkpoints', 2)]);
  const writer = await openWriter(kafka);
  calls.length = 0;
  await assert.rejects(
    writer.commit([record('events', 1, 'entry'), record('checkpoints', 2, 'checkpoint')], { groupId: 'g', topic: 'intake', partition: 2, nextOffset: '10' }),
    (err: { code?: string; retryable?: boolean; message?: string }) => err.code === 'UNAVAILABLE' && err.retryable === true && /without writing to events\/1/.test(err.message ?? ''),
  );
  assert.ok(!calls.includes('commit'), `no commit: ${calls.join(' ')}`);
  assert.ok(calls.includes('abort'), `aborted: ${calls.join(' ')}`);
  assert.ok(!calls.includes('offsets'), 'the consumed offset never joined the transaction');
});

test('a transaction whose send answered for every partition commits', async () => {
  const { kafka, calls } = fakeKafka((topics) => topics.flatMap(({ topic, messages }) => [...new Set(messages.map((m) => m.partition ?? 0))].map((p) => meta(topic, p))));
  const writer = await openWriter(kafka);
  calls.length = 0;
  await writer.commit([record('events', 1, 'entry'), record('checkpoints', 2, 'checkpoint')], { groupId: 'g', topic: 'intake', partition: 2, nextOffset: '10' });
  assert.deepEqual(calls, ['begin', 'send', 'offsets', 'commit']);
});
