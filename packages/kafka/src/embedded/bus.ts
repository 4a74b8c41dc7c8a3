import { realpathSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { LedgerError, OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { WriterFencedError, integrityFailure, invalidArgument, unavailable, type BusError } from '../errors.js';
import type { ConsumedOffset, InBatch, InRecord, LogBus, OutRecord, SubscribeOptions, Subscription, TopicSpec, TransactionalWriter } from '../log-bus.js';
import { LogStore, type FsyncPolicy, type NewRecord, type StoredRead } from './log-store.js';

/** Settings of an embedded log. */
export interface EmbeddedBusOptions {
  /** The log directory (created when missing), e.g. `.ledger/log`. */
  readonly dir: string;
  /**
   * Read another process's log: every complete frame, following the files as
   * they grow; writes are refused. Takes no lock (`ledger export` while
   * `ledger dev` runs).
   */
  readonly readOnly?: boolean;
  /** When a commit is acknowledged: after fdatasync (`always`, the default) or after write(2) (`never`). */
  readonly fsync?: FsyncPolicy;
  /** Size after which a new segment file starts (default 64 MiB). */
  readonly segmentBytes?: number;
}

/** Records a batch carries at most. */
const MAX_BATCH = 500;
/** Back-off after a failed batch: doubles from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_LAST_MS = 2_000;
const CANONICAL_OFFSET = /^(0|[1-9][0-9]{0,15})$/;

/**
 * Writable stores open in this process, by directory: several buses on one
 * directory (the roles of `ledger dev`, or a test standing for several
 * processes) share one store, one lock and one flusher.
 */
const openStores = new Map<string, { store: LogStore; users: number }>();

function keyOf(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return realpathSync(resolve(dir));
}

function acquireStore(options: EmbeddedBusOptions): LogStore {
  if (options.readOnly === true) return LogStore.open(resolve(options.dir), { readOnly: true });
  const key = keyOf(options.dir);
  const shared = openStores.get(key);
  if (shared !== undefined && !shared.store.closed) {
    shared.users += 1;
    return shared.store;
  }
  const store = LogStore.open(key, { ...(options.fsync === undefined ? {} : { fsync: options.fsync }), ...(options.segmentBytes === undefined ? {} : { segmentBytes: options.segmentBytes }) });
  openStores.set(key, { store, users: 1 });
  return store;
}

async function releaseStore(store: LogStore): Promise<void> {
  if (store.readOnly) return store.close();
  const shared = openStores.get(store.dir);
  if (shared === undefined || shared.store !== store) return store.close();
  shared.users -= 1;
  if (shared.users > 0) return;
  openStores.delete(store.dir);
  await store.close();
}

function parseOffset(text: string, what: string): number {
  if (typeof text !== 'string' || !CANONICAL_OFFSET.test(text)) throw invalidArgument(`${what} ${String(text).slice(0, 40)} is not a canonical non-negative decimal offset`);
  return Number(text);
}

function checkPartitionNumber(partition: number): void {
  if (!Number.isInteger(partition) || partition < 0) throw invalidArgument(`partition ${partition} is not a non-negative integer`);
}

function asBusError(err: unknown): BusError {
  if (err instanceof LedgerError || err instanceof OperationalError) return err;
  return new OperationalError(OperationalCode.INTERNAL, `batch handler failed: ${(err as Error)?.message ?? String(err)}`, { cause: err, retryable: true });
}

function toInRecord(topic: string, partition: number, r: StoredRead): InRecord {
  return { topic, partition, offset: String(r.offset), key: r.key, value: r.value, timestamp: String(r.timestamp), headers: r.headers };
}

const sleep = (ms: number): Promise<void> => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/**
 * A group's live members in this process: a partition belongs to one member
 * at a time (partition i to the i-th member, modulo their count), and moves
 * when members join or leave, starting from the group's committed offset.
 */
const groupMembers = new Map<string, Set<EmbeddedSubscription>>();

class EmbeddedSubscription implements Subscription {
  readonly #store: LogStore;
  readonly #options: SubscribeOptions;
  readonly #loops: Promise<void>[] = [];
  readonly #memberKey: string;
  #stopped = false;
  #wakeStop: () => void = () => undefined;
  readonly #stopSignal = new Promise<void>((resolveStop) => {
    this.#wakeStop = resolveStop;
  });
  #active = 0;
  readonly #slots: (() => void)[] = [];

  constructor(store: LogStore, options: SubscribeOptions) {
    this.#store = store;
    this.#options = options;
    this.#memberKey = `${store.dir}\0${options.groupId}`;
  }

  start(): void {
    let members = groupMembers.get(this.#memberKey);
    if (members === undefined) groupMembers.set(this.#memberKey, (members = new Set()));
    members.add(this);
    const wanted = this.#options.positions?.partitions;
    for (const topic of this.#options.topics) {
      const partitions = [...this.#store.ends(topic).keys()].filter((p) => wanted === undefined || wanted.includes(p));
      for (const p of partitions) this.#loops.push(this.#run(topic, p));
    }
  }

  #owns(topic: string, partition: number): boolean {
    if (this.#options.positions !== undefined) return true;
    const members = [...(groupMembers.get(this.#memberKey) ?? [])];
    return members[partition % Math.max(1, members.length)] === this;
  }

  #startOffset(topic: string, partition: number): number {
    const positions = this.#options.positions;
    if (positions !== undefined && 'startAt' in positions) {
      // A reader that keeps its own position resumes there; a partition it leaves out starts as fromBeginning says.
      const at = positions.startAt().get(partition);
      if (at !== undefined) return Number(at);
      return this.#options.fromBeginning ? 0 : (this.#store.ends(topic).get(partition) ?? 0);
    }
    const group = positions?.offsetsOf ?? this.#options.groupId;
    const committed = this.#store.committed(group, topic, partition);
    if (committed !== null) return committed;
    return this.#options.fromBeginning ? 0 : (this.#store.ends(topic).get(partition) ?? 0);
  }

  async #slot(): Promise<void> {
    if (this.#active < Math.max(1, this.#options.concurrency ?? 1)) {
      this.#active += 1;
      return;
    }
    await new Promise<void>((resolveSlot) => this.#slots.push(resolveSlot));
  }

  #release(): void {
    const next = this.#slots.shift();
    if (next !== undefined) next();
    else this.#active -= 1;
  }

  #report(error: BusError, stopped: boolean): void {
    try {
      this.#options.onError?.(error, stopped);
    } catch {
      // onError must not throw; if it does, the subscription goes on regardless.
    }
  }

  async #run(topic: string, partition: number): Promise<void> {
    let position: number | undefined;
    let retryMs = RETRY_FIRST_MS;
    while (!this.#stopped) {
      const changed = this.#store.changed();
      if (!this.#owns(topic, partition)) {
        position = undefined;
        await Promise.race([changed, this.#stopSignal, sleep(250)]);
        continue;
      }
      position ??= this.#startOffset(topic, partition);
      if (this.#store.readOnly) this.#store.refresh();
      const records = this.#store.read(topic, partition, position, MAX_BATCH);
      if (records.length === 0) {
        await Promise.race([changed, this.#stopSignal, ...(this.#store.readOnly ? [sleep(200)] : [])]);
        continue;
      }
      const batch: InBatch = { topic, partition, records: records.map((r) => toInRecord(topic, partition, r)) };
      await this.#slot();
      let ok = false;
      try {
        if (this.#stopped) return;
        await this.#options.onBatch(batch);
        ok = true;
      } catch (err) {
        this.#report(asBusError(err), false);
      } finally {
        this.#release();
      }
      if (!ok) {
        await Promise.race([sleep(retryMs), this.#stopSignal]);
        retryMs = Math.min(RETRY_LAST_MS, retryMs * 2);
        continue;
      }
      retryMs = RETRY_FIRST_MS;
      position = (records.at(-1)?.offset ?? position) + 1;
      if (this.#options.commitOffsets) {
        try {
          await this.#store.commitOffsets([{ groupId: this.#options.groupId, topic, partition, nextOffset: position }]);
        } catch (err) {
          this.#report(asBusError(err), false);
        }
      }
    }
  }

  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#wakeStop();
      groupMembers.get(this.#memberKey)?.delete(this);
    }
    await Promise.all(this.#loops);
  }
}

class EmbeddedWriter implements TransactionalWriter {
  readonly transactionalId: string;
  readonly #store: LogStore;
  readonly #epoch: number;
  readonly #bus: EmbeddedBus;
  #chain: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(bus: EmbeddedBus, store: LogStore, transactionalId: string, epoch: number) {
    this.#bus = bus;
    this.#store = store;
    this.transactionalId = transactionalId;
    this.#epoch = epoch;
  }

  commit(records: readonly OutRecord[], consumed?: ConsumedOffset): Promise<void> {
    const run = async (): Promise<void> => {
      if (this.#closed) throw unavailable(`writer ${this.transactionalId} is closed`, { retryable: false });
      if (this.#store.epochOf(this.transactionalId) !== this.#epoch) throw new WriterFencedError(this.transactionalId);
      const checked = this.#bus.checkRecords(records);
      const offsets =
        consumed === undefined
          ? []
          : [{ groupId: checkGroup(consumed.groupId), topic: consumed.topic, partition: (checkPartitionNumber(consumed.partition), consumed.partition), nextOffset: parseOffset(consumed.nextOffset, 'consumed offset') }];
      if (checked.length === 0 && offsets.length === 0) return;
      await this.#store.commit(checked, offsets, { transactionalId: this.transactionalId, epoch: this.#epoch });
    };
    const result = this.#chain.then(run);
    this.#chain = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#chain;
  }
}

function checkGroup(groupId: string): string {
  if (typeof groupId !== 'string' || groupId === '') throw invalidArgument('a consumer group id must be a non-empty string');
  return groupId;
}

class EmbeddedBus implements LogBus {
  readonly #options: EmbeddedBusOptions;
  #store: LogStore | undefined;
  #closed = false;
  readonly #subscriptions = new Set<EmbeddedSubscription>();
  readonly #writers = new Set<EmbeddedWriter>();

  constructor(options: EmbeddedBusOptions) {
    this.#options = options;
  }

  #open(): LogStore {
    if (this.#closed) throw unavailable('the embedded log bus is closed', { retryable: false });
    this.#store ??= acquireStore(this.#options);
    if (this.#store.readOnly) this.#store.refresh();
    return this.#store;
  }

  /** Checks records against the topics (all of them before anything is written) and converts them. */
  checkRecords(records: readonly OutRecord[]): NewRecord[] {
    const store = this.#open();
    for (const r of records) checkPartitionNumber(r.partition);
    return records.map((r) => {
      const topic = store.topic(r.topic);
      if (topic === undefined) throw integrityFailure(`topic ${r.topic} does not exist in the log`);
      if (r.partition >= topic.partitions) throw integrityFailure(`topic ${r.topic} has no partition ${r.partition}`);
      return { topic: r.topic, partition: r.partition, key: r.key ?? null, headers: { ...(r.headers ?? {}) }, value: typeof r.value === 'string' ? Buffer.from(r.value, 'utf8') : Buffer.from(r.value) };
    });
  }

  async ensureTopics(specs: readonly TopicSpec[]): Promise<void> {
    const store = this.#open();
    const names = new Set<string>();
    for (const spec of specs) {
      if (typeof spec.name !== 'string' || spec.name === '' || spec.name.length > 249) throw invalidArgument('a topic name must be 1 to 249 characters');
      if (!Number.isInteger(spec.partitions) || spec.partitions < 1 || spec.partitions > 10_000) throw invalidArgument(`topic ${spec.name}: partitions must be an integer from 1`);
      if (names.has(spec.name)) throw invalidArgument(`topic ${spec.name} is listed twice`);
      names.add(spec.name);
    }
    for (const spec of specs) {
      const existing = store.topic(spec.name);
      const config = spec.config ?? {};
      if (existing === undefined) {
        await store.createTopic(spec.name, spec.partitions, config);
        continue;
      }
      if (existing.partitions !== spec.partitions) throw integrityFailure(`topic ${spec.name} has ${existing.partitions} partitions, the ledger needs ${spec.partitions}`);
      for (const [key, value] of Object.entries(config)) {
        if (existing.config[key] !== value) throw integrityFailure(`topic ${spec.name} has ${key}=${existing.config[key] ?? '(default)'}, the ledger needs ${value}`);
      }
    }
  }

  async writer(transactionalId: string): Promise<TransactionalWriter> {
    const store = this.#open();
    if (typeof transactionalId !== 'string' || transactionalId === '') throw invalidArgument('a transactional id must be a non-empty string');
    const epoch = await store.fence(transactionalId);
    const writer = new EmbeddedWriter(this, store, transactionalId, epoch);
    this.#writers.add(writer);
    return writer;
  }

  async publish(records: readonly OutRecord[]): Promise<void> {
    const store = this.#open();
    const checked = this.checkRecords(records);
    if (checked.length > 0) await store.commit(checked, []);
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    const store = this.#open();
    checkGroup(options.groupId);
    if (options.positions !== undefined && 'offsetsOf' in options.positions) checkGroup(options.positions.offsetsOf);
    for (const topic of options.topics) store.ends(topic);
    const subscription = new EmbeddedSubscription(store, options);
    subscription.start();
    this.#subscriptions.add(subscription);
    return {
      stop: async () => {
        this.#subscriptions.delete(subscription);
        await subscription.stop();
      },
    };
  }

  readRange(topic: string, partition: number, fromOffset: string): AsyncIterable<InRecord> {
    // The end is taken now, at the call: records committed later are not included.
    let failure: BusError | undefined;
    let from = 0;
    let end = 0;
    let store: LogStore | undefined;
    try {
      store = this.#open();
      checkPartitionNumber(partition);
      from = parseOffset(fromOffset, 'fromOffset');
      const ends = store.ends(topic);
      const partitionEnd = ends.get(partition);
      if (partitionEnd === undefined) throw integrityFailure(`topic ${topic} has no partition ${partition}`);
      if (from > partitionEnd) throw integrityFailure(`offset ${from} is beyond the end (${partitionEnd}) of ${topic}/${partition}`);
      end = partitionEnd;
    } catch (err) {
      failure = asBusError(err);
    }
    const source = store;
    return (async function* () {
      if (failure !== undefined || source === undefined) throw failure ?? unavailable('the log is not open');
      let at = from;
      while (at < end) {
        const records = source.read(topic, partition, at, MAX_BATCH, end);
        if (records.length === 0) return;
        for (const r of records) yield toInRecord(topic, partition, r);
        at = (records.at(-1)?.offset ?? at) + 1;
      }
    })();
  }

  async endOffsets(topic: string): Promise<ReadonlyMap<number, string>> {
    const ends = this.#open().ends(topic);
    return new Map([...ends].map(([p, o]) => [p, String(o)]));
  }

  async offsetsForTime(topic: string, timestampMs: number): Promise<ReadonlyMap<number, string>> {
    const offsets = this.#open().offsetsForTime(topic, timestampMs);
    return new Map([...offsets].map(([p, o]) => [p, String(o)]));
  }

  async committedOffsets(groupId: string, topic: string): Promise<ReadonlyMap<number, string | null>> {
    const store = this.#open();
    const ends = store.ends(topic);
    return new Map([...ends.keys()].map((p) => {
      const c = store.committed(groupId, topic, p);
      return [p, c === null ? null : String(c)];
    }));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#subscriptions].map((s) => s.stop()));
    this.#subscriptions.clear();
    await Promise.all([...this.#writers].map((w) => w.close()));
    this.#writers.clear();
    if (this.#store !== undefined) await releaseStore(this.#store);
  }
}

/**
 * A `LogBus` on an embedded log in a local directory: the log of `ledger dev`.
 * Same contract as the Kafka adapter (packages/kafka/test/log-bus.contract.ts):
 * transactions atomic over records and the consumed offset, only committed
 * records readable, a second writer with the same transactional id fencing the
 * first. One process writes a directory (`LOCK`); buses of that process share
 * it. See log-store.ts for the file format and the fsync policy.
 */
export function createEmbeddedBus(options: EmbeddedBusOptions): LogBus {
  if (typeof options.dir !== 'string' || options.dir === '') throw invalidArgument('the embedded log needs a directory');
  return new EmbeddedBus(options);
}

/** What an embedded log holds besides its records: its topics and the consumer groups' committed offsets. */
export interface EmbeddedLayout {
  readonly topics: readonly { readonly name: string; readonly partitions: number; readonly config: Readonly<Record<string, string>> }[];
  readonly groupOffsets: readonly { readonly groupId: string; readonly topic: string; readonly partition: number; readonly nextOffset: string }[];
}

/** Reads the topics and committed group offsets of the embedded log in `dir` (read-only, as of now). */
export async function readEmbeddedLayout(dir: string): Promise<EmbeddedLayout> {
  const store = LogStore.open(resolve(dir), { readOnly: true });
  try {
    return { topics: store.topics(), groupOffsets: store.groupOffsets().map((o) => ({ ...o, nextOffset: String(o.nextOffset) })) };
  } finally {
    await store.close();
  }
}
