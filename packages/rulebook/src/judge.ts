import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { BodyOf, StatementType } from '@agent-ledger/core';
import type { GateState } from '@agent-ledger/gate';
import { firstDecision, finalDecision } from './decide.js';
import { MAX_MIN_READ_MS, MAX_SUGGESTED_TIER, READING_UNIT_BYTES, isReadingTime, operationKey } from './fatigue.js';
import { rulesFor, type RulesRegistry } from './rules.js';
import { admitsProposal } from './window.js';
import type { ApprovedRequest, LifeEntry, LifeState, OpenConfirmation, WaitingProposal } from './state.js';

/** What verify-chain knows beside the partition: the authority stream. */
export interface JudgeContext {
  /** Released rules versions (default: every released one). */
  readonly rules?: RulesRegistry;
  /** The gate's grant table after the first `size` authority entries. */
  gateAt(size: number): GateState;
  /** Number of authority entries sequenced at or before `atMs`. */
  authorityCountAt(atMs: number): number;
  /** True when key `keyId` is revoked in the registry after the first `size` authority entries. */
  keyRevokedAt(keyId: string, size: number): boolean;
}

function violation(message: string, code: ReasonCode = ReasonCode.POLICY_VIOLATION): never {
  throw new LedgerError(code, message);
}

/**
 * Does `entry` follow from the rules, given the partition's state before it?
 * Throws a LedgerError (POLICY_VIOLATION, or STALE_APPROVAL for an allow that
 * needed an approval sequenced after its deadline) when it does not; the
 * caller then folds it with `evolve`. The same `firstDecision`,
 * `finalDecision` and fatigue rules the live gate signs with.
 */
export function judge(state: LifeState, entry: LifeEntry, context: JudgeContext): void {
  const rule = JUDGE[entry.statement.type];
  if (rule !== 'ignored') (rule as Rule<StatementType>)(state, entry, entry.statement.body, context);
}

type Rule<T extends StatementType> = (state: LifeState, entry: LifeEntry, body: BodyOf<T>, context: JudgeContext) => void;

/** What each statement type must follow: a new type is a compile error here until it is judged or marked 'ignored'. */
const JUDGE: { readonly [T in StatementType]: Rule<T> | 'ignored' } = {
  genesis: 'ignored',
  'key.registered': 'ignored',
  'root.rotated': 'ignored',
  'key.revoked': 'ignored',
  'grant.proposed': 'ignored',
  'grant.cosigned': 'ignored',
  'grant.revoked': 'ignored',
  'grant.reauthorized': 'ignored',
  'proposal.submitted': (state, entry) => {
    // The one bound: admission refuses a proposal that does not fit the window (RATE_LIMIT), so none may be on the log.
    if (state.proposals.has(entry.statementHash) || state.confirmations.has(entry.statementHash) || admitsProposal(state, entry.bytes)) return;
    violation(`proposal beyond the replay window (${state.proposals.size + state.confirmations.size} undecided, ${state.proposalBytes} bytes waiting): admission refuses it with RATE_LIMIT`);
  },
  'classification.recorded': 'ignored',
  'screening.verdict': 'ignored',
  'confirmation.requested': (state, _entry, body) => {
    const open = state.confirmations.get(body.proposal);
    if (open === undefined) violation('confirmation requested for a proposal the gate did not leave to a human');
    if (open.request !== null) violation('a second confirmation request for one proposal');
    if (body.tier !== open.tier) violation(`confirmation at tier ${body.tier}, the decision says tier ${open.tier}`);
  },
  // Answers never fail replay: one that does not count changes nothing (countResponse).
  'human.response': 'ignored',
  'timeout.recorded': (state, entry, body) => {
    const deadlineMs = Date.parse(body.deadline);
    if (entry.sequencedAtMs < deadlineMs) violation(`timeout sequenced before its deadline ${body.deadline}`);
    const open = state.confirmations.get(body.proposal);
    // A timeout after the final decision (a timer that had not read it yet) changes nothing.
    if (open === undefined) return;
    const request = open.request;
    if (request === null) violation('timeout before the confirmation request');
    if (body.request !== request.hash || deadlineMs !== request.deadlineMs) violation('timeout names another request or deadline than the proposal\'s confirmation');
  },
  'escalation.raised': 'ignored',
  'decision.recorded': (state, entry, body, context) => judgeDecision(state, entry, body, context),
  'refusal.recorded': 'ignored',
  'intake.rejected': 'ignored',
  'grant.suggested': (state, _entry, body) => judgeSuggestion(state, body),
  'approval.rushed': (state, _entry, body) => judgeRushed(state, body),
  'notification.sent': 'ignored',
  // An executor's refusal to run a decision it could not verify: a record; the proposal's life is unchanged.
  'execution.refused': 'ignored',
};

