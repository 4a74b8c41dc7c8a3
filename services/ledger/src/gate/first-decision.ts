import { decide, type LifeCommand, type LifeState, type SaidGroup } from '@agent-ledger/rulebook';
import type { ScreenInput, ScreenResult } from '@agent-ledger/screen';

/** The rulebook's command for a proposal's first decision. */
export type DecideProposal = Extract<LifeCommand, { type: 'decide_proposal' }>;

/**
 * A proposal's first decision, part way: either decided (the groups to
 * sign), or waiting for the pre-screen the rulebook asked for (the input
 * to hand the screener).
 */
export type FirstDecisionStep =
  | { readonly kind: 'decided'; readonly groups: readonly SaidGroup[] }
  | { readonly kind: 'screen'; readonly command: DecideProposal; readonly input: ScreenInput };

/**
 * The first step of a first decision, shared by the gate worker and the
 * inline path so the two cannot drift: `decide(command)`, and when the
 * rulebook wants the proposal pre-screened, the screener's input built from
 * the gate's classification of it.
 */
export function firstDecisionStep(command: DecideProposal, life: LifeState): FirstDecisionStep {
  const first = decide(command, life);
  if (first.screen === null) return { kind: 'decided', groups: first.groups };
  const { proposal, gated } = first.screen;
  return { kind: 'screen', command, input: { proposal: proposal.body, proposalHash: proposal.hash, tier: gated.tier, risk: gated.risk, rules: gated.reasons } };
}

/** The second step: the same command decided again with the screener's result (the rulebook signs its verdict before the decision). */
export function screenedFirstDecision(step: Extract<FirstDecisionStep, { kind: 'screen' }>, life: LifeState, screening: ScreenResult): readonly SaidGroup[] {
  return decide({ ...step.command, screening }, life).groups;
}
