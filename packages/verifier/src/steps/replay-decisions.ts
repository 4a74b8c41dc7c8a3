import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { MAX_PLATFORM_ASSURANCE_TIER, type BodyOf, type Statement } from '@agent-ledger/core';
import { decide, evolve, initialState, type AuthorityEvent, type DecideContext, type GateState } from '@agent-ledger/gate';
import { applyScreening, isScreened, screeningPolicy } from '@agent-ledger/screen';
import type { EntryResult } from '../line-result.js';
import { FatigueReplay, operationBytes, operationKey } from './replay-fatigue.js';

/** Bounds of the replay window (SPEC.md section 9, rules 14 and 15). */
export interface ReplayLimits {
  /** Most undecided proposals (and most open confirmations, approved requests and approvals) held per partition. */
  readonly maxPending?: number;
  /** Most bytes of undecided proposal entry lines held per partition (held parsed: a few times that in memory). */
  readonly maxPendingBytes?: number;
}

/** Default {@link ReplayLimits}: far above what a live gate leaves undecided, far below the verifier's memory budget. */
export const DEFAULT_REPLAY_LIMITS: Required<ReplayLimits> = { maxPending: 65_536, maxPendingBytes: 8 << 20 };

/** A proposal on the events stream whose first decision has not been read yet. */
interface PendingProposal {
  readonly sequencedAtMs: number;
  /** Authority index the proposal entry was sequenced against: the oldest registry the gate may decide it with. */
  readonly authorityIndex: number;
  /** The `proposal.submitted` body (schema-checked by the worker). */
  readonly body: BodyOf<'proposal.submitted'>;
  /** Its entry line's length: what it costs the window. */
  readonly bytes: number;
  /** The newest signed screening verdict on it, read before its first decision. */
  screening: BodyOf<'screening.verdict'>['verdict'] | null;
}

/** A proposal the gate left to a human (first decision `verify_first`), until its final decision. */
interface OpenConfirmation {
  readonly agentId: string;
  readonly tier: number;
  /** The proposal's exact operation ({@link operationKey}) and size ({@link operationBytes}), for the fatigue signals (rule 15). */
  readonly operation: { readonly key: string; readonly bytes: number };
  request: { readonly hash: string; readonly sequencedAtMs: number; readonly deadlineMs: number; readonly approvalsRequired: number } | null;
  /** Principals whose approvals counted: sequenced at or before the deadline, while the request was pending. */
  readonly approvals: Set<string>;
  /** Principals whose approvals came after the deadline and did not count. */
  readonly stale: Set<string>;
  status: 'pending' | 'approved' | 'denied' | 'timed_out';
  timeoutRecorded: boolean;
}

function violation(message: string, code: ReasonCode = ReasonCode.POLICY_VIOLATION): never {
  throw new LedgerError(code, message);
}

function bodyOf<T>(entry: EntryResult): T {
  // The worker kept a body the statement schema had already accepted.
  return entry.replayBody as T;
}

/**
 * Decision replay and deadline proofs (SPEC.md section 9, rule 14), folded in
 * bundle order beside the other rules.
 *
 * The authority stream (partition 0) comes first in a bundle: its statements
 * are kept (they are few; the grant table grows with them anyway) so the gate
 * state at any authority index can be rebuilt with the gate's own `evolve`.
 * On an events partition every proposal waits, parsed, for its first
 * decision, which is re-derived with the gate's own `decide` on the state at
 * the decision's cited authority index and compared; a proposal left to a
 * human then waits, as a few numbers and principals, for its final decision,
 * which must follow from the human responses and timeouts read in between.
 * Memory is bounded by {@link ReplayLimits} per partition: the oldest waiting
 * proposal is dropped first, and a decision naming a dropped proposal fails.
 * The approvals and final allows read on the way feed {@link FatigueReplay},
 * which checks the gate's confirmation-fatigue signals (rule 15).
 *
 * Every method throws a LedgerError (POLICY_VIOLATION, or STALE_APPROVAL for an
 * allow that needed an approval sequenced after its deadline) at the first
 * statement that does not follow.
 */
