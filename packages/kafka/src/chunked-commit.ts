import type { ConsumedOffset, OutRecord, TransactionalWriter } from './log-bus.js';

/**
 * Most bytes of record values one transaction carries before it is committed
 * (plus at most one more input record's output, itself under the 256 KiB
 * intake bound): every transaction stays well below the broker's 1 MiB
 * record-batch limit (`message.max.bytes`), whatever the backlog.
 */
export const TRANSACTION_BYTES = 384 * 1024;

function recordBytes(record: OutRecord): number {
  let bytes = typeof record.value === 'string' ? Buffer.byteLength(record.value) : record.value.length;
  if (typeof record.key === 'string') bytes += Buffer.byteLength(record.key);
  if (record.headers !== undefined) for (const [k, v] of Object.entries(record.headers)) bytes += k.length + v.length;
  return bytes;
}

/**
 * The one way a transactional writer commits the output of a consumed batch
 * (sequencer, gate, SIEM exporter, any future one): output is gathered input
 * record by input record and committed in consecutive transactions, each
 * under {@link TRANSACTION_BYTES}, each carrying the consumed offset just
 * after the last input record whose output it holds. So a backlog never
 * builds a transaction the broker refuses, and the offset never moves past
 * an input whose output is not committed.
 *
 * `onCommitted` callbacks run only after the transaction carrying their
 * output has committed, in input order: state that says "done" (decided,
 * sent, exported) changes then and only then. When a commit throws, the
 * pending output and its callbacks are dropped and the error propagates:
 * the callbacks never ran (the TransactionalWriter contract). A failed batch
 * is redelivered whole, with the records earlier transactions of it already
 * committed: keep one committer per input partition and pass the batch
 * through {@link ChunkedCommitter.uncommitted} first.
 *
 * A writer that rebuilds its state from the log after a failure or a restart
 * (the sequencer) tells the committer where the committed offset stands
 * ({@link ChunkedCommitter.resume}); output that belongs to no input record
 * (a checkpoint sealed by time) goes through {@link ChunkedCommitter.commitAlone},
 * and an idle writer learns whether it was fenced by {@link ChunkedCommitter.probe}.
 */
export class ChunkedCommitter {
  readonly #writer: TransactionalWriter;
  readonly #consumed: Omit<ConsumedOffset, 'nextOffset'>;
  readonly #maxBytes: number;
  #records: OutRecord[] = [];
  #callbacks: (() => void)[] = [];
  #bytes = 0;
  #lastOffset: string | null = null;
  /** The consumed offset of this committer's last successful commit. */
  #committedNext: bigint | null = null;
  /** Transactions committed by this committer. */
  transactions = 0;

  constructor(writer: TransactionalWriter, consumed: Omit<ConsumedOffset, 'nextOffset'>, maxBytes = TRANSACTION_BYTES) {
    this.#writer = writer;
    this.#consumed = consumed;
    this.#maxBytes = maxBytes;
  }

  /**
   * The records of a (possibly redelivered) batch that no transaction of
   * this committer has consumed yet. It begins a batch: output still pending
   * from an earlier delivery whose handler failed before flushing (a record
   * that would not parse, a wait that ran out) is dropped with its callbacks,
   * since that delivery is being handled again.
   */
  uncommitted<R extends { readonly offset: string }>(records: readonly R[]): readonly R[] {
    this.#dropPending();
    const next = this.#committedNext;
    if (next === null) return records;
    return records.filter((record) => BigInt(record.offset) >= next);
  }

  /**
   * Sets the consumed offset that is committed (as read back from the group
   * after a restart or a recovery, null when none is) and drops anything
   * pending: what the writer derived before is rebuilt from the log.
   */
  resume(nextOffset: string | null): void {
    this.#dropPending();
    this.#committedNext = nextOffset === null ? null : BigInt(nextOffset);
  }

  #dropPending(): void {
    this.#records = [];
    this.#callbacks = [];
    this.#bytes = 0;
    this.#lastOffset = null;
  }

  /** The consumed offset (next record to read) of the last commit or {@link resume}, null when none. */
  get committedNext(): string | null {
    return this.#committedNext === null ? null : this.#committedNext.toString();
  }

  /**
   * Commits `records` that answer no input record, in a transaction of their
   * own and without moving the consumed offset (output still pending is
   * committed first). The records are under the byte bound by the caller's
   * construction (one checkpoint).
   */
  async commitAlone(records: readonly OutRecord[]): Promise<void> {
    await this.flush();
    if (records.length === 0) return;
    await this.#writer.commit(records);
    this.transactions += 1;
  }

  /**
   * Re-commits the consumed offset already committed: a real transaction
   * (the broker checks the producer epoch) that changes nothing in the log,
   * so an idle writer replaced by a newer one learns that it is fenced.
   * Does nothing before anything was committed or resumed.
   */
  async probe(): Promise<void> {
    await this.flush();
    if (this.#committedNext === null) return;
    await this.#writer.commit([], { ...this.#consumed, nextOffset: this.#committedNext.toString() });
    this.transactions += 1;
  }

  /** Bytes of record values waiting for the next commit. */
  get pendingBytes(): number {
    return this.#bytes;
  }

  /**
   * Adds the output of the input record at `offset` (records may be empty:
   * the offset still moves). Commits what is pending once it reaches the
   * byte bound, this record's output included.
   */
  async add(offset: string, records: readonly OutRecord[], onCommitted?: () => void): Promise<void> {
    for (const record of records) {
      this.#records.push(record);
      this.#bytes += recordBytes(record);
    }
    if (onCommitted !== undefined) this.#callbacks.push(onCommitted);
    this.#lastOffset = offset;
    if (this.#bytes >= this.#maxBytes) await this.flush();
  }

  /** Commits what is pending (records and the consumed offset), if anything was added since the last commit. */
  async flush(): Promise<void> {
    if (this.#lastOffset === null) return;
    const records = this.#records;
    const callbacks = this.#callbacks;
    const next = BigInt(this.#lastOffset) + 1n;
    this.#dropPending();
    await this.#writer.commit(records, { ...this.#consumed, nextOffset: next.toString() });
    this.#committedNext = next;
    this.transactions += 1;
    for (const callback of callbacks) callback();
  }
}
