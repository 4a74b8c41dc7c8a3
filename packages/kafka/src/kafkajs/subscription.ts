import { LedgerError, OperationalCode, OperationalError } from '@agent-ledger/refusals';
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { invalidArgument, type BusError } from '../errors.js';
import type { InBatch, SubscribeOptions, Subscription } from '../log-bus.js';
import { fromKafkaError } from './errors.js';
import { quietly } from './quietly.js';
import { toInRecord } from './records.js';
import { partitionsAssigner } from './one-partition-assigner.js';
import { committedOffsets } from './topic-admin.js';

/** How often a member heartbeats, between batches and while its handler runs. */
const HEARTBEAT_MS = 1_000;

/**
 * How long the group coordinator waits for a silent member before it hands
 * that member's partitions to another: a crashed role's successor waits
 * this long to take over (kafkajs's default is 30 s). 6 s is the broker's
 * default minimum (`group.min.session.timeout.ms`); LEDGER_KAFKA_SESSION_TIMEOUT_MS
 * raises it for hosts whose event loop stalls longer.
 */
function sessionTimeoutMs(): number {
  const asked = Number(process.env.LEDGER_KAFKA_SESSION_TIMEOUT_MS ?? '6000');
  return Number.isSafeInteger(asked) && asked >= 6_000 && asked <= 300_000 ? asked : 6_000;
}

/**
 * A handler's failure as kafkajs sees it. kafkajs retries an error unless it
 * says `retriable: false` or is a TypeError, RangeError, ReferenceError or
 * SyntaxError, and a consumer that meets one of those crashes for good. A
 * handler bug must not stop the ledger's consumption silently, nor let a batch
 * be skipped, so every handler failure is retriable here.
 */
class HandlerFailure extends Error {
  readonly retriable = true;
  override readonly cause: BusError;

  constructor(cause: BusError) {
    super(cause.message);
    this.name = 'LedgerHandlerFailure';
    this.cause = cause;
  }
}

function fromHandlerError(error: unknown): BusError {
  if (error instanceof LedgerError || error instanceof OperationalError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  // An untyped throw is a bug in the handler; the batch is redelivered all the same.
  return new OperationalError(OperationalCode.INTERNAL, `batch handler failed: ${detail}`, { cause: error, retryable: true });
}

function causedByHandler(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 16; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof HandlerFailure) return true;
  }
  return false;
}

function checkOptions(options: SubscribeOptions): void {
  if (typeof options.groupId !== 'string' || options.groupId === '') throw invalidArgument('groupId must be a non-empty string');
  if (!Array.isArray(options.topics) || options.topics.length === 0) throw invalidArgument('topics must be a non-empty array');
  for (const topic of options.topics) if (typeof topic !== 'string' || topic === '') throw invalidArgument('every topic must be a non-empty string');
  if (options.concurrency !== undefined && (!Number.isSafeInteger(options.concurrency) || options.concurrency < 1)) {
    throw invalidArgument('concurrency must be a positive integer');
  }
  if (options.positions !== undefined && options.topics.length !== 1) throw invalidArgument('positions needs exactly one topic');
}

/** Seeks every taken partition to its committed offset (kafkajs applies a seek made before assignment on assignment). */
function seekTo(consumer: Consumer, committed: ReadonlyMap<number, string | null>, topic: string, partitions: readonly number[]): void {
  for (const partition of partitions) {
    const offset = committed.get(partition);
    if (offset !== null && offset !== undefined) consumer.seek({ topic, partition, offset });
  }
}

/**
 * A kafkajs consumer group member. It reads committed records only
 * (`readUncommitted: false`), never auto-commits, and resolves a batch's
 * offset only after the handler succeeded, so a failed batch is fetched again.
 */
export class KafkajsSubscription implements Subscription {
  readonly #consumer: Consumer;
  readonly #onStop: (subscription: KafkajsSubscription) => void;
  #stopping: Promise<void> | undefined;

  private constructor(consumer: Consumer, onStop: (subscription: KafkajsSubscription) => void) {
    this.#consumer = consumer;
    this.#onStop = onStop;
  }

