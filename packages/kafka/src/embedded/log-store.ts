import { closeSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { fdatasync, ftruncate, write } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { LedgerError } from '@agent-ledger/refusals';
import { WriterFencedError, integrityFailure, invalidArgument, unavailable } from '../errors.js';
import { DirectoryLock } from './directory-lock.js';
import { decodeFrame, encodeFrame, type FrameHeader, type StoredOffset, type StoredRecord } from './frame.js';

/**
 * When a commit is acknowledged relative to the disk:
 * - `always` (the default): a commit resolves only after its frame was written
 *   and fdatasync'ed; frames queued while one sync runs share the next one
 *   (group commit). Survives power loss as far as the disk honours fsync.
 *   Consumer offsets committed outside a transaction (at-least-once) are
 *   written without a sync of their own: a power cut may lose the newest,
 *   which redelivers a batch, never loses one.
 * - `never`: resolves once the frame is written to the file (the OS page
 *   cache): survives the death of the process (kill -9), not of the machine.
 */
export type FsyncPolicy = 'always' | 'never';

/** Where a record's value lies on disk, and what it carries besides. */
interface IndexedRecord {
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly segment: number;
  readonly position: number;
  readonly size: number;
}

interface PartitionState {
  /** Committed records in offset order (offsets may skip those of aborted transactions). */
  readonly records: IndexedRecord[];
  /** The next offset: one past the last committed record or reserved offset. */
  end: number;
  /** Offsets handed out to frames not yet durable (the writer side of `end`). */
  assigned: number;
  /** Highest timestamp so far: timestamps never go backwards within a partition. */
  lastTimestamp: number;
}

interface TopicState {
  readonly partitions: PartitionState[];
  readonly config: Readonly<Record<string, string>>;
}

/** A committed record as the store hands it out. */
export interface StoredRead {
  readonly offset: number;
  readonly timestamp: number;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly value: Buffer;
}

/** What a queued append asks for; `build` runs in the flusher, in order, against the offsets handed out so far. */
interface PendingAppend {
  build(): { frame: Buffer; values: readonly Buffer[]; header: FrameHeader; error?: Error } | { error: Error };
  resolve(): void;
  reject(error: Error): void;
}

/** Default size after which a new segment file is started. */
export const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;
/** Kafka's default `max.message.bytes` (a record bigger than a topic's is refused). */
const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);
const ftruncateAsync = promisify(ftruncate);

const SEGMENT_NAME = /^(\d{12})\.seg$/;
const segmentName = (n: number): string => `${String(n).padStart(12, '0')}.seg`;

/** A new record to append, already checked against the topic's shape. */
export interface NewRecord {
  readonly topic: string;
  readonly partition: number;
  readonly key: string | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly value: Buffer;
}

/**
 * The log of one directory: append-only segment files of checksummed frames
 * (frame.ts), an in-memory index of what they hold, and one flusher that
 * appends frames in order. Opened for writing by one process at a time
 * (`LOCK`); a read-only opening (another process, e.g. `ledger export`) sees
 * every complete frame and follows the files as they grow.
 */
export class LogStore {
  readonly dir: string;
  readonly readOnly: boolean;
  readonly #fsync: FsyncPolicy;
  readonly #segmentBytes: number;
  readonly #lock: DirectoryLock | undefined;
  readonly #topics = new Map<string, TopicState>();
  /** Committed group offsets: group -> "topic\0partition" -> next offset. */
  readonly #groups = new Map<string, Map<string, number>>();
  /** Newest epoch per transactional id: durable, and as handed out. */
  readonly #epochs = new Map<string, number>();
  readonly #assignedEpochs = new Map<string, number>();
  /** Topics created by frames not yet durable. */
  readonly #assignedTopics = new Map<string, { partitions: number; config: Readonly<Record<string, string>> }>();
  readonly #readFds = new Map<number, number>();
  #segment = 0;
  #segmentSize = 0;
  #appendFd: number | undefined;
  #queue: PendingAppend[] = [];
  #flushing = false;
  #closed = false;
  #changed: { promise: Promise<void>; wake: () => void };
  /** Bytes the scan of the newest segment has consumed (a read-only store resumes there). */
  #scanned = 0;
  /** Counters for /metrics-style reporting and tests. */
  readonly stats = { frames: 0, syncs: 0, truncatedBytes: 0 };

