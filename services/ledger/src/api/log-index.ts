import type { SqlPool } from '@agent-ledger/store';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { bytesEqual, fromHex, interiorHash, rootFromLeafHashes, toBase64, type Entry } from '@agent-ledger/core';
import type { LogBus, Subscription } from '@agent-ledger/kafka';
import { parseEntry } from '../gate/gate-worker.js';
import { entryLocation, ledgerPartitionOf, type TopicNames } from '../topics.js';

/** Entry records kept in memory per partition (the newest): older ones are read back from Kafka. */
export const ENTRY_CACHE_PER_PARTITION = 4096;
/** Leaves per chunk: the index keeps one hash per complete chunk, and the leaves of the newest, incomplete one. */
export const LEAF_CHUNK = 1024;
/** Complete chunks whose leaves are kept after a proof needed them (least recently used dropped). */
const CHUNK_CACHE = 16;
/** Checkpoints kept per partition (the newest): a receipt cites the newest one the tree has reached. */
const CHECKPOINTS_KEPT = 64;
/** Checkpoint-topic offsets read back from its end at start (each checkpoint takes two: record and commit marker). */
const CHECKPOINT_TAIL = 128;
/** Rows of leaf hashes read from Postgres per query at start. */
const LOAD_PAGE = 65_536;

/** Thrown inside a proof computation when a complete chunk's leaves are not in memory: loaded, then the proof is computed again. */
class NeedChunk {
  constructor(readonly chunk: number) {}
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** A growable column of 32-byte hashes. */
class HashColumn {
  #bytes = new Uint8Array(32 * 64);
  #count = 0;

