import { ReasonCode, formatRefusal } from '@agent-ledger/refusals';
import { classifyInto, type Classification } from './classify.js';
import { knownViews, lookUpGrants, riskThresholdOf, type GateState, type GrantFindings, type GrantRecord, type TargetNode } from './grants.js';
import type { GateOptions } from './options.js';
import { PATTERN_RULES } from './pattern-rules.js';
import { COMMAND_RULES } from './command-rules.js';
import { LATEST_RULES_VERSION, isRulesVersion, type RulesVersion } from './rules-version.js';
import { targetFacts } from './proposal-views.js';
import { recordable } from './recordable.js';
import { emptyScratch } from './findings.js';
import type { DecideCommand, GateDecision, Outcome } from './types.js';

/**
 * The branches of the precedence, in order; the id of the branch taken is a
 * reason of every decision.
 */
export const PRECEDENCE = [
  'precedence.1_grant_blocked',
  'precedence.2_destructive_pattern',
  'precedence.3_crisis_support',
  'precedence.4_crisis_decision',
  'precedence.5_critical_tier',
  'precedence.6_grant_allowed',
  'precedence.7_below_threshold',
  'precedence.8_needs_human',
] as const;

/** Labels recorded one by one; more are counted. */
const MAX_LABELS = 16;

const NO_CONTEXT = Object.freeze({});
const findings: GrantFindings = { block: null, allow: null, expired: null, nearMiss: false, argumentMismatch: null };

function operation(command: DecideCommand): string {
  const p = command.proposal;
  return `${recordable(p.actionType)} on ${recordable(p.targetResource)} for ${recordable(p.recipient)} (scope ${recordable(p.scope)})`;
}

/**
 * The risk threshold of branch 7. Rules 2: what the authority says about the
 * agent (its registration, else the genesis default; SPEC.md section 7.3),
 * never the proposal: the agent signs `channel` itself, so the same call
 * gets the same outcome whatever channel it claims. Rules 1 (kept to replay
 * old decisions): the threshold of the proposal's channel.
 */