  /** Joins the group and starts consuming. */
  static async start(kafka: Kafka, options: SubscribeOptions, onStop: (subscription: KafkajsSubscription) => void, admin: () => Promise<Admin>): Promise<KafkajsSubscription> {
    checkOptions(options);
    const positions = options.positions;
    const topic = options.topics[0] ?? '';
    let taken: readonly number[] = [];
    let initial: ReadonlyMap<number, string | null> = new Map();
    if (positions !== undefined) {
      try {
        taken = positions.partitions ?? (await (await admin()).fetchTopicOffsets(topic)).map((p) => p.partition);
      } catch (err) {
        throw fromKafkaError(err, `cannot list the partitions of ${topic}`);
      }
      initial = 'startAt' in positions ? positions.startAt() : await committedOffsets(await admin(), positions.offsetsOf, topic);
    }
    const report = (error: BusError, stopped: boolean): void => {
      try {
        options.onError?.(error, stopped);
      } catch {
        // onError must not throw; if it does, consumption goes on regardless.
      }
    };
    const consumer = kafka.consumer({
      groupId: options.groupId,
      readUncommitted: false,
      allowAutoTopicCreation: false,
      sessionTimeout: sessionTimeoutMs(),
      heartbeatInterval: HEARTBEAT_MS,
      // An idle member polls once a second: stop() waits for the fetch in
      // flight, and a fetch returns as soon as records arrive anyway.
      maxWaitTimeInMs: 1_000,
      // Bounded back-off between redeliveries; after the retries kafkajs
      // restarts the member, which fetches the group's committed offsets again.
      retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 10_000, restartOnFailure: () => Promise.resolve(true) },
      ...(positions === undefined ? {} : { partitionAssigners: [partitionsAssigner(topic, taken)] }),
    });
    const subscription = new KafkajsSubscription(consumer, onStop);
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (causedByHandler(payload.error)) return; // reported when the handler failed
      report(fromKafkaError(payload.error, `consumer group ${options.groupId} crashed`), !payload.restart);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [...options.topics], fromBeginning: options.fromBeginning });
      const running = consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: options.concurrency ?? 1,
        eachBatch: (payload) => handleBatch(payload, options, report),
      });
      if (positions !== undefined) {
        // run() creates the group member before its first await: the seek is in place before the first fetch.
        seekTo(consumer, initial, topic, taken);
        // After a later join (a consumer restart) the member starts from nothing again: seek once more.
        let joins = 0;
        consumer.on(consumer.events.GROUP_JOIN, () => {
          joins += 1;
          if (joins > 1) {
            ('startAt' in positions ? Promise.resolve(positions.startAt()) : admin().then((a) => committedOffsets(a, positions.offsetsOf, topic)))
              .then((committed) => seekTo(consumer, committed, topic, taken))
              .catch((err: unknown) => report(fromKafkaError(err, `cannot seek ${topic} after a rejoin`), false));
          }
        });
      }
      await running;
    } catch (err) {
      await quietly(consumer.disconnect());
      throw fromKafkaError(err, `cannot join consumer group ${options.groupId}`);
    }
    return subscription;
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      try {
        await this.#consumer.disconnect();
      } finally {
        this.#onStop(this);
      }
    })();
    return this.#stopping;
  }
}

async function handleBatch(payload: EachBatchPayload, options: SubscribeOptions, report: (error: BusError, stopped: boolean) => void): Promise<void> {
  const { batch } = payload;
  // A stale batch was fetched before a seek or a rebalance: leave it unresolved and it is fetched again.
  if (!payload.isRunning() || payload.isStale() || batch.messages.length === 0) return;
  const inBatch: InBatch = {
    topic: batch.topic,
    partition: batch.partition,
    records: batch.messages.map((message) => toInRecord(batch.topic, batch.partition, message)),
  };
  // kafkajs heartbeats only between batches; a long handler would otherwise
  // be taken for dead and its partitions reassigned mid-batch.
  const keepAlive = setInterval(() => {
    payload.heartbeat().catch(() => undefined);
  }, HEARTBEAT_MS);
  try {
    await options.onBatch(inBatch);
  } catch (err) {
    const error = fromHandlerError(err);
    report(error, false);
    throw new HandlerFailure(error);
  } finally {
    clearInterval(keepAlive);
  }
  // lastOffset() also covers the aborted records and transaction markers kafkajs filtered out of this batch.
  const last = batch.lastOffset();
  payload.resolveOffset(last);
  if (options.commitOffsets) {
    const next = (BigInt(last) + 1n).toString();
    await payload.commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }] });
  }
}
