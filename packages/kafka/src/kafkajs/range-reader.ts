import { randomUUID } from 'node:crypto';
import type { Admin, Kafka } from 'kafkajs';
import { integrityFailure, invalidArgument } from '../errors.js';
import type { InRecord } from '../log-bus.js';
import { checkPartition, parseOffset } from '../offsets.js';
import { fromKafkaError } from './errors.js';
import { END, Handoff } from './handoff.js';
import { onePartitionAssigner } from './one-partition-assigner.js';
import { STEP_LIMIT_MS, withDeadline } from './deadline.js';
import { quietly } from './quietly.js';
import { toInRecord } from './records.js';

/** A read that makes no progress for this long fails (retryable) instead of waiting forever. */
const STALL_MS = 30_000;

/** What a range reader needs from the bus. */
export interface RangeReaderDeps {
  readonly kafka: Kafka;
  readonly admin: () => Promise<Admin>;
  readonly clientId: string;
}

/**
 * The bounds of a read: the partition's first retained offset and its last
 * stable offset now. kafkajs's `admin.fetchTopicOffsets` sends ListOffsets
 * (v2+, the only versions Kafka 4 accepts) with kafkajs's default isolation
 * level, READ_COMMITTED, so the `offset` it returns (which it also calls
 * `high`) is the LSO: below an open transaction, not the high watermark.
 */
async function partitionBounds(deps: RangeReaderDeps, topic: string, partition: number): Promise<{ low: bigint; end: bigint }> {
  const admin = await deps.admin();
  let offsets: Awaited<ReturnType<Admin['fetchTopicOffsets']>>;
  try {
    offsets = await admin.fetchTopicOffsets(topic);
  } catch (err) {
    throw fromKafkaError(err, `cannot read the offsets of ${topic}`);
  }
  const bounds = offsets.find((entry) => entry.partition === partition);
  if (bounds === undefined) throw integrityFailure(`topic ${topic} has no partition ${partition}`);
  return { low: BigInt(bounds.low), end: BigInt(bounds.offset) };
}

/**
 * Every committed record of `topic`/`partition` from `fromOffset` up to the
 * partition's last stable offset as of the call (see `LogBus.readRange`):
 * the end is asked for at once, before the caller starts iterating.
 *
 * kafkajs has no manual partition assignment, so the read runs in a consumer
 * group of its own (a random id, one member, `onePartitionAssigner`), seeks to
 * `fromOffset` before its first fetch, never commits an offset, and deletes
 * the group when done. The end is exact: the reader's position is the
 * offset after the last one each fetched batch covered, including aborted
 * records and transaction markers kafkajs filters out (its END_BATCH_PROCESS
 * event reports those batches too), and the read ends when the position
 * reaches the LSO taken at the start.
 */
export function readRange(deps: RangeReaderDeps, topic: string, partition: number, fromOffset: string): AsyncIterable<InRecord> {
  const range = resolveRange(deps, topic, partition, fromOffset);
  // Reported when the caller iterates; until then it must not count as unhandled.
  range.catch(() => undefined);
  return consumeRange(deps, topic, partition, range);
}

/** Checks the arguments and fixes the range: from `fromOffset` to the LSO now. */
async function resolveRange(deps: RangeReaderDeps, topic: string, partition: number, fromOffset: string): Promise<{ from: bigint; end: bigint }> {
  if (typeof topic !== 'string' || topic === '') throw invalidArgument('topic must be a non-empty string');
  checkPartition(partition, 'partition');
  const from = parseOffset(fromOffset, 'fromOffset');
  const { low, end } = await withDeadline(partitionBounds(deps, topic, partition), STEP_LIMIT_MS, `reading the bounds of ${topic}/${partition}`);
  if (from < low) throw integrityFailure(`${topic}/${partition} starts at offset ${low}: the records from ${from} are gone`);
  if (from > end) throw integrityFailure(`${topic}/${partition} ends at offset ${end}, before the requested ${from}`);
  return { from, end };
}

async function* consumeRange(deps: RangeReaderDeps, topic: string, partition: number, range: Promise<{ from: bigint; end: bigint }>): AsyncGenerator<InRecord> {
  const { from, end } = await range;
  if (from === end) return;

  const groupId = `${deps.clientId}.range.${randomUUID()}`;
  const consumer = deps.kafka.consumer({
    groupId,
    readUncommitted: false,
    allowAutoTopicCreation: false,
    partitionAssigners: [onePartitionAssigner(topic, partition)],
    // The reader stops at a known end, usually while kafkajs is already waiting
    // in its next fetch; disconnecting waits for that fetch, so keep it short.
    maxWaitTimeInMs: 100,
    // A restart would rejoin without the seek and start elsewhere: fail instead.
    retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 10_000, restartOnFailure: () => Promise.resolve(false) },
  });
  const handoff = new Handoff<InRecord[]>();
  let position = from;
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    if (payload.topic !== topic || payload.partition !== partition) return;
    const next = BigInt(payload.lastOffset) + 1n;
    if (next > position) position = next;
    if (position >= end) handoff.finish();
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    handoff.fail(fromKafkaError(payload.error, `reading ${topic}/${partition} failed`));
  });

  try {
    try {
      // Each bounded: a read that cannot start fails retryably instead of holding its caller (a recovery) for good.
      await withDeadline(consumer.connect(), STEP_LIMIT_MS, `connecting a reader of ${topic}/${partition}`);
      await withDeadline(consumer.subscribe({ topics: [topic], fromBeginning: true }), STEP_LIMIT_MS, `subscribing a reader to ${topic}`);
      const running = consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch, heartbeat }) => {
          const records = batch.messages
            .filter((message) => {
              const offset = BigInt(message.offset);
              return offset >= from && offset < end;
            })
            .map((message) => toInRecord(topic, partition, message));
          if (records.length > 0) await handoff.put(records, heartbeat);
        },
      });
      // run() creates the group member before its first await, so the seek is
      // in place before the first fetch: no record before `from` is fetched.
      consumer.seek({ topic, partition, offset: from.toString() });
      await withDeadline(running, STEP_LIMIT_MS, `joining a reader of ${topic}/${partition} to its group`);
    } catch (err) {
      throw fromKafkaError(err, `cannot start reading ${topic}/${partition}`);
    }
    for (;;) {
      const records = await handoff.take(STALL_MS);
      if (records === END) return;
      yield* records;
    }
  } finally {
    handoff.close();
    await quietly(consumer.disconnect());
    // Kafka keeps an empty group until its offsets expire, even one that never
    // committed: recovery reads after every failed commit would pile them up.
    await quietly(deps.admin().then((admin) => admin.deleteGroups([groupId])));
  }
}
