import type { LifeState } from './state.js';

/**
 * The one bound on undecided work per events partition (SPEC.md section 9,
 * rule 14): `verify-chain` holds at most this many undecided proposals (and
 * this many bytes of their entry lines) per partition, and the sequencer's
 * admission refuses a new proposal (RATE_LIMIT) on a partition whose
 * undecided proposals would exceed it. So every backlog the live system can
 * produce is one `verify-chain` accepts.
 */
export interface ReplayLimits {
  /** Most undecided proposals (and most open confirmations, approved requests and approvals) held per partition. */
  readonly maxPending?: number;
  /** Most bytes of undecided proposal entry lines held per partition. */
  readonly maxPendingBytes?: number;
}

/** Default {@link ReplayLimits}: far above what a live gate leaves undecided, far below the verifier's memory budget. */
export const REPLAY_WINDOW: Required<ReplayLimits> = Object.freeze({ maxPending: 65_536, maxPendingBytes: 8 << 20 });

/**
 * Bytes admission adds to a proposal's envelope JSON to bound its entry line
 * (the entry's position fields, its hashes and `"kind":"entry"`), so the
 * live estimate is never below what verify-chain counts.
 */
export const ENTRY_LINE_OVERHEAD = 512;

/**
 * The one bound, as both sides apply it: may a proposal whose entry line is
 * `bytes` long join the partition? Only if the proposals waiting for a first
 * decision and the confirmations waiting for a final one stay under
 * `maxPending`, and the waiting proposals' lines under `maxPendingBytes`.
 * The sequencer's admission refuses one that does not fit (RATE_LIMIT,
 * recorded as `intake.rejected`); verify-chain fails a bundle holding one.
 */
export function admitsProposal(state: LifeState, bytes: number): boolean {
  return state.proposals.size + state.confirmations.size < state.limits.maxPending && state.proposalBytes + bytes <= state.limits.maxPendingBytes;
}

/**
 * Sequencing time (ms) of the oldest proposal still open in `state`: waiting
 * for its first decision, or left to a human and waiting for its final one;
 * null when none is. Every proposal sequenced before it is closed, so a
 * sequencer that restarts from a checkpoint rebuilds the exact open set by
 * folding the entries sequenced from this time on.
 */
export function oldestOpenMs(state: LifeState): number | null {
  let oldest: number | null = null;
  const first = state.proposals.values().next();
  if (first.done !== true) oldest = first.value.sequencedAtMs;
  for (const open of state.confirmations.values()) if (oldest === null || open.proposedAtMs < oldest) oldest = open.proposedAtMs;
  return oldest;
}