  push(hash: Uint8Array): void {
    if ((this.#count + 1) * 32 > this.#bytes.length) {
      const grown = new Uint8Array(this.#bytes.length * 2);
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    this.#bytes.set(hash, this.#count * 32);
    this.#count += 1;
  }

  at(i: number): Uint8Array {
    return this.#bytes.subarray(i * 32, i * 32 + 32);
  }

  get length(): number {
    return this.#count;
  }
}

/**
 * One partition's Merkle tree (RFC 9162) in bounded memory: the root of
 * every complete chunk of {@link LEAF_CHUNK} leaves (32 bytes per chunk),
 * the leaves of the newest, incomplete chunk, and a small cache of complete
 * chunks' leaves. A proof needs the leaves of at most the chunks holding
 * its boundaries; the rest of it comes from chunk roots. Those leaves are
 * loaded on demand by the caller (see {@link ChunkedTree.prove}).
 */
export class ChunkedTree {
  readonly chunkSize: number;
  readonly #roots = new HashColumn();
  /** Kafka offset of each complete chunk's first entry (NaN when it came from the projection). */
  #chunkOffsets = new Float64Array(64);
  #tail: Uint8Array[] = [];
  #tailFirstOffset = Number.NaN;
  readonly #cache = new Map<number, readonly Uint8Array[]>();

  constructor(chunkSize = LEAF_CHUNK) {
    this.chunkSize = chunkSize;
  }

  get size(): number {
    return this.#roots.length * this.chunkSize + this.#tail.length;
  }

  /** Appends the next leaf (an entry hash), with the Kafka offset of its record when known (NaN otherwise). */
  append(leaf: Uint8Array, offset = Number.NaN): void {
    if (this.#tail.length === 0) this.#tailFirstOffset = offset;
    this.#tail.push(leaf);
    if (this.#tail.length === this.chunkSize) {
      const chunk = this.#roots.length;
      this.#roots.push(rootFromLeafHashes(this.#tail));
      if (chunk >= this.#chunkOffsets.length) {
        const grown = new Float64Array(this.#chunkOffsets.length * 2);
        grown.set(this.#chunkOffsets);
        this.#chunkOffsets = grown;
      }
      this.#chunkOffsets[chunk] = this.#tailFirstOffset;
      this.#remember(chunk, this.#tail);
      this.#tail = [];
      this.#tailFirstOffset = Number.NaN;
    }
  }

  /** Kafka offset of the first entry of the chunk holding `index`, NaN when unknown. */
  chunkOffset(index: number): number {
    const chunk = Math.floor(index / this.chunkSize);
    if (chunk < this.#roots.length) return this.#chunkOffsets[chunk] ?? Number.NaN;
    return this.#tailFirstOffset;
  }

  /**
   * Gives the leaves of a complete chunk read back from somewhere (the log
   * or the projection); they must hash to the chunk's root.
   */
  load(chunk: number, leaves: readonly Uint8Array[]): void {
    const root = this.#roots.length > chunk ? this.#roots.at(chunk) : undefined;
    if (root === undefined || leaves.length !== this.chunkSize || !bytesEqual(rootFromLeafHashes(leaves), root)) {
      throw new OperationalError(OperationalCode.INTERNAL, `leaves read back for chunk ${chunk} do not match the index`);
    }
    this.#remember(chunk, leaves);
  }

  #remember(chunk: number, leaves: readonly Uint8Array[]): void {
    this.#cache.delete(chunk);
    this.#cache.set(chunk, leaves);
    if (this.#cache.size > CHUNK_CACHE) {
      const oldest = this.#cache.keys().next();
      if (oldest.done !== true) this.#cache.delete(oldest.value);
    }
  }

  #leaf(i: number): Uint8Array {
    const complete = this.#roots.length * this.chunkSize;
    if (i >= complete) return this.#tail[i - complete] as Uint8Array;
    const chunk = Math.floor(i / this.chunkSize);
    const leaves = this.#cache.get(chunk);
    if (leaves === undefined) throw new NeedChunk(chunk);
    return leaves[i - chunk * this.chunkSize] as Uint8Array;
  }

  /** MTH(D[a:b]) (RFC 9162 2.1.1); aligned complete runs of chunks come from chunk roots. */
  #mth(a: number, b: number): Uint8Array {
    const n = b - a;
    if (n === 1) return this.#leaf(a);
    const c = this.chunkSize;
    if (a % c === 0 && n % c === 0 && b <= this.#roots.length * c) {
      const chunks = n / c;
      if ((chunks & (chunks - 1)) === 0) return this.#chunkRun(a / c, chunks);
    }
    const k = largestPowerOfTwoBelow(n);
    return interiorHash(this.#mth(a, a + k), this.#mth(a + k, b));
  }

  #chunkRun(first: number, count: number): Uint8Array {
    if (count === 1) return this.#roots.at(first);
    const half = count / 2;
    return interiorHash(this.#chunkRun(first, half), this.#chunkRun(first + half, half));
  }

  /** RFC 9162 2.1.3.1 PATH(m, D[a:b]). */
  #path(m: number, a: number, b: number): Uint8Array[] {
    const n = b - a;
    if (n <= 1) return [];
    const k = largestPowerOfTwoBelow(n);
    if (m < k) return [...this.#path(m, a, a + k), this.#mth(a + k, b)];
    return [...this.#path(m - k, a + k, b), this.#mth(a, a + k)];
  }

  /** RFC 9162 2.1.4.1 SUBPROOF(m, D[a:b], start). */
  #subproof(m: number, a: number, b: number, start: boolean): Uint8Array[] {
    const n = b - a;
    if (m === n) return start ? [] : [this.#mth(a, b)];
    const k = largestPowerOfTwoBelow(n);
    if (m <= k) return [...this.#subproof(m, a, a + k, start), this.#mth(a + k, b)];
    return [...this.#subproof(m - k, a + k, b, false), this.#mth(a, a + k)];
  }

  /** Inclusion proof of leaf `index` in the tree of the first `size` leaves. */
  inclusionProof(index: number, size: number): Uint8Array[] {
    if (!(index >= 0 && index < size && size <= this.size)) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `no leaf ${index} in a tree of ${size}`);
    return this.#path(index, 0, size);
  }

  /** Consistency proof between sizes `from` and `to`. */
  consistencyProof(from: number, to: number): Uint8Array[] {
    if (!(from >= 0 && from <= to && to <= this.size)) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `sizes ${from}..${to} are not in a tree of ${this.size}`);
    if (from === 0 || from === to) return [];
    return this.#subproof(from, 0, to, true);
  }

  /** The root of the first `size` leaves. */
  root(size: number = this.size): Uint8Array {
    return size === 0 ? rootFromLeafHashes([]) : this.#mth(0, size);
  }

  /**
   * Runs a proof computation, loading (through `loadChunk`) each complete
   * chunk whose leaves it needs and is not cached, then running it again.
   */
  async prove<T>(compute: () => T, loadChunk: (chunk: number) => Promise<readonly Uint8Array[]>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return compute();
      } catch (err) {
        if (!(err instanceof NeedChunk) || attempt > 8) throw err;
        this.load(err.chunk, await loadChunk(err.chunk));
      }
    }
  }
}

interface PartitionIndex {
  readonly tree: ChunkedTree;
  /** The newest entry records (JSON text) by index, oldest first. */
  readonly recent: Map<number, string>;
  checkpoints: { size: number; note: string }[];
  /** Kafka offset of the next record to index. */
  next: string | undefined;
  /** When the newest checkpoint was sealed (Unix ms, from its record), if the record says. */
  sealedAtMs?: number;
}

/** Told about every entry as it is indexed from the log, in log order per partition (not about entries loaded from the projection at start). */
export type EntryObserver = (partition: number, entry: Entry) => void;

/** How the index started (shown in the log and the bench). */
export interface IndexStart {
  readonly from: 'projection' | 'log';
  /** Entries taken from the projection per ledger partition. */
  readonly loaded: ReadonlyMap<number, number>;
  readonly ms: number;
}

/**
 * What the API serves proofs from: every partition's Merkle tree in bounded
 * memory ({@link ChunkedTree}: 32 bytes per 1,024 entries, plus the newest
 * chunk), the newest {@link ENTRY_CACHE_PER_PARTITION} entry records and the
 * newest checkpoints, followed from Kafka. With a Postgres pool it starts
 * from the projection (leaf hashes from `entries_seen` up to each
 * partition's verified head, and the Kafka offset the projector stored with
 * it, read in one snapshot), so a restart does not read the log from offset
 * 0; leaves of an older chunk a proof needs are read back from the
 * projection or the log, and an older entry record from the log.
 */
export class LogIndex {
  readonly #bus: LogBus;
  readonly #topics: TopicNames;
  readonly #pool: SqlPool | undefined;
  readonly #partitions = new Map<number, PartitionIndex>();
  readonly #observers: EntryObserver[] = [];
  /** Callers waiting for a checkpoint of a partition to reach a size. */
  readonly #checkpointWaiters = new Set<{ partition: number; size: number; wake: () => void }>();
  #genesis: string | undefined;
  readonly #subscriptions: Subscription[] = [];
  readonly #cacheSize: number;
  readonly #chunkSize: number;
  /** Entry records read back from Kafka because they had left the cache. */
  readBacks = 0;
  /** How the last start went. */
  started: IndexStart | undefined;

  constructor(bus: LogBus, topics: TopicNames, options: { cacheSize?: number; pool?: SqlPool; chunkSize?: number } = {}) {
    this.#bus = bus;
    this.#topics = topics;
    this.#pool = options.pool;
    this.#cacheSize = options.cacheSize ?? ENTRY_CACHE_PER_PARTITION;
    this.#chunkSize = options.chunkSize ?? LEAF_CHUNK;
  }

  /** Registers an observer of indexed entries (before start). */
  onEntry(observer: EntryObserver): void {
    this.#observers.push(observer);
  }

  #partition(p: number): PartitionIndex {
    let index = this.#partitions.get(p);
    if (index === undefined) {
      index = { tree: new ChunkedTree(this.#chunkSize), recent: new Map(), checkpoints: [], next: undefined };
      this.#partitions.set(p, index);
    }
    return index;
  }

  #addEntry(ledgerPartition: number, raw: Buffer, offset: string): void {
    const index = this.#partition(ledgerPartition);
    // Parsed first: a record that does not parse fails the batch and is delivered again, never skipped.
    const entry = parseEntry(raw);
    index.next = (BigInt(offset) + 1n).toString();
    if (entry.index !== index.tree.size) return; // redelivery of what is already indexed
    index.tree.append(fromHex(entry.hash, 32), Number(offset));
    index.recent.set(entry.index, raw.toString('utf8'));
    if (index.recent.size > this.#cacheSize) {
      const oldest = index.recent.keys().next();
      if (oldest.done !== true) index.recent.delete(oldest.value);
    }
    if (ledgerPartition === 0 && entry.index === 0) this.#genesis = raw.toString('utf8');
    for (const observer of this.#observers) observer(ledgerPartition, entry);
  }

  /**
   * Loads every partition's leaves up to the projection's verified head, in
   * one REPEATABLE READ snapshot per partition (head, stored offset and
   * `entries_seen` agree: the projector writes them in one transaction).
   */
  async #loadFromProjection(pool: SqlPool): Promise<Map<number, number>> {
    const loaded = new Map<number, number>();
    const heads = await pool.query<{ partition: number }>('SELECT partition FROM partition_heads ORDER BY partition');
    // Partitions load side by side, each in its own snapshot.
    // (On a failure the caller drops every partition's index.)
    await Promise.all(
      heads.rows.map(async ({ partition }) => {
        const index = this.#partition(partition);
        const next = await this.#loadPartition(pool, partition, index.tree);
        if (next === undefined) return;
        index.next = next;
        loaded.set(partition, index.tree.size);
      }),
    );
    return loaded;
  }

  /**
   * Appends one partition's leaves (entry hashes, in index order) to `tree`
   * and returns the Kafka offset stored with them (undefined when the
   * projection holds none), all from one snapshot.
   */
  async #loadPartition(pool: SqlPool, partition: number, tree: ChunkedTree): Promise<string | undefined> {
    const { topic, partition: kp } = entryLocation(this.#topics, partition);
    const client = await pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const head = await client.query<{ size: string }>('SELECT size FROM partition_heads WHERE partition = $1', [partition]);
      const offset = await client.query<{ next_offset: string }>('SELECT next_offset FROM projector_offsets WHERE topic = $1 AND partition = $2', [topic, kp]);
      const size = Number(head.rows[0]?.size ?? 0);
      const next = offset.rows[0]?.next_offset;
      if (size > 0 && next !== undefined) {
        for (let from = 0; from < size; from += LOAD_PAGE) {
          const to = Math.min(size, from + LOAD_PAGE);
          // Raw bytes (bytea), not hex text: half the transfer and no parsing. (partition, index) is the key, so
          // as many rows as positions means every position is there, in order.
          const rows = await client.query<{ leaf: Buffer }>('SELECT decode(hash, \'hex\') AS leaf FROM entries_seen WHERE partition = $1 AND index >= $2 AND index < $3 ORDER BY index', [partition, from, to]);
          if (rows.rows.length !== to - from) throw new OperationalError(OperationalCode.INTERNAL, `the projection of partition ${partition} lacks entries between ${from} and ${to}`);
          for (const row of rows.rows) tree.append(new Uint8Array(row.leaf));
        }
      }
      await client.query('COMMIT');
      return size > 0 ? next : undefined;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** Where the subscription of `topic` starts per Kafka partition: where this index stands. */
  #positions(topic: string): ReadonlyMap<number, string> {
    const positions = new Map<number, string>();
    for (const [p, index] of this.#partitions) {
      const location = entryLocation(this.#topics, p);
      if (location.topic === topic && index.next !== undefined) positions.set(location.partition, index.next);
    }
    return positions;
  }

  /**
   * Starts from the projection when a pool was given and it answers (else
   * from the log's first entry), then follows the entry topics from where
   * the index stands, and the checkpoints topic from its newest records.
   */
  async start(groupId: string): Promise<void> {
    const started = Date.now();
    let loaded = new Map<number, number>();
    let from: IndexStart['from'] = 'log';
    if (this.#pool !== undefined) {
      try {
        loaded = await this.#loadFromProjection(this.#pool);
        from = 'projection';
      } catch {
        // The projection cannot be read: index the log from its first entry instead.
        this.#partitions.clear();
        loaded = new Map();
      }
    }
    if (loaded.get(0) !== undefined) this.#genesis = await this.#readGenesis();
    await this.#followCheckpoints(groupId);
    for (const topic of [this.#topics.authority, this.#topics.events]) {
      this.#subscriptions.push(
        await this.#bus.subscribe({
          groupId: `${groupId}-${topic === this.#topics.authority ? 'authority' : 'events'}`,
          topics: [topic],
          fromBeginning: true,
          commitOffsets: false,
          positions: { startAt: () => this.#positions(topic) },
          onBatch: async (batch) => {
            const p = ledgerPartitionOf(this.#topics, batch.topic, batch.partition);
            const index = this.#partition(p);
            for (const record of batch.records) {
              // Below where the index stands (a batch fetched before a seek): already indexed.
              if (index.next !== undefined && BigInt(record.offset) < BigInt(index.next)) continue;
              this.#addEntry(p, record.value, record.offset);
            }
          },
        }),
      );
    }
    this.started = { from, loaded, ms: Date.now() - started };
  }

  async #readGenesis(): Promise<string | undefined> {
    const { topic, partition } = entryLocation(this.#topics, 0);
    for await (const record of this.#bus.readRange(topic, partition, '0')) return record.value.toString('utf8');
    return undefined;
  }

  #addCheckpoint(partition: number, value: Buffer): void {
    const index = this.#partition(partition);
    let cp: { size?: unknown; note?: unknown; sealedAt?: unknown };
    try {
      cp = JSON.parse(value.toString('utf8')) as { size?: unknown; note?: unknown; sealedAt?: unknown };
    } catch {
      return;
    }
    if (typeof cp.size !== 'number' || typeof cp.note !== 'string') return;
    if (cp.size > (index.checkpoints.at(-1)?.size ?? 0)) {
      index.checkpoints.push({ size: cp.size, note: cp.note });
      const sealedAt = typeof cp.sealedAt === 'string' ? Date.parse(cp.sealedAt) : Number.NaN;
      if (Number.isFinite(sealedAt)) index.sealedAtMs = sealedAt;
    }
    if (index.checkpoints.length > CHECKPOINTS_KEPT) index.checkpoints.shift();
  }

  /** Reads the newest checkpoints of each partition, then follows the topic from there. */
  async #followCheckpoints(groupId: string): Promise<void> {
    const topic = this.#topics.checkpoints;
    const ends = await this.#bus.endOffsets(topic);
    const next = new Map<number, string>();
    for (const [partition, end] of ends) {
      const from = BigInt(end) > BigInt(CHECKPOINT_TAIL) ? BigInt(end) - BigInt(CHECKPOINT_TAIL) : 0n;
      for await (const record of this.#bus.readRange(topic, partition, from.toString())) this.#addCheckpoint(partition, record.value);
      next.set(partition, end);
    }
    this.#subscriptions.push(
      await this.#bus.subscribe({
        groupId: `${groupId}-checkpoints`,
        topics: [topic],
        fromBeginning: true,
        commitOffsets: false,
        positions: { startAt: () => next },
        onBatch: async (batch) => {
          for (const record of batch.records) {
            this.#addCheckpoint(batch.partition, record.value);
            next.set(batch.partition, (BigInt(record.offset) + 1n).toString());
          }
          const newest = this.latestCheckpoint(batch.partition)?.size ?? 0;
          for (const waiter of this.#checkpointWaiters) if (waiter.partition === batch.partition && waiter.size <= newest) waiter.wake();
        },
      }),
    );
  }

  /** The newest checkpoint of a partition. */
  latestCheckpoint(partition: number): { size: number; note: string } | undefined {
    return this.#partitions.get(partition)?.checkpoints.at(-1);
  }

  /** When the newest checkpoint of a partition was sealed (Unix ms), when known. */
  latestSealedAt(partition: number): number | undefined {
    return this.#partitions.get(partition)?.sealedAtMs;
  }

  /** Ledger partitions this index has seen entries or checkpoints of. */
  partitions(): number[] {
    return [...this.#partitions.keys()].sort((a, b) => a - b);
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

  /** The newest checkpoints of a partition (at most 64), oldest first. */
  checkpoints(partition: number): readonly { size: number; note: string }[] {
    return this.#partitions.get(partition)?.checkpoints ?? [];
  }

  /** Entries indexed so far in a partition. */
  size(partition: number): number {
    return this.#partitions.get(partition)?.tree.size ?? 0;
  }

  /** Where to start reading the log to reach entry `index`: its chunk's offset, or (for entries taken from the projection) the time it was sequenced. */
  async #readFrom(partition: number, p: PartitionIndex, index: number): Promise<string | undefined> {
    const offset = p.tree.chunkOffset(index);
    if (!Number.isNaN(offset)) return String(offset);
    if (this.#pool === undefined) return undefined;
    const row = await this.#pool.query<{ at: string }>('SELECT (extract(epoch from sequenced_at) * 1000)::bigint AS at FROM entries_seen WHERE partition = $1 AND index = $2', [partition, index]);
    const at = row.rows[0]?.at;
    if (at === undefined) return undefined;
    // The record's timestamp is the sequencer's clock when it sent the record, just after sequencedAt.
    const { topic, partition: kp } = entryLocation(this.#topics, partition);
    return (await this.#bus.offsetsForTime(topic, Math.max(0, Number(at) - 10_000))).get(kp);
  }

  /** Reads entry records of `partition` from `from` up to entry `last`, giving each to `seen` (stops at `last`). */
  async #scan(partition: number, from: string, last: number, seen: (entry: Entry, text: string) => void): Promise<void> {
    const { topic, partition: kp } = entryLocation(this.#topics, partition);
    for await (const record of this.#bus.readRange(topic, kp, from)) {
      const text = record.value.toString('utf8');
      const entry = parseEntry(record.value);
      seen(entry, text);
      if (entry.index >= last) return;
    }
  }

  /**
   * An entry record (JSON text) by position, from memory when recent, else
   * read back from Kafka. Undefined when not indexed yet.
   * Throws UNAVAILABLE when the broker cannot be read.
   */
  async entryText(partition: number, index: number): Promise<string | undefined> {
    const p = this.#partitions.get(partition);
    if (p === undefined || index < 0 || index >= p.tree.size) return undefined;
    const cached = p.recent.get(index);
    if (cached !== undefined) return cached;
    if (partition === 0 && index === 0 && this.#genesis !== undefined) return this.#genesis;
    const from = await this.#readFrom(partition, p, index);
    if (from === undefined) return undefined;
    this.readBacks += 1;
    let found: string | undefined;
    await this.#scan(partition, from, index, (entry, text) => {
      if (entry.index === index) found = text;
    });
    if (found === undefined) throw new OperationalError(OperationalCode.INTERNAL, `entry ${partition}/${index} was not found from offset ${from}`);
    return found;
  }

  /** The leaves of a complete chunk: from the projection when it has them, else from the log. */
  async #chunkLeaves(partition: number, p: PartitionIndex, chunk: number): Promise<readonly Uint8Array[]> {
    const first = chunk * p.tree.chunkSize;
    const last = first + p.tree.chunkSize - 1;
    if (this.#pool !== undefined && Number.isNaN(p.tree.chunkOffset(first))) {
      const rows = await this.#pool.query<{ hash: string }>('SELECT hash FROM entries_seen WHERE partition = $1 AND index >= $2 AND index <= $3 ORDER BY index', [partition, first, last]);
      if (rows.rows.length === p.tree.chunkSize) return rows.rows.map((row) => fromHex(row.hash, 32));
    }
    const from = await this.#readFrom(partition, p, first);
    if (from === undefined) throw new OperationalError(OperationalCode.UNAVAILABLE, `the leaves of entries ${first}..${last} of partition ${partition} cannot be read back`, { retryable: true });
    const leaves: Uint8Array[] = [];
    await this.#scan(partition, from, last, (entry) => {
      if (entry.index >= first && entry.index <= last) leaves.push(fromHex(entry.hash, 32));
    });
    return leaves;
  }

  /**
   * A receipt (SPEC.md section 10) for an entry covered by the newest
   * checkpoint that the tree has reached (with `first`, the oldest kept
   * checkpoint that covers the entry).
   */
  async receipt(partition: number, index: number, covering: 'newest' | 'first' = 'newest'): Promise<{ v: 1; entry: Entry; inclusionProof: string[]; checkpoint: string; genesis: unknown } | undefined> {
    const p = this.#partitions.get(partition);
    if (p === undefined || index >= p.tree.size || this.#genesis === undefined) return undefined;
    const covers = (c: { size: number }): boolean => c.size > index && c.size <= p.tree.size;
    const checkpoint = covering === 'first' ? p.checkpoints.find(covers) : [...p.checkpoints].reverse().find(covers);
    if (checkpoint === undefined) return undefined;
    const text = await this.entryText(partition, index);
    if (text === undefined) return undefined;
    const entry = JSON.parse(text) as Entry;
    const genesis = (JSON.parse(this.#genesis) as Entry).envelope;
    const proof = await p.tree.prove(() => p.tree.inclusionProof(index, checkpoint.size), (chunk) => this.#chunkLeaves(partition, p, chunk));
    return { v: 1, entry, inclusionProof: proof.map(toBase64), checkpoint: checkpoint.note, genesis };
  }

  /** An RFC 9162 consistency proof between two sizes of a partition. */
  async consistency(partition: number, from: number, to?: number): Promise<{ partition: number; from: number; to: number; proof: string[] }> {
    const p = this.#partitions.get(partition);
    const size = to ?? p?.tree.size ?? 0;
    if (p === undefined || from > size || size > p.tree.size) {
      throw new OperationalError(OperationalCode.BAD_ARGUMENT, `sizes ${from}..${size} are not in partition ${partition} (size ${p?.tree.size ?? 0})`);
    }
    const proof = await p.tree.prove(() => p.tree.consistencyProof(from, size), (chunk) => this.#chunkLeaves(partition, p, chunk));
    return { partition, from, to: size, proof: proof.map(toBase64) };
  }

  /** Stops following. */
  async stop(): Promise<void> {
    for (const s of this.#subscriptions) await s.stop();
  }
}