function judgeDecision(state: LifeState, entry: LifeEntry, body: BodyOf<'decision.recorded'>, context: JudgeContext): void {
  const existed = context.authorityCountAt(entry.sequencedAtMs);
  if (body.authorityIndex > existed) {
    violation(`decision cites authority index ${body.authorityIndex}, but only ${existed} authority entries were sequenced before it`);
  }
  const rules = rulesFor(body.rulesVersion, context.rules);
  const waiting = state.proposals.get(body.proposal);
  if (waiting !== undefined) return judgeFirst(body, waiting, context, rules);
  const open = state.confirmations.get(body.proposal);
  if (open !== undefined) return judgeFinal(body, open, context, rules);
  const window = state.dropped > 0 ? ` (or one of the ${state.dropped} older than the replay window)` : '';
  violation(`decision names no undecided proposal of this partition${window}`);
}

function judgeFirst(body: BodyOf<'decision.recorded'>, waiting: WaitingProposal, context: JudgeContext, rules: ReturnType<typeof rulesFor>): void {
  const proposal = waiting.body;
  if (body.agentId !== proposal.agentId) violation(`decision for agent ${body.agentId} names a proposal by ${proposal.agentId}`);
  if (body.outcome === 'deny') violation('a proposal\'s first decision is allow, block or verify_first, never deny');
  if (body.authorityIndex < waiting.authorityIndex) {
    violation(`decision cites authority index ${body.authorityIndex}, older than the ${waiting.authorityIndex} its proposal was sequenced against`);
  }
  const { decision: expected, screen } = firstDecision(waiting, {
    gate: context.gateAt(body.authorityIndex),
    keyRevoked: rules.revokedKeyBlocks && context.keyRevokedAt(waiting.keyId, body.authorityIndex),
    rules,
    screening: waiting.screening,
  });
  // The gate's pre-screen: the signed verdict before the decision shapes it by the one shared rule.
  if (screen) violation('decision on a screened proposal without a screening verdict before it');
  const fields = ['outcome', 'code', 'tier', 'risk', 'grantId', 'grantEntry'] as const;
  for (const field of fields) {
    if (body[field] !== expected[field]) {
      violation(`decision does not follow from the grant table at authority index ${body.authorityIndex} under rules version ${rules.version}: ${field} ${JSON.stringify(body[field])}, the gate decides ${JSON.stringify(expected[field])}`);
    }
  }
}

function judgeFinal(body: BodyOf<'decision.recorded'>, open: OpenConfirmation, context: JudgeContext, rules: ReturnType<typeof rulesFor>): void {
  const request = open.request;
  if (request === null) violation('final decision without a confirmation request');
  if (body.agentId !== open.agentId) violation(`final decision for agent ${body.agentId} names a proposal of ${open.agentId}`);
  if (body.tier !== open.tier) violation(`final decision at tier ${body.tier}, its proposal was classified tier ${open.tier}`);
  if (body.grantId !== null || body.grantEntry !== null) violation('a final decision after a confirmation cites no grant');
  if (body.outcome !== 'allow' && body.outcome !== 'deny') violation(`a proposal already left to a human gets allow or deny, not ${body.outcome}`);
  const keyRevoked = rules.revokedKeyBlocks && context.keyRevokedAt(open.keyId, body.authorityIndex);
  const expected = finalDecision(open, rules, keyRevoked);
  if (expected !== null && expected.outcome === body.outcome && expected.code === body.code) return;
  if (body.outcome === 'allow') {
    if (open.status === 'timed_out') violation('allowed after its confirmation timed out: a timeout never approves');
    if (open.status === 'pending' && new Set([...open.approvals, ...open.stale]).size >= request.approvalsRequired) {
      violation(`allowed on approvals sequenced after the deadline ${new Date(request.deadlineMs).toISOString()}`, ReasonCode.STALE_APPROVAL);
    }
    if (open.status === 'approved' && keyRevoked) violation('allowed although the proposing key is revoked at the cited authority index');
    if (open.status === 'approved') violation('an allow carries no reason code');
    violation(`allowed with ${open.approvals.size} approval(s) from distinct principals before the deadline, ${request.approvalsRequired} required${open.status === 'denied' ? ', after a denial' : ''}`);
  }
  if (body.code === ReasonCode.TIMEOUT && !open.timeoutRecorded) violation('denied with TIMEOUT, but no timeout was recorded for its request');
  violation(`denied with ${String(body.code)} while the confirmation is ${open.status}`);
}

