import { LedgerError } from '@agent-ledger/refusals';
import type { Admin, Kafka, Producer, RecordMetadata, Transaction } from 'kafkajs';
import { WriterFencedError, invalidArgument, unavailable, type BusError } from '../errors.js';
import type { ConsumedOffset, OutRecord, TransactionalWriter } from '../log-bus.js';
import { checkPartition, parseOffset } from '../offsets.js';
import { fromKafkaError, isFencing } from './errors.js';
import type { PartitionCounts } from './partition-counts.js';
import { producerSettings } from './producer-settings.js';
import { STEP_LIMIT_MS, withDeadline } from './deadline.js';
import { quietly } from './quietly.js';
import { toTopicMessages, unanswered } from './records.js';
import { VISIBILITY_LIMIT_MS, awaitVisible, writtenOffsets } from './visibility.js';

type WriterState = 'open' | 'fenced' | 'closed';

/** What a writer uses of its bus. */
export interface WriterDeps {
  /** A kafkajs client of the writer's own (see the bus for why it is not shared). */
  readonly kafka: Kafka;
  readonly partitions: PartitionCounts;
  /** The bus's admin client, for the visibility check after a commit. */
  readonly admin: () => Promise<Admin>;
  readonly onClose: (writer: KafkajsTransactionalWriter) => void;
}

function checkConsumed(consumed: ConsumedOffset): void {
  if (typeof consumed.groupId !== 'string' || consumed.groupId === '') throw invalidArgument('consumed.groupId must be a non-empty string');
  if (typeof consumed.topic !== 'string' || consumed.topic === '') throw invalidArgument('consumed.topic must be a non-empty string');
  checkPartition(consumed.partition, 'consumed.partition');
  parseOffset(consumed.nextOffset, 'consumed.nextOffset');
}

/**
 * The kafkajs transactional writer. kafkajs cannot reuse a producer whose
 * transaction failed (its state machine can stay in COMMITTING, and its
 * sequence numbers may no longer match the broker's), so after any failure
 * the producer is replaced. The replacement's InitProducerId also settles the
 * failed transaction on the coordinator (aborted, or committed if the commit
 * had already been decided), which is why it happens before the error is
 * reported: the log the caller then reads is final.
 */