export class DecisionReplay {
  readonly #limits: Required<ReplayLimits>;
  readonly #authority: AuthorityEvent[] = [];
  /** `sequencedAt` of each authority entry, ms (never decreasing). */
  readonly #authorityTimes: number[] = [];
  /** Gate state after the first `#cursorSize` authority entries (evolve mutates it, so it only moves forward). */
  #cursor: GateState = initialState();
  #cursorSize = 0;
  readonly #proposals = new Map<string, PendingProposal>();
  #proposalBytes = 0;
  readonly #confirmations = new Map<string, OpenConfirmation>();
  /** Proposals dropped from the window in this partition (for the failure message). */
  #dropped = 0;
  /** Rule 15: `grant.suggested` and `approval.rushed` re-derived. */
  readonly #fatigue: FatigueReplay;

  constructor(limits: ReplayLimits = {}) {
    this.#limits = { ...DEFAULT_REPLAY_LIMITS, ...limits };
    this.#fatigue = new FatigueReplay(this.#limits.maxPending);
  }

  /** Folds an authority entry (already authorised and applied to the registry). */
  authority(entry: EntryResult, statement: Statement): void {
    this.#authority.push({ statement, index: entry.index, statementHash: entry.statementHash ?? '', sequencedAt: entry.sequencedAtMs });
    this.#authorityTimes.push(entry.sequencedAtMs);
  }

  /** A new events partition starts: nothing about one agent crosses partitions. */
  beginPartition(): void {
    this.#proposals.clear();
    this.#proposalBytes = 0;
    this.#confirmations.clear();
    this.#dropped = 0;
    this.#fatigue.reset();
  }

  /** Folds an events-stream entry (already authorised). */
  event(entry: EntryResult): void {
    switch (entry.type) {
      case 'proposal.submitted':
        this.#proposal(entry);
        return;
      case 'screening.verdict': {
        const body = bodyOf<BodyOf<'screening.verdict'>>(entry);
        const pending = this.#proposals.get(body.proposal);
        if (pending !== undefined && body.agentId === pending.body.agentId) pending.screening = body.verdict;
        return;
      }
      case 'decision.recorded':
        this.#decision(entry, bodyOf<BodyOf<'decision.recorded'>>(entry));
        return;
      case 'confirmation.requested':
        this.#request(entry, bodyOf<BodyOf<'confirmation.requested'>>(entry));
        return;
      case 'human.response':
        this.#response(entry, bodyOf<BodyOf<'human.response'>>(entry));
        return;
      case 'timeout.recorded':
        this.#timeout(entry, bodyOf<BodyOf<'timeout.recorded'>>(entry));
        return;
      case 'grant.suggested':
        this.#fatigue.suggestion(bodyOf<BodyOf<'grant.suggested'>>(entry));
        return;
      case 'approval.rushed':
        this.#fatigue.rushed(bodyOf<BodyOf<'approval.rushed'>>(entry));
        return;
      default:
        return;
    }
  }

  #proposal(entry: EntryResult): void {
    const hash = entry.statementHash as string;
    const body = entry.replayBody as BodyOf<'proposal.submitted'>;
    // A statement cannot be sequenced twice (freshness and replay rules), so a hash seen again changes nothing.
    if (this.#proposals.has(hash) || this.#confirmations.has(hash)) return;
    this.#proposals.set(hash, { sequencedAtMs: entry.sequencedAtMs, authorityIndex: entry.authorityIndex, body, bytes: entry.bytes, screening: null });
    this.#proposalBytes += entry.bytes;
    while (this.#proposals.size > this.#limits.maxPending || this.#proposalBytes > this.#limits.maxPendingBytes) {
      const oldest = this.#proposals.entries().next();
      if (oldest.done === true) break;
      this.#proposals.delete(oldest.value[0]);
      this.#proposalBytes -= oldest.value[1].bytes;
      this.#dropped += 1;
    }
  }

