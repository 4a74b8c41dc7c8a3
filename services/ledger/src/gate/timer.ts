import { createStatement, nodeEd25519, signStatement, statementHash, type Signer } from '@agent-ledger/core';
import type { LogBus, Subscription } from '@agent-ledger/kafka';
import type { TopicNames } from '../topics.js';
import { parseEntry } from './gate-worker.js';
import { PendingConfirmations } from './pending.js';

/**
 * Turns deadlines into signed timeouts. It folds the events stream into the
 * confirmation queue and, when a request's deadline passes unanswered, signs
 * `timeout.recorded` (and, for high and critical tiers, an escalation to an
 * admin or an emergency notification). It never approves anything: the gate
 * turns the timeout into a deny with TIMEOUT.
 */
export class DeadlineTimer {
  readonly #bus: LogBus;
  readonly #signer: Signer;
  readonly #topics: TopicNames;
  readonly #pending = new PendingConfirmations();
  readonly #sent = new Set<string>();
  #subscription: Subscription | undefined;
  #interval: NodeJS.Timeout | undefined;
  #ticking = false;
  readonly counters = { timeouts: 0, escalations: 0, failedTicks: 0 };

  constructor(bus: LogBus, signer: Signer, topics: TopicNames) {
    this.#bus = bus;
    this.#topics = topics;
    this.#signer = signer;
  }

  /** Follows the events stream from its start and checks deadlines every `tickMs`. */
  async start(groupId: string, tickMs = 250): Promise<void> {
    this.#subscription = await this.#bus.subscribe({
      groupId,
      topics: [this.#topics.events],
      fromBeginning: true,
      commitOffsets: false,
      onBatch: async (batch) => {
        for (const record of batch.records) {
          const entry = parseEntry(record.value);
          this.#pending.evolve(entry, statementHash(entry.envelope.statement));
        }
      },
    });
    // A broker outage makes a tick fail; the overdue requests stay unsent and the next tick tries again.
    this.#interval = setInterval(() => {
      this.tick().catch((err: unknown) => {
        this.counters.failedTicks += 1;
        process.stderr.write(`[ledger ${new Date().toISOString()}] timer: publishing timeouts failed (retried next tick): ${(err as Error).message}\n`);
      });
    }, tickMs);
  }

  /** Signs timeouts for every overdue request not already handled. */
  async tick(): Promise<void> {
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      const now = Date.now();
      const records = [];
      const requests: string[] = [];
      for (const pending of this.#pending.overdue(now)) {
        if (this.#sent.has(pending.request)) continue;
        requests.push(pending.request);
        const base = { agentId: pending.agentId, proposal: pending.proposal };
        records.push(this.#record({ type: 'timeout.recorded', body: { ...base, request: pending.request, deadline: new Date(pending.deadlineMs).toISOString() } }, pending.partition));
        this.counters.timeouts += 1;
        if (pending.tier >= 3) {
          records.push(this.#record({ type: 'escalation.raised', body: { ...base, level: pending.tier === 4 ? 'emergency' : 'admin', reason: 'no answer before the deadline' } }, pending.partition));
          this.counters.escalations += 1;
        } else {
          records.push(this.#record({ type: 'escalation.raised', body: { ...base, level: 'notify', reason: 'the action was denied: nobody confirmed it in time' } }, pending.partition));
        }
      }
      if (records.length > 0) await this.#bus.publish(records);
      // Marked sent only once published: a failed publish is tried again on the next tick.
      for (const request of requests) this.#sent.add(request);
    } finally {
      this.#ticking = false;
    }
  }

  #record(
    what:
      | { type: 'timeout.recorded'; body: { agentId: string; proposal: string; request: string; deadline: string } }
      | { type: 'escalation.raised'; body: { agentId: string; proposal: string; level: 'notify' | 'admin' | 'emergency'; reason: string } },
    partition: number,
  ): { topic: string; partition: number; key: string; value: string } {
    const statement = what.type === 'timeout.recorded' ? createStatement('timeout.recorded', what.body, this.#signer) : createStatement('escalation.raised', what.body, this.#signer);
    return { topic: this.#topics.intake, partition, key: what.body.agentId, value: JSON.stringify(signStatement(statement, [this.#signer], nodeEd25519)) };
  }

  /** Stops the timer. */
  async stop(): Promise<void> {
    if (this.#interval !== undefined) clearInterval(this.#interval);
    await this.#subscription?.stop();
  }
}
