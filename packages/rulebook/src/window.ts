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
 * Admission's half of the bound: may a proposal of `bytes` join a partition
 * already holding `pending` undecided proposals of `pendingBytes`? Admission
 * keeps a margin of one quarter of the window free, so proposals already in
 * intake when the window filled up still fit.
 */
export function admitsProposal(window: { readonly pending: number; readonly pendingBytes: number }, bytes: number, limits: ReplayLimits = {}): boolean {
  const maxPending = limits.maxPending ?? REPLAY_WINDOW.maxPending;
  const maxPendingBytes = limits.maxPendingBytes ?? REPLAY_WINDOW.maxPendingBytes;
  return window.pending + 1 <= Math.floor((maxPending * 3) / 4) && window.pendingBytes + bytes <= Math.floor((maxPendingBytes * 3) / 4);
}
