import type { BodyOf, Entry, StatementType } from '@agent-ledger/core';
import { MAX_SUGGESTED_TIER, operationBytes, operationKey } from './fatigue.js';
import { countResponse, type ResponseEffect } from './responses.js';
import { REPLAY_WINDOW, type ReplayLimits } from './window.js';

/** A statement as the rulebook reads it: type, body and author, narrowing on `type`. */
export type LifeStatement = {
  [T in StatementType]: { readonly type: T; readonly body: BodyOf<T>; readonly author: { readonly principal: string; readonly keyId: string } };
}[StatementType];

/** A sequenced entry of one events partition, as the rulebook folds it. */
export interface LifeEntry {
  readonly statement: LifeStatement;
  readonly partition: number;
  readonly index: number;
  readonly sequencedAtMs: number;
  /** Authority index the entry was sequenced against. */
  readonly authorityIndex: number;
  readonly statementHash: string;
  /** Length of its bundle line in bytes (what an undecided proposal costs the window). */
  readonly bytes: number;
}

/** A proposal whose first decision is not on the log yet. */
export interface WaitingProposal {
  readonly hash: string;
  readonly keyId: string;
  readonly sequencedAtMs: number;
  /** Authority index the proposal entry was sequenced against: the oldest registry it may be decided with. */
  readonly authorityIndex: number;
  readonly body: BodyOf<'proposal.submitted'>;
  readonly bytes: number;
  /** The newest signed screening verdict on it, read before its first decision. */
  screening: BodyOf<'screening.verdict'>['verdict'] | null;
}

/** A confirmation request's fixed facts. */
export interface RequestFacts {
  readonly hash: string;
  readonly sequencedAtMs: number;
  readonly deadlineMs: number;
  readonly approvalsRequired: number;
}

/** A proposal left to a human (first decision `verify_first`), until its final decision. */
export interface OpenConfirmation {
  readonly proposal: string;
  readonly agentId: string;
  readonly keyId: string;
  readonly partition: number;
  /** Sequencing time of the proposal (ms). */
  readonly proposedAtMs: number;
  readonly tier: number;
  /** Rules version of the first decision. */
  readonly rulesVersion: number;
  /** The proposal's exact operation ({@link operationKey}) and size ({@link operationBytes}), for the fatigue signals. */
  readonly operation: { readonly key: string; readonly bytes: number; readonly fields: OperationFields };
  request: RequestFacts | null;
  /** Principals whose approvals counted: sequenced at or before the deadline, while the request was pending. */
  readonly approvals: Set<string>;
  /** Principals whose approvals came after the deadline and did not count. */
  readonly stale: Set<string>;
  status: 'pending' | 'approved' | 'denied' | 'timed_out';
  timeoutRecorded: boolean;
}

/** The four fields besides the agent that make an exact operation. */
export type OperationFields = Pick<BodyOf<'proposal.submitted'>, 'actionType' | 'targetResource' | 'recipient' | 'scope'>;

/** A request whose final decision was `allow` at tier ≤ 2: what a suggestion may name. */
export interface ApprovedRequest {
  readonly agentId: string;
  readonly key: string;
  readonly fields: OperationFields;
  readonly tier: number;
  readonly decisionIndex: number;
  readonly decisionAtMs: number;
  suggested: boolean;
}

/** An `approve` answering the open request of its proposal, sequenced by the deadline. */
export interface Approval {
  readonly agentId: string;
  readonly proposal: string;
  readonly request: string;
  readonly approver: string;
  readonly elapsedMs: number;
  readonly operationBytes: number;
  rushed: boolean;
}

/** What a human response did, for the gate's refusal of those that did not count. */
export interface Answer {
  readonly effect: ResponseEffect;
  readonly agentId: string;
  readonly proposal: string;
  readonly author: string;
}

