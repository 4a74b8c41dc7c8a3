import { MAX_PLATFORM_ASSURANCE_TIER, type Entry } from '@agent-ledger/core';
import { evolve, initialState, lifeEntryOf, type LifeState, type OpenConfirmation } from '@agent-ledger/rulebook';

/** Re-exported: the highest tier a platform-assurance (chat) answer counts at; see the core. */
export { MAX_PLATFORM_ASSURANCE_TIER };

/** One proposal waiting for a human, as the rulebook's state says (a live view: it follows later entries). */
export interface PendingConfirmation {
  readonly proposal: string;
  readonly request: string;
  readonly agentId: string;
  readonly tier: 0 | 1 | 2 | 3 | 4;
  readonly deadlineMs: number;
  readonly approvalsRequired: number;
  readonly approvals: ReadonlySet<string>;
  readonly status: 'pending' | 'approved' | 'denied' | 'timed_out';
  /** Set once the final decision is on the log. */
  readonly decided: boolean;
  readonly timeoutRecorded: boolean;
  /** Partition of the proposal (where every statement about it goes). */
  readonly partition: number;
}

/** A view of the rulebook's open confirmation; `decided` once it left its partition's state. */
class ConfirmationView implements PendingConfirmation {
  readonly #open: OpenConfirmation;
  readonly #life: LifeState;

  constructor(open: OpenConfirmation, life: LifeState) {
    this.#open = open;
    this.#life = life;
  }
  get proposal(): string { return this.#open.proposal; }
  get request(): string { return this.#open.request?.hash ?? ''; }
  get agentId(): string { return this.#open.agentId; }
  get tier(): 0 | 1 | 2 | 3 | 4 { return this.#open.tier as 0 | 1 | 2 | 3 | 4; }
  get deadlineMs(): number { return this.#open.request?.deadlineMs ?? 0; }
  get approvalsRequired(): number { return this.#open.request?.approvalsRequired ?? 1; }
  get approvals(): ReadonlySet<string> { return this.#open.approvals; }
  get status(): PendingConfirmation['status'] { return this.#open.status; }
  get decided(): boolean { return this.#life.confirmations.get(this.#open.proposal) !== this.#open; }
  get timeoutRecorded(): boolean { return this.#open.timeoutRecorded; }
  get partition(): number { return this.#open.partition; }
}

/**
 * The confirmation queue for roles that route or list confirmations (the
 * notifier): the rulebook's proposal-life state per events partition, read
 * through views. It holds no rule of its own: which answers count, timeouts
 * and decisions are the rulebook's `evolve`.
 */
export class PendingConfirmations {
  readonly #lives = new Map<number, LifeState>();
  readonly #views = new WeakMap<OpenConfirmation, ConfirmationView>();

  /** The entry's effect on the queue; returns the touched confirmation (with its request), if any. */
  evolve(entry: Entry, statementHash: string): PendingConfirmation | undefined {
    let life = this.#lives.get(entry.partition);
    if (life === undefined) {
      life = initialState();
      this.#lives.set(entry.partition, life);
    }
    const statement = entry.envelope.statement;
    const proposal = (statement.body as { proposal?: unknown }).proposal;
    const before = typeof proposal === 'string' ? life.confirmations.get(proposal) : undefined;
    evolve(life, lifeEntryOf(entry, statementHash));
    if (typeof proposal !== 'string') return undefined;
    const open = life.confirmations.get(proposal) ?? before;
    if (open === undefined || open.request === null) return undefined;
    let view = this.#views.get(open);
    if (view === undefined) {
      view = new ConfirmationView(open, life);
      this.#views.set(open, view);
    }
    return view;
  }

  /** Confirmations still waiting whose deadline has passed at `nowMs`. */
  overdue(nowMs: number): PendingConfirmation[] {
    const found: PendingConfirmation[] = [];
    for (const life of this.#lives.values()) {
      for (const open of life.confirmations.values()) {
        if (open.request === null || open.status !== 'pending' || open.timeoutRecorded || open.request.deadlineMs >= nowMs) continue;
        let view = this.#views.get(open);
        if (view === undefined) {
          view = new ConfirmationView(open, life);
          this.#views.set(open, view);
        }
        found.push(view);
      }
    }
    return found;
  }

  /** Number of confirmations not yet decided. */
  get size(): number {
    let size = 0;
    for (const life of this.#lives.values()) size += life.confirmations.size;
    return size;
  }
}
