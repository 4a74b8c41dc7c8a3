import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { MerkleTree, fromHex, toBase64, type Entry } from '@agent-ledger/core';
import type { LogBus, Subscription } from '@agent-ledger/kafka';
import { parseEntry } from '../gate/gate-worker.js';
import { entryLocation, ledgerPartitionOf, type TopicNames } from '../topics.js';

/** Entry records kept in memory per partition (the newest): older ones are read back from Kafka by offset. */
export const ENTRY_CACHE_PER_PARTITION = 4096;

/** Kafka offsets of a partition's entries by index: 8 bytes an entry, grown by doubling. */
class OffsetColumn {
  #values = new Float64Array(1024);
  #size = 0;

  push(offset: number): void {
    if (this.#size === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#size] = offset;
    this.#size += 1;
  }

  at(index: number): number | undefined {
    return index >= 0 && index < this.#size ? this.#values[index] : undefined;
  }
}

interface PartitionIndex {
  readonly tree: MerkleTree;
  readonly offsets: OffsetColumn;
  /** The newest entry records (JSON text) by index, oldest first. */
  readonly recent: Map<number, string>;
  checkpoints: { size: number; note: string }[];
}

/** Told about every entry as it is indexed, in log order per partition. */
export type EntryObserver = (partition: number, entry: Entry) => void;

/**
 * What the API serves proofs from: every partition's Merkle tree (leaf
 * hashes in memory), each entry's Kafka offset (8 bytes), the newest
 * {@link ENTRY_CACHE_PER_PARTITION} entry records, and the signed
 * checkpoints, followed from Kafka. Memory grows by about 40 bytes an entry,
 * not by the entry's size: an older entry record is read back from Kafka.
 */
export class LogIndex {
  readonly #bus: LogBus;
  readonly #topics: TopicNames;
  readonly #partitions = new Map<number, PartitionIndex>();
  readonly #observers: EntryObserver[] = [];
  /** Callers waiting for a checkpoint of a partition to reach a size. */
  readonly #checkpointWaiters = new Set<{ partition: number; size: number; wake: () => void }>();
  #genesis: string | undefined;
  readonly #subscriptions: Subscription[] = [];
  readonly #cacheSize: number;
  /** Entry records read back from Kafka because they had left the cache. */
  readBacks = 0;

  constructor(bus: LogBus, topics: TopicNames, options: { cacheSize?: number } = {}) {
    this.#bus = bus;
    this.#topics = topics;
    this.#cacheSize = options.cacheSize ?? ENTRY_CACHE_PER_PARTITION;
  }

  /** Registers an observer of indexed entries (before start). */
  onEntry(observer: EntryObserver): void {
    this.#observers.push(observer);
  }

  #partition(p: number): PartitionIndex {
    let index = this.#partitions.get(p);
    if (index === undefined) {
      index = { tree: new MerkleTree(), offsets: new OffsetColumn(), recent: new Map(), checkpoints: [] };
      this.#partitions.set(p, index);
    }
    return index;
  }

  #addEntry(ledgerPartition: number, raw: Buffer, offset: string): void {
    const entry = parseEntry(raw);
    const index = this.#partition(ledgerPartition);
    if (entry.index !== index.tree.size) return; // redelivery of what is already indexed
    index.tree.append(fromHex(entry.hash, 32));
    index.offsets.push(Number(offset));
    index.recent.set(entry.index, raw.toString('utf8'));
    if (index.recent.size > this.#cacheSize) {
      const oldest = index.recent.keys().next();
      if (oldest.done !== true) index.recent.delete(oldest.value);
    }
    if (ledgerPartition === 0 && entry.index === 0) this.#genesis = raw.toString('utf8');
    for (const observer of this.#observers) observer(ledgerPartition, entry);
  }

