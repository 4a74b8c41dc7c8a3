import { LedgerError, OperationalCode, OperationalError } from '@agent-ledger/refusals';
import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { invalidArgument, unavailable, type BusError } from '../errors.js';
import type { InBatch, SubscribeOptions, Subscription } from '../log-bus.js';
import { fromKafkaError } from './errors.js';
import { STEP_LIMIT_MS, withDeadline } from './deadline.js';
import { quietly } from './quietly.js';
import { toInRecord } from './records.js';
import { partitionsAssigner } from './one-partition-assigner.js';
import { committedOffsets } from './topic-admin.js';
import type { SubscriptionReporter } from './logging.js';

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
 * Seeks after a rejoin. When kafkajs restarts a consumer itself it emits the
 * join before its new consumer group is in place, and a seek then throws
 * ("consumer#run must be called first"): tried again a few times, shortly.
 */
async function seekAfterRejoin(consumer: Consumer, committed: ReadonlyMap<number, string | null>, topic: string, partitions: readonly number[], current: () => boolean): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (!current()) return;
    try {
      seekTo(consumer, committed, topic, partitions);
      return;
    } catch (err) {
      if (attempt >= 20) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * How long a member may go without a batch while committed records wait for
 * it before its consumer is replaced. kafkajs has been seen to stop fetching
 * for good after a broker fault without reporting anything (no crash, no
 * error, heartbeats going on); a fresh consumer in the same group starts again
 * from the committed offsets. LEDGER_KAFKA_STALL_MS changes it (5 s to 10 min).
 */
function stallLimitMs(): number {
  const asked = Number(process.env.LEDGER_KAFKA_STALL_MS ?? '30000');
  return Number.isSafeInteger(asked) && asked >= 5_000 && asked <= 600_000 ? asked : 30_000;
}

/** How often the stall watch looks. */
const WATCH_EVERY_MS = 5_000;
/** How long records must be seen waiting, with nothing read, before the consumer is replaced. */
const WAITING_GRACE_MS = 10_000;

/** The greater of two offsets, either possibly unknown. */
function later(a: bigint | undefined, b: bigint | undefined): bigint | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

/**
 * A kafkajs consumer group member. It reads committed records only
 * (`readUncommitted: false`), never auto-commits, and resolves a batch's
 * offset only after the handler succeeded, so a failed batch is fetched again.
 * A watch replaces the consumer when committed records wait for it and no
 * batch came for the stall limit (see `stallLimitMs`): a batch is then fetched
 * again from the committed offsets, as after any redelivery.
 */
export class KafkajsSubscription implements Subscription {
  readonly #kafka: Kafka;
  readonly #options: SubscribeOptions;
  readonly #admin: () => Promise<Admin>;
  readonly #onStop: (subscription: KafkajsSubscription) => void;
  /** Where reports go when the caller gave no `onError`. */
  readonly #fallback: SubscriptionReporter;
  #consumer: Consumer | undefined;
  /** Which consumer is current: batches of a replaced one are left unresolved. */
  #generation = 0;
  /** When a batch last arrived or finished, the member last joined, or the watch last found nothing waiting. */
  #lastProgressAt = Date.now();
  #handling = 0;
  /** The batches the handler is working on, by when each began (several with `concurrency`). */
  readonly #running = new Map<number, { readonly since: number; readonly where: string }>();
  #batchNumber = 0;
  /** When the watch last said a batch was taking long. */
  #slowSaidAt = 0;
  /** Per `topic`, per partition, the offset after the last batch kafkajs processed for this member (markers included). */
  readonly #seen = new Map<string, Map<number, bigint>>();
  /** Partitions this member holds, per topic, from its last join. */
  #assigned: ReadonlyMap<string, readonly number[]> = new Map();
  /**
   * When kafkajs stopped the consumer for good (an error it does not retry:
   * credentials, a denied request), or undefined. The watch replaces it after
   * the stall limit, again and again: a role must not stop consuming for good
   * on what an operator can fix while it runs.
   */
  #gaveUpAt: number | undefined;
  #watch: NodeJS.Timeout | undefined;
  /** The watch's look in progress, if any: stop() waits for it, so a replacement is never left running. */
  #checking: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  /** When the watch first found records waiting in the current idle spell. */
  #waitingSeen: { readonly idleSince: number; readonly at: number } | undefined;
  /** When the watch last said it could not look. */
  #lookFailedAt = 0;
  /** How many times the watch replaced a stalled consumer. */
  restarts = 0;

  private constructor(kafka: Kafka, options: SubscribeOptions, deps: SubscriptionDeps) {
    this.#kafka = kafka;
    this.#options = options;
    this.#onStop = deps.onStop;
    this.#admin = deps.admin;
    this.#fallback = deps.report;
  }

  /** Joins the group and starts consuming. */
  static async start(kafka: Kafka, options: SubscribeOptions, deps: SubscriptionDeps): Promise<KafkajsSubscription> {
    checkOptions(options);
    const subscription = new KafkajsSubscription(kafka, options, deps);
    await subscription.#launch();
    subscription.#watch = setInterval(() => subscription.#check(), WATCH_EVERY_MS);
    subscription.#watch.unref();
    return subscription;
  }

  #report(error: BusError, stopped: boolean): void {
    try {
      if (this.#options.onError === undefined) this.#fallback(this.#options.groupId, error, stopped);
      else this.#options.onError(error, stopped);
    } catch {
      // onError must not throw; if it does, consumption goes on regardless.
    }
  }

  /** Where each partition starts: the committed offsets of `positions` (asked now), or none. */
  async #positions(topic: string): Promise<{ taken: readonly number[]; initial: ReadonlyMap<number, string | null> }> {
    const positions = this.#options.positions;
    if (positions === undefined) return { taken: [], initial: new Map() };
    let taken: readonly number[];
    try {
      taken = positions.partitions ?? (await withDeadline((async () => (await this.#admin()).fetchTopicOffsets(topic))(), STEP_LIMIT_MS, `listing the partitions of ${topic}`)).map((p) => p.partition);
    } catch (err) {
      throw fromKafkaError(err, `cannot list the partitions of ${topic}`);
    }
    const initial =
      'startAt' in positions
        ? positions.startAt()
        : await withDeadline((async () => committedOffsets(await this.#admin(), positions.offsetsOf, topic))(), STEP_LIMIT_MS, `reading the offsets ${positions.offsetsOf} committed on ${topic}`);
    return { taken, initial };
  }

  /** Makes a consumer, joins the group with it and starts it; the previous one (if any) is no longer current. */
  async #launch(): Promise<void> {
    const options = this.#options;
    const positions = options.positions;
    const topic = options.topics[0] ?? '';
    const { taken, initial } = await this.#positions(topic);
    const generation = ++this.#generation;
    const current = (): boolean => generation === this.#generation;
    const consumer = this.#kafka.consumer({
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
    this.#consumer = consumer;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!current()) return;
      if (!payload.restart) this.#gaveUpAt = Date.now();
      if (causedByHandler(payload.error)) return; // reported when the handler failed
      this.#report(fromKafkaError(payload.error, `consumer group ${options.groupId} crashed`), !payload.restart);
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (!current()) return;
      this.#assigned = new Map(Object.entries(payload.memberAssignment));
      this.#lastProgressAt = Date.now();
    });
    const skipped = new Set<string>();
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (!current() || skipped.delete(`${payload.topic}:${payload.partition}:${payload.lastOffset}`)) return;
      let partitions = this.#seen.get(payload.topic);
      if (partitions === undefined) {
        partitions = new Map();
        this.#seen.set(payload.topic, partitions);
      }
      const next = BigInt(payload.lastOffset) + 1n;
      if (next > (partitions.get(payload.partition) ?? -1n)) partitions.set(payload.partition, next);
      this.#lastProgressAt = Date.now();
    });
    try {
      await withDeadline(consumer.connect(), STEP_LIMIT_MS, `connecting a member of ${options.groupId}`);
      await withDeadline(consumer.subscribe({ topics: [...options.topics], fromBeginning: options.fromBeginning }), STEP_LIMIT_MS, `subscribing a member of ${options.groupId}`);
      const running = consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: options.concurrency ?? 1,
        eachBatch: async (payload) => {
          // A replaced consumer's late batch: left unresolved, the current consumer reads it.
          if (!current()) return;
          this.#lastProgressAt = Date.now();
          this.#handling += 1;
          const number = ++this.#batchNumber;
          this.#running.set(number, { since: Date.now(), where: `${payload.batch.topic}/${payload.batch.partition} from offset ${payload.batch.firstOffset() ?? '?'}` });
          try {
            const handled = await handleBatch(payload, options, (error, stopped) => this.#report(error, stopped));
            // A stale batch left unresolved is fetched again: kafkajs's END_BATCH_PROCESS must not count it as read.
            if (!handled) skipped.add(`${payload.batch.topic}:${payload.batch.partition}:${payload.batch.lastOffset()}`);
          } finally {
            this.#handling -= 1;
            this.#running.delete(number);
            this.#lastProgressAt = Date.now();
          }
        },
      });
      if (positions !== undefined) {
        // run() creates the group member before its first await: the seek is in place before the first fetch.
        seekTo(consumer, initial, topic, taken);
        // After a later join (a consumer restart) the member starts from nothing again: seek once more.
        let joins = 0;
        consumer.on(consumer.events.GROUP_JOIN, () => {
          joins += 1;
          if (joins > 1 && current()) {
            (
              'startAt' in positions
                ? Promise.resolve(positions.startAt())
                : withDeadline((async () => committedOffsets(await this.#admin(), positions.offsetsOf, topic))(), STEP_LIMIT_MS, `reading the offsets ${positions.offsetsOf} committed on ${topic}`)
            )
              .then((committed) => seekAfterRejoin(consumer, committed, topic, taken, current))
              .catch((err: unknown) => this.#report(fromKafkaError(err, `cannot seek ${topic} after a rejoin`), false));
          }
        });
      }
      await withDeadline(running, STEP_LIMIT_MS, `joining consumer group ${options.groupId}`);
    } catch (err) {
      await quietly(consumer.disconnect());
      throw fromKafkaError(err, `cannot join consumer group ${options.groupId}`);
    }
    this.#lastProgressAt = Date.now();
  }

  /**
   * A partition of this member with committed records past what it has read
   * (its own batches, or the offsets its group committed, whichever is
   * further), described; undefined when it is caught up.
   */
  async #waiting(): Promise<string | undefined> {
    const options = this.#options;
    const positions = options.positions;
    const admin = await this.#admin();
    for (const [topic, partitions] of this.#assigned) {
      if (partitions.length === 0) continue;
      const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, p]));
      const committed =
        positions !== undefined && 'startAt' in positions ? positions.startAt() : await committedOffsets(admin, positions?.offsetsOf ?? options.groupId, topic);
      const seen = this.#seen.get(topic);
      for (const partition of partitions) {
        const bounds = ends.get(partition);
        if (bounds === undefined) continue;
        const end = BigInt(bounds.offset);
        const stored = committed.get(partition);
        // With nothing read and nothing committed, the member starts where `fromBeginning` says.
        const start = options.fromBeginning ? BigInt(bounds.low) : end;
        const position = later(seen?.get(partition), stored === null || stored === undefined ? undefined : BigInt(stored)) ?? start;
        if (end > position) return `${topic}/${partition}: offset ${position} read, ${end} committed`;
      }
    }
    return undefined;
  }

  /** The stall watch: replaces the consumer when records wait and nothing came for the stall limit. */
  #check(): void {
    if (this.#checking !== undefined || this.#stopping !== undefined) return;
    const now = Date.now();
    if (this.#gaveUpAt !== undefined) {
      if (now - this.#gaveUpAt < stallLimitMs()) return;
      this.#gaveUpAt = undefined;
      this.#checking = this.#replace(`consumer group ${this.#options.groupId} was stopped by its client on an error it does not retry: a new consumer joins`).finally(() => {
        this.#checking = undefined;
      });
      return;
    }
    if (this.#handling > 0) {
      this.#slowBatch(now);
      return;
    }
    const idleSince = this.#lastProgressAt;
    if (now - idleSince < stallLimitMs()) return;
    this.#checking = this.#look(idleSince).finally(() => {
      this.#checking = undefined;
    });
  }

  /**
   * A batch the handler has worked on for longer than the stall limit is said
   * (at most once per stall limit): its partition reads nothing more until the
   * handler returns. Nothing is replaced under a running handler, whose
   * writes may yet commit; every step of the ledger's own handlers is bounded,
   * so one that runs this long is worth an operator's look.
   */
  #slowBatch(now: number): void {
    let oldest: { readonly since: number; readonly where: string } | undefined;
    for (const batch of this.#running.values()) if (oldest === undefined || batch.since < oldest.since) oldest = batch;
    if (oldest === undefined || now - oldest.since < stallLimitMs() || now - this.#slowSaidAt < stallLimitMs()) return;
    this.#slowSaidAt = now;
    this.#report(unavailable(`consumer group ${this.#options.groupId}: the handler has worked on one batch (${oldest.where}) for ${Math.round((now - oldest.since) / 1000)} s; that partition reads nothing more until it returns`), false);
  }

  async #look(idleSince: number): Promise<void> {
    let waiting: string | undefined;
    try {
      waiting = await withDeadline(this.#waiting(), STEP_LIMIT_MS, `checking consumer group ${this.#options.groupId} for records waiting`);
    } catch (err) {
      // The cluster does not answer: a new consumer could not fetch either. Looked at again at the next
      // look; said at most once per stall limit.
      if (Date.now() - this.#lookFailedAt >= stallLimitMs()) {
        this.#lookFailedAt = Date.now();
        this.#report(fromKafkaError(err, `consumer group ${this.#options.groupId} read nothing for ${Math.round((Date.now() - idleSince) / 1000)} s, and whether records wait cannot be read`), false);
      }
      return;
    }
    if (waiting === undefined) {
      // Caught up: idle is fine. Looked at again after another stall limit.
      this.#lastProgressAt = Date.now();
      this.#waitingSeen = undefined;
      return;
    }
    if (this.#stopping !== undefined || this.#handling > 0 || this.#lastProgressAt !== idleSince) return;
    // Records waiting are first only noted: a consumer reconnecting after an outage gets a grace period to fetch them.
    if (this.#waitingSeen?.idleSince !== idleSince) {
      this.#waitingSeen = { idleSince, at: Date.now() };
      return;
    }
    if (Date.now() - this.#waitingSeen.at < WAITING_GRACE_MS) return;
    this.#waitingSeen = undefined;
    await this.#replace(`consumer group ${this.#options.groupId} read nothing for ${Math.round((Date.now() - idleSince) / 1000)} s with records waiting (${waiting}): its consumer is replaced`);
  }

  /** Leaves the group with the current consumer and joins it with a new one, which reads from the committed offsets. */
  async #replace(why: string): Promise<void> {
    this.restarts += 1;
    this.#report(unavailable(why), false);
    const stalled = this.#consumer;
    this.#generation += 1;
    if (stalled !== undefined) await quietly(stalled.disconnect());
    try {
      await this.#launch();
    } catch (err) {
      // Tried again after another stall limit, whatever the old consumer had been assigned.
      this.#gaveUpAt = Date.now();
      this.#report(fromKafkaError(err, `cannot replace the consumer of ${this.#options.groupId}`), false);
    }
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      clearInterval(this.#watch);
      try {
        // Not while a replacement is being made (every step of it is bounded).
        await this.#checking;
        if (this.#consumer !== undefined) await withDeadline(this.#consumer.disconnect(), STEP_LIMIT_MS, `leaving consumer group ${this.#options.groupId}`);
      } finally {
        this.#onStop(this);
      }
    })();
    return this.#stopping;
  }
}

/** What a subscription needs from its bus. */
export interface SubscriptionDeps {
  /** Called once the subscription has stopped. */
  readonly onStop: (subscription: KafkajsSubscription) => void;
  /** The bus's shared admin client. */
  readonly admin: () => Promise<Admin>;
  /** Where reports go when the caller gave no `onError`. */
  readonly report: SubscriptionReporter;
}

/** Hands one batch to the handler; false when it was left unresolved unhandled (stale, or empty). */
async function handleBatch(payload: EachBatchPayload, options: SubscribeOptions, report: (error: BusError, stopped: boolean) => void): Promise<boolean> {
  const { batch } = payload;
  // A stale batch was fetched before a seek or a rebalance: leave it unresolved and it is fetched again.
  if (!payload.isRunning() || payload.isStale() || batch.messages.length === 0) return false;
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
  return true;
}