  private constructor(dir: string, options: { readOnly: boolean; fsync: FsyncPolicy; segmentBytes: number }) {
    this.dir = dir;
    this.readOnly = options.readOnly;
    this.#fsync = options.fsync;
    this.#segmentBytes = options.segmentBytes;
    this.#changed = LogStore.#signal();
    if (!options.readOnly) {
      mkdirSync(dir, { recursive: true });
      this.#lock = DirectoryLock.acquire(dir);
    }
  }

  static #signal(): { promise: Promise<void>; wake: () => void } {
    let wake: () => void = () => undefined;
    const promise = new Promise<void>((resolve) => {
      wake = resolve;
    });
    return { promise, wake };
  }

  /**
   * Opens the log in `dir`: every segment is scanned and indexed. A writable
   * opening cuts a torn tail off the newest segment (an incomplete or
   * corrupt last frame: a crash mid-write) and fsyncs the cut; a damaged
   * frame anywhere else is INTEGRITY_FAILURE, never silently skipped.
   */
  static open(dir: string, options: { readOnly?: boolean; fsync?: FsyncPolicy; segmentBytes?: number } = {}): LogStore {
    const store = new LogStore(dir, { readOnly: options.readOnly ?? false, fsync: options.fsync ?? 'always', segmentBytes: options.segmentBytes ?? DEFAULT_SEGMENT_BYTES });
    try {
      store.#recover();
    } catch (err) {
      store.#lock?.release();
      throw err;
    }
    return store;
  }

  #segments(): number[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (err) {
      if ((err as { code?: string }).code === 'ENOENT' && this.readOnly) return [];
      throw err;
    }
    return names
      .map((n) => SEGMENT_NAME.exec(n)?.[1])
      .filter((n): n is string => n !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  #recover(): void {
    const segments = this.#segments();
    for (const [i, n] of segments.entries()) {
      const last = i === segments.length - 1;
      const path = join(this.dir, segmentName(n));
      const bytes = readFileSync(path);
      const consumed = this.#scan(n, bytes, 0);
      if (consumed < bytes.length) {
        if (!last) throw integrityFailure(`segment ${segmentName(n)} of ${this.dir} is damaged at byte ${consumed} (not its tail: the log cannot be trusted past it)`);
        if (!this.readOnly) {
          // A torn tail: the last frame was being written when the process or machine died. Nothing of it was acknowledged.
          const fd = openSync(path, 'r+');
          try {
            ftruncateSync(fd, consumed);
            fsyncSync(fd);
          } finally {
            closeSync(fd);
          }
          this.stats.truncatedBytes += bytes.length - consumed;
        }
      }
      this.#segment = n;
      this.#segmentSize = consumed;
      this.#scanned = consumed;
    }
    if (!this.readOnly) this.#openAppend(segments.length === 0);
  }

  /**
   * Applies every complete frame of `bytes` (the segment's bytes from file
   * offset `base`) from file offset `at`; returns the file offset where the
   * complete frames end.
   */
  #scan(segment: number, bytes: Buffer, at: number, base = 0): number {
    let position = at - base;
    for (;;) {
      const frame = decodeFrame(bytes, position);
      if (frame === null) return position + base;
      try {
        this.#apply(frame.header, segment, frame.valueAt.map((v) => v + base));
      } catch (err) {
        // A frame with a good checksum that does not say what this log writes: the log was edited, not torn.
        if (err instanceof LedgerError) throw err;
        throw integrityFailure(`segment ${segmentName(segment)} of ${this.dir}: the frame at byte ${position + base} is not one this log writes`, err);
      }
      position += frame.length;
    }
  }

  /** The bytes of a segment file from `from` to its current end. */
  #readFrom(segment: number, from: number): Buffer {
    const fd = openSync(join(this.dir, segmentName(segment)), 'r');
    try {
      const size = statSync(join(this.dir, segmentName(segment))).size;
      const bytes = Buffer.allocUnsafe(Math.max(0, size - from));
      let read = 0;
      while (read < bytes.length) {
        const n = readSync(fd, bytes, read, bytes.length - read, from + read);
        if (n === 0) break;
        read += n;
      }
      return bytes.subarray(0, read);
    } finally {
      closeSync(fd);
    }
  }

  #openAppend(fresh: boolean): void {
    const path = join(this.dir, segmentName(this.#segment));
    this.#appendFd = openSync(path, 'a');
    this.#segmentSize = statSync(path).size;
    if (fresh) this.#syncDirectory();
  }

  #syncDirectory(): void {
    if (this.#fsync === 'never') return;
    const fd = openSync(this.dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Picks up frames another process appended since the last look (read-only stores). */
  refresh(): void {
    if (!this.readOnly || this.#closed) return;
    for (const n of this.#segments().filter((s) => s >= this.#segment)) {
      if (n > this.#segment) {
        this.#segment = n;
        this.#scanned = 0;
      }
      // Only what was appended since the last look is read.
      this.#scanned = this.#scan(n, this.#readFrom(n, this.#scanned), this.#scanned, this.#scanned);
    }
  }

  #apply(header: FrameHeader, segment: number, valueAt: readonly number[]): void {
    this.stats.frames += 1;
    switch (header.kind) {
      case 'topic': {
        const partitions = Array.from({ length: header.partitions }, (): PartitionState => ({ records: [], end: 0, assigned: 0, lastTimestamp: 0 }));
        this.#topics.set(header.name, { partitions, config: header.config });
        this.#assignedTopics.delete(header.name);
        break;
      }
      case 'fence':
        this.#epochs.set(header.transactionalId, header.epoch);
        if ((this.#assignedEpochs.get(header.transactionalId) ?? 0) < header.epoch) this.#assignedEpochs.set(header.transactionalId, header.epoch);
        break;
      case 'commit':
        for (const [i, r] of header.records.entries()) {
          const p = this.#partition(r.topic, r.partition);
          if (!Number.isSafeInteger(r.offset) || r.offset < p.end || !Number.isSafeInteger(r.size) || r.size < 0) {
            throw integrityFailure(`the log in ${this.dir} holds offset ${r.offset} of ${r.topic}/${r.partition} after offset ${p.end - 1}: offsets only grow`);
          }
          p.records.push({ offset: r.offset, timestamp: r.timestamp, key: r.key, headers: r.headers, segment, position: valueAt[i] ?? 0, size: r.size });
          p.end = r.offset + 1;
          p.assigned = Math.max(p.assigned, p.end);
          p.lastTimestamp = Math.max(p.lastTimestamp, r.timestamp);
        }
        this.#applyOffsets(header.offsets);
        break;
      case 'abort':
        for (const r of header.reserved) {
          const p = this.#partition(r.topic, r.partition);
          p.end += r.count;
          p.assigned = Math.max(p.assigned, p.end);
        }
        break;
      case 'offsets':
        this.#applyOffsets(header.offsets);
        break;
    }
  }

  #applyOffsets(offsets: readonly StoredOffset[]): void {
    for (const o of offsets) {
      let group = this.#groups.get(o.groupId);
      if (group === undefined) this.#groups.set(o.groupId, (group = new Map()));
      group.set(`${o.topic}\0${o.partition}`, o.nextOffset);
    }
  }

  #partition(topic: string, partition: number): PartitionState {
    const p = this.#topics.get(topic)?.partitions[partition];
    if (p === undefined) throw integrityFailure(`the log in ${this.dir} holds a record for ${topic}/${partition}, which no topic frame created`);
    return p;
  }

  // ---- reads (committed, durable state only) ----

  /** The partition count and settings of a topic, or undefined. */
  topic(name: string): { partitions: number; config: Readonly<Record<string, string>> } | undefined {
    const t = this.#topics.get(name) ?? undefined;
    if (t !== undefined) return { partitions: t.partitions.length, config: t.config };
    return this.#assignedTopics.get(name);
  }

  /** Every topic, with its partition count and settings, in creation order. */
  topics(): { name: string; partitions: number; config: Readonly<Record<string, string>> }[] {
    return [...this.#topics].map(([name, t]) => ({ name, partitions: t.partitions.length, config: t.config }));
  }

  /** Every committed consumer-group offset. */
  groupOffsets(): StoredOffset[] {
    const out: StoredOffset[] = [];
    for (const [groupId, offsets] of this.#groups) {
      for (const [key, nextOffset] of offsets) {
        const [topic = '', partition = '0'] = key.split('\0');
        out.push({ groupId, topic, partition: Number(partition), nextOffset });
      }
    }
    return out;
  }

  /** The next offset of every partition of `topic` (throws INTEGRITY_FAILURE when it does not exist). */
  ends(topic: string): Map<number, number> {
    const t = this.#topics.get(topic);
    if (t === undefined) throw integrityFailure(`topic ${topic} does not exist in the log`);
    return new Map(t.partitions.map((p, i) => [i, p.end]));
  }

  /** The committed offset of a group on one partition, or null. */
  committed(groupId: string, topic: string, partition: number): number | null {
    return this.#groups.get(groupId)?.get(`${topic}\0${partition}`) ?? null;
  }

  /** The first offset whose record's timestamp is at or after `timestampMs`, per partition (the end when none). */
  offsetsForTime(topic: string, timestampMs: number): Map<number, number> {
    const t = this.#topics.get(topic);
    if (t === undefined) throw integrityFailure(`topic ${topic} does not exist in the log`);
    return new Map(
      t.partitions.map((p, i) => {
        let lo = 0;
        let hi = p.records.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if ((p.records[mid]?.timestamp ?? 0) < timestampMs) lo = mid + 1;
          else hi = mid;
        }
        return [i, p.records[lo]?.offset ?? p.end];
      }),
    );
  }

  /** Index of the first record at or after `offset` in the partition's record list. */
  #firstAt(p: PartitionState, offset: number): number {
    let lo = 0;
    let hi = p.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((p.records[mid]?.offset ?? 0) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Reads up to `max` committed records of one partition from `offset`, stopping before `until` (exclusive). */
  read(topic: string, partition: number, offset: number, max: number, until = Number.MAX_SAFE_INTEGER): StoredRead[] {
    const p = this.#topics.get(topic)?.partitions[partition];
    if (p === undefined) throw integrityFailure(`partition ${topic}/${partition} does not exist in the log`);
    const out: StoredRead[] = [];
    for (let i = this.#firstAt(p, offset); i < p.records.length && out.length < max; i++) {
      const r = p.records[i] as IndexedRecord;
      if (r.offset >= until) break;
      out.push({ offset: r.offset, timestamp: r.timestamp, key: r.key, headers: r.headers, value: this.#readValue(r) });
    }
    return out;
  }

  #readValue(r: IndexedRecord): Buffer {
    let fd = this.#readFds.get(r.segment);
    if (fd === undefined) {
      fd = openSync(join(this.dir, segmentName(r.segment)), 'r');
      this.#readFds.set(r.segment, fd);
    }
    const value = Buffer.allocUnsafe(r.size);
    let read = 0;
    while (read < r.size) {
      const n = readSync(fd, value, read, r.size - read, r.position + read);
      if (n === 0) throw integrityFailure(`segment ${segmentName(r.segment)} ends inside a committed record`);
      read += n;
    }
    return value;
  }

  /** Resolves at the next change of the log (a frame became durable) or when `stop` resolves. */
  changed(): Promise<void> {
    return this.#changed.promise;
  }

  // ---- writes: one flusher, frames in queue order ----

  /** The newest epoch of a transactional id, as handed out (fencing takes effect in queue order). */
  epochOf(transactionalId: string): number {
    return this.#assignedEpochs.get(transactionalId) ?? 0;
  }

  #checkWritable(): void {
    if (this.#closed) throw unavailable(`the log in ${this.dir} is closed`, { retryable: false });
    if (this.readOnly) throw invalidArgument(`the log in ${this.dir} is open read-only`);
  }

  #enqueue(build: PendingAppend['build']): Promise<void> {
    this.#checkWritable();
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ build, resolve, reject });
      if (!this.#flushing) this.#flush();
    });
  }

  /** Creates a topic (durable before it resolves). */
  createTopic(name: string, partitions: number, config: Readonly<Record<string, string>>): Promise<void> {
    return this.#enqueue(() => {
      if (this.topic(name) !== undefined) return { error: integrityFailure(`topic ${name} was created concurrently`) };
      this.#assignedTopics.set(name, { partitions, config });
      const header: FrameHeader = { kind: 'topic', name, partitions, config };
      return { frame: encodeFrame(header), values: [], header };
    });
  }

  /** Hands out the next epoch of `transactionalId`; resolves with it once durable. Every writer with an older epoch is fenced. */
  async fence(transactionalId: string): Promise<number> {
    let epoch = 0;
    await this.#enqueue(() => {
      epoch = this.epochOf(transactionalId) + 1;
      this.#assignedEpochs.set(transactionalId, epoch);
      const header: FrameHeader = { kind: 'fence', transactionalId, epoch };
      return { frame: encodeFrame(header), values: [], header };
    });
    return epoch;
  }

  /** Commits consumer offsets outside a transaction. */
  commitOffsets(offsets: readonly StoredOffset[]): Promise<void> {
    return this.#enqueue(() => {
      const header: FrameHeader = { kind: 'offsets', offsets };
      return { frame: encodeFrame(header), values: [], header };
    });
  }

  /**
   * Appends one transaction: records (partitions already checked) and the
   * offsets it commits, as one frame. With a `writer`, the frame is refused
   * with WriterFencedError when a newer epoch of its id was handed out. A
   * record over its topic's `max.message.bytes` fails the transaction: the
   * offsets of the records before it are reserved by an abort frame (they are
   * never readable, as in Kafka) and the call throws BAD_ARGUMENT.
   */
  commit(records: readonly NewRecord[], offsets: readonly StoredOffset[], writer?: { readonly transactionalId: string; readonly epoch: number }): Promise<void> {
    return this.#enqueue(() => {
      if (writer !== undefined && this.epochOf(writer.transactionalId) !== writer.epoch) return { error: new WriterFencedError(writer.transactionalId) };
      const oversized = records.findIndex((r) => r.value.length + Buffer.byteLength(r.key ?? '') > this.#maxMessageBytes(r.topic));
      if (oversized >= 0) {
        const error = invalidArgument(`a record for ${records[oversized]?.topic} is larger than the topic's max.message.bytes: the transaction was aborted`);
        const counts = new Map<string, { topic: string; partition: number; count: number }>();
        for (const r of records.slice(0, oversized)) {
          const key = `${r.topic}\0${r.partition}`;
          const c = counts.get(key) ?? { topic: r.topic, partition: r.partition, count: 0 };
          c.count += 1;
          counts.set(key, c);
        }
        if (counts.size === 0) return { error };
        for (const c of counts.values()) this.#partition(c.topic, c.partition).assigned += c.count;
        const header: FrameHeader = { kind: 'abort', reserved: [...counts.values()] };
        return { frame: encodeFrame(header), values: [], header, error };
      }
      const now = Date.now();
      const stored: StoredRecord[] = records.map((r) => {
        const p = this.#partition(r.topic, r.partition);
        const offset = p.assigned++;
        return { topic: r.topic, partition: r.partition, offset, timestamp: Math.max(now, p.lastTimestamp), key: r.key, headers: r.headers, size: r.value.length };
      });
      const header: FrameHeader = { kind: 'commit', transactionalId: writer?.transactionalId ?? null, epoch: writer?.epoch ?? 0, records: stored, offsets };
      const values = records.map((r) => r.value);
      return { frame: encodeFrame(header, values), values, header };
    });
  }

  #maxMessageBytes(topic: string): number {
    const text = this.topic(topic)?.config['max.message.bytes'];
    const n = text === undefined ? NaN : Number(text);
    return Number.isInteger(n) && n > 0 ? n : DEFAULT_MAX_MESSAGE_BYTES;
  }

  /**
   * The flusher: takes every queued append, builds their frames in order,
   * writes them with one write and (policy `always`) one fdatasync, then makes
   * them visible and resolves them. A failed write or sync cuts the file back
   * to where the batch began and rejects the whole batch (nothing of it is
   * visible, and offsets handed out to it are handed out again).
   */
  #flush(): void {
    this.#flushing = true;
    // Let concurrent callers queue behind the first one: they share its sync.
    setImmediate(() => {
      this.#flushBatch().catch((err: unknown) => {
        // A bug in the flusher itself: fail what waits rather than hang it.
        for (const item of this.#queue.splice(0)) item.reject(unavailable(`the log flusher failed: ${(err as Error).message}`, { cause: err }));
        this.#flushing = false;
      });
    });
  }

  async #flushBatch(): Promise<void> {
    {
      const batch = this.#queue;
      this.#queue = [];
      const built: { item: PendingAppend; header: FrameHeader; frame: Buffer; error?: Error }[] = [];
      for (const item of batch) {
        let result: ReturnType<PendingAppend['build']>;
        try {
          result = item.build();
        } catch (err) {
          result = { error: err as Error };
        }
        if ('frame' in result) built.push({ item, header: result.header, frame: result.frame, ...(result.error === undefined ? {} : { error: result.error }) });
        else item.reject(result.error);
      }
      if (built.length > 0) {
        try {
          // Offsets committed outside a transaction are at-least-once: losing the newest to a power cut only redelivers a batch, so they alone wait for no sync.
          await this.#write(built.map((b) => b.frame), built.some((b) => b.header.kind !== 'offsets'));
        } catch (err) {
          this.#rollBackAssigned();
          const failure = unavailable(`writing the log in ${this.dir} failed: ${(err as Error).message}`, { cause: err, retryable: !this.#closed });
          for (const b of built) b.item.reject(b.error instanceof WriterFencedError ? b.error : failure);
          this.#finishFlush();
          return;
        }
        const base = this.#segmentSize - built.reduce((n, b) => n + b.frame.length, 0);
        let at = base;
        for (const b of built) {
          const decoded = decodeFrame(b.frame, 0);
          this.#apply(b.header, this.#segment, (decoded?.valueAt ?? []).map((v) => v + at));
          at += b.frame.length;
        }
        for (const b of built) {
          if (b.error === undefined) b.item.resolve();
          else b.item.reject(b.error);
        }
        const previous = this.#changed;
        this.#changed = LogStore.#signal();
        previous.wake();
      }
      this.#finishFlush();
    }
  }

  #finishFlush(): void {
    if (this.#queue.length > 0 && !this.#closed) this.#flush();
    else {
      this.#flushing = false;
      for (const item of this.#queue.splice(0)) item.reject(unavailable(`the log in ${this.dir} is closed`, { retryable: false }));
    }
  }

  #rollBackAssigned(): void {
    for (const t of this.#topics.values()) for (const p of t.partitions) p.assigned = p.end;
    this.#assignedEpochs.clear();
    for (const [id, epoch] of this.#epochs) this.#assignedEpochs.set(id, epoch);
    this.#assignedTopics.clear();
  }

  async #write(frames: readonly Buffer[], sync: boolean): Promise<void> {
    if (this.#lock !== undefined && !this.#lock.check()) {
      throw new Error(`the lock of ${this.dir} was taken over by another process: this one is fenced`);
    }
    if (this.#segmentSize >= this.#segmentBytes) this.#roll();
    const fd = this.#appendFd;
    if (fd === undefined) throw new Error('the log is closed');
    const bytes = frames.length === 1 ? (frames[0] as Buffer) : Buffer.concat(frames);
    const before = this.#segmentSize;
    try {
      let written = 0;
      while (written < bytes.length) written += (await writeAsync(fd, bytes, written, bytes.length - written)).bytesWritten;
      if (this.#fsync === 'always' && sync) {
        await fdatasyncAsync(fd);
        this.stats.syncs += 1;
      }
    } catch (err) {
      try {
        await ftruncateAsync(fd, before);
      } catch {
        // The torn tail is cut at the next open.
      }
      throw err;
    }
    this.#segmentSize = before + bytes.length;
  }

  #roll(): void {
    if (this.#appendFd !== undefined) closeSync(this.#appendFd);
    this.#segment += 1;
    this.#openAppend(true);
  }

  /** Waits for queued appends, then closes the files and releases the lock. Idempotent. */
  async close(): Promise<void> {
    while (this.#flushing && !this.#closed) await new Promise((resolve) => setTimeout(resolve, 5));
    if (this.#closed) return;
    this.#closed = true;
    if (this.#appendFd !== undefined) closeSync(this.#appendFd);
    this.#appendFd = undefined;
    for (const fd of this.#readFds.values()) closeSync(fd);
    this.#readFds.clear();
    this.#lock?.release();
    this.#changed.wake();
  }

  /** True once closed. */
  get closed(): boolean {
    return this.#closed;
  }
}
