import { LedgerError, ReasonCode, formatRefusal } from '@agent-ledger/refusals';
import { Verdict, type ScreenResult } from './screener.js';
import { clip } from './text.js';

/** What a screening verdict may do to a proposal. */
export const ScreeningOutcome = {
  /** The screener clears it: no human needed. */
  clear: 'clear',
  /** A human decides (the gate's confirmation flow). */
  human: 'human',
  /** Refused. */
  deny: 'deny',
} as const;
/** One of {@link ScreeningOutcome}. */
export type ScreeningOutcome = (typeof ScreeningOutcome)[keyof typeof ScreeningOutcome];

/** The highest tier a `safe` verdict may clear on its own (routine: tier 0 safe, tier 1 low). */
export const MAX_CLEARED_TIER = 1;

/**
 * The refusal code of a screener's denial: POLICY_VIOLATION, not RCE_RISK.
 * RCE_RISK is the gate's own deterministic finding (a clearly destructive
 * pattern, blocked before any screener runs) and SIEM pipelines subscribe to
 * `ledger.refusals.RCE_RISK` for exactly that. A screener's `dangerous` is a
 * judgement, possibly a model's, against the screening policy, so its denial
 * is filed as a policy violation; the signed `screening.verdict` beside it
 * carries the rationale, model and prompt hash.
 */
export const SCREENING_DENIAL_CODE = ReasonCode.POLICY_VIOLATION;

/**
 * What a verdict may do at a tier. The policy, not the screener, has the last
 * word, so no answer of a model can widen it:
 *
 * - `dangerous` → `deny` at every tier;
 * - `uncertain` → `human` at every tier;
 * - `safe` → `clear` only at tier ≤ {@link MAX_CLEARED_TIER}, else `human`
 *   (tier 2 is not routine; tier 3 and 4 are never cleared by a screener).
 *
 * Throws `LedgerError(SCHEMA_INVALID)` for a tier outside the integers 0-4 or
 * an unknown verdict (fail closed: nothing is cleared on input it cannot read).
 */
export function screeningPolicy(tier: number, verdict: Verdict): ScreeningOutcome {
  if (typeof tier !== 'number' || !Number.isInteger(tier) || tier < 0 || tier > 4) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `screening policy: tier must be an integer 0-4, got ${String(tier)}`);
  }
  switch (verdict) {
    case Verdict.dangerous:
      return ScreeningOutcome.deny;
    case Verdict.uncertain:
      return ScreeningOutcome.human;
    case Verdict.safe:
      return tier <= MAX_CLEARED_TIER ? ScreeningOutcome.clear : ScreeningOutcome.human;
    default:
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `screening policy: unknown verdict ${JSON.stringify(String(verdict)).slice(0, 40)}`);
  }
}

/** The refusal of a screener's denial: code POLICY_VIOLATION and its `formatRefusal` text. */
export function screeningRefusal(result: Pick<ScreenResult, 'model' | 'rationale'>): { code: typeof SCREENING_DENIAL_CODE; refusal: string } {
  const detail = `screener ${clip(result.model, 80)} judged the call dangerous: ${clip(result.rationale, 200)}`;
  return { code: SCREENING_DENIAL_CODE, refusal: formatRefusal(SCREENING_DENIAL_CODE, detail) };
}

/** The gate's first decision on a proposal, as far as screening is concerned. */
export interface GateOutcome {
  readonly outcome: 'allow' | 'verify_first' | 'block';
  readonly code: ReasonCode | null;
  readonly grantId: string | null;
  /** The gate's reasons; one of them names the precedence branch that decided. */
  readonly reasons: readonly string[];
}

/**
 * The gate's precedence branches whose decisions are screened: tier 4 needing
 * a human, below the channel threshold, and needing a human for want of a
 * grant. Not screened: grant blocks and destructive patterns (already final),
 * crisis support (never gated or delayed), crisis decisions (always a human,
 * never refused by a model), and exact allow grants (a co-signed human
 * authorisation a screener does not second-guess).
 */
export const SCREENED_BRANCHES: readonly string[] = Object.freeze(['precedence.5_critical_tier', 'precedence.7_below_threshold', 'precedence.8_needs_human']);

/** Whether a gate decision is screened (see {@link SCREENED_BRANCHES}). */
export function isScreened(decision: GateOutcome): boolean {
  return decision.outcome !== 'block' && decision.reasons.some((reason) => SCREENED_BRANCHES.includes(reason));
}

/**
 * The decision after screening, one rule for the live gate and the offline
 * replay in verify-chain:
 * - `deny` → `block` with {@link SCREENING_DENIAL_CODE};
 * - `human` → an `allow` becomes `verify_first` (GRANT_MISSING: no grant
 *   covers the call and the screener did not clear it); a `verify_first` stays;
 * - `clear` → the gate's outcome stands (a screener never lowers a
 *   `verify_first` the gate asked for).
 * Decisions that are not screened are returned unchanged.
 */
export function applyScreening<D extends GateOutcome>(decision: D, action: ScreeningOutcome): D {
  if (!isScreened(decision)) return decision;
  if (action === ScreeningOutcome.deny) return { ...decision, outcome: 'block', code: SCREENING_DENIAL_CODE };
  if (action === ScreeningOutcome.human && decision.outcome === 'allow') return { ...decision, outcome: 'verify_first', code: ReasonCode.GRANT_MISSING };
  return decision;
}
