import type { Envelope } from '@agent-ledger/core';
import type { LifeState, WaitingProposal } from '@agent-ledger/rulebook';

/**
 * Header on the entry records of a proposal and of the first decision the
 * sequencer chained right after it, in the same transaction (value
 * {@link INLINE_FIRST_DECISION}). A gate reading the proposal entry with it
 * knows that the proposal's first decision follows on the log (the
 * transaction is atomic), so it does not decide the proposal itself; on the
 * decision entry it tells the gate to count the decision as its own first
 * decision. Only a sequencer that runs beside the gate writes it: a split
 * deployment never sees it and behaves as before.
 */
export const INLINE_HEADER = 'ledger-first-decision';
/** The value of {@link INLINE_HEADER}. */
export const INLINE_FIRST_DECISION = 'inline';

/**
 * The gate, as a sequencer running in the same process sees it: the first
 * decision of a proposal it can settle alone, signed with the gate's key.
 */
export interface FirstDecider {
  /**
   * The statements of `waiting`'s first decision (classification, decision,
   * refusal or confirmation request, as the rulebook's `decide()` returns
   * them for `decide_proposal`), signed by the gate and issued at `nowMs`;
   * undefined when the decision cannot be made now without waiting: the
   * proposal needs a pre-screen by a screener that does I/O (one that
   * declares itself deterministic and local screens inline, its signed
   * verdict first among the statements), or the gate's registry is behind the
   * authority index the proposal was sequenced against. `life` is the
   * partition's proposal-life state with the proposal folded.
   */
  decideAlone(waiting: WaitingProposal, life: LifeState, nowMs: number): readonly InlineStatement[] | undefined;
}

/** One statement of an inline first decision, as the gate signed it. */
export interface InlineStatement {
  readonly envelope: Envelope;
  /**
   * The canonical statement the gate signed, when its key id was derived
   * from its seed in this process: admission of a record whose statement
   * canonicalizes to the same string by the same key skips the signature
   * check (a signature by a seed verifies under the key derived from it).
   * Absent, the signature is checked as for any intake record.
   */
  readonly canonical?: string;
}

/**
 * Whether a sequencer running beside the gate chains the gate's first
 * decision in the transaction that admits the proposal: LEDGER_INLINE_DECISIONS
 * (`on` / `1`, `off` / `0`; default on). Undefined for any other value.
 */
export function inlineDecisionsFrom(value: string | undefined): boolean | undefined {
  if (value === undefined || value === '' || value === 'on' || value === '1' || value === 'true') return true;
  if (value === 'off' || value === '0' || value === 'false') return false;
  return undefined;
}
