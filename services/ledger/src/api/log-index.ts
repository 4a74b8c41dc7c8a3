import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { MerkleTree, fromHex, toBase64, type Entry } from '@agent-ledger/core';
import type { LogBus, Subscription } from '@agent-ledger/kafka';
import { parseEntry } from '../gate/gate-worker.js';
import { ledgerPartitionOf, type TopicNames } from '../topics.js';

interface PartitionIndex {
  readonly tree: MerkleTree;
  readonly entries: Map<number, string>;
  checkpoints: { size: number; note: string }[];
}

/**
 * What the API serves proofs from: every partition's Merkle tree (leaf
 * hashes in memory, 32 bytes an entry), the raw entry records, and the
 * signed checkpoints, followed from Kafka.
 */
export class LogIndex {
  readonly #bus: LogBus;
  readonly #topics: TopicNames;
  readonly #partitions = new Map<number, PartitionIndex>();
  #genesis: string | undefined;
  readonly #subscriptions: Subscription[] = [];

  constructor(bus: LogBus, topics: TopicNames) {
    this.#bus = bus;
    this.#topics = topics;
  }

  #partition(p: number): PartitionIndex {
    let index = this.#partitions.get(p);
    if (index === undefined) {
      index = { tree: new MerkleTree(), entries: new Map(), checkpoints: [] };
      this.#partitions.set(p, index);
    }
    return index;
  }

  #addEntry(ledgerPartition: number, raw: Buffer): void {
    const entry = parseEntry(raw);
    const index = this.#partition(ledgerPartition);
    if (entry.index !== index.tree.size) return; // redelivery of what is already indexed
    index.tree.append(fromHex(entry.hash, 32));
    index.entries.set(entry.index, raw.toString('utf8'));
    if (ledgerPartition === 0 && entry.index === 0) this.#genesis = raw.toString('utf8');
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
          for (const record of batch.records) this.#addEntry(p, record.value);
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
        },
      }),
    );
  }

  /** The newest checkpoint of a partition. */
  latestCheckpoint(partition: number): { size: number; note: string } | undefined {
    return this.#partitions.get(partition)?.checkpoints.at(-1);
  }

  /** Checkpoints of a partition, oldest first. */
  checkpoints(partition: number): readonly { size: number; note: string }[] {
    return this.#partitions.get(partition)?.checkpoints ?? [];
  }

  /** Entries indexed so far in a partition. */
  size(partition: number): number {
    return this.#partitions.get(partition)?.tree.size ?? 0;
  }

  /** An entry record (JSON text) by position. */
  entryText(partition: number, index: number): string | undefined {
    return this.#partitions.get(partition)?.entries.get(index);
  }

  /** A receipt (SPEC.md section 10) for an entry covered by the newest checkpoint that the tree has reached. */
  receipt(partition: number, index: number): { v: 1; entry: Entry; inclusionProof: string[]; checkpoint: string; genesis: unknown } | undefined {
    const p = this.#partitions.get(partition);
    const text = p?.entries.get(index);
    if (p === undefined || text === undefined || this.#genesis === undefined) return undefined;
    const checkpoint = [...p.checkpoints].reverse().find((c) => c.size > index && c.size <= p.tree.size);
    if (checkpoint === undefined) return undefined;
    const entry = JSON.parse(text) as Entry;
    const genesis = (JSON.parse(this.#genesis) as Entry).envelope;
    return { v: 1, entry, inclusionProof: p.tree.inclusionProof(index, checkpoint.size).map(toBase64), checkpoint: checkpoint.note, genesis };
  }

  /** An RFC 9162 consistency proof between two sizes of a partition. */
  consistency(partition: number, from: number, to?: number): { partition: number; from: number; to: number; proof: string[] } {
    const p = this.#partitions.get(partition);
    const size = to ?? p?.tree.size ?? 0;
    if (p === undefined || from > size || size > p.tree.size) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `sizes ${from}..${size} are not in partition ${partition} (size ${p?.tree.size ?? 0})`);
    }
    return { partition, from, to: size, proof: p.tree.consistencyProof(from, size).map(toBase64) };
  }

  /** Stops following. */
  async stop(): Promise<void> {
    for (const s of this.#subscriptions) await s.stop();
  }
}
