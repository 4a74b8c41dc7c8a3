import { COMMAND_RULES, PATTERN_RULES, SIGNAL_RULES, UNINSPECTABLE_RULE, UNKNOWN_HOST_RULE, type Rule } from '@agent-ledger/gate';
import type { JsonValue } from '@agent-ledger/core';
import { ScreenFailure, Verdict, promptHashOf, screenInputProblem, type ScreenInput, type ScreenResult, type LocalScreener } from './screener.js';

/**
 * Model name of the deterministic screener; bump it whenever a rule below
 * changes meaning. `rules/v3` knows the rules of gate rules version 2 (the
 * structural command rules) besides those of version 1.
 */
export const RULES_SCREENER_MODEL = 'rules/v3';

const RULES_BY_ID: ReadonlyMap<string, Rule> = new Map(
  [...PATTERN_RULES, UNKNOWN_HOST_RULE, UNINSPECTABLE_RULE, ...SIGNAL_RULES, ...COMMAND_RULES].map((rule) => [rule.id, rule]),
);

/**
 * Gate rules that mean remote code execution: content fetched from the
 * network and run, or a shell handed to a remote party.
 */
export const RCE_RULES: readonly string[] = Object.freeze([
  // Gate rules version 1.
  'pattern.remote_pipe_shell',
  'pattern.reverse_shell',
  // Gate rules version 2.
  'supply_chain.remote_pipe_shell',
  'exfiltration.reverse_shell',
]);
for (const id of RCE_RULES) {
  // A renamed gate rule must fail loudly at load, not silently stop matching.
  if (RULES_BY_ID.get(id)?.kind !== 'pattern') throw new Error(`rules screener: gate has no pattern rule ${id}`);
}
const RCE_SET: ReadonlySet<string> = new Set(RCE_RULES);

/**
 * The deterministic screener (`rules/v3`). It reads only the gate's
 * classification (tier, risk, fired rule ids), never the proposal's text, so
 * nothing an agent writes can talk it into a verdict. First match wins:
 *
 * Bookkeeping entries of the gate's reasons (precedence branch, grant finding,
 * threshold, recorded query and labels) are skipped. Then:
 *
 * 1. an unknown rule id, or a tier lower than a fired rule's tier → `uncertain`
 *    (the input does not match the gate this screener was built with);
 * 2. a clearly destructive pattern (a gate rule marked `block`: root deletes,
 *    mkfs/wipefs, dd or writes to block devices, fork bombs) → `dangerous`;
 * 3. remote code execution ({@link RCE_RULES}: curl | sh, reverse shells) → `dangerous`;
 * 4. tier 0-1 and no behavioural or crisis flag (pattern and context rules
 *    only) → `safe`;
 * 5. anything else → `uncertain` (a human decides): other tier-4 calls (e.g.
 *    signalling every process) go to k-of-n live humans, not to a refusal.
 */
export class RulesScreener implements LocalScreener {
  readonly model = RULES_SCREENER_MODEL;
  /** The rules read only the classification, in this process: the verdict may be computed inline. */
  readonly deterministic = true;

  screen(input: ScreenInput): Promise<ScreenResult> {
    return Promise.resolve(this.screenNow(input));
  }

  /** The same verdict, synchronously (the rules do no I/O). */
  screenNow(input: ScreenInput): ScreenResult {
    const problem = screenInputProblem(input);
    if (problem !== null) {
      const prompt: JsonValue = { screener: RULES_SCREENER_MODEL, invalidInput: problem };
      return this.result(Verdict.uncertain, `invalid screening input: ${problem}`, prompt, ScreenFailure.invalid_input);
    }
    const rules = [...input.rules];
    const prompt: JsonValue = { screener: RULES_SCREENER_MODEL, proposal: input.proposalHash, tier: input.tier, risk: input.risk, rules };
    const [verdict, rationale] = judge(input.tier, rules);
    return this.result(verdict, rationale, prompt, null);
  }

  private result(verdict: Verdict, rationale: string, prompt: JsonValue, failure: ScreenFailure | null): ScreenResult {
    return { verdict, rationale, model: this.model, promptHash: promptHashOf(prompt), prompt, failure };
  }
}

/**
 * Entries of a gate decision's `reasons` that are bookkeeping, not rules: the
 * precedence branch, the grant finding, the channel threshold and the recorded
 * free text (which no rule reads). They say nothing about danger.
 */
const BOOKKEEPING = /^(precedence\.|grant\.|threshold\.|query\.recorded:|label\.recorded:)/;

function judge(tier: number, ruleIds: readonly string[]): [Verdict, string] {
  const fired: Rule[] = [];
  for (const id of ruleIds) {
    if (BOOKKEEPING.test(id)) continue;
    const rule = RULES_BY_ID.get(id);
    if (rule === undefined) return [Verdict.uncertain, `unknown gate rule ${JSON.stringify(id.slice(0, 64))}: a human decides`];
    if (rule.tier > tier) return [Verdict.uncertain, `tier ${tier} is below the tier ${rule.tier} of ${rule.id}: a human decides`];
    fired.push(rule);
  }
  const destructive = fired.filter((r) => r.block === true).map((r) => r.id);
  if (destructive.length > 0) return [Verdict.dangerous, `clearly destructive pattern: ${destructive.join(', ')}`];
  const rce = fired.filter((r) => RCE_SET.has(r.id)).map((r) => r.id);
  if (rce.length > 0) return [Verdict.dangerous, `remote code execution pattern: ${rce.join(', ')}`];
  // Context (production, financial, crisis mode) already raised the tier and the
  // risk the gate weighed against the channel's threshold; alone it does not
  // make a routine call suspect. What an agent does to credentials, its own
  // configuration, other agents or other people does.
  const flags = fired.filter((r) => r.kind === 'behaviour' || r.kind === 'crisis').map((r) => r.id);
  if (tier <= 1 && flags.length === 0) {
    return [Verdict.safe, fired.length === 0 ? `tier ${tier}, no rule fired: routine` : `tier ${tier}, only ${fired.map((r) => r.id).join(', ')}: routine`];
  }
  if (flags.length > 0) return [Verdict.uncertain, `tier ${tier} with ${flags.join(', ')}: a human decides`];
  const named = fired.length === 0 ? '' : ` (${fired.map((r) => r.id).join(', ')})`;
  return [Verdict.uncertain, `tier ${tier}${named}: a human decides`];
}
