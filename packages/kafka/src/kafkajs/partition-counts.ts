import { integrityFailure, invalidArgument } from '../errors.js';
import type { OutRecord } from '../log-bus.js';
import { checkPartition } from '../offsets.js';

/**
 * Partition counts of the topics this process writes, checked before every
 * send. kafkajs 2.2.4 silently drops a message addressed to a partition the
 * topic does not have (the send resolves, nothing is written): for a ledger
 * that is a lost record, so the adapter refuses such records itself.
 */
export class PartitionCounts {
  readonly #lookup: (topic: string) => Promise<number>;
  readonly #counts = new Map<string, number>();

  /** `lookup` asks the cluster for a topic's current partition count. */
  constructor(lookup: (topic: string) => Promise<number>) {
    this.#lookup = lookup;
  }

  /** Records a count just read from the cluster (by `ensureTopics`). */
  remember(topic: string, partitions: number): void {
    this.#counts.set(topic, partitions);
  }

  /**
   * Throws SCHEMA_INVALID for a malformed record and INTEGRITY_FAILURE for a
   * topic or partition that does not exist. A cached count is refreshed once
   * before a partition is refused, since partitions can be added.
   */
  async check(records: readonly OutRecord[]): Promise<void> {
    const highest = new Map<string, number>();
    for (const [i, record] of records.entries()) {
      const what = `record ${i}`;
      if (typeof record.topic !== 'string' || record.topic === '') throw invalidArgument(`${what}: topic must be a non-empty string`);
      checkPartition(record.partition, `${what}: partition`);
      if (typeof record.value !== 'string' && !Buffer.isBuffer(record.value)) throw invalidArgument(`${what}: value must be a string or a Buffer`);
      if (record.key !== undefined && record.key !== null && typeof record.key !== 'string') throw invalidArgument(`${what}: key must be a string or null`);
      for (const [name, value] of Object.entries(record.headers ?? {})) {
        if (typeof value !== 'string') throw invalidArgument(`${what}: header ${name} must be a string`);
      }
      highest.set(record.topic, Math.max(highest.get(record.topic) ?? 0, record.partition));
    }
    for (const [topic, partition] of highest) {
      let count = this.#counts.get(topic);
      if (count === undefined || partition >= count) {
        count = await this.#lookup(topic);
        this.#counts.set(topic, count);
      }
      if (partition >= count) throw integrityFailure(`topic ${topic} has ${count} partitions; there is no partition ${partition}`);
    }
  }
}