  /** Number of authority entries sequenced at or before `atMs`. */
  #authorityCountAt(atMs: number): number {
    const times = this.#authorityTimes;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((times[mid] as number) <= atMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The gate state after the first `size` authority entries ("at authority index size", SPEC.md section 7). */
  #stateAt(size: number): GateState {
    if (size < this.#cursorSize) {
      this.#cursor = initialState();
      this.#cursorSize = 0;
    }
    while (this.#cursorSize < size) {
      this.#cursor = evolve(this.#cursor, this.#authority[this.#cursorSize] as AuthorityEvent);
      this.#cursorSize += 1;
    }
    return this.#cursor;
  }

  #decision(entry: EntryResult, body: BodyOf<'decision.recorded'>): void {
    const existed = this.#authorityCountAt(entry.sequencedAtMs);
    if (body.authorityIndex > existed) {
      violation(`decision cites authority index ${body.authorityIndex}, but only ${existed} authority entries were sequenced before it`);
    }
    const proposal = this.#proposals.get(body.proposal);
    if (proposal !== undefined) {
      this.#proposals.delete(body.proposal);
      this.#proposalBytes -= proposal.bytes;
      this.#firstDecision(body, proposal);
      return;
    }
    const open = this.#confirmations.get(body.proposal);
    if (open !== undefined) {
      this.#confirmations.delete(body.proposal);
      this.#finalDecision(body, open);
      if (body.outcome === 'allow' && open.request !== null) {
        this.#fatigue.allowed(entry, { hash: open.request.hash, tier: open.tier, key: open.operation.key });
      }
      return;
    }
    const window = this.#dropped > 0 ? ` (or one of the ${this.#dropped} older than the replay window)` : '';
    violation(`decision names no undecided proposal of this partition${window}`);
  }

  /** The gate's first decision on a proposal: re-run the gate at the cited authority index. */
  #firstDecision(body: BodyOf<'decision.recorded'>, pending: PendingProposal): void {
    const proposal = pending.body;
    if (body.agentId !== proposal.agentId) violation(`decision for agent ${body.agentId} names a proposal by ${proposal.agentId}`);
    if (body.outcome === 'deny') violation('a proposal\'s first decision is allow, block or verify_first, never deny');
    if (body.authorityIndex < pending.authorityIndex) {
      violation(`decision cites authority index ${body.authorityIndex}, older than the ${pending.authorityIndex} its proposal was sequenced against`);
    }
    let expected = decide(
      { now: pending.sequencedAtMs, channel: proposal.channel, context: proposal.context as DecideContext, proposal },
      this.#stateAt(body.authorityIndex),
    );
    // The gate's pre-screen: the signed verdict before the decision shapes it by the one shared rule.
    if (isScreened(expected)) {
      if (pending.screening === null) violation('decision on a screened proposal without a screening verdict before it');
      expected = applyScreening(expected, screeningPolicy(expected.tier, pending.screening));
    }
    const fields = ['outcome', 'code', 'tier', 'risk', 'grantId', 'grantEntry'] as const;
    for (const field of fields) {
      if (body[field] !== expected[field]) {
        violation(`decision does not follow from the grant table at authority index ${body.authorityIndex}: ${field} ${JSON.stringify(body[field])}, the gate decides ${JSON.stringify(expected[field])}`);
      }
    }
    if (body.outcome === 'verify_first') {
      const operation = { key: operationKey(proposal), bytes: operationBytes(proposal) };
      this.#confirmations.set(body.proposal, { agentId: body.agentId, tier: body.tier, operation, request: null, approvals: new Set(), stale: new Set(), status: 'pending', timeoutRecorded: false });
      while (this.#confirmations.size > this.#limits.maxPending) {
        const oldest = this.#confirmations.keys().next();
        if (oldest.done === true) break;
        this.#confirmations.delete(oldest.value);
        this.#dropped += 1;
      }
    }
  }

  /** The final decision after `verify_first`: it must follow from the responses and timeouts read since. */
  #finalDecision(body: BodyOf<'decision.recorded'>, open: OpenConfirmation): void {
    const request = open.request;
    if (request === null) violation('final decision without a confirmation request');
    if (body.agentId !== open.agentId) violation(`final decision for agent ${body.agentId} names a proposal of ${open.agentId}`);
    if (body.tier !== open.tier) violation(`final decision at tier ${body.tier}, its proposal was classified tier ${open.tier}`);
    if (body.grantId !== null || body.grantEntry !== null) violation('a final decision after a confirmation cites no grant');
    switch (body.outcome) {
      case 'allow':
        if (open.status === 'approved' && body.code === null) return;
        if (open.status === 'timed_out') violation('allowed after its confirmation timed out: a timeout never approves');
        if (open.status === 'pending' && new Set([...open.approvals, ...open.stale]).size >= request.approvalsRequired) {
          violation(`allowed on approvals sequenced after the deadline ${new Date(request.deadlineMs).toISOString()}`, ReasonCode.STALE_APPROVAL);
        }
        if (open.status === 'approved') violation('an allow carries no reason code');
        violation(`allowed with ${open.approvals.size} approval(s) from distinct principals before the deadline, ${request.approvalsRequired} required${open.status === 'denied' ? ', after a denial' : ''}`);
        break;
      case 'deny':
        if (body.code === ReasonCode.TIMEOUT && open.status === 'timed_out') return;
        if (body.code === ReasonCode.HUMAN_DENIED && open.status === 'denied') return;
        if (body.code === ReasonCode.TIMEOUT && !open.timeoutRecorded) violation('denied with TIMEOUT, but no timeout was recorded for its request');
        violation(`denied with ${String(body.code)} while the confirmation is ${open.status}`);
        break;
      default:
        violation(`a proposal already left to a human gets allow or deny, not ${body.outcome}`);
    }
  }

  #request(entry: EntryResult, body: BodyOf<'confirmation.requested'>): void {
    const open = this.#confirmations.get(body.proposal);
    if (open === undefined) violation('confirmation requested for a proposal the gate did not leave to a human');
    if (open.request !== null) violation('a second confirmation request for one proposal');
    if (body.tier !== open.tier) violation(`confirmation at tier ${body.tier}, the decision says tier ${open.tier}`);
    open.request = { hash: entry.statementHash as string, sequencedAtMs: entry.sequencedAtMs, deadlineMs: Date.parse(body.deadline), approvalsRequired: body.approvalsRequired };
  }

  /** Mirrors the gate's confirmation queue: answers to another request, or after the outcome, change nothing. */
  #response(entry: EntryResult, body: BodyOf<'human.response'>): void {
    const open = this.#confirmations.get(body.proposal);
    const request = open?.request;
    if (open === undefined || request === null || request === undefined || request.hash !== body.request) return;
    // The gate's fatigue fold reads every approval of the open request by its deadline, whatever it changes.
    if (body.answer === 'approve' && entry.sequencedAtMs <= request.deadlineMs) {
      this.#fatigue.approval(entry, { agentId: open.agentId, proposal: body.proposal, hash: request.hash, sequencedAtMs: request.sequencedAtMs, operationBytes: open.operation.bytes });
    }
    if (open.status !== 'pending') return;
    // A chat bridge's (platform-assurance) answer counts only up to MAX_PLATFORM_ASSURANCE_TIER.
    if (body.assurance === 'platform' && open.tier > MAX_PLATFORM_ASSURANCE_TIER) return;
    // Judged on sequencer time: a response sequenced after the deadline never counts.
    if (entry.sequencedAtMs > request.deadlineMs) {
      if (body.answer === 'approve') open.stale.add(entry.author.principal);
      return;
    }
    if (body.answer === 'deny') {
      open.status = 'denied';
      return;
    }
    open.approvals.add(entry.author.principal);
    if (open.approvals.size >= request.approvalsRequired) open.status = 'approved';
  }

  #timeout(entry: EntryResult, body: BodyOf<'timeout.recorded'>): void {
    const deadlineMs = Date.parse(body.deadline);
    if (entry.sequencedAtMs < deadlineMs) violation(`timeout sequenced before its deadline ${body.deadline}`);
    const open = this.#confirmations.get(body.proposal);
    // A timeout after the final decision (a timer that had not read it yet) changes nothing.
    if (open === undefined) return;
    const request = open.request;
    if (request === null) violation('timeout before the confirmation request');
    if (body.request !== request.hash || deadlineMs !== request.deadlineMs) violation('timeout names another request or deadline than the proposal\'s confirmation');
    open.timeoutRecorded = true;
    if (open.status === 'pending') open.status = 'timed_out';
  }
}
