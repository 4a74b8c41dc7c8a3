import { createStatement, nodeEd25519, signStatement, statementHash, type Signer, type Statement } from '@agent-ledger/core';
import { ReasonCode } from '@agent-ledger/refusals';
import type { LogBus, OutRecord, Subscription } from '@agent-ledger/kafka';
import { decide, evolve, initialState, lifeEntryOf, remember, type LifeState, type Said, type SaidGroup } from '@agent-ledger/rulebook';
import type { TopicNames } from '../topics.js';
import { openProposalsStart } from '../sequencer/checkpoint-record.js';
import { parseEntry } from './gate-worker.js';
import { RejectionWatch, nextPlace, sentStatement, type Attempt, type RejectionCounters, type RetryPolicy } from './rejection-watch.js';

/** How often a timer whose ticks keep failing says so. */
const FAILURE_LOG_MS = 30_000;
/** Marks of published timeouts (and timeouts waiting for the sequencer's answer) this process remembers (bounded). */
const SENT_MEMORY = 100_000;
/** How long a timeout the sequencer rejected as early (a timer clock ahead of the sequencer's) is signed again, at most. */
const RESIGN_FOR_MS = 60_000;
/** Times a timeout the sequencer rejected as not fresh (it waited in intake, a sequencer outage) is signed again, at most. */
const STALE_RESIGNS = 3;

/**
 * Which rejected timeouts are signed again: one sequenced before its
 * deadline (the sequencer judges it as verify-chain does; a timer clock
 * ahead of the sequencer's), for a minute from its first signing, and one
 * that was not fresh when sequenced (it waited in intake), a few times. Any
 * other rejection would be rejected again.
 */
const retryTimeout: RetryPolicy<Timed> = (attempt, rejection) => {
  if (rejection.detail.startsWith('timeout sequenced before its deadline')) {
    return rejection.sequencedAtMs - attempt.firstMs <= RESIGN_FOR_MS || `still sequenced before its deadline ${RESIGN_FOR_MS} ms after it was first signed`;
  }
  if (rejection.code === ReasonCode.REPLAY) return attempt.number <= STALE_RESIGNS || `rejected ${attempt.number} times`;
  return `${rejection.code} is not cured by signing it again`;
};

/** What the timer signs again: the timeout of one request, on its partition. */
interface Timed {
  readonly partition: number;
  readonly request: string;
}

/**
 * Turns deadlines into signed timeouts. It folds each events partition into
 * the rulebook's proposal-life state and, every tick, signs what the
 * rulebook's `tick` says: `timeout.recorded` and its escalation for every
 * request still pending by the rules past its deadline (an answer that did
 * not count, misrouted or late, never stops it). It never approves anything:
 * the gate turns the timeout into a deny with TIMEOUT. A failed publish is
 * counted and retried at the next tick; a tick never rejects.
 */
export class DeadlineTimer {
  readonly #bus: LogBus;
  readonly #signer: Signer;
  readonly #topics: TopicNames;
  readonly #log: (message: string) => void;
  /** When a failed tick was last logged. */
  #failureLoggedAt = Number.NEGATIVE_INFINITY;
  readonly #lives = new Map<number, LifeState>();
  /** Marks of published groups (`timeout:<request>`). */
  readonly #sent = new Map<string, true>();
  /** Published timeouts until the sequencer has answered them (the feedback loop shared with the gate). */
  readonly #watch = new RejectionWatch<Timed>({ watched: ['timeout.recorded'], policy: retryTimeout, memory: SENT_MEMORY });
  /** Timeouts the sequencer rejected, to sign again at the next tick (without what of their group it admitted). */
  #again: Attempt<Timed>[] = [];
  #subscription: Subscription | undefined;
  #interval: NodeJS.Timeout | undefined;
  #ticking = false;
  readonly counters = { timeouts: 0, escalations: 0, tickFailures: 0, rejected: 0 };
  /** The last tick's failure, if the last tick failed. */
  lastFailure: Error | undefined;

  constructor(bus: LogBus, signer: Signer, topics: TopicNames, log: (message: string) => void = () => undefined) {
    this.#bus = bus;
    this.#topics = topics;
    this.#signer = signer;
    this.#log = log;
  }

  /** Rejected timeouts by how they ended: signed again, given up, or moot (the request was settled meanwhile). */
  get rejections(): Readonly<RejectionCounters> {
    return this.#watch.counters;
  }

  /** Where each events Kafka partition was first read from (the newest checkpoint's open proposals, not offset 0). */
  readonly startedAt = new Map<number, string>();