/** Confirmation-fatigue facts of one partition. */
export interface FatigueState {
  /** Requests approved at tier ≤ 2 (final allow), by request hash, in the order of their final decisions. */
  readonly approved: Map<string, ApprovedRequest>;
  /** Final allow decisions (statement hash) to the request they closed. */
  readonly allowedBy: Map<string, string>;
  /** Approvals read, by response hash. */
  readonly approvals: Map<string, Approval>;
  /** Per approver principal: sequencer time of their latest approval. */
  readonly lastApproval: Map<string, number>;
  droppedRequests: number;
  droppedApprovals: number;
}

/**
 * The life of every proposal of ONE events partition, folded from its
 * sequenced entries. Memory is bounded by {@link ReplayLimits}: the oldest
 * waiting proposal is dropped first (a decision naming it then fails replay).
 */
export interface LifeState {
  readonly limits: Required<ReplayLimits>;
  /** Proposals waiting for their first decision, oldest first. */
  readonly proposals: Map<string, WaitingProposal>;
  proposalBytes: number;
  /** Proposals left to a human, waiting for their final decision, oldest first. */
  readonly confirmations: Map<string, OpenConfirmation>;
  /** Proposals and confirmations dropped from the window. */
  dropped: number;
  readonly fatigue: FatigueState;
  /** What each recent response did (bounded). */
  readonly answers: Map<string, Answer>;
  /** Index of the last entry folded: an entry at or below it is not folded again (redeliveries). */
  lastIndex: number;
}

/** An empty partition. */
export function initialState(limits: ReplayLimits = {}): LifeState {
  return {
    limits: { ...REPLAY_WINDOW, ...limits },
    proposals: new Map(),
    proposalBytes: 0,
    confirmations: new Map(),
    dropped: 0,
    fatigue: { approved: new Map(), allowedBy: new Map(), approvals: new Map(), lastApproval: new Map(), droppedRequests: 0, droppedApprovals: 0 },
    answers: new Map(),
    lastIndex: -1,
  };
}

/** Map insertion that drops the oldest entries past `max`; returns how many were dropped. */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): number {
  map.set(key, value);
  let dropped = 0;
  while (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done === true) break;
    map.delete(oldest.value);
    dropped += 1;
  }
  return dropped;
}

type Handler<T extends StatementType> = (state: LifeState, entry: LifeEntry, body: BodyOf<T>) => void;

/**
 * The fold, one handler per statement type: a new statement type is a compile
 * error here until it is handled or marked 'ignored'.
 */
const EVOLVE: { readonly [T in StatementType]: Handler<T> | 'ignored' } = {
  genesis: 'ignored',
  'key.registered': 'ignored',
  'root.rotated': 'ignored',
  'key.revoked': 'ignored',
  'grant.proposed': 'ignored',
  'grant.cosigned': 'ignored',
  'grant.revoked': 'ignored',
  'grant.reauthorized': 'ignored',
  'proposal.submitted': evolveProposal,
  'classification.recorded': 'ignored',
  'screening.verdict': (state, _entry, body) => {
    const waiting = state.proposals.get(body.proposal);
    if (waiting !== undefined && body.agentId === waiting.body.agentId) waiting.screening = body.verdict;
  },
  'confirmation.requested': (state, entry, body) => {
    const open = state.confirmations.get(body.proposal);
    if (open === undefined || open.request !== null) return;
    open.request = { hash: entry.statementHash, sequencedAtMs: entry.sequencedAtMs, deadlineMs: Date.parse(body.deadline), approvalsRequired: body.approvalsRequired };
  },
  'human.response': evolveResponse,
  'timeout.recorded': (state, _entry, body) => {
    const open = state.confirmations.get(body.proposal);
    // A timeout after the final decision (a timer that had not read it yet) changes nothing.
    if (open === undefined || open.request === null || body.request !== open.request.hash) return;
    open.timeoutRecorded = true;
    if (open.status === 'pending') open.status = 'timed_out';
  },
  'escalation.raised': 'ignored',
  'decision.recorded': evolveDecision,
  'refusal.recorded': 'ignored',
  'intake.rejected': 'ignored',
  // Delivery records of escalations: the proposal's life is already decided by then.
  'notification.sent': 'ignored',
  // An executor's refusal to run a decision it could not verify: a record; the proposal's life is unchanged.
  'execution.refused': 'ignored',
  'grant.suggested': (state, _entry, body) => {
    for (const request of body.requests) {
      const approved = state.fatigue.approved.get(request);
      if (approved !== undefined) approved.suggested = true;
    }
  },
  'approval.rushed': (state, _entry, body) => {
    const approval = state.fatigue.approvals.get(body.response);
    if (approval !== undefined) approval.rushed = true;
  },
};

