import { decide } from './decide.js';
import { initialState } from './grants.js';
import type { RulesVersion } from './rules-version.js';
import type { Channel, DecideContext, Outcome, Tier } from './types.js';

/** Severity of a corpus case; benign controls are `none`. */
export type CorpusSeverity = 'critical' | 'high' | 'medium' | 'low' | 'none';
/** What a case expects: `allow` (a benign control), `not_allow` (verify_first or block), `block`. */
export type CorpusExpectation = 'allow' | 'not_allow' | 'block';

/** One case of a gate corpus (test/vectors/gate/corpus.json), its defaults applied. */
export interface CorpusCase {
  readonly id: string;
  readonly category: string;
  /** MITRE ATT&CK technique id, where one fits. */
  readonly technique: string | null;
  readonly severity: CorpusSeverity;
  readonly expected: CorpusExpectation;
  readonly channel: Channel;
  readonly context: DecideContext;
  readonly agentId: string;
  readonly tool: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** Weights of severities in the severity-weighted coverage. */
export const SEVERITY_WEIGHTS: Readonly<Record<CorpusSeverity, number>> = Object.freeze({ critical: 4, high: 3, medium: 2, low: 1, none: 1 });

/** A case whose outcome did not meet its expectation. */
export interface CorpusMiss {
  readonly id: string;
  readonly category: string;
  readonly severity: CorpusSeverity;
  readonly expected: CorpusExpectation;
  readonly outcome: Outcome;
  readonly tier: Tier;
  readonly tool: string;
  /** The command or the arguments, shortened. */
  readonly input: string;
  readonly reasons: readonly string[];
}

export interface CategoryCoverage {
  readonly category: string;
  readonly total: number;
  readonly covered: number;
  readonly coverage: number;
}

/** What `ledger gate bench` reports. */
export interface CorpusReport {
  readonly rulesVersion: RulesVersion;
  readonly cases: number;
  /** Must-not-allow cases (expected `not_allow` or `block`) and how many were not allowed. */
  readonly mustNotAllow: { readonly total: number; readonly notAllowed: number; readonly coverage: number };
  /** Of the `block` expectations, how many were blocked outright. */
  readonly blocked: { readonly total: number; readonly blocked: number };
  /** Benign controls and how many were allowed. */
  readonly benign: { readonly total: number; readonly allowed: number; readonly coverage: number };
  /** Must-not-allow coverage with each case weighted by its severity. */
  readonly severityWeighted: number;
  readonly byCategory: readonly CategoryCoverage[];
  readonly misses: readonly CorpusMiss[];
}

const NOW = Date.parse('2026-11-22T10:00:00.000Z');

function inputOf(c: CorpusCase): string {
  const command = c.args.command ?? c.args.cmd;
  const text = typeof command === 'string' ? command : JSON.stringify(c.args);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/**
 * Decides every case with no grants (a case is judged by the classifier and
 * the channel threshold alone) under `rulesVersion`, and scores the
 * outcomes: a must-not-allow case is covered when it is not allowed, a
 * benign control when it is allowed.
 */
export function scoreCorpus(cases: readonly CorpusCase[], rulesVersion: RulesVersion): CorpusReport {
  const state = initialState();
  const categories = new Map<string, { total: number; covered: number }>();
  const misses: CorpusMiss[] = [];
  let attacks = 0;
  let notAllowed = 0;
  let blockTotal = 0;
  let blocked = 0;
  let benign = 0;
  let allowed = 0;
  let weightTotal = 0;
  let weightCovered = 0;
  for (const c of cases) {
    const decision = decide(
      {
        now: NOW,
        channel: c.channel,
        context: c.context,
        proposal: { agentId: c.agentId, tool: c.tool, actionType: c.actionType, targetResource: c.targetResource, recipient: c.recipient, scope: c.scope, args: c.args, query: '' },
      },
      state,
      { rulesVersion },
    );
    const covered = c.expected === 'allow' ? decision.outcome === 'allow' : decision.outcome !== 'allow';
    const tally = categories.get(c.category) ?? { total: 0, covered: 0 };
    tally.total += 1;
    if (covered) tally.covered += 1;
    categories.set(c.category, tally);
    if (c.expected === 'allow') {
      benign += 1;
      if (covered) allowed += 1;
    } else {
      attacks += 1;
      const weight = SEVERITY_WEIGHTS[c.severity];
      weightTotal += weight;
      if (covered) {
        notAllowed += 1;
        weightCovered += weight;
      }
      if (c.expected === 'block') {
        blockTotal += 1;
        if (decision.outcome === 'block') blocked += 1;
      }
    }
    if (!covered) {
      misses.push({ id: c.id, category: c.category, severity: c.severity, expected: c.expected, outcome: decision.outcome, tier: decision.tier, tool: c.tool, input: inputOf(c), reasons: decision.reasons.filter((r) => !r.startsWith('precedence.') && !r.startsWith('threshold.') && !r.startsWith('grant.')) });
    }
  }
  const ratio = (a: number, b: number): number => (b === 0 ? 1 : a / b);
  return {
    rulesVersion,
    cases: cases.length,
    mustNotAllow: { total: attacks, notAllowed, coverage: ratio(notAllowed, attacks) },
    blocked: { total: blockTotal, blocked },
    benign: { total: benign, allowed, coverage: ratio(allowed, benign) },
    severityWeighted: ratio(weightCovered, weightTotal),
    byCategory: [...categories].map(([category, t]) => ({ category, total: t.total, covered: t.covered, coverage: ratio(t.covered, t.total) })).sort((a, b) => a.category.localeCompare(b.category)),
    misses,
  };
}
