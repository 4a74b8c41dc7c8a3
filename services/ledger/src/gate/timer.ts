import { createStatement, nodeEd25519, sha256Hex, signStatement, statementHash, type Signer } from '@agent-ledger/core';
import type { LogBus, OutRecord, Subscription } from '@agent-ledger/kafka';
import { decide, evolve, initialState, lifeEntryOf, remember, type LifeState, type Said, type SaidGroup } from '@agent-ledger/rulebook';
import type { TopicNames } from '../topics.js';
import { openProposalsStart } from '../sequencer/checkpoint-record.js';
import { parseEntry } from './gate-worker.js';

/** Marks of published timeouts this process remembers (bounded). */
const SENT_MEMORY = 100_000;
/** How long a timeout the sequencer rejected as early (a timer clock ahead of the sequencer's) is signed again, at most. */
const RESIGN_FOR_MS = 60_000;

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
  readonly #lives = new Map<number, LifeState>();
  /** Marks of published groups (`timeout:<request>`). */
  readonly #sent = new Map<string, true>();
  /** SHA-256 of each published timeout's intake record -> what it said, where, and when it was first signed. */
  readonly #inputs = new Map<string, { readonly said: Said; readonly partition: number; readonly firstMs: number }>();
  /** Timeouts the sequencer rejected as sequenced before their deadline: signed again at the next tick (alone, without their escalation). */
  #again: { readonly said: Said; readonly partition: number; readonly firstMs: number }[] = [];
  #subscription: Subscription | undefined;
  #interval: NodeJS.Timeout | undefined;
  #ticking = false;
  readonly counters = { timeouts: 0, escalations: 0, tickFailures: 0, rejected: 0 };
  /** The last tick's failure, if the last tick failed. */
  lastFailure: Error | undefined;

  constructor(bus: LogBus, signer: Signer, topics: TopicNames) {
    this.#bus = bus;
    this.#topics = topics;
    this.#signer = signer;
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
    // The sequencer judges a timeout as verify-chain does (sequenced at or after its deadline): one it
    // rejected, signed by a timer whose clock runs ahead of the sequencer's, is signed again at a later tick.
    const statement = entry.envelope.statement;
    if (statement.type === 'intake.rejected') {
      const body = statement.body as { input: string; detail: string };
      const sent = this.#inputs.get(body.input);
      if (sent === undefined) return;
      this.#inputs.delete(body.input);
      this.counters.rejected += 1;
      // Only an early timeout is signed again (any other rejection would be rejected again), for a bounded time.
      if (!body.detail.startsWith('timeout sequenced before its deadline')) return;
      if (Date.parse(entry.sequencedAt) - sent.firstMs > RESIGN_FOR_MS) return;
      this.#again.push(sent);
    }
  }

  /** Signs timeouts for every overdue request not already published; never rejects (a failure is counted and retried next tick). */
  async tick(nowMs: number = Date.now()): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      const groups: { group: SaidGroup; partition: number }[] = [];
      for (const [partition, life] of this.#lives) {
        for (const group of decide({ type: 'tick', nowMs }, life).groups) {
          if (!group.marks.some((mark) => this.#sent.has(mark))) groups.push({ group, partition });
        }
      }
      const again = this.#again.map((sent) => ({ sent, record: this.#record(sent.said, sent.partition) }));
      if (groups.length === 0 && again.length === 0) return;
      const signed = groups.map(({ group, partition }) => ({ group, partition, records: group.statements.map((said) => ({ said, record: this.#record(said, partition) })) }));
      await this.#bus.publish([...again.map((a) => a.record), ...signed.flatMap((s) => s.records.map((r) => r.record))]);
      this.#again = [];
      for (const { sent, record } of again) remember(this.#inputs, sha256Hex(record.value), sent, SENT_MEMORY);
      for (const { group, partition, records } of signed) {
        for (const mark of group.marks) remember(this.#sent, mark, true, SENT_MEMORY);
        for (const { said, record } of records) if (said.type === 'timeout.recorded') remember(this.#inputs, sha256Hex(record.value), { said, partition, firstMs: nowMs }, SENT_MEMORY);
        this.counters.timeouts += 1;
        this.counters.escalations += group.statements.filter((s) => s.type === 'escalation.raised').length;
      }
      this.lastFailure = undefined;
    } catch (err) {
      this.counters.tickFailures += 1;
      this.lastFailure = err instanceof Error ? err : new Error(String(err));
    } finally {
      this.#ticking = false;
    }
  }

  #record(said: Said, partition: number): OutRecord {
    const statement = createStatement(said.type, said.body, this.#signer);
    return { topic: this.#topics.intake, partition, key: (said.body as { agentId: string }).agentId, value: JSON.stringify(signStatement(statement, [this.#signer], nodeEd25519)) };
  }

  /** Stops the timer. */
  async stop(): Promise<void> {
    if (this.#interval !== undefined) clearInterval(this.#interval);
    await this.#subscription?.stop();
  }
}