/**
 * Folds one sequenced entry of the state's partition. Never throws: whether
 * the entry follows from the rules is {@link judge}'s question (verify-chain
 * asks it before folding). An entry at or below the last folded index is
 * ignored, so a redelivered batch folds nothing twice.
 */
export function evolve(state: LifeState, entry: LifeEntry): LifeState {
  if (entry.index <= state.lastIndex) return state;
  state.lastIndex = entry.index;
  const handler = EVOLVE[entry.statement.type];
  if (handler !== 'ignored') (handler as Handler<StatementType>)(state, entry, entry.statement.body);
  return state;
}

/** A sequenced entry as the rulebook reads it. */
export function lifeEntryOf(entry: Entry, statementHash: string, bytes = 0): LifeEntry {
  const statement = entry.envelope.statement;
  return {
    statement: { type: statement.type, body: statement.body, author: statement.author } as LifeStatement,
    partition: entry.partition,
    index: entry.index,
    sequencedAtMs: Date.parse(entry.sequencedAt),
    authorityIndex: entry.authorityIndex,
    statementHash,
    bytes,
  };
}

function evolveProposal(state: LifeState, entry: LifeEntry, body: BodyOf<'proposal.submitted'>): void {
  const hash = entry.statementHash;
  // A statement cannot be sequenced twice (freshness and replay rules), so a hash seen again changes nothing.
  if (state.proposals.has(hash) || state.confirmations.has(hash)) return;
  state.proposals.set(hash, { hash, keyId: entry.statement.author.keyId, sequencedAtMs: entry.sequencedAtMs, authorityIndex: entry.authorityIndex, body, bytes: entry.bytes, screening: null });
  state.proposalBytes += entry.bytes;
  while (state.proposals.size > state.limits.maxPending || state.proposalBytes > state.limits.maxPendingBytes) {
    const oldest = state.proposals.entries().next();
    if (oldest.done === true) break;
    state.proposals.delete(oldest.value[0]);
    state.proposalBytes -= oldest.value[1].bytes;
    state.dropped += 1;
  }
}

function evolveDecision(state: LifeState, entry: LifeEntry, body: BodyOf<'decision.recorded'>): void {
  const waiting = state.proposals.get(body.proposal);
  if (waiting !== undefined) {
    state.proposals.delete(body.proposal);
    state.proposalBytes -= waiting.bytes;
    if (body.outcome !== 'verify_first') return;
    const proposal = waiting.body;
    state.confirmations.set(body.proposal, {
      proposal: body.proposal,
      agentId: body.agentId,
      keyId: waiting.keyId,
      partition: entry.partition,
      proposedAtMs: waiting.sequencedAtMs,
      tier: body.tier,
      rulesVersion: body.rulesVersion ?? 1,
      operation: {
        key: operationKey(proposal),
        bytes: operationBytes(proposal),
        fields: { actionType: proposal.actionType, targetResource: proposal.targetResource, recipient: proposal.recipient, scope: proposal.scope },
      },
      request: null,
      approvals: new Set(),
      stale: new Set(),
      status: 'pending',
      timeoutRecorded: false,
    });
    while (state.confirmations.size > state.limits.maxPending) {
      const oldest = state.confirmations.keys().next();
      if (oldest.done === true) break;
      state.confirmations.delete(oldest.value);
      state.dropped += 1;
    }
    return;
  }
  const open = state.confirmations.get(body.proposal);
  // A final decision that does not follow from the answers and timeouts read
  // (an allow while still pending, a TIMEOUT before the timeout...) closes
  // nothing: the deadline is still enforced and the gate still signs its own.
  // verify-chain fails such a bundle at that decision (judge).
  if (open === undefined || !settles(open, body)) return;
  state.confirmations.delete(body.proposal);
  if (body.outcome !== 'allow' || open.request === null || open.tier > MAX_SUGGESTED_TIER) return;
  const fatigue = state.fatigue;
  fatigue.droppedRequests += remember(fatigue.approved, open.request.hash, {
    agentId: open.agentId,
    key: open.operation.key,
    fields: open.operation.fields,
    tier: open.tier,
    decisionIndex: entry.index,
    decisionAtMs: entry.sequencedAtMs,
    suggested: false,
  }, state.limits.maxPending);
  remember(fatigue.allowedBy, entry.statementHash, open.request.hash, state.limits.maxPending);
}

