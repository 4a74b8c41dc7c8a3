import type { BusError } from './errors.js';

/**
 * A topic the ledger relies on. `partitions` is part of the ledger's format
 * (ledger partition p lives in a fixed Kafka partition), so an existing topic
 * with another count is an error, never silently used.
 */
export interface TopicSpec {
  readonly name: string;
  readonly partitions: number;
  /**
   * Replication factor of a topic this call creates; the broker's default when
   * absent. An existing topic with fewer replicas on some partition is
   * BAD_CONFIGURATION (an adapter without replication ignores it).
   */
  readonly replicationFactor?: number;
  /**
   * Topic settings by their Kafka names: applied when the topic is created,
   * compared when it already exists (another value is INTEGRITY_FAILURE).
   * Two durability settings are minimums instead, and an existing topic
   * weaker than asked is BAD_CONFIGURATION: `min.insync.replicas` (a lower
   * value) and `unclean.leader.election.enable` (`true` where `false` is asked).
   */
  readonly config?: Readonly<Record<string, string>>;
}

/** A record to write. The partition is always explicit: the ledger routes, Kafka never does. */
export interface OutRecord {
  readonly topic: string;
  readonly partition: number;
  /** UTF-8 key; `null` or absent for none. */
  readonly key?: string | null;
  readonly value: string | Buffer;
  /** UTF-8 headers. */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A committed record as read back. Offsets and timestamps are decimal strings
 * (Kafka's int64). Everything here comes from the broker and is untrusted:
 * callers parse `value` strictly before use.
 */
export interface InRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** The key decoded as UTF-8, `null` when the record has none. */
  readonly key: string | null;
  /** The value; empty when the record has none. */
  readonly value: Buffer;
  /** Milliseconds since the epoch, as the record carries it. */
  readonly timestamp: string;
  /** Header values decoded as UTF-8; of a key written twice, the last value. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Consecutive committed records of one partition, in offset order (never empty). */
export interface InBatch {
  readonly topic: string;
  readonly partition: number;
  readonly records: readonly InRecord[];
}

/** The position a consumer group reaches when a transaction commits: the offset of the next record to read. */
export interface ConsumedOffset {
  readonly groupId: string;
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: string;
}

/**
 * A transactional producer: one per input partition (the only exactly-once
 * shape kafkajs supports, with no KIP-447 group fencing). Opening one with a
 * transactional id fences every older writer with that id.
 *
 * Contract for callers: any error from `commit` means "nothing of this call
 * may be assumed visible, and the state you derived before it may be stale".
 * Rebuild it from the committed log (`LogBus.readRange`) before the next
 * commit. The writer re-initialises its producer before it reports such an
 * error, so what the log shows after the error is final.
 */
export interface TransactionalWriter {
  readonly transactionalId: string;
  /**
   * Writes `records` and, when given, the consumed offset, in ONE Kafka
   * transaction: all of it becomes visible to read_committed readers, or none.
   * Resolves once it is readable: `readRange`, `endOffsets` and the group's
   * committed offset already include it (Kafka writes commit markers after it
   * answers the commit; the adapter waits for them, up to a bound). Commits
   * are serialised: a call waits for the previous one.
   *
   * Throws `WriterFencedError` when a newer writer with the same id exists
   * (never retry; this writer stays fenced). Throws an `OperationalError` UNAVAILABLE with
   * `retryable: true` for a failure that may pass (broker, network,
   * coordinator), and `retryable: false` for records Kafka will never accept
   * (too large, unknown topic or partition).
   */
  commit(records: readonly OutRecord[], consumed?: ConsumedOffset): Promise<void>;
  /** Waits for a pending commit, then releases the producer. Idempotent. */
  close(): Promise<void>;
}

/** A running consumer group member. */
export interface Subscription {
  /** Leaves the group after the batch in progress (if any) finishes. Idempotent. */
  stop(): Promise<void>;
}

/** What `LogBus.subscribe` consumes and how. */
export interface SubscribeOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Where a partition without a committed offset starts: its first record, or its end. */
  readonly fromBeginning: boolean;
  /**
   * `true`: the adapter commits the group offset after `onBatch` resolves
   * (at-least-once). `false`: the handler commits it inside its own
   * transaction (`TransactionalWriter.commit(records, consumed)`).
   */
  readonly commitOffsets: boolean;
  /**
   * Take partitions at once instead of through the group's rebalance: the
   * member is alone in `groupId` (make it unique to the process) and gets
   * `partitions` of its single topic (all when absent), each starting at the
   * offset group `offsetsOf` committed (the group its transactions commit
   * to; where none is committed, `fromBeginning` decides). A restarted role
   * then never waits for its dead predecessor's session to expire. Two
   * members may then read the same partition: the transactional writer's
   * fencing keeps one writer. The handler must still skip records below the
   * committed offset: a consumer restart rejoins without the seek.
   *
   * With `startAt` instead of `offsetsOf`, each partition starts at the
   * offset `startAt()` gives (asked again when the consumer rejoins, so a
   * reader that keeps its own position resumes there); a partition it
   * leaves out starts as `fromBeginning` says.
   */
  readonly positions?: { readonly offsetsOf: string; readonly partitions?: readonly number[] } | { readonly startAt: () => ReadonlyMap<number, string>; readonly partitions?: readonly number[] };
  /** Partitions whose batches may be handled at the same time (default 1). Batches of one partition are always sequential. */
  readonly concurrency?: number;
  /**
   * Handles one batch. If it throws (or rejects), nothing is committed and the
   * same records are delivered again after a back-off: a batch is never skipped.
   */
  onBatch(batch: InBatch): Promise<void>;
  /**
   * Told about every failure. `stopped` is false while the subscription goes
   * on: a handler's error (passed as thrown, wrapped in an OperationalError INTERNAL
   * if it was not typed; the batch is redelivered regardless) or a consumer failure it
   * restarts after. `stopped` is true once, when the consumer gave up for
   * good. Must not throw.
   */
  onError?(error: BusError, stopped: boolean): void;
}

/**
 * The ledger's whole view of its log. The rest of the system never imports a
 * Kafka client; this interface is what an adapter implements.
 */
export interface LogBus {
  /**
   * Creates missing topics; an existing topic with another partition count or
   * another listed setting is an INTEGRITY_FAILURE, one less durable than
   * asked (fewer replicas, lower min.insync.replicas, unclean leader election
   * on) is BAD_CONFIGURATION naming the topic, the setting, what it found and
   * what is required.
   */
  ensureTopics(specs: readonly TopicSpec[]): Promise<void>;
  /** The number of live brokers of the cluster (absent: a log without replication, one node). */
  clusterSize?(): Promise<number>;
  /**
   * The replication factor the brokers give a topic by default
   * (`default.replication.factor` of a live broker): how many replicas the
   * cluster was built for, whichever brokers are up now. Undefined when it
   * cannot be read (no such config, or the principal may not describe it).
   */
  defaultReplicationFactor?(): Promise<number | undefined>;
  /** Opens a transactional writer (idempotent, one request in flight). Resolves once older writers with this id are fenced. */
  writer(transactionalId: string): Promise<TransactionalWriter>;
  /** Writes outside any transaction with an idempotent producer and acks from all in-sync replicas. At least once if retried. */
  publish(records: readonly OutRecord[]): Promise<void>;
  /** Joins `groupId` and feeds committed records (read_committed) to `onBatch`. Resolves once the member has joined. */
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /**
   * Every committed record of one partition from `fromOffset` up to the
   * partition's last stable offset AS OF THE CALL, in order, then the end.
   * Records committed later are not included. Aborted records and transaction
   * markers are skipped and never prevent the end. A `fromOffset` below the
   * partition's first retained offset, or beyond its end, is an
   * INTEGRITY_FAILURE (the log is not what the caller believes).
   */
  readRange(topic: string, partition: number, fromOffset: string): AsyncIterable<InRecord>;
  /** Per partition, the last stable offset: the end a read_committed reader sees now. */
  endOffsets(topic: string): Promise<ReadonlyMap<number, string>>;
  /**
   * Per partition, the offset of the first record whose timestamp is at or
   * after `timestampMs` (the end offset when there is none): where a reader
   * starts that wants only what was written since then.
   */
  offsetsForTime(topic: string, timestampMs: number): Promise<ReadonlyMap<number, string>>;
  /** Per partition of `topic`, the offset `groupId` committed (the next record to read), or null when it committed none. */
  committedOffsets(groupId: string, topic: string): Promise<ReadonlyMap<number, string | null>>;
  /**
   * Stops subscriptions, closes writers and disconnects. Idempotent. A
   * `readRange` still being iterated keeps its own consumer until the caller
   * finishes or abandons the iteration.
   */
  close(): Promise<void>;
}