function threshold(command: DecideCommand, state: GateState, options: GateOptions | undefined): number {
  if ((options?.rulesVersion ?? LATEST_RULES_VERSION) >= 2) return riskThresholdOf(state, command.proposal.agentId);
  const channel = command.channel;
  const override = options?.channelThresholds;
  if (override !== undefined && Object.hasOwn(override, channel)) {
    const value = override[channel];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  const thresholds = state.config.thresholds;
  return Object.hasOwn(thresholds, channel) ? thresholds[channel] : state.config.strictestThreshold;
}

function decision(
  outcome: Outcome,
  classification: Classification,
  code: ReasonCode | null,
  refusal: string | null,
  grant: GrantRecord | null,
  reasons: string[],
): GateDecision {
  return {
    outcome,
    tier: classification.tier,
    risk: classification.risk,
    code,
    refusal,
    grantId: grant === null ? null : grant.grantId,
    grantEntry: grant === null ? null : grant.entry,
    // A copy of exactly the reasons (the scratch keeps its store for the next call).
    reasons: reasons.slice(),
  };
}

/**
 * The reasons of the call being decided: scratch (decide() is synchronous
 * and never re-entered), copied into the decision at its exact length, so a
 * call allocates one small array instead of growing a fresh one push by push.
 * Made with room (findings.ts, emptyScratch): emptied by popping, it keeps its store.
 */
const reasonScratch: string[] = emptyScratch('');

/** The last query recorded and its reason (agents repeat their query across calls: the reason is then not built again). */
let lastQuery: unknown = '';
let lastQueryReason: string | null = null;

/** Appends the recorded query and labels: the last reasons, and never an input to a rule. */
function recordFreeText(reasons: string[], command: DecideCommand): void {
  const raw = command.proposal.query;
  if (raw !== lastQuery || typeof raw !== 'string') {
    const query = recordable(raw);
    lastQuery = raw;
    lastQueryReason = query.trim() !== '' ? `query.recorded:${query}` : null;
  }
  if (lastQueryReason !== null) reasons.push(lastQueryReason);
  const labels = command.proposal.labels;
  if (!Array.isArray(labels)) return;
  const shown = Math.min(labels.length, MAX_LABELS);
  for (let i = 0; i < shown; i++) {
    const label = recordable(labels[i]);
    if (label !== '') reasons.push(`label.recorded:${label}`);
  }
  if (labels.length > shown) reasons.push(`label.recorded_more:${labels.length - shown}`);
}

/**
 * Decides one proposed tool call against the grant table.
 *
 * Precedence (first match wins; README.md has the same list):
 *
 *  1. an exact, active, in-window BLOCK grant          -> block, GRANT_BLOCKED (grantId, grantEntry)
 *  2. a clearly destructive pattern (tier 4, `block`)  -> block, RCE_RISK
 *     (root/system deletes, mkfs/wipefs, dd or writes to block devices, fork bombs)
 *  3. a crisis support action, nothing else needing a human -> allow (never gated)
 *  4. a crisis decision action                         -> verify_first (always a human)
 *  5. tier 4 (critical)                                -> verify_first (a live human; grants do not apply)
 *  6. an exact, active, in-window ALLOW grant whose tier covers the call -> allow (grantId, grantEntry)
 *  7. tier <= 1 and risk below the threshold           -> allow
 *     (rules 2: the agent's threshold from the authority; rules 1: the channel's)
 *  8. otherwise                                        -> verify_first, with
 *       GRANT_MISMATCH when an exact in-window allow grant covers a lower tier than the call's,
 *       GRANT_MISMATCH when an exact in-window allow grant's argument constraints do not hold,
 *       GRANT_EXPIRED  when an exact active allow grant exists outside its window,
 *       GRANT_MISMATCH when an active allow grant has the same agent, action and target
 *                      but another recipient or scope,
 *       GRANT_MISSING  otherwise.
 *
 * "Exact" means all five fields equal, as strings. Only active grants count
 * (grants.ts). Branches 4 and 5 carry no code: no grant could have allowed
 * the call. The free-text query and the labels are recorded at the end of
 * `reasons` and read by no rule: they never grant authority and never change
 * the outcome, tier, risk or code.
 *
 * `options.channelThresholds`, when given, override the state's thresholds
 * for this call under rules 1; rules 2 ignore the channel. Pure and deterministic; never throws (a failure inside
 * yields verify_first at tier 4 with reason `gate.internal_error`).
 */
export function decide(command: DecideCommand, state: GateState, options?: GateOptions): GateDecision {
  try {
    return decideUnchecked(command, state, options);
  } catch {
    return { outcome: 'verify_first', tier: 4, risk: 0, code: null, refusal: null, grantId: null, grantEntry: null, reasons: ['gate.internal_error'] };
  }
}

function decideUnchecked(command: DecideCommand, state: GateState, options: GateOptions | undefined): GateDecision {
  const proposal = command.proposal;
  const reasons = reasonScratch;
  // Popped one by one: `length = 0` would drop the array's store.
  while (reasons.length > 0) reasons.pop();
  // The grant table first: the node of the proposal's target, when there is one, knows the target's classifier facts.
  // It also holds the classifier's views of the agent, and of the recipient and scope when a grant names them.
  const exact = lookUpGrants(state, proposal, command.now, findings);
  if (exact !== undefined) knownViews.targetFacts = factsOf(exact);
  const classification = classifyInto(reasons, proposal, command.context ?? NO_CONTEXT, state.config, knownViews, rulesVersionOf(options));
  const grants = findings;

  if (grants.block !== null) {
    reasons.push(`grant.blocked:${recordable(grants.block.grantId)}`, PRECEDENCE[0]);
    recordFreeText(reasons, command);
    return decision('block', classification, ReasonCode.GRANT_BLOCKED, formatRefusal(ReasonCode.GRANT_BLOCKED, `${operation(command)} is blocked by grant ${recordable(grants.block.grantId)}`), grants.block, reasons);
  }
  if (classification.destructive) {
    reasons.push(PRECEDENCE[1]);
    recordFreeText(reasons, command);
    return decision('block', classification, ReasonCode.RCE_RISK, formatRefusal(ReasonCode.RCE_RISK, `destructive command refused (${classification.rules.filter(isBlockingRule).join(', ')})`), null, reasons);
  }
  if (classification.crisisSupport) {
    reasons.push(PRECEDENCE[2]);
    recordFreeText(reasons, command);
    return decision('allow', classification, null, null, null, reasons);
  }
  if (classification.crisisDecision) {
    reasons.push(PRECEDENCE[3]);
    recordFreeText(reasons, command);
    return decision('verify_first', classification, null, null, null, reasons);
  }
  if (classification.tier === 4) {
    reasons.push(PRECEDENCE[4]);
    recordFreeText(reasons, command);
    return decision('verify_first', classification, null, null, null, reasons);
  }
  const allow = grants.allow;
  if (allow !== null && classification.tier <= allow.tier) {
    reasons.push(allow.allowedReason, PRECEDENCE[5]);
    recordFreeText(reasons, command);
    return decision('allow', classification, null, null, allow, reasons);
  }
  const limit = threshold(command, state, options);
  if (classification.tier <= 1 && classification.risk < limit) {
    reasons.push(PRECEDENCE[6]);
    recordFreeText(reasons, command);
    return decision('allow', classification, null, null, null, reasons);
  }

  let needsHuman: (typeof NEEDS_HUMAN)[keyof typeof NEEDS_HUMAN];
  if (allow !== null) {
    needsHuman = NEEDS_HUMAN.tierExceeded;
    reasons.push(`grant.tier_exceeded:${recordable(allow.grantId)}`);
  } else if (grants.argumentMismatch !== null) {
    needsHuman = NEEDS_HUMAN.arguments;
    reasons.push(`grant.arguments_mismatch:${recordable(grants.argumentMismatch.grantId)}`);
  } else if (grants.expired !== null) {
    needsHuman = NEEDS_HUMAN.expired;
    reasons.push(`grant.expired:${recordable(grants.expired.grantId)}`);
  } else if (grants.nearMiss) {
    needsHuman = NEEDS_HUMAN.mismatch;
    reasons.push('grant.mismatch');
  } else {
    needsHuman = NEEDS_HUMAN.missing;
    reasons.push('grant.missing');
  }
  reasons.push((options?.rulesVersion ?? LATEST_RULES_VERSION) >= 2 ? agentThresholdReason(limit) : thresholdReason(command, state, limit), PRECEDENCE[7]);
  recordFreeText(reasons, command);
  return decision('verify_first', classification, needsHuman.code, needsHuman.refusal, null, reasons);
}

/** The rules version to decide with: the one the options name when released, else the latest. */
function rulesVersionOf(options: GateOptions | undefined): RulesVersion {
  const version = options?.rulesVersion;
  return version !== undefined && isRulesVersion(version) ? version : LATEST_RULES_VERSION;
}

/** The packed classifier facts of a node's target, remembered on the node (grants.ts, TargetNode). */
function factsOf(node: TargetNode): number {
  if (node.targetFacts === -1) node.targetFacts = targetFacts(node.targetResource);
  return node.targetFacts;
}

/**
 * Codes and refusal texts of branch 8, one per finding. They are constant:
 * the operation is the proposal's own, and the grant concerned is named in
 * `reasons` (so a refusal never discloses another grant's id).
 */
const NEEDS_HUMAN = {
  tierExceeded: needsHumanText(ReasonCode.GRANT_MISMATCH, 'the exact grant for this call covers a lower risk tier than the call'),
  arguments: needsHumanText(ReasonCode.GRANT_MISMATCH, 'the exact grant for this call constrains its arguments, and these are outside them'),
  expired: needsHumanText(ReasonCode.GRANT_EXPIRED, 'the exact grant for this call is outside its validity window'),
  mismatch: needsHumanText(ReasonCode.GRANT_MISMATCH, 'grants for this agent, action and target name another recipient or scope'),
  missing: needsHumanText(ReasonCode.GRANT_MISSING, 'no grant covers this call'),
} as const;

function needsHumanText(code: ReasonCode, finding: string): { readonly code: ReasonCode; readonly refusal: string } {
  return { code, refusal: formatRefusal(code, `${finding}; a human must confirm`) };
}

/** `threshold.agent:<limit>`, kept for the last limit seen (agents share a few thresholds). */
let lastLimit = Number.NaN;
let lastLimitReason = '';
function agentThresholdReason(limit: number): string {
  if (!Object.is(limit, lastLimit)) {
    lastLimit = limit;
    lastLimitReason = `threshold.agent:${String(limit)}`;
  }
  return lastLimitReason;
}

function thresholdReason(command: DecideCommand, state: GateState, limit: number): string {
  const channel = command.channel;
  const known = state.config.thresholdReasons;
  if (Object.hasOwn(known, channel) && known[channel] !== undefined && state.config.thresholds[channel] === limit) return known[channel];
  return `threshold.${recordable(channel)}:${String(limit)}`;
}

const BLOCKING_RULE_IDS: ReadonlySet<string> = new Set([...PATTERN_RULES, ...COMMAND_RULES].filter((rule) => rule.block === true).map((rule) => rule.id));

function isBlockingRule(id: string): boolean {
  return BLOCKING_RULE_IDS.has(id);
}
