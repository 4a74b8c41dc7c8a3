import type { Tier } from './types.js';

/** The three kinds of detection rule of DESIGN.md section 2.1, plus the crisis classifiers. */
export type RuleKind = 'pattern' | 'behaviour' | 'context' | 'crisis';

/**
 * One detection rule. Its `id` is what a decision's `reasons` name; `tier` is
 * the lowest tier a proposal that fires it can have; `weight` is added to the
 * risk score.
 */
export interface Rule {
  readonly id: string;
  readonly kind: RuleKind;
  readonly tier: Tier;
  readonly weight: number;
  /**
   * Clearly destructive: the gate blocks it outright with RCE_RISK instead of
   * asking a human (precedence step 2). Only tier-4 rules carry it.
   */
  readonly block?: true;
  /** One line for people (README, test names). */
  readonly summary: string;
}
