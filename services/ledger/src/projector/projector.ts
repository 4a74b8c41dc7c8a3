import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { Entry } from '@agent-ledger/core';
import type { LogBus, Subscription } from '@agent-ledger/kafka';
import { Projection, type SqlPool } from '@agent-ledger/store';
import { parseEntry } from '../gate/gate-worker.js';
import { entryLocation, ledgerPartitionOf, type TopicNames } from '../topics.js';

/**
 * Folds the log into Postgres through the store's Projection: rows and the
 * source offset commit in one database transaction, and every chain link is
 * re-checked as it is consumed. It resumes from the offsets Postgres holds
 * (a reset projection therefore rebuilds from offset 0), then follows the
 * topics live; redelivered entries are recognised by index and hash.
 */
export class Projector {
  readonly #bus: LogBus;
  readonly #projection: Projection;
  readonly #eventPartitions: number;
  readonly #topics: TopicNames;
  #subscription: Subscription | undefined;
  /** Ledger partitions halted on INTEGRITY_FAILURE (an operator must intervene). */
  readonly halted = new Map<number, string>();
  readonly counters = { applied: 0, batches: 0 };

  constructor(bus: LogBus, pool: SqlPool, eventPartitions: number, topics: TopicNames) {
    this.#bus = bus;
    this.#topics = topics;
    this.#projection = new Projection(pool);
    this.#eventPartitions = eventPartitions;
  }

  async #apply(topic: string, partition: number, entries: Entry[], nextOffset: string): Promise<void> {
    const ledgerPartition = ledgerPartitionOf(this.#topics, topic, partition);
    if (this.halted.has(ledgerPartition) || entries.length === 0) return;
    try {
      const result = await this.#projection.apply(ledgerPartition, entries, { topic, partition, nextOffset });
      this.counters.applied += (result as { applied?: number }).applied ?? entries.length;
      this.counters.batches += 1;
    } catch (err) {
      if (err instanceof LedgerError && err.code === ReasonCode.INTEGRITY_FAILURE) {
        // The store recorded the halt; this partition's projection stops here.
        this.halted.set(ledgerPartition, err.message);
        return;
      }
      throw err;
    }
  }

  /** Catches up from the stored offsets, then follows live. */
  async start(): Promise<void> {
    for (let p = 0; p <= this.#eventPartitions; p++) {
      const { topic, partition } = entryLocation(this.#topics, p);
      const head = await this.#projection.head(p);
      if (head.halted !== null) this.halted.set(p, head.halted.message);
      const from = (await this.#projection.offsetOf(topic, partition)) ?? '0';
      let batch: Entry[] = [];
      let next = from;
      for await (const record of this.#bus.readRange(topic, partition, from)) {
        batch.push(parseEntry(record.value));
        next = (BigInt(record.offset) + 1n).toString();
        if (batch.length >= 500) {
          await this.#apply(topic, partition, batch, next);
          batch = [];
        }
      }
      await this.#apply(topic, partition, batch, next);
    }
    this.#subscription = await this.#bus.subscribe({
      groupId: this.#topics.group('projector'),
      topics: [this.#topics.authority, this.#topics.events],
      fromBeginning: true,
      commitOffsets: true,
      onBatch: async (batch) => {
        const last = batch.records.at(-1);
        if (last === undefined) return;
        await this.#apply(batch.topic, batch.partition, batch.records.map((r) => parseEntry(r.value)), (BigInt(last.offset) + 1n).toString());
      },
    });
  }

  /** Stops following. */
  async stop(): Promise<void> {
    await this.#subscription?.stop();
  }
}
