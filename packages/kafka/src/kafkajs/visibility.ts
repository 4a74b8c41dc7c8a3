import type { Admin, RecordMetadata } from 'kafkajs';
import type { ConsumedOffset } from '../log-bus.js';

/** How long a commit waits for its records and offset to become readable before it returns anyway. */
export const VISIBILITY_LIMIT_MS = 10_000;
/** Poll delays, in milliseconds: markers usually land within a few. */
const POLL_DELAYS_MS = [1, 2, 4, 8, 16, 32, 64, 100] as const;

/** Where a transaction wrote: per topic, per partition, the offset of its first record there. */
export type WrittenOffsets = ReadonlyMap<string, ReadonlyMap<number, bigint>>;

/** The first offset the transaction wrote in each partition, from the Produce responses. */
export function writtenOffsets(metadata: readonly RecordMetadata[]): WrittenOffsets {
  const byTopic = new Map<string, Map<number, bigint>>();
  for (const entry of metadata) {
    if (entry.baseOffset === undefined) continue;
    let partitions = byTopic.get(entry.topicName);
    if (partitions === undefined) {
      partitions = new Map();
      byTopic.set(entry.topicName, partitions);
    }
    partitions.set(entry.partition, BigInt(entry.baseOffset));
  }
  return byTopic;
}

async function recordsVisible(admin: Admin, written: WrittenOffsets): Promise<boolean> {
  // One ListOffsets per topic, all in flight at once.
  const checks = [...written].map(async ([topic, partitions]) => {
    const ends = new Map((await admin.fetchTopicOffsets(topic)).map((entry) => [entry.partition, BigInt(entry.offset)]));
    for (const [partition, first] of partitions) {
      // The LSO passes a committed transaction's records all at once, when its marker is written.
      if ((ends.get(partition) ?? -1n) <= first) return false;
    }
    return true;
  });
  return (await Promise.all(checks)).every((visible) => visible);
}

async function offsetVisible(admin: Admin, consumed: ConsumedOffset): Promise<boolean> {
  const committed = await admin.fetchOffsets({ groupId: consumed.groupId, topics: [consumed.topic] });
  const offset = committed.find((t) => t.topic === consumed.topic)?.partitions.find((p) => p.partition === consumed.partition)?.offset;
  return offset !== undefined && BigInt(offset) >= BigInt(consumed.nextOffset);
}

/**
 * Waits until a committed transaction can be read back. Kafka answers EndTxn
 * once the decision is logged and writes the commit markers afterwards, so
 * for a moment after `commit()` a read_committed reader does not see the
 * records yet and OffsetFetch still returns the group's previous offset
 * (kafkajs has no KIP-447 `requireStable`). A consumer that rejoined in that
 * moment would redeliver a batch already committed, and a reader of the log
 * would miss it. Returns false if the limit passed first; the transaction is
 * committed either way, its markers are only late.
 */
export async function awaitVisible(admin: Admin, written: WrittenOffsets, consumed: ConsumedOffset | undefined): Promise<boolean> {
  const deadline = Date.now() + VISIBILITY_LIMIT_MS;
  for (let attempt = 0; ; attempt++) {
    // Both checks at once: each is a round trip, and a commit waits for both.
    const [records, offset] = await Promise.all([recordsVisible(admin, written), consumed === undefined ? true : offsetVisible(admin, consumed)]);
    if (records && offset) return true;
    if (Date.now() >= deadline) return false;
    const delay = POLL_DELAYS_MS[Math.min(attempt, POLL_DELAYS_MS.length - 1)] ?? 100;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
