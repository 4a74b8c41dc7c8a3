import { LedgerError, OperationalCode, OperationalError, ReasonCode, isReasonCode } from '@agent-ledger/refusals';
import {
  AuthorityState,
  EntrySchema,
  PartitionChain,
  Principal,
  ReplayWindow,
  createStatement,
  nodeEd25519,
  parseCheckpoint,
  parseStrictJson,
  sequencerNoteSigner,
  sha256Hex,
  signCheckpoint,
  signStatement,
  statementHash,
  type ChainHead,
  type Entry,
  type Envelope,
  type NoteSigner,
  type Signer,
  type TrustRoot,
} from '@agent-ledger/core';
import { ChunkedCommitter, type InBatch, type InRecord, type LogBus, type OutRecord, type TransactionalWriter } from '@agent-ledger/kafka';
import { entryLocation, entryRecordValue, type TopicNames } from '../topics.js';
import { admit, type Admitted, type Rejected } from './admission.js';
import { admitsProposal, evolve, initialState, judge, lifeEntryOf, oldestOpenMs, type AuthorityHistory, type JudgeContext, type LifeEntry, type LifeState, type LifeStatement, type ReplayLimits } from '@agent-ledger/rulebook';

/** A bundle line is the entry record with `"kind":"entry",` added: what verify-chain counts. */
const LINE_KIND_BYTES = 15;
import type { SignaturePool } from './signature-pool.js';
import { WINDOW_MARGIN_MS, newestCheckpoint, type CheckpointRecord } from './checkpoint-record.js';
import { INLINE_FIRST_DECISION, INLINE_HEADER, type FirstDecider } from './inline-decision.js';

/** Proposals whose inline first decision failed admission, remembered so that their redelivery leaves them to the gate worker (bounded). */
const INLINE_REFUSED_MEMORY = 1_000;

/** How long an idle sequencer waits before probing its writer for fencing. */
const FENCE_PROBE_MS = 5_000;

/** How long a decision citing authority entries this process has not folded yet waits for them before it is judged. */
const AUTHORITY_CATCH_UP_MS = 5_000;
/** How far the log's end read now may be behind what the gate saw (a new leader's high watermark catching up). */
const AUTHORITY_LAG_MARGIN = 64;

/**
 * Events statements the rulebook judges by the partition's proposal-life
 * state (`judge`), as verify-chain does. Proposals are bounded by admission's
 * window check already; the fatigue signals name approvals that may be older
 * than a checkpoint's read-back, so they are judged only on a state rebuilt
 * from the partition's first entry.
 */
const JUDGED_LIVE: ReadonlySet<string> = new Set(['decision.recorded', 'confirmation.requested', 'timeout.recorded']);
const JUDGED_ON_FULL_STATE: ReadonlySet<string> = new Set(['grant.suggested', 'approval.rushed']);

/** Header on an intake record the API refused (its ReasonCode): recorded as `intake.rejected`, never admitted. */
export const REFUSED_HEADER = 'ledger-refused';
/** The API's words for that refusal. */
export const REFUSED_DETAIL_HEADER = 'ledger-refused-detail';

/**
 * Headers the sequencer puts on every entry record it writes: the entry's
 * index, the statement's id, its sequencing time (ms) and its statement hash. A
 * restarted sequencer rebuilds its replay window from them without decoding
 * the entry, and its proposal-life state without hashing it again. They are
 * this sequencer's own committed output, read back only by it; an entry
 * after the checkpoint is still parsed and chained in full.
 */
export const ENTRY_HEADERS = { index: 'ledger-index', id: 'ledger-statement-id', sequencedAtMs: 'ledger-sequenced-at-ms', statementHash: 'ledger-statement-hash' } as const;

function recoveryHeaders(entry: Entry, hash: string): Record<string, string> {
  return { [ENTRY_HEADERS.index]: String(entry.index), [ENTRY_HEADERS.id]: entry.envelope.statement.id, [ENTRY_HEADERS.sequencedAtMs]: String(Date.parse(entry.sequencedAt)), [ENTRY_HEADERS.statementHash]: hash };
}