function judgeSuggestion(state: LifeState, body: BodyOf<'grant.suggested'>): void {
  const fatigue = state.fatigue;
  const key = operationKey(body);
  const named = new Set<string>();
  let tier = 0;
  let last: ApprovedRequest | undefined;
  for (const hash of body.requests) {
    if (named.has(hash)) violation(`suggestion names request ${hash} twice`);
    named.add(hash);
    const approved = fatigue.approved.get(hash);
    if (approved === undefined) {
      const window = fatigue.droppedRequests > 0 ? ` (or one of the ${fatigue.droppedRequests} older than the replay window)` : '';
      violation(`suggestion names ${hash}, not a confirmation request of this partition approved at tier <= ${MAX_SUGGESTED_TIER} before it${window}`);
    }
    if (approved.suggested) violation(`suggestion names request ${hash}, already named by an earlier suggestion`);
    if (approved.key !== key) violation(`suggestion names request ${hash}, whose proposal is another operation`);
    if (last !== undefined && approved.decisionIndex < last.decisionIndex) {
      violation(`suggestion names request ${hash} after one decided later: requests are named in the order of their final decisions`);
    }
    tier = Math.max(tier, approved.tier);
    last = approved;
  }
  if (last === undefined) violation('suggestion names no request');
  if (body.tier !== tier) violation(`suggestion at tier ${body.tier}, the highest tier of its requests is ${tier}`);
  const notBefore = Date.parse(body.notBefore);
  if (notBefore !== last.decisionAtMs) {
    violation(`suggestion notBefore ${body.notBefore}, the final decision of its last request was sequenced at ${new Date(last.decisionAtMs).toISOString()}`);
  }
  if (Date.parse(body.expiresAt) <= notBefore) violation('suggestion expiresAt is not later than its notBefore');
}

function judgeRushed(state: LifeState, body: BodyOf<'approval.rushed'>): void {
  const fatigue = state.fatigue;
  const approval = fatigue.approvals.get(body.response);
  if (approval === undefined) {
    const window = fatigue.droppedApprovals > 0 ? ` (or one of the ${fatigue.droppedApprovals} older than the replay window)` : '';
    violation(`rushed signal names no approval of an open confirmation request of this partition, sequenced by its deadline${window}`);
  }
  if (approval.rushed) violation('a second approval.rushed for one response');
  if (body.approver !== approval.approver) violation(`rushed signal names approver ${body.approver}, the response is by ${approval.approver}`);
  if (body.request !== approval.request || body.proposal !== approval.proposal || body.agentId !== approval.agentId) {
    violation('rushed signal names another request, proposal or agent than its response');
  }
  if (body.operationBytes !== approval.operationBytes) violation(`rushed signal says operationBytes ${body.operationBytes}, the proposal's operation is ${approval.operationBytes} bytes`);
  if (body.elapsedMs !== approval.elapsedMs) violation(`rushed signal says elapsedMs ${body.elapsedMs}, the log gives ${approval.elapsedMs}`);
  if (!isReadingTime(body.minReadMs, approval.operationBytes)) {
    violation(`rushed signal says minReadMs ${body.minReadMs}, not min(${MAX_MIN_READ_MS}, base × max(1, ceil(${approval.operationBytes} / ${READING_UNIT_BYTES}))) for any base`);
  }
  if (body.elapsedMs >= body.minReadMs) violation(`rushed signal with elapsedMs ${body.elapsedMs}, not below minReadMs ${body.minReadMs}`);
}