  /** Follows the entry and checkpoint topics from their start (groups never commit: each start replays). */
  async start(groupId: string): Promise<void> {
    this.#subscriptions.push(
      await this.#bus.subscribe({
        groupId: `${groupId}-entries`,
        topics: [this.#topics.authority, this.#topics.events],
        fromBeginning: true,
        commitOffsets: false,
        onBatch: async (batch) => {
          const p = ledgerPartitionOf(this.#topics, batch.topic, batch.partition);
          for (const record of batch.records) this.#addEntry(p, record.value, record.offset);
        },
      }),
      await this.#bus.subscribe({
        groupId: `${groupId}-checkpoints`,
        topics: [this.#topics.checkpoints],
        fromBeginning: true,
        commitOffsets: false,
        onBatch: async (batch) => {
          const index = this.#partition(batch.partition);
          for (const record of batch.records) {
            const cp = JSON.parse(record.value.toString('utf8')) as { size: number; note: string };
            if (cp.size > (index.checkpoints.at(-1)?.size ?? 0)) index.checkpoints.push({ size: cp.size, note: cp.note });
          }
          const newest = index.checkpoints.at(-1)?.size ?? 0;
          for (const waiter of this.#checkpointWaiters) if (waiter.partition === batch.partition && waiter.size <= newest) waiter.wake();
        },
      }),
    );
  }

  /** The newest checkpoint of a partition. */
  latestCheckpoint(partition: number): { size: number; note: string } | undefined {
    return this.#partitions.get(partition)?.checkpoints.at(-1);
  }

  /**
   * Resolves once a checkpoint of `partition` covers `size` entries (true),
   * or after `waitMs` (false): a receipt waits here for the checkpoint that
   * covers its entry instead of polling.
   */
  waitForCheckpoint(partition: number, size: number, waitMs: number): Promise<boolean> {
    if ((this.latestCheckpoint(partition)?.size ?? 0) >= size) return Promise.resolve(true);
    if (waitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        partition,
        size,
        wake: () => {
          clearTimeout(timer);
          this.#checkpointWaiters.delete(waiter);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.#checkpointWaiters.delete(waiter);
        resolve(false);
      }, waitMs);
      this.#checkpointWaiters.add(waiter);
    });
  }

  /** Checkpoints of a partition, oldest first. */
  checkpoints(partition: number): readonly { size: number; note: string }[] {
    return this.#partitions.get(partition)?.checkpoints ?? [];
  }

  /** Entries indexed so far in a partition. */
  size(partition: number): number {
    return this.#partitions.get(partition)?.tree.size ?? 0;
  }

  /**
   * An entry record (JSON text) by position, from memory when recent, else
   * read back from Kafka at its offset. Undefined when not indexed yet.
   * Throws UNAVAILABLE when the broker cannot be read.
   */
  async entryText(partition: number, index: number): Promise<string | undefined> {
    const p = this.#partitions.get(partition);
    if (p === undefined) return undefined;
    const cached = p.recent.get(index);
    if (cached !== undefined) return cached;
    const offset = p.offsets.at(index);
    if (offset === undefined) return undefined;
    if (partition === 0 && index === 0 && this.#genesis !== undefined) return this.#genesis;
    this.readBacks += 1;
    const { topic, partition: kafkaPartition } = entryLocation(this.#topics, partition);
    for await (const record of this.#bus.readRange(topic, kafkaPartition, String(offset))) {
      const text = record.value.toString('utf8');
      const entry = parseEntry(record.value);
      if (entry.index !== index) throw new OperationalError(OperationalCode.INTERNAL, `entry ${partition}/${index} is not at offset ${offset}`);
      return text;
    }
    return undefined;
  }

  /** A receipt (SPEC.md section 10) for an entry covered by the newest checkpoint that the tree has reached. */
  async receipt(partition: number, index: number): Promise<{ v: 1; entry: Entry; inclusionProof: string[]; checkpoint: string; genesis: unknown } | undefined> {
    const p = this.#partitions.get(partition);
    if (p === undefined || index >= p.tree.size || this.#genesis === undefined) return undefined;
    const checkpoint = [...p.checkpoints].reverse().find((c) => c.size > index && c.size <= p.tree.size);
    if (checkpoint === undefined) return undefined;
    const text = await this.entryText(partition, index);
    if (text === undefined) return undefined;
    const entry = JSON.parse(text) as Entry;
    const genesis = (JSON.parse(this.#genesis) as Entry).envelope;
    return { v: 1, entry, inclusionProof: p.tree.inclusionProof(index, checkpoint.size).map(toBase64), checkpoint: checkpoint.note, genesis };
  }

  /** An RFC 9162 consistency proof between two sizes of a partition. */
  consistency(partition: number, from: number, to?: number): { partition: number; from: number; to: number; proof: string[] } {
    const p = this.#partitions.get(partition);
    const size = to ?? p?.tree.size ?? 0;
    if (p === undefined || from > size || size > p.tree.size) {
      throw new OperationalError(OperationalCode.BAD_ARGUMENT, `sizes ${from}..${size} are not in partition ${partition} (size ${p?.tree.size ?? 0})`);
    }
    return { partition, from, to: size, proof: p.tree.consistencyProof(from, size).map(toBase64) };
  }

  /** Stops following. */
  async stop(): Promise<void> {
    for (const s of this.#subscriptions) await s.stop();
  }
}