/** The agent an input claims to be about, when readable (a refusal's `agentId`). */
function claimedAgentOf(raw: Buffer): string {
  try {
    const agentId = (JSON.parse(raw.toString('utf8')) as { statement?: { body?: { agentId?: unknown } } } | null)?.statement?.body?.agentId;
    return typeof agentId === 'string' && Principal.safeParse(agentId).success ? agentId : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * A record the API already refused (a signed statement it answered with a
 * 4xx): recorded with the API's code so that every refusal is on the log,
 * whatever the registry says by now. Undefined for an ordinary record.
 */
function refusedAtApi(record: { readonly value: Buffer; readonly headers: Readonly<Record<string, string>> }): Rejected | undefined {
  const code = record.headers[REFUSED_HEADER];
  if (code === undefined) return undefined;
  const detail = (record.headers[REFUSED_DETAIL_HEADER] ?? 'refused at the API').slice(0, 300);
  return { kind: 'rejected', code: isReasonCode(code) ? code : ReasonCode.SCHEMA_INVALID, detail, agentId: claimedAgentOf(record.value), input: sha256Hex(record.value) };
}

/**
 * What recovery needs of an entry record: its index, statement id and
 * sequencing time (from the headers when the record has them, else from
 * its JSON), its statement hash when the headers carry it, and the entry
 * itself, decoded on demand. Undefined when the record does not say.
 */
function coveredEntry(record: InRecord): { index: number; id: string; sequencedAtMs: number; statementHash: string | undefined; entry: () => Entry } | undefined {
  const headers = record.headers;
  let decoded: Entry | undefined;
  const entry = (): Entry => (decoded ??= JSON.parse(record.value.toString('utf8')) as Entry);
  const index = headers[ENTRY_HEADERS.index];
  const id = headers[ENTRY_HEADERS.id];
  const at = headers[ENTRY_HEADERS.sequencedAtMs];
  if (index !== undefined && id !== undefined && at !== undefined && /^\d{1,16}$/.test(index) && /^\d{1,16}$/.test(at)) {
    return { index: Number(index), id, sequencedAtMs: Number(at), statementHash: headers[ENTRY_HEADERS.statementHash], entry };
  }
  // A record written before the headers: its JSON says the same.
  const light = entry() as Partial<Entry> | null;
  const statementId = light?.envelope?.statement?.id;
  if (typeof light?.index !== 'number' || typeof statementId !== 'string' || typeof light.sequencedAt !== 'string') return undefined;
  return { index: light.index, id: statementId, sequencedAtMs: Date.parse(light.sequencedAt), statementHash: undefined, entry };
}

/** Entries a client waits for with a receipt (the final answer to a proposal): what `sealAnswers` seals at once. */
const ANSWERS: ReadonlySet<string> = new Set(['decision.recorded', 'timeout.recorded', 'intake.rejected']);

/** Settings of one partition's sequencer. */
export interface SequencerSettings {
  readonly trustRoot: TrustRoot;
  readonly eventPartitions: number;
  readonly sequencer: Signer;
  /** Seal a checkpoint after this many new entries... */
  readonly checkpointEvery: number;
  /** ...or after this long with unsealed entries. */
  readonly checkpointIntervalMs: number;
  /**
   * Also seal at the end of every batch that chained an answer a client waits
   * for with its receipt (a decision, a timeout, a rejected intake record): the
   * receipt is then ready when the batch commits instead of up to the interval
   * later. One checkpoint per such batch, so the busier the partition, the more
   * entries each one seals (`ledger dev`; default off).
   */
  readonly sealAnswers?: boolean;
  readonly topics: TopicNames;
  /** Checks intake signatures on worker threads; without it they are checked inline. */
  readonly signatures?: SignaturePool;
  /** The bound on undecided proposals per partition (default: the rulebook's REPLAY_WINDOW, what verify-chain holds). */
  readonly replayWindow?: ReplayLimits;
  /**
   * The authority stream as the rulebook judges decisions by it (folded from
   * the same follower as the AuthorityView). With it, events partitions judge
   * every decision, confirmation request, timeout and fatigue signal before
   * admitting it, so the live log holds only what verify-chain accepts.
   */
  readonly authorityHistory?: AuthorityHistory;
  /**
   * The gate running in this process. With it, an events partition chains a
   * proposal's first decision right after the proposal, in the transaction
   * that admits it, whenever the gate can settle it alone (no pre-screen,
   * or one by a deterministic local screener; registry not behind): the decision is admitted and judged exactly as if
   * the gate had published it to intake, and the entries carry
   * {@link INLINE_HEADER} so that the gate does not decide the proposal again.
   */
  readonly firstDecisions?: FirstDecider;
}

/**
 * Where events partitions read the registry: the committed authority state
 * (followed from the authority topic) and its size, the authority index new
 * entries cite.
 */
export interface AuthorityView {
  current(): { state: AuthorityState; size: number };
  /** Resolves once at least `size` authority entries are folded (rejects after `timeoutMs`). */
  waitFor?(size: number, timeoutMs: number): Promise<void>;
  /** How many authority entries the log has committed now (read from the log, past what is folded). */
  committedSize?(): Promise<number>;
}

/** Counters a sequencer exposes on /metrics. */
export interface SequencerCounters {
  admitted: number;
  rejected: number;
  checkpoints: number;
  transactions: number;
  aborts: number;
  /** Proposals whose first decision was chained in the transaction that admitted them. */
  inlineDecisions: number;
}

/**
 * The single writer of one ledger partition. It consumes that partition's
 * intake records, admits or rejects each (a rejection is itself a signed
 * `intake.rejected` entry, never a silent drop), chains the entries, seals
 * checkpoints, and writes entries, checkpoints and the consumed intake offset
 * in ONE Kafka transaction (exactly once). A second instance with the same
 * transactional id fences this one. After a crash or a failed transaction it
 * rebuilds its chain head from the committed log, so it continues without a
 * gap or a fork.
 */
export class PartitionSequencer {
  readonly partition: number;
  readonly counters: SequencerCounters = { admitted: 0, rejected: 0, checkpoints: 0, transactions: 0, aborts: 0, inlineDecisions: 0 };
  readonly #bus: LogBus;
  readonly #settings: SequencerSettings;
  readonly #authorityView: AuthorityView | null;
  readonly #noteSigner: NoteSigner;
  #writer: TransactionalWriter | undefined;
  /** Splits output into transactions under the broker's limit (the one mechanism every transactional writer uses). */
  #committer: ChunkedCommitter | undefined;
  #chain: PartitionChain;
  /** Partition 0 keeps its own registry: it decides authority statements. */
  #authority: AuthorityState;
  #window: ReplayWindow | null = null;
  /** Events partitions: the proposal-life state, for the rulebook's bound on undecided proposals and its judgement of answers. */
  #life: LifeState;
  /** True when #life was folded from the partition's first entry (not from a checkpoint's read-back). */
  #lifeComplete = false;
  /** Events partitions with an authority history: the rulebook's judging context (its own gate-state cursor). */
  readonly #judgeContext: JudgeContext | undefined;
  #sealedSize = 0;
  #lastSealAt = Date.now();
  #lastCommitAt = Date.now();
  #queue: Promise<void> = Promise.resolve();
  /** Set when a failed transaction could not be followed by a recovery: state is rebuilt before any further write. */
  #stale = false;
  /** The step of the serialised work under way, and since when: what `busy` reports. */
  #step: { readonly name: string; readonly since: number } | undefined;
  /** A tick is queued and has not started: another is not queued behind it. */
  #tickQueued = false;
  /** Proposal statement ids whose inline first decision admission refused: left to the gate worker when they come again. */
  readonly #inlineRefused = new Set<string>();

  constructor(partition: number, bus: LogBus, settings: SequencerSettings, authorityView: AuthorityView | null) {
    this.partition = partition;
    this.#bus = bus;
    this.#settings = settings;
    this.#authorityView = partition === 0 ? null : authorityView;
    this.#noteSigner = sequencerNoteSigner(settings.trustRoot.origin, settings.sequencer, nodeEd25519);
    this.#chain = new PartitionChain(partition);
    this.#authority = new AuthorityState(settings.trustRoot);
    this.#life = initialState(settings.replayWindow);
    this.#judgeContext = partition === 0 ? undefined : settings.authorityHistory?.context();
  }

  /** The transactional id: one per input partition (kafkajs's exactly-once shape). */
  get transactionalId(): string {
    return this.#settings.topics.group(`sequencer-${this.partition}`);
  }

  /** Entries in the partition. */
  get size(): number {
    return this.#chain.size;
  }

  /** Takes over the partition: fences older writers, then rebuilds state from the committed log. */
  async start(): Promise<void> {
    await this.open();
    await this.#recover();
  }

  /**
   * Takes the transactional id (fencing older writers) without recovering
   * yet: a process opens every partition's writer at once, then recovers
   * partition 0 before the events partitions that judge keys by it.
   * {@link start} calls it; calling it first is optional.
   */
  async open(): Promise<void> {
    if (this.#writer !== undefined) return;
    this.#writer = await this.#bus.writer(this.transactionalId);
    this.#committer = new ChunkedCommitter(this.#writer, { groupId: this.#settings.topics.group('sequencer'), topic: this.#settings.topics.intake, partition: this.partition });
  }

  /** How the last recovery went (shown on /metrics and in the bench). */
  lastRecovery: { from: 'checkpoint' | 'start'; entriesRead: number; ms: number } | undefined;

  /**
   * Rebuilds chain, registry (partition 0), replay window and sealed size
   * from what Kafka committed. An events partition resumes from the chain
   * head stored with its newest checkpoint and reads back only the replay
   * window (2 x freshness, by record time) and what came after the
   * checkpoint, so a restart costs the same on a log of any length. The
   * authority partition folds its whole registry from genesis.
   */
  async #recover(): Promise<void> {
    const started = Date.now();
    // Records below the intake offset this partition's transactions committed are never sequenced again,
    // whatever offset the intake consumer starts from.
    const groupId = this.#settings.topics.group('sequencer');
    const committed = (await this.#bus.committedOffsets(groupId, this.#settings.topics.intake)).get(this.partition);
    this.#committer?.resume(committed ?? null);
    const resumed = this.partition === 0 ? undefined : await this.#recoverFromCheckpoint();
    if (resumed !== undefined) {
      this.lastRecovery = { from: 'checkpoint', entriesRead: resumed, ms: Date.now() - started };
    } else {
      const read = await this.#recoverFromStart();
      this.lastRecovery = { from: 'start', entriesRead: read, ms: Date.now() - started };
    }
    this.#stale = false;
  }

  /**
   * Resumes from the newest checkpoint's chain head; the number of entries
   * read, or undefined when there is no usable head (no checkpoint yet, one
   * written before heads were stored, or one that does not match its signed
   * root): the caller then reads from the start.
   */
  async #recoverFromCheckpoint(): Promise<number | undefined> {
    const freshnessMs = this.#authorityView?.current().state.config?.freshnessMs;
    if (freshnessMs === undefined) return undefined;
    const newest = await newestCheckpoint(this.#bus, this.#settings.topics.checkpoints, this.partition);
    const head = newest?.head;
    if (newest === undefined || head === undefined || head.size !== newest.size || newest.sealedAt === undefined) return undefined;
    // Without the time of its oldest open proposal the checkpoint cannot tell how far back the open set reaches.
    if (newest.lifeFromMs === undefined) return undefined;
    const lifeFromMs = newest.lifeFromMs ?? Number.POSITIVE_INFINITY;
    let chain: PartitionChain;
    try {
      chain = PartitionChain.resume(this.partition, head);
      const signed = parseCheckpoint(newest.note.slice(0, newest.note.indexOf('\n\n') + 1));
      if (signed.size !== head.size || Buffer.compare(Buffer.from(signed.rootHash), Buffer.from(chain.root())) !== 0) return undefined;
    } catch {
      return undefined;
    }
    // Read back far enough for the replay window and for every entry after the checkpoint.
    const sealedAtMs = Date.parse(newest.sealedAt);
    const fromMs = Math.max(0, Math.min(sealedAtMs, Date.now() - 2 * freshnessMs, lifeFromMs) - WINDOW_MARGIN_MS);
    // The proposals still open at the checkpoint were all sequenced at or after lifeFromMs: folding every
    // entry from there rebuilds the open set (a decision naming an older, closed proposal changes nothing).
    const life = initialState(this.#settings.replayWindow);
    const { topic, partition } = entryLocation(this.#settings.topics, this.partition);
    const fromOffset = (await this.#bus.offsetsForTime(topic, fromMs)).get(partition) ?? '0';
    const window = new ReplayWindow(freshnessMs);
    let read = 0;
    let first = true;
    for await (const record of this.#bus.readRange(topic, partition, fromOffset)) {
      read += 1;
      // Entries the checkpoint covers only feed the replay window (id and time, from the record's
      // headers) and, from lifeFromMs on, the open set: this sequencer's own committed records,
      // decoded without the schema check. Entries after it are checked in full and chained.
      const covered = coveredEntry(record);
      if (covered === undefined) return undefined;
      // Started after the checkpoint (records older than their time?): not safe, read from the start instead.
      if (first && covered.index > head.size) return undefined;
      first = false;
      if (covered.index < head.size) {
        window.remember(covered.id, covered.sequencedAtMs);
        if (covered.sequencedAtMs >= lifeFromMs) {
          const entry = covered.entry();
          evolve(life, lifeEntryOf(entry, covered.statementHash ?? statementHash(entry.envelope.statement), record.value.length + LINE_KIND_BYTES));
        }
        continue;
      }
      const entry = EntrySchema.parse(parseStrictJson(record.value.toString('utf8'))) as unknown as Entry;
      if (entry.index !== chain.size || entry.prev !== chain.head) return undefined;
      chain.replay(entry);
      window.remember(entry.envelope.statement.id, Date.parse(entry.sequencedAt));
      evolve(life, lifeEntryOf(entry, statementHash(entry.envelope.statement), record.value.length + LINE_KIND_BYTES));
    }
    this.#chain = chain;
    this.#authority = new AuthorityState(this.#settings.trustRoot);
    this.#window = window;
    this.#life = life;
    this.#lifeComplete = false;
    this.#sealedSize = newest.size;
    return read;
  }

  /** Rebuilds everything from the partition's first entry; the number of entries read. */
  async #recoverFromStart(): Promise<number> {
    let read = 0;
    const chain = new PartitionChain(this.partition);
    const authority = new AuthorityState(this.#settings.trustRoot);
    let window: ReplayWindow | null = null;
    const life = initialState(this.#settings.replayWindow);
    const { topic, partition } = entryLocation(this.#settings.topics, this.partition);
    for await (const record of this.#bus.readRange(topic, partition, '0')) {
      const entry = EntrySchema.parse(parseStrictJson(record.value.toString('utf8'))) as unknown as Entry;
      read += 1;
      chain.replay(entry);
      const statement = entry.envelope.statement;
      if (this.partition !== 0) evolve(life, lifeEntryOf(entry, statementHash(statement), record.value.length + LINE_KIND_BYTES));
      if (this.partition === 0) authority.apply(statement, entry.index, Date.parse(entry.sequencedAt));
      const freshnessMs = this.partition === 0 ? authority.config?.freshnessMs : this.#authorityView?.current().state.config?.freshnessMs;
      if (freshnessMs !== undefined) {
        window ??= new ReplayWindow(freshnessMs);
        window.remember(statement.id, Date.parse(entry.sequencedAt));
      }
    }
    let sealed = 0;
    for await (const record of this.#bus.readRange(this.#settings.topics.checkpoints, this.partition, '0')) {
      const { size } = JSON.parse(record.value.toString('utf8')) as { size: number };
      sealed = Math.max(sealed, size);
    }
    this.#chain = chain;
    this.#authority = authority;
    this.#window = window;
    this.#life = life;
    this.#lifeComplete = true;
    this.#sealedSize = sealed;
    return read;
  }

  /**
   * The step of this partition's serialised work that has been under way
   * for at least `ms`, and for how long; undefined when none has. Every
   * step that waits on the log is bounded, so this names a slow broker, not
   * a wedge: the process logs it so an operator sees where the time goes.
   */
  busy(ms: number): { step: string; forMs: number } | undefined {
    const step = this.#step;
    if (step === undefined) return undefined;
    const forMs = Date.now() - step.since;
    return forMs >= ms ? { step: step.name, forMs } : undefined;
  }

  #at(name: string): void {
    this.#step = { name, since: Date.now() };
  }

  /** Serialises work on this partition: one transaction at a time. */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(async () => {
      this.#at('starting');
      try {
        return await work();
      } finally {
        this.#step = undefined;
      }
    });
    this.#queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  #registry(): { state: AuthorityState; size: number } {
    if (this.partition === 0) return { state: this.#authority, size: this.#authority.size };
    const view = this.#authorityView?.current();
    if (view === undefined) throw new Error('events sequencer without an authority view');
    return view;
  }

  #ensureWindow(): ReplayWindow | null {
    if (this.#window !== null) return this.#window;
    const freshnessMs = this.#registry().state.config?.freshnessMs;
    if (freshnessMs !== undefined) this.#window = new ReplayWindow(freshnessMs);
    return this.#window;
  }

  /** Handles one batch of this partition's intake records (called by the intake subscription). */
  handleBatch(batch: InBatch): Promise<void> {
    return this.#serial(async () => {
      if (this.#stale) {
        this.#at('recovering from the log after a failed transaction');
        await this.#recover();
      }
      // Until the authority stream's genesis is folded nothing can be judged:
      // the batch is redelivered later rather than refused.
      if (this.partition !== 0 && this.#registry().state.config === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'the authority stream has no genesis yet', { retryable: true });
      }
      const { topic, partition } = entryLocation(this.#settings.topics, this.partition);
      const committer = this.#committerFor(batch.topic, batch.partition);
      // A batch redelivered after a later chunk failed starts with records an
      // earlier transaction of this instance already committed: skip them.
      const records = committer.uncommitted(batch.records);
      // Signatures first, in parallel off this thread; admission stays here, in log order.
      this.#at('checking signatures');
      const verdicts = await this.#settings.signatures?.verdicts(records.map((r) => r.value));
      let answered = false;
      try {
        for (const [n, record] of records.entries()) {
          const now = Date.now();
          const registry = this.#registry();
          const life = this.#life;
          const fitsWindow = this.partition === 0 ? undefined : (lineBytes: number) => admitsProposal(life, lineBytes);
          let result: Admitted | Rejected = refusedAtApi(record) ?? admit(record.value, this.partition, this.#settings.eventPartitions, registry.state, registry.size, this.#ensureWindow(), now, verdicts?.[n], fitsWindow);
          if (result.kind === 'admitted') {
            this.#at('judging an answer');
            result = await this.#judged(result, record.value, now, registry.size);
          }
          let envelope: Envelope;
          if (result.kind === 'admitted') {
            envelope = result.envelope;
          } else {
            envelope = this.#rejection(result.code, result.detail, result.agentId, result.input, now);
            this.#ensureWindow()?.admit(envelope.statement.id, now, now);
            // Every authority-stream entry advances the registry's index, rejections included.
            if (this.partition === 0) this.#authority.apply(envelope.statement, this.#chain.size, now);
          }
          // Partition 0 cites its own index; events cite the committed authority size.
          const authorityIndex = this.partition === 0 ? this.#chain.size : registry.size;
          const { record: entryRecord, headers, hash } = this.#chained(envelope, now, authorityIndex, result.kind === 'admitted' ? result.canonical : undefined, topic, partition);
          const out: OutRecord[] = [entryRecord];
          if (ANSWERS.has(envelope.statement.type)) answered = true;
          // The gate beside this sequencer settles what it can alone in this same transaction: one hop instead of three.
          let inline = 0;
          if (result.kind === 'admitted' && envelope.statement.type === 'proposal.submitted') {
            this.#at('deciding a proposal inline');
            const decided = await this.#decidedInline(envelope, hash, now, topic, partition);
            if (decided.length > 0) {
              headers[INLINE_HEADER] = INLINE_FIRST_DECISION;
              out.push(...decided);
              inline = decided.length;
              answered = true;
            }
          }
          // A checkpoint due by count, or by time at the end of the batch, rides in
          // the transaction of the entry it seals: under steady traffic tick() then
          // finds nothing to seal and never holds the partition for a transaction of its own.
          if (this.#chain.size - this.#sealedSize >= this.#settings.checkpointEvery || (n === records.length - 1 && ((answered && this.#settings.sealAnswers === true) || this.#sealDue(Date.now())))) out.push(this.#seal());
          const kind = result.kind;
          // The shared committer splits the batch into transactions under the broker's limit,
          // each carrying the intake offset after its last entry's input (one input's output stays in one transaction).
          this.#at('committing a transaction');
          await committer.add(record.offset, out, () => {
            if (kind === 'admitted') this.counters.admitted += 1 + inline;
            else this.counters.rejected += 1;
            if (inline > 0) this.counters.inlineDecisions += 1;
          });
        }
        this.#at('committing a transaction');
        await committer.flush();
      } catch (err) {
        await this.#failed(err);
      }
      this.#afterCommits(committer);
    });
  }

  /** Chains `envelope` at the head of the partition (and folds it into the proposal-life state): its entry record and statement hash. */
  #chained(envelope: Envelope, now: number, authorityIndex: number, canonical: string | undefined, topic: string, partition: number): { record: OutRecord; headers: Record<string, string>; hash: string } {
    const entry = this.#chain.append(envelope, new Date(now), authorityIndex, canonical);
    const value = entryRecordValue(entry);
    const hash = statementHash(envelope.statement);
    if (this.partition !== 0) evolve(this.#life, lifeEntryOf(entry, hash, Buffer.byteLength(value) + LINE_KIND_BYTES));
    const headers = recoveryHeaders(entry, hash);
    return { record: { topic, partition, key: (envelope.statement.body as { agentId?: string }).agentId ?? null, value, headers }, headers, hash };
  }

  /**
   * The entry records of the first decision the gate in this process makes
   * alone on the proposal just chained (hash `hash`), chained right after
   * it; none when there is no such gate, or the proposal needs what the
   * gate worker does asynchronously (a pre-screen by a screener that does
   * I/O, a registry catching up).
   * Each statement is admitted and judged as if it had come through intake
   * (same `admit`, same `judge`, same authority index), so what is chained
   * here is what the gate worker's publication would have chained. Should
   * admission refuse one (a bug, not an input), the batch fails and its
   * redelivery leaves this proposal to the gate worker.
   */
  async #decidedInline(proposal: Envelope, hash: string, now: number, topic: string, partition: number): Promise<OutRecord[]> {
    const gate = this.#settings.firstDecisions;
    const waiting = this.#life.proposals.get(hash);
    if (gate === undefined || this.partition === 0 || waiting === undefined || this.#inlineRefused.has(proposal.statement.id)) return [];
    // The decision cites the registry as folded now: the judging history must hold all of it, stamped no later than now
    // (an authority sequencer with a clock ahead of this one): otherwise the gate worker decides, waiting as it must.
    const history = this.#settings.authorityHistory;
    const size = this.#registry().size;
    const citedAt = size > 0 ? history?.timeOf(size - 1) : undefined;
    if (history === undefined || history.size < size || (citedAt !== undefined && citedAt > now)) return [];
    const statements = gate.decideAlone(waiting, this.#life, now);
    if (statements === undefined) return [];
    const out: OutRecord[] = [];
    for (const { envelope, canonical } of statements) {
      const raw = Buffer.from(JSON.stringify(envelope));
      const registry = this.#registry();
      const verdict = canonical === undefined ? undefined : { signers: envelope.signatures.map((s) => s.keyId), canonical };
      let result: Admitted | Rejected = admit(raw, this.partition, this.#settings.eventPartitions, registry.state, registry.size, this.#ensureWindow(), now, verdict);
      let refusal: string | undefined;
      if (result.kind === 'admitted') {
        try {
          result = await this.#judged(result, raw, now, registry.size);
        } catch (err) {
          refusal = err instanceof Error ? err.message : String(err);
        }
      }
      if (result.kind === 'rejected') refusal = `${result.code}: ${result.detail}`;
      if (refusal !== undefined || result.kind === 'rejected') {
        if (this.#inlineRefused.size >= INLINE_REFUSED_MEMORY) this.#inlineRefused.clear();
        this.#inlineRefused.add(proposal.statement.id);
        throw new OperationalError(OperationalCode.INTERNAL, `the gate's inline ${envelope.statement.type} on proposal ${hash.slice(0, 12)} was refused (${refusal}): left to the gate worker`, { retryable: true });
      }
      const { record, headers } = this.#chained(result.envelope, now, registry.size, result.canonical, topic, partition);
      headers[INLINE_HEADER] = INLINE_FIRST_DECISION;
      out.push(record);
    }
    return out;
  }

  /**
   * Seals a checkpoint when entries have waited longer than the interval.
   * When idle for a while it re-commits its last consumed offset instead: a zombie
   * (an instance replaced by a newer one with the same transactional id)
   * learns that it was fenced even when no work reaches it.
   */
  tick(): Promise<void> {
    // One tick waiting is enough: behind a long batch they would only pile up.
    if (this.#tickQueued) return Promise.resolve();
    this.#tickQueued = true;
    return this.#serial(async () => {
      this.#tickQueued = false;
      if (this.#stale) {
        this.#at('recovering from the log after a failed transaction');
        await this.#recover();
      }
      const now = Date.now();
      const committer = this.#committer;
      if (committer === undefined) return;
      try {
        if (this.#sealDue(now)) {
          this.#at('sealing a checkpoint');
          await committer.commitAlone([this.#seal()]);
        } else if (now - this.#lastCommitAt >= FENCE_PROBE_MS) {
          this.#at('probing the writer for fencing');
          await committer.probe();
        } else return;
      } catch (err) {
        await this.#failed(err);
      }
      this.#afterCommits(committer);
    });
  }

  /** Unsealed entries have waited at least the checkpoint interval. */
  #sealDue(now: number): boolean {
    return this.#chain.size !== this.#sealedSize && now - this.#lastSealAt >= this.#settings.checkpointIntervalMs;
  }

  #seal(): OutRecord {
    const note = signCheckpoint(this.#chain, this.#settings.trustRoot.origin, this.#noteSigner, this.#registry().state.config?.authorityRulesVersion ?? 1);
    this.#sealedSize = this.#chain.size;
    this.#lastSealAt = Date.now();
    this.counters.checkpoints += 1;
    // The chain head rides beside the signed note: a restart resumes from it (checked against the note's root).
    return {
      topic: this.#settings.topics.checkpoints,
      partition: this.partition,
      key: null,
      value: JSON.stringify({
        partition: this.partition,
        size: this.#chain.size,
        note,
        head: this.#chain.snapshot(),
        sealedAt: new Date(this.#lastSealAt).toISOString(),
        ...(this.partition === 0 ? {} : { lifeFromMs: oldestOpenMs(this.#life) }),
      } satisfies CheckpointRecord),
    };
  }

  /**
   * The rulebook's judgement of an admitted events statement, as verify-chain
   * will make it on this partition's state at this point (the same `judge`,
   * on the same proposal-life state, under the authority stream the entry
   * cites). A statement that would fail replay becomes a rejection instead,
   * with the rulebook's code: the live log holds only what verify-chain
   * accepts. A decision citing authority entries this process has not folded
   * yet waits a little for them (the gate may read the stream ahead of us).
   */
  async #judged(admitted: Admitted, raw: Buffer, now: number, authorityIndex: number): Promise<Admitted | Rejected> {
    const context = this.#judgeContext;
    const statement = admitted.envelope.statement;
    if (context === undefined) return admitted;
    if (!JUDGED_LIVE.has(statement.type) && !(this.#lifeComplete && JUDGED_ON_FULL_STATE.has(statement.type))) return admitted;
    const view = this.#authorityView;
    const history = this.#settings.authorityHistory;
    if (statement.type === 'decision.recorded' && history !== undefined) {
      const cited = (statement.body as { authorityIndex: number }).authorityIndex;
      // The gate may read the authority stream ahead of this process: the entries it cites are waited for.
      // Still missing after that, the decision is rejected only when the log itself lacks them; otherwise
      // the batch comes again.
      // (An index far beyond what the log holds, read from the log, is judged at once.)
      if (cited > history.size && view?.waitFor !== undefined && view.committedSize !== undefined) {
        const committed = await view.committedSize();
        if (cited <= committed + AUTHORITY_LAG_MARGIN) {
          const folded = await view.waitFor(cited, AUTHORITY_CATCH_UP_MS).then(() => true, () => false);
          if (!folded && cited <= (await view.committedSize())) {
            throw new OperationalError(OperationalCode.UNAVAILABLE, `a decision cites ${cited} authority entries; ${history.size} are folded here after ${AUTHORITY_CATCH_UP_MS} ms`, { retryable: true });
          }
        }
      }
      // The gate read the entries it cites before deciding, so one stamped later than now was stamped by a
      // sequencer clock ahead of this one. verify-chain compares the two times: the decision is sequenced again
      // once this clock has passed it (a stamp further ahead than the wait is judged now, and rejected).
      const citedAt = cited > 0 ? history.timeOf(cited - 1) : undefined;
      if (citedAt !== undefined && citedAt > now && citedAt - now <= AUTHORITY_CATCH_UP_MS) {
        await new Promise((resolve) => setTimeout(resolve, citedAt - now + 1));
        throw new OperationalError(OperationalCode.UNAVAILABLE, `a decision cites an authority entry stamped ${citedAt - now} ms ahead of this sequencer's clock`, { retryable: true });
      }
    }
    const life: LifeEntry = {
      statement: { type: statement.type, body: statement.body, author: statement.author } as LifeStatement,
      partition: this.partition,
      index: this.#chain.size,
      sequencedAtMs: now,
      authorityIndex,
      statementHash: statementHash(statement),
      // Only a proposal's line size counts in judging, and proposals are not judged here.
      bytes: 0,
    };
    try {
      judge(this.#life, life, context);
      return admitted;
    } catch (err) {
      if (!(err instanceof LedgerError)) throw err;
      const agentId = (statement.body as { agentId?: string }).agentId ?? claimedAgentOf(raw);
      return { kind: 'rejected', code: err.code, detail: err.message.slice(0, 300), agentId, input: sha256Hex(raw) };
    }
  }

  #rejection(code: ReasonCode, detail: string, agentId: string, input: string, now: number): Envelope {
    const signer = this.#settings.sequencer;
    const statement = createStatement('intake.rejected', { agentId, code, detail, input }, { principal: signer.principal, keyId: signer.keyId }, new Date(now));
    return signStatement(statement, [signer], nodeEd25519);
  }

  /** The committer of this partition's intake (one input partition: kafkajs's exactly-once shape). */
  #committerFor(topic: string, partition: number): ChunkedCommitter {
    const committer = this.#committer;
    if (committer === undefined) throw new Error('sequencer not started');
    if (topic !== this.#settings.topics.intake || partition !== this.partition) throw new Error(`sequencer ${this.partition} was given intake ${topic}/${partition}`);
    return committer;
  }

  #afterCommits(committer: ChunkedCommitter): void {
    if (committer.transactions !== this.counters.transactions) this.#lastCommitAt = Date.now();
    this.counters.transactions = committer.transactions;
  }

  /**
   * After a failed transaction nothing of it is visible: forget the
   * speculative state and rebuild it from the committed log before the batch
   * is redelivered. If the log cannot be read either (the broker is away),
   * nothing is written until a later recovery succeeds. Rethrows `err`.
   */
  async #failed(err: unknown): Promise<never> {
    this.counters.aborts += 1;
    this.#stale = true;
    this.#at('recovering from the log after a failed transaction');
    await this.#recover().catch(() => undefined);
    throw err;
  }

  /** Stops writing (the writer is closed; a later start() fences and recovers). */
  async stop(): Promise<void> {
    await this.#queue;
    await this.#writer?.close();
    this.#writer = undefined;
    this.#committer = undefined;
  }
}