/** Whether a final decision is one the confirmation's state allows (any rules version). */
function settles(open: OpenConfirmation, body: BodyOf<'decision.recorded'>): boolean {
  switch (open.status) {
    case 'pending':
      return false;
    case 'approved':
      return (body.outcome === 'allow' && body.code === null) || (body.outcome === 'deny' && body.code === 'KEY_REVOKED');
    case 'denied':
      return body.outcome === 'deny' && body.code === 'HUMAN_DENIED';
    case 'timed_out':
      return body.outcome === 'deny' && body.code === 'TIMEOUT';
  }
}

function evolveResponse(state: LifeState, entry: LifeEntry, body: BodyOf<'human.response'>): void {
  const open = state.confirmations.get(body.proposal);
  const request = open?.request ?? null;
  const author = entry.statement.author.principal;
  const effect = countResponse(
    open === undefined || request === null
      ? undefined
      : { proposal: open.proposal, request: request.hash, agentId: open.agentId, partition: open.partition, tier: open.tier, deadlineMs: request.deadlineMs, approvalsRequired: request.approvalsRequired, status: open.status, approvedBy: open.approvals },
    { proposal: body.proposal, request: body.request, agentId: body.agentId, partition: entry.partition, answer: body.answer, assurance: body.assurance, author, sequencedAtMs: entry.sequencedAtMs },
  );
  remember(state.answers, entry.statementHash, { effect, agentId: body.agentId, proposal: body.proposal, author }, state.limits.maxPending);
  if (open === undefined || request === null || effect === 'misrouted' || effect === 'mismatch') return;
  // The fatigue signals read every approval of the open request by its deadline, whatever it changes.
  if (body.answer === 'approve' && entry.sequencedAtMs <= request.deadlineMs) recordApproval(state, entry, open, request);
  switch (effect) {
    case 'late':
      if (body.answer === 'approve') open.stale.add(author);
      return;
    case 'denied':
      open.status = 'denied';
      return;
    case 'approval':
      open.approvals.add(author);
      return;
    case 'approved':
      open.approvals.add(author);
      open.status = 'approved';
      return;
    default:
      return;
  }
}

function recordApproval(state: LifeState, entry: LifeEntry, open: OpenConfirmation, request: RequestFacts): void {
  const fatigue = state.fatigue;
  const approver = entry.statement.author.principal;
  // The later of the request and this approver's previous approval: a batch of
  // approvals faster than one can read is a rubber stamp even when the requests waited long.
  const since = Math.max(request.sequencedAtMs, fatigue.lastApproval.get(approver) ?? 0);
  fatigue.lastApproval.delete(approver);
  remember(fatigue.lastApproval, approver, entry.sequencedAtMs, state.limits.maxPending);
  fatigue.droppedApprovals += remember(fatigue.approvals, entry.statementHash, {
    agentId: open.agentId,
    proposal: open.proposal,
    request: request.hash,
    approver,
    elapsedMs: Math.max(0, entry.sequencedAtMs - since),
    operationBytes: open.operation.bytes,
    rushed: false,
  }, state.limits.maxPending);
}
