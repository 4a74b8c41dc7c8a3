import { PartitionChain, createStatement, nodeEd25519, sha256Hex, signStatement, type BodyOf, type Entry, type Envelope, type Signer, type StatementType } from '@agent-ledger/core';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { ConsumedOffset, InBatch, InRecord, LogBus, OutRecord, SubscribeOptions, Subscription, TransactionalWriter } from '@agent-ledger/kafka';
import { newSigner, type TopicNames } from '@agent-ledger/ledger';

/**
 * A log in memory for the roles' unit tests: records by topic/partition at
 * offsets 0, 1, ...; a transaction appends its records and moves the
 * consumed offset; subscriptions are handlers the test calls with batches.
 * A record's timestamp is its `at` header, stamped with {@link clock} when
 * it is appended without one.
 */
export class MemoryLog implements LogBus {
  readonly topics = new Map<string, OutRecord[]>();
  readonly offsets = new Map<string, string>();
  readonly reads: { topic: string; partition: number; from: string }[] = [];
  handlers: ((batch: InBatch) => Promise<void>)[] = [];
  /** The time (ms) records appended without an `at` header are stamped with. */
  clock = 0;
  /** Commits still to fail (each failure consumes one): a broker that goes away mid-commit. */
  failCommits = 0;

  #key(topic: string, partition: number): string {
    return `${topic}/${partition}`;
  }
  records(topic: string, partition: number): OutRecord[] {
    const key = this.#key(topic, partition);
    let list = this.topics.get(key);
    if (list === undefined) this.topics.set(key, (list = []));
    return list;
  }
  #append(records: readonly OutRecord[]): void {
    for (const r of records) this.records(r.topic, r.partition).push(r.headers?.['at'] === undefined ? { ...r, headers: { ...r.headers, at: String(this.clock) } } : r);
  }
  async ensureTopics(): Promise<void> {}
  async writer(id: string): Promise<TransactionalWriter> {
    return {
      transactionalId: id,
      commit: async (records: readonly OutRecord[], consumed?: ConsumedOffset) => {
        if (this.failCommits > 0) {
          this.failCommits -= 1;
          throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'broker went away mid-commit', { retryable: true });
        }
        this.#append(records);
        if (consumed !== undefined) this.offsets.set(`${consumed.groupId}|${consumed.topic}/${consumed.partition}`, consumed.nextOffset);
      },
      close: async () => undefined,
    };
  }
  async publish(records: readonly OutRecord[]): Promise<void> {
    this.#append(records);
  }
  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    this.handlers.push((batch) => options.onBatch(batch));
    return { stop: async () => undefined };
  }
  inRecord(topic: string, partition: number, offset: number): InRecord {
    const r = this.records(topic, partition)[offset] as OutRecord;
    const { at, ...headers } = r.headers ?? {};
    return { topic, partition, offset: String(offset), key: r.key ?? null, value: Buffer.from(r.value), timestamp: at ?? '0', headers };
  }
  async *readRange(topic: string, partition: number, fromOffset: string): AsyncIterable<InRecord> {
    this.reads.push({ topic, partition, from: fromOffset });
    const end = this.records(topic, partition).length;
    for (let offset = Number(fromOffset); offset < end; offset++) yield this.inRecord(topic, partition, offset);
  }
  /** Calls the `handler`-th subscription with the records of topic/partition from `from` to the end. */
  async deliver(handler: number, topic: string, partition: number, from: number): Promise<void> {
    const records = this.records(topic, partition);
    if (from >= records.length) return;
    const batch = { topic, partition, records: records.slice(from).map((_, k) => this.inRecord(topic, partition, from + k)) };
    await (this.handlers.at(handler) as (b: InBatch) => Promise<void>)(batch);
  }
  async endOffsets(topic: string): Promise<ReadonlyMap<number, string>> {
    const ends = new Map<number, string>();
    for (const [key, list] of this.topics) if (key.startsWith(`${topic}/`)) ends.set(Number(key.slice(topic.length + 1)), String(list.length));
    return ends;
  }
  async offsetsForTime(topic: string, timestampMs: number): Promise<ReadonlyMap<number, string>> {
    const found = new Map<number, string>();
    for (const [key, list] of this.topics) {
      if (!key.startsWith(`${topic}/`)) continue;
      const at = list.findIndex((r) => Number(r.headers?.['at'] ?? 0) >= timestampMs);
      found.set(Number(key.slice(topic.length + 1)), String(at === -1 ? list.length : at));
    }
    return found;
  }
  async committedOffsets(groupId: string, topic: string): Promise<ReadonlyMap<number, string | null>> {
    const found = new Map<number, string | null>();
    for (const [key, offset] of this.offsets) {
      const [group, where] = key.split('|') as [string, string];
      if (group === groupId && where.startsWith(`${topic}/`)) found.set(Number(where.slice(topic.length + 1)), offset);
    }
    return found;
  }
  async close(): Promise<void> {}
}

/** What the test sequencer does with one intake record: admit it, or reject it with a code and detail. */
export type IntakeVerdict = 'admit' | { readonly code: ReasonCode; readonly detail: string };

/**
 * Sequences onto events partition 1 (Kafka partition 0) of a {@link MemoryLog},
 * the record timestamp being the sequencing time: statements it is given,
 * and the records roles wrote to intake partition 1, each admitted or, as
 * the test says, rejected into an `intake.rejected` entry naming the input's
 * SHA-256 (as the real sequencer records a rejection).
 */
export class TestSequencer {
  readonly chain = new PartitionChain(1);
  readonly signer: Signer = newSigner('service:sequencer');
  clock: number;
  /** Intake records of partition 1 already sequenced. */
  intakeSeen = 0;

  constructor(readonly log: MemoryLog, readonly topics: TopicNames, start: number) {
    this.clock = start;
    log.clock = start;
  }

  append(envelope: Envelope): Entry {
    this.clock += 10;
    this.log.clock = this.clock;
    const entry = this.chain.append(envelope, new Date(this.clock), 0);
    this.log.records(this.topics.events, 0).push({ topic: this.topics.events, partition: 0, value: JSON.stringify(entry), headers: { at: String(this.clock) } });
    return entry;
  }

  say<T extends StatementType>(type: T, body: BodyOf<T>, signer: Signer): Entry {
    return this.append(signStatement(createStatement(type, body, signer, new Date(this.clock + 5)), [signer], nodeEd25519));
  }

  /** Sequences the intake records not sequenced yet (at most `count`), each as `verdict` says (admitted by default); returns their entries. */
  sequenceIntake(verdict: (envelope: Envelope) => IntakeVerdict = () => 'admit', count = Infinity): Entry[] {
    const intake = this.log.records(this.topics.intake, 1);
    const entries: Entry[] = [];
    const records = intake.slice(this.intakeSeen, this.intakeSeen + Math.min(count, intake.length));
    for (const record of records) {
      const envelope = JSON.parse(String(record.value)) as Envelope;
      const judged = verdict(envelope);
      const agentId = (envelope.statement.body as { agentId?: string }).agentId ?? 'unknown';
      entries.push(judged === 'admit' ? this.append(envelope) : this.say('intake.rejected', { agentId, code: judged.code, detail: judged.detail, input: sha256Hex(record.value) }, this.signer));
    }
    this.intakeSeen += records.length;
    return entries;
  }
}
