import { MAX_PLATFORM_ASSURANCE_TIER, type BodyOf, type Entry } from '@agent-ledger/core';

/** Re-exported: the highest tier a platform-assurance (chat) answer counts at; see the core. */
export { MAX_PLATFORM_ASSURANCE_TIER };

/** One proposal waiting for a human, as the log says. */
export interface PendingConfirmation {
  readonly proposal: string;
  readonly request: string;
  readonly agentId: string;
  readonly tier: 0 | 1 | 2 | 3 | 4;
  readonly deadlineMs: number;
  readonly approvalsRequired: number;
  readonly approvals: Set<string>;
  status: 'pending' | 'approved' | 'denied' | 'timed_out';
  /** Set once the final decision is on the log. */
  decided: boolean;
  timeoutRecorded: boolean;
  /** Partition of the proposal (where every statement about it goes). */
  readonly partition: number;
}

/**
 * The confirmation queue as a fold over the events stream: requests, human
 * responses, timeouts and final decisions. Both the gate (final decisions)
 * and the timer (deadlines) fold it, so a restart rebuilds it from the log.
 */
export class PendingConfirmations {
  readonly #byProposal = new Map<string, PendingConfirmation>();

  /** The entry's effect on the queue; returns the touched confirmation, if any. */
  evolve(entry: Entry, statementHash: string): PendingConfirmation | undefined {
    const statement = entry.envelope.statement;
    switch (statement.type) {
      case 'confirmation.requested': {
        const body = statement.body as BodyOf<'confirmation.requested'>;
        const pending: PendingConfirmation = {
          proposal: body.proposal,
          request: statementHash,
          agentId: body.agentId,
          tier: body.tier as 0 | 1 | 2 | 3 | 4,
          deadlineMs: Date.parse(body.deadline),
          approvalsRequired: body.approvalsRequired,
          approvals: new Set(),
          status: 'pending',
          decided: false,
          timeoutRecorded: false,
          partition: entry.partition,
        };
        this.#byProposal.set(body.proposal, pending);
        return pending;
      }
      case 'human.response': {
        const body = statement.body as BodyOf<'human.response'>;
        const pending = this.#byProposal.get(body.proposal);
        if (pending === undefined || pending.request !== body.request || pending.status !== 'pending') return pending;
        // Policy: a platform-assurance answer above MAX_PLATFORM_ASSURANCE_TIER is not evidence enough (neither approve nor deny).
        if (body.assurance === 'platform' && pending.tier > MAX_PLATFORM_ASSURANCE_TIER) return pending;
        // Judged on sequencer time: a response sequenced after the deadline never counts.
        if (Date.parse(entry.sequencedAt) > pending.deadlineMs) return pending;
        if (body.answer === 'deny') pending.status = 'denied';
        else {
          pending.approvals.add(statement.author.principal);
          if (pending.approvals.size >= pending.approvalsRequired) pending.status = 'approved';
        }
        return pending;
      }
      case 'timeout.recorded': {
        const body = statement.body as BodyOf<'timeout.recorded'>;
        const pending = this.#byProposal.get(body.proposal);
        if (pending === undefined) return undefined;
        pending.timeoutRecorded = true;
        if (pending.status === 'pending') pending.status = 'timed_out';
        return pending;
      }
      case 'decision.recorded': {
        const body = statement.body as BodyOf<'decision.recorded'>;
        const pending = this.#byProposal.get(body.proposal);
        if (pending !== undefined && body.outcome !== 'verify_first') {
          pending.decided = true;
          this.#byProposal.delete(body.proposal);
        }
        return pending;
      }
      default:
        return undefined;
    }
  }

  /** Confirmations still waiting whose deadline has passed at `nowMs`. */
  overdue(nowMs: number): PendingConfirmation[] {
    return [...this.#byProposal.values()].filter((p) => p.status === 'pending' && !p.timeoutRecorded && p.deadlineMs < nowMs);
  }

  /** Number of confirmations not yet decided. */
  get size(): number {
    return this.#byProposal.size;
  }
}