export class KafkajsTransactionalWriter implements TransactionalWriter {
  readonly transactionalId: string;
  readonly #deps: WriterDeps;
  /** `null` after a failure whose re-initialisation failed too. */
  #producer: Producer | null = null;
  #state: WriterState = 'open';
  #fencedBy: unknown;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(deps: WriterDeps, transactionalId: string) {
    this.#deps = deps;
    this.transactionalId = transactionalId;
  }

  /** Opens a writer; resolves once every older writer with this id is fenced. */
  static async open(deps: WriterDeps, transactionalId: string): Promise<KafkajsTransactionalWriter> {
    const writer = new KafkajsTransactionalWriter(deps, transactionalId);
    writer.#producer = await writer.#initialise();
    return writer;
  }

  /**
   * A connected producer that holds the newest epoch of the transactional id.
   * kafkajs sends InitProducerId only at the first `transaction()`; beginning
   * and ending an empty one does it now, so that opening a writer fences older
   * ones at once. The empty transaction sends nothing to the broker on abort.
   */
  async #initialise(): Promise<Producer> {
    const producer = this.#deps.kafka.producer(producerSettings(this.transactionalId));
    try {
      await withDeadline(producer.connect(), STEP_LIMIT_MS, `connecting writer ${this.transactionalId}`);
      const empty = await withDeadline(producer.transaction(), STEP_LIMIT_MS, `initialising writer ${this.transactionalId}`);
      await withDeadline(empty.abort(), STEP_LIMIT_MS, `initialising writer ${this.transactionalId}`);
      return producer;
    } catch (err) {
      await quietly(producer.disconnect());
      throw fromKafkaError(err, `cannot initialise writer ${this.transactionalId}`);
    }
  }

  commit(records: readonly OutRecord[], consumed?: ConsumedOffset): Promise<void> {
    const run = this.#queue.then(() => this.#commitNow(records, consumed));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #commitNow(records: readonly OutRecord[], consumed: ConsumedOffset | undefined): Promise<void> {
    if (this.#state === 'closed') throw unavailable(`writer ${this.transactionalId} is closed`, { retryable: false });
    if (this.#state === 'fenced') throw new WriterFencedError(this.transactionalId, this.#fencedBy);
    if (consumed !== undefined) checkConsumed(consumed);
    await this.#deps.partitions.check(records);
    if (records.length === 0 && consumed === undefined) return;

    if (this.#producer === null) {
      // The last failure could not re-initialise, so the caller rebuilt its
      // state while an older transaction may still have been open, or while
      // another writer could still commit. Taking the id now changes what the
      // log holds; the caller must read it again before writing.
      this.#producer = await this.#initialise();
      throw unavailable(`writer ${this.transactionalId} re-initialised after an earlier failure: rebuild state from the log, then retry`, { retryable: true });
    }

    const producer = this.#producer;
    let transaction: Transaction | undefined;
    let metadata: RecordMetadata[] = [];
    try {
      // Each step bounded: one that never returns (seen after a broker fault) fails the transaction
      // like any other error, and the replacement producer settles it (see STEP_LIMIT_MS).
      const what = `a transaction of writer ${this.transactionalId}`;
      transaction = await withDeadline(producer.transaction(), STEP_LIMIT_MS, `beginning ${what}`);
      const open = transaction;
      if (records.length > 0) {
        metadata = await withDeadline(open.sendBatch({ topicMessages: toTopicMessages(records), acks: -1 }), STEP_LIMIT_MS, `sending ${what}`);
        // A partition kafkajs did not write (see `unanswered`) must not be committed without its records: abort instead.
        const missing = unanswered(records, metadata);
        if (missing.length > 0) {
          const where = [...new Set(missing.map((r) => `${r.topic}/${r.partition}`))].join(', ');
          throw unavailable(`${what}: the client reported the send done without writing to ${where}`, { retryable: true });
        }
      }
      if (consumed !== undefined) {
        await withDeadline(
          open.sendOffsets({
            consumerGroupId: consumed.groupId,
            topics: [{ topic: consumed.topic, partitions: [{ partition: consumed.partition, offset: consumed.nextOffset }] }],
          }),
          STEP_LIMIT_MS,
          `committing the consumed offset in ${what}`,
        );
      }
      await withDeadline(open.commit(), STEP_LIMIT_MS, `committing ${what}`);
    } catch (err) {
      throw await this.#afterFailure(err, producer, transaction);
    }
    await this.#awaitVisible(metadata, consumed);
  }

  /**
   * Returns once the committed records and offset can be read back (see
   * `awaitVisible`). The transaction is committed whatever happens here, so a
   * failure to check is logged, never thrown: a thrown error would make the
   * caller redo a committed batch.
   */
  async #awaitVisible(metadata: readonly RecordMetadata[], consumed: ConsumedOffset | undefined): Promise<void> {
    try {
      // Bounded as a whole: an admin request that never returns must not hold the caller's batch (and its partition) for good.
      const visible = await withDeadline(
        (async () => awaitVisible(await this.#deps.admin(), writtenOffsets(metadata), consumed))(),
        VISIBILITY_LIMIT_MS + STEP_LIMIT_MS,
        `checking that a transaction of writer ${this.transactionalId} is readable`,
      );
      if (!visible) this.#deps.kafka.logger().namespace('LedgerWriter').error('committed transaction not yet readable after the wait limit', { transactionalId: this.transactionalId });
    } catch (err) {
      this.#deps.kafka.logger().namespace('LedgerWriter').warn('cannot check that a committed transaction is readable', { transactionalId: this.transactionalId, error: String(err) });
    }
  }

  /** Settles a failed transaction and returns the error to report. */
  async #afterFailure(err: unknown, producer: Producer, transaction: Transaction | undefined): Promise<BusError> {
    if (!isFencing(err) && transaction?.isActive() === true) {
      try {
        await withDeadline(transaction.abort(), STEP_LIMIT_MS, `aborting a transaction of writer ${this.transactionalId}`);
      } catch (abortError) {
        // The replacement producer's InitProducerId aborts it instead.
        if (isFencing(abortError)) return this.#fenced(abortError, producer);
      }
    }
    if (isFencing(err)) return this.#fenced(err, producer);
    this.#producer = null;
    await quietly(producer.disconnect());
    try {
      this.#producer = await this.#initialise();
    } catch {
      // Left null: the next commit re-initialises and asks for a recovery first.
    }
    return fromKafkaError(err, `transaction of writer ${this.transactionalId} failed`);
  }

  async #fenced(err: unknown, producer: Producer): Promise<WriterFencedError> {
    this.#state = 'fenced';
    this.#fencedBy = err;
    this.#producer = null;
    await quietly(producer.disconnect());
    return new WriterFencedError(this.transactionalId, err);
  }

  async close(): Promise<void> {
    await this.#queue;
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    const producer = this.#producer;
    this.#producer = null;
    if (producer !== null) await quietly(producer.disconnect());
    this.#deps.onClose(this);
  }
}
