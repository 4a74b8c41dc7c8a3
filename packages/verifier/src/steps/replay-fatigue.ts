import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { canonicalBytes, canonicalJson, sha256Hex, type BodyOf } from '@agent-ledger/core';
import type { EntryResult } from '../line-result.js';

/** The minimum reading time grows by one base step per this many bytes of the operation (SPEC.md section 4). */
const READING_UNIT_BYTES = 512;
/** The minimum reading time never exceeds this (SPEC.md section 4). */
const MAX_MIN_READ_MS = 10_000;
/** Highest tier a grant is suggested for (SPEC.md section 4: the line of batch approval). */
const MAX_SUGGESTED_TIER = 2;

/**
 * Size of what an approver must read (SPEC.md section 4): the UTF-8 length of
 * the RFC 8785 canonical JSON of the operation as the agent signed it.
 */
export function operationBytes(body: BodyOf<'proposal.submitted'>): number {
  const { tool, actionType, targetResource, recipient, scope, args, query } = body;
  return canonicalBytes({ tool, actionType, targetResource, recipient, scope, args, query }).length;
}

/**
 * The exact operation a grant would match (section 7.2's five fields), as a
 * digest: a fixed 64 characters per remembered request, whatever the fields' length.
 */
export function operationKey(fields: Pick<BodyOf<'proposal.submitted'>, 'agentId' | 'actionType' | 'targetResource' | 'recipient' | 'scope'>): string {
  const { agentId, actionType, targetResource, recipient, scope } = fields;
  return sha256Hex(canonicalJson({ agentId, actionType, targetResource, recipient, scope }));
}

/**
 * True when `minReadMs = min(10000, base × max(1, ceil(bytes / 512)))` for
 * some whole `base` ≥ 1. The base is a gate setting that is not on the log, so
 * any base that yields the value is accepted.
 */
export function isReadingTime(minReadMs: number, bytes: number): boolean {
  if (minReadMs === MAX_MIN_READ_MS) return true;
  const units = Math.max(1, Math.ceil(bytes / READING_UNIT_BYTES));
  return minReadMs < MAX_MIN_READ_MS && minReadMs >= units && minReadMs % units === 0;
}

/** A request whose final decision was `allow` at tier ≤ 2: what a suggestion may name. */
interface ApprovedRequest {
  readonly key: string;
  readonly tier: number;
  /** Index and sequencer time of its final decision. */
  readonly decisionIndex: number;
  readonly decisionAtMs: number;
  /** Named by a `grant.suggested` already. */
  suggested: boolean;
}

/** An `approve` the gate's fatigue fold reads: answering the open request of its proposal, by the deadline. */
interface Approval {
  readonly agentId: string;
  readonly proposal: string;
  readonly request: string;
  readonly approver: string;
  readonly elapsedMs: number;
  readonly operationBytes: number;
  /** An `approval.rushed` names it already. */
  rushed: boolean;
}

/** What an approval needs to know about the confirmation it answers. */
export interface AnsweredRequest {
  readonly agentId: string;
  readonly proposal: string;
  readonly hash: string;
  readonly sequencedAtMs: number;
  readonly operationBytes: number;
}

function violation(message: string): never {
  throw new LedgerError(ReasonCode.POLICY_VIOLATION, message);
}

/** Map insertion that drops the oldest entries past `max`; returns how many were dropped. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): number {
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

/**
 * Confirmation-fatigue signals (SPEC.md section 4, section 9 rule 15),
 * re-derived from the entries of their partition, as the gate's fatigue fold
 * derives them: {@link DecisionReplay} reports the approvals and final allows
 * it reads, and each `grant.suggested` or `approval.rushed` must follow from
 * them.
 *
 * Memory is bounded like the decision replay's window: at most `maxEntries`
 * approved requests, approvals and approvers per partition, oldest dropped
 * first; a signal naming a dropped one fails.
 */
export class FatigueReplay {
  readonly #maxEntries: number;
  /** Requests approved at tier ≤ 2 (final allow), by request hash, in the order of their final decisions. */
  readonly #approved = new Map<string, ApprovedRequest>();
  /** Approvals the gate's fold reads, by response hash. */
  readonly #approvals = new Map<string, Approval>();
  /** Per approver principal: sequencer time of their latest approval in this partition. */
  readonly #lastApproval = new Map<string, number>();
  #droppedRequests = 0;
  #droppedApprovals = 0;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** A new events partition: the signals follow from their own partition alone. */
  reset(): void {
    this.#approved.clear();
    this.#approvals.clear();
    this.#lastApproval.clear();
    this.#droppedRequests = 0;
    this.#droppedApprovals = 0;
  }

  /**
   * An `approve` answering the open request of its proposal, sequenced by the
   * deadline, whether or not it still changes the outcome (the gate's fold does
   * not look at the request's status or the answer's assurance either).
   */
  approval(entry: EntryResult, request: AnsweredRequest): void {
    const approver = entry.author.principal;
    // The later of the request and this approver's previous approval: a batch
    // of approvals faster than one can read is a rubber stamp even when the
    // requests waited long (services/ledger gate, FatigueFold).
    const since = Math.max(request.sequencedAtMs, this.#lastApproval.get(approver) ?? 0);
    this.#lastApproval.delete(approver);
    remember(this.#lastApproval, approver, entry.sequencedAtMs, this.#maxEntries);
    const approval: Approval = {
      agentId: request.agentId,
      proposal: request.proposal,
      request: request.hash,
      approver,
      elapsedMs: Math.max(0, entry.sequencedAtMs - since),
      operationBytes: request.operationBytes,
      rushed: false,
    };
    this.#droppedApprovals += remember(this.#approvals, entry.statementHash as string, approval, this.#maxEntries);
  }

  /** A final `allow` after a confirmation: a suggestion may name its request from now on. */
  allowed(decision: EntryResult, request: { readonly hash: string; readonly tier: number; readonly key: string }): void {
    if (request.tier > MAX_SUGGESTED_TIER) return;
    const approved: ApprovedRequest = { key: request.key, tier: request.tier, decisionIndex: decision.index, decisionAtMs: decision.sequencedAtMs, suggested: false };
    this.#droppedRequests += remember(this.#approved, request.hash, approved, this.#maxEntries);
  }

  /** `grant.suggested`: every named request was approved by a human for exactly this operation, and no request is named twice. */
  suggestion(body: BodyOf<'grant.suggested'>): void {
    const key = operationKey(body);
    const named = new Set<string>();
    let tier = 0;
    let last: ApprovedRequest | undefined;
    for (const hash of body.requests) {
      if (named.has(hash)) violation(`suggestion names request ${hash} twice`);
      named.add(hash);
      const approved = this.#approved.get(hash);
      if (approved === undefined) {
        const window = this.#droppedRequests > 0 ? ` (or one of the ${this.#droppedRequests} older than the replay window)` : '';
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
    for (const hash of body.requests) (this.#approved.get(hash) as ApprovedRequest).suggested = true;
  }

  /** `approval.rushed`: the numbers follow from the response, its request and the approver's previous approval. */
  rushed(body: BodyOf<'approval.rushed'>): void {
    const approval = this.#approvals.get(body.response);
    if (approval === undefined) {
      const window = this.#droppedApprovals > 0 ? ` (or one of the ${this.#droppedApprovals} older than the replay window)` : '';
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
    approval.rushed = true;
  }
}
