import { MAX_PLATFORM_ASSURANCE_TIER } from '@agent-ledger/core';

/** A confirmation request as far as counting its answers goes. */
export interface CountedRequest {
  readonly proposal: string;
  /** Statement hash of the `confirmation.requested`. */
  readonly request: string;
  readonly agentId: string;
  /** Events partition of the proposal and its request. */
  readonly partition: number;
  readonly tier: number;
  readonly deadlineMs: number;
  readonly approvalsRequired: number;
  readonly status: 'pending' | 'approved' | 'denied' | 'timed_out';
  /** Principals whose approvals counted so far. */
  readonly approvedBy: ReadonlySet<string> | readonly string[];
}

/** A sequenced `human.response`. */
export interface CountedResponse {
  readonly proposal: string;
  readonly request: string;
  readonly agentId: string;
  readonly partition: number;
  readonly answer: 'approve' | 'deny';
  readonly assurance: 'self_signed' | 'platform';
  readonly author: string;
  readonly sequencedAtMs: number;
}

/**
 * What a response does to the request it names (SPEC.md section 9, rule 14):
 * - `misrouted`: it names no request of its own partition (another partition's, or none at all);
 * - `mismatch`: it names a request of its partition, but another proposal or agent than the request's;
 * - `closed`: the request was already answered, timed out or decided;
 * - `not_enough_assurance`: a platform (chat bridge) answer above MAX_PLATFORM_ASSURANCE_TIER;
 * - `late`: sequenced after the deadline;
 * - `duplicate`: the same principal approved already;
 * - `denied`, `approval` (counted, more needed), `approved` (the last approval needed).
 * Only the last three change anything.
 */
export type ResponseEffect = 'misrouted' | 'mismatch' | 'closed' | 'not_enough_assurance' | 'late' | 'duplicate' | 'denied' | 'approval' | 'approved';

/** Effects that change the request. */
export function counts(effect: ResponseEffect): effect is 'denied' | 'approval' | 'approved' {
  return effect === 'denied' || effect === 'approval' || effect === 'approved';
}

/**
 * When an answer counts: the one rule the gate, the timer, the projection
 * and verify-chain all apply. `request` is the request the response names,
 * looked up by its hash (undefined when none is known).
 */
export function countResponse(request: CountedRequest | undefined, response: CountedResponse): ResponseEffect {
  if (request === undefined || request.partition !== response.partition || request.request !== response.request) return 'misrouted';
  if (request.proposal !== response.proposal || request.agentId !== response.agentId) return 'mismatch';
  if (request.status !== 'pending') return 'closed';
  // A chat bridge's (platform-assurance) answer counts only up to MAX_PLATFORM_ASSURANCE_TIER.
  if (response.assurance === 'platform' && request.tier > MAX_PLATFORM_ASSURANCE_TIER) return 'not_enough_assurance';
  // Judged on sequencer time: a response sequenced after the deadline never counts.
  if (response.sequencedAtMs > request.deadlineMs) return 'late';
  if (response.answer === 'deny') return 'denied';
  const approvedBy = request.approvedBy;
  const already = approvedBy instanceof Set ? approvedBy.has(response.author) : (approvedBy as readonly string[]).includes(response.author);
  if (already) return 'duplicate';
  const size = approvedBy instanceof Set ? approvedBy.size : (approvedBy as readonly string[]).length;
  return size + 1 >= request.approvalsRequired ? 'approved' : 'approval';
}