  /**
   * Follows the events stream from where each partition's newest checkpoint
   * says open proposals begin (from the start without one), and checks
   * deadlines every `tickMs`.
   */
  async start(groupId: string, tickMs = 250): Promise<void> {
    for (const kp of (await this.#bus.endOffsets(this.#topics.events)).keys()) this.startedAt.set(kp, await openProposalsStart(this.#bus, this.#topics, kp));
    this.#subscription = await this.#bus.subscribe({
      groupId,
      topics: [this.#topics.events],
      fromBeginning: true,
      commitOffsets: false,
      // A consumer restart starts there again: entries already folded are skipped by index.
      positions: { startAt: () => this.startedAt },
      onBatch: async (batch) => {
        for (const record of batch.records) this.observe(parseEntry(record.value), record.value.length);
      },
    });
    // tick() never rejects (it counts and keeps its failures); the catch only makes that visible here.
    this.#interval = setInterval(() => {
      this.tick().catch(() => undefined);
    }, tickMs);
  }

  /** Folds one events entry into its partition's state. */
  observe(entry: ReturnType<typeof parseEntry>, bytes = 0): void {
    let life = this.#lives.get(entry.partition);
    if (life === undefined) {
      life = initialState();
      this.#lives.set(entry.partition, life);
    }
    evolve(life, lifeEntryOf(entry, statementHash(entry.envelope.statement), bytes));
    // The sequencer's answer to a timeout this timer signed: one it rejected is signed again at a later tick, if the policy allows.
    const answered = this.#watch.observe(entry.envelope.statement, Date.parse(entry.sequencedAt));
    if (answered === undefined) return;
    const verdict = this.#watch.verdict(answered);
    // An entry read again (a consumer restart) answers the same attempt again: it is counted and queued once.
    if (verdict.kind === 'again') {
      if (this.#again.includes(answered)) return;
      this.counters.rejected += 1;
      this.#again.push(answered);
    } else if (this.#watch.close(answered, verdict.kind === 'abandon' ? 'abandoned' : undefined) && verdict.kind === 'abandon') {
      this.counters.rejected += 1;
      this.#log(`timer: could not record the timeout of request ${answered.subject.request.slice(0, 12)}: the sequencer rejected it (${verdict.rejection.code}: ${verdict.rejection.detail}); gave up after ${answered.number} signing(s): ${verdict.reason}`);
    }
  }

  /** Signs timeouts for every overdue request not already published; never rejects (a failure is counted and retried next tick). */
  async tick(nowMs: number = Date.now()): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      const groups: { group: SaidGroup; partition: number; previous?: Attempt<Timed> }[] = [];
      for (const [partition, life] of this.#lives) {
        for (const group of decide({ type: 'tick', nowMs }, life).groups) {
          if (!group.marks.some((mark) => this.#sent.has(mark))) groups.push({ group, partition });
        }
      }
      // A rejected timeout is signed again as the rulebook says now: nothing once its request is settled,
      // and without what the sequencer admitted of its group (its escalation: no second page).
      const moot: Attempt<Timed>[] = [];
      for (const attempt of this.#again) {
        const { partition, request } = attempt.subject;
        const life = this.#lives.get(partition);
        const group = life === undefined ? undefined : decide({ type: 'tick', nowMs }, life).groups.find((g) => g.marks.includes(`timeout:${request}`));
        const statements = group === undefined ? [] : this.#watch.unadmitted(attempt, group.statements);
        if (group === undefined || statements.length === 0) moot.push(attempt);
        else groups.push({ group: { marks: group.marks, statements }, partition, previous: attempt });
      }
      for (const attempt of moot) this.#watch.close(attempt, 'moot');
      this.#again = this.#again.filter((attempt) => !moot.includes(attempt));
      if (groups.length === 0) return;
      const signed = groups.map(({ group, partition, previous }) => {
        const records = group.statements.map((said) => this.#record(said, partition));
        const statements = records.map(({ record, statement }) => sentStatement(record, statement));
        const place = nextPlace(previous, statements[0]?.id ?? '', nowMs);
        // Watched before it is published: the sequencer may answer before publish() returns.
        const attempt = this.#watch.track({ partition, request: group.marks[0]?.slice('timeout:'.length) ?? '' }, place, statements);
        return { group, previous, attempt, records: records.map((r) => r.record) };
      });
      try {
        await this.#bus.publish(signed.flatMap((s) => s.records));
      } catch (err) {
        for (const { attempt } of signed) if (attempt !== undefined) this.#watch.close(attempt);
        throw err;
      }
      for (const { group, previous } of signed) {
        if (previous !== undefined) {
          this.#watch.close(previous, 'signed_again');
          this.#again = this.#again.filter((attempt) => attempt !== previous);
          continue;
        }
        for (const mark of group.marks) remember(this.#sent, mark, true, SENT_MEMORY);
        this.counters.timeouts += 1;
        this.counters.escalations += group.statements.filter((s) => s.type === 'escalation.raised').length;
      }
      this.lastFailure = undefined;
    } catch (err) {
      this.counters.tickFailures += 1;
      this.lastFailure = err instanceof Error ? err : new Error(String(err));
      // Said at most every FAILURE_LOG_MS: overdue timeouts waiting on a log that will not take them are an operator's business.
      if (nowMs - this.#failureLoggedAt >= FAILURE_LOG_MS) {
        this.#failureLoggedAt = nowMs;
        this.#log(`timer: publishing overdue timeouts failed (${this.counters.tickFailures} failed ticks so far; retried every tick): ${this.lastFailure.message}`);
      }
    } finally {
      this.#ticking = false;
    }
  }

  #record(said: Said, partition: number): { record: OutRecord; statement: Statement } {
    const statement = createStatement(said.type, said.body, this.#signer);
    return { statement, record: { topic: this.#topics.intake, partition, key: (said.body as { agentId: string }).agentId, value: JSON.stringify(signStatement(statement, [this.#signer], nodeEd25519)) } };
  }

  /** Stops the timer. */
  async stop(): Promise<void> {
    if (this.#interval !== undefined) clearInterval(this.#interval);
    await this.#subscription?.stop();
  }
}
