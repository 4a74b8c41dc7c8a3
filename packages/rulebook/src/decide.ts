import { formatRefusal, ReasonCode } from '@agent-ledger/refusals';
import type { BodyOf, StatementType } from '@agent-ledger/core';
import type { DecideContext, GateDecision, GateState } from '@agent-ledger/gate';
import { applyScreening, isScreened, screeningPolicy, screeningStatement, type ScreenResult } from '@agent-ledger/screen';
import { MAX_SUGGESTED_REQUESTS, minimumReadingMs, type FatigueSettings } from './fatigue.js';
import { counts } from './responses.js';
import { escalationFor, type RulesSpec } from './rules.js';
import type { ApprovedRequest, LifeState, OpenConfirmation, WaitingProposal } from './state.js';

/** A statement body for the gate or the timer to sign, narrowing on `type`. */
export type Said = { [T in StatementType]: { readonly type: T; readonly body: BodyOf<T> } }[StatementType];

/**
 * Statements that belong together, with the marks that name what they settle
 * (`first:<proposal>`, `final:<proposal>`, `request:<proposal>`, `timeout:<request>`,
 * `answer:<response>`, `rushed:<response>`, `suggested:<request>`). A caller
 * that has sent a group (its transaction committed) but not yet read it back
 * from the log passes its marks as `sent`, so nothing is said twice.
 */
export interface SaidGroup {
  readonly marks: readonly string[];
  readonly statements: readonly Said[];
}

/** Confirmation settings of the live gate (not on the log; replay accepts what the log says). */
export interface ConfirmationSettings {
  /** Deadline by tier (ms). */
  readonly deadlinesMs: Readonly<Record<number, number>>;
  /** Approvals a tier-4 confirmation needs, from distinct principals. */
  readonly criticalApprovals: number;
  readonly channels: readonly ('cli' | 'web' | 'telegram' | 'discord' | 'webhook')[];
}

/** Default confirmation deadlines by tier (ms): medium 60 s, high 30 s, critical 10 s. */
export const DEFAULT_DEADLINES_MS: Readonly<Record<number, number>> = Object.freeze({ 0: 60_000, 1: 60_000, 2: 60_000, 3: 30_000, 4: 10_000 });

/** Defaults of {@link ConfirmationSettings}. */
export const DEFAULT_CONFIRMATION: ConfirmationSettings = Object.freeze({ deadlinesMs: DEFAULT_DEADLINES_MS, criticalApprovals: 2, channels: ['cli', 'web'] as const });

/** What the rulebook needs to know about one proposal's first decision beyond the partition's state. */
export interface FirstDecisionFacts {
  /** The gate's grant table at the authority index the decision cites. */
  readonly gate: GateState;
  /** True when the proposal's signing key is revoked at that index. */
  readonly keyRevoked: boolean;
  readonly rules: RulesSpec;
  /** The screening verdict on it (the caller's fresh screening, or the one on the log). */
  readonly screening: BodyOf<'screening.verdict'>['verdict'] | null;
}

/** The first decision a proposal gets under `facts`, or `screen` when a pre-screen verdict is needed first. */
export function firstDecision(waiting: WaitingProposal, facts: FirstDecisionFacts): { readonly decision: GateDecision; readonly screen: boolean } {
  const proposal = waiting.body;
  const gated = facts.rules.classify({ now: waiting.sequencedAtMs, channel: proposal.channel, context: proposal.context as DecideContext, proposal }, facts.gate);
  if (facts.rules.revokedKeyBlocks && facts.keyRevoked) {
    const refusal = formatRefusal(ReasonCode.KEY_REVOKED, `the key that signed the proposal (${waiting.keyId.slice(0, 16)}) is revoked`);
    return { decision: { ...gated, outcome: 'block', code: ReasonCode.KEY_REVOKED, refusal, grantId: null, grantEntry: null, reasons: [...gated.reasons, 'key.revoked'] }, screen: false };
  }
  if (!isScreened(gated)) return { decision: gated, screen: false };
  if (facts.screening === null) return { decision: gated, screen: true };
  return { decision: applyScreening(gated, screeningPolicy(gated.tier, facts.screening)), screen: false };
}

/** The final decision a settled confirmation gets: allow, or deny with its code. */
export function finalDecision(open: OpenConfirmation, rules: RulesSpec, keyRevoked: boolean): { readonly outcome: 'allow' | 'deny'; readonly code: ReasonCode | null } | null {
  switch (open.status) {
    case 'pending':
      return null;
    case 'approved':
      if (rules.revokedKeyBlocks && keyRevoked) return { outcome: 'deny', code: ReasonCode.KEY_REVOKED };
      return { outcome: 'allow', code: null };
    case 'denied':
      return { outcome: 'deny', code: ReasonCode.HUMAN_DENIED };
    case 'timed_out':
      return { outcome: 'deny', code: ReasonCode.TIMEOUT };
  }
}

/** The life of a proposal: what to sign next. */
export type LifeCommand =
  | {
      /** Decide a proposal waiting for its first decision. */
      readonly type: 'decide_proposal';
      readonly proposal: string;
      readonly facts: Omit<FirstDecisionFacts, 'screening'>;
      /** The pre-screen's result, once asked for. */
      readonly screening?: ScreenResult;
      readonly authorityIndex: number;
      /** The gate's clock (ms): deadlines run from when the request is signed. */
      readonly nowMs: number;
      readonly confirmation: ConfirmationSettings;
    }
  | {
      /** Close a confirmation whose outcome is known (approved, denied, timed out). */
      readonly type: 'settle';
      readonly proposal: string;
      readonly rules: RulesSpec;
      readonly keyRevoked: boolean;
      readonly authorityIndex: number;
    }
  | {
      /**
       * Request the confirmation of a proposal left to a human whose request
       * is not on the log (the sequencer rejected the one signed with the
       * first decision): the deadline runs from `nowMs`.
       */
      readonly type: 'request';
      readonly proposal: string;
      readonly nowMs: number;
      readonly confirmation: ConfirmationSettings;
    }
  | {
      /** Refuse, on the log, a response that did not count. */
      readonly type: 'answer';
      readonly response: string;
    }
  | {
      /** Fatigue signals an entry calls for. */
      readonly type: 'signals';
      readonly entry: string;
      readonly fatigue: FatigueSettings;
      readonly sent: (mark: string) => boolean;
    }
  | {
      /** Timeouts and escalations of every request whose deadline passed by `nowMs`. */
      readonly type: 'tick';
      readonly nowMs: number;
    };

/** What {@link decide} answers: groups to sign, or (for a first decision) a request to pre-screen first. */
export interface LifeDecision {
  readonly groups: readonly SaidGroup[];
  /** Set when the proposal needs a pre-screen verdict before it can be decided. */
  readonly screen: { readonly proposal: WaitingProposal; readonly gated: GateDecision } | null;
}

const NONE: LifeDecision = Object.freeze({ groups: [], screen: null });

function refusal(agentId: string, proposal: string, code: ReasonCode, detail: string): Said {
  return { type: 'refusal.recorded', body: { agentId, proposal, code, refusal: formatRefusal(code, detail) } };
}

/** `rulesVersion` as a statement carries it: absent for version 1 (frozen bytes), named from 2 on. */
function versionField(rules: RulesSpec): { rulesVersion?: number } {
  return rules.version === 1 ? {} : { rulesVersion: rules.version };
}

/**
 * The Decider: what the gate or the timer signs next, given the partition's
 * state. Pure: no clock, no I/O; the caller signs and publishes the result.
 */
export function decide(command: LifeCommand, state: LifeState): LifeDecision {
  switch (command.type) {
    case 'decide_proposal':
      return decideProposal(command, state);
    case 'settle':
      return settle(command, state);
    case 'request': {
      const open = state.confirmations.get(command.proposal);
      if (open === undefined || open.request !== null) return NONE;
      return { groups: [{ marks: [`request:${open.proposal}`], statements: [confirmationRequest(open.agentId, open.proposal, open.tier as BodyOf<'confirmation.requested'>['tier'], command.nowMs, command.confirmation)] }], screen: null };
    }
    case 'answer': {
      const answer = state.answers.get(command.response);
      if (answer === undefined || counts(answer.effect) || answer.effect === 'duplicate' || answer.effect === 'not_enough_assurance') return NONE;
      const code = answer.effect === 'mismatch' ? ReasonCode.GRANT_MISMATCH : ReasonCode.STALE_APPROVAL;
      const detail =
        answer.effect === 'late' ? `response by ${answer.author} arrived after the deadline`
        : answer.effect === 'closed' ? `response by ${answer.author} answers a confirmation already settled`
        : answer.effect === 'mismatch' ? `response by ${answer.author} names another proposal or agent than its request`
        : `response by ${answer.author} names no open request of this partition`;
      return { groups: [{ marks: [`answer:${command.response}`], statements: [refusal(answer.agentId, answer.proposal, code, detail)] }], screen: null };
    }
    case 'signals':
      return { groups: signals(command, state), screen: null };
    case 'tick':
      return { groups: tick(command.nowMs, state), screen: null };
  }
}

function decideProposal(command: Extract<LifeCommand, { type: 'decide_proposal' }>, state: LifeState): LifeDecision {
  const waiting = state.proposals.get(command.proposal);
  if (waiting === undefined) return NONE;
  const verdict = command.screening?.verdict ?? waiting.screening;
  const { decision, screen } = firstDecision(waiting, { ...command.facts, screening: verdict });
  if (screen) return { groups: [], screen: { proposal: waiting, gated: decision } };
  const agentId = waiting.body.agentId;
  const hash = waiting.hash;
  const rules = command.facts.rules;
  const statements: Said[] = [];
  if (command.screening !== undefined) {
    // The verdict is signed before the decision it shapes, so verify-chain can replay the same rule from the bundle.
    statements.push({ type: 'screening.verdict', body: screeningStatement(command.screening, agentId, hash) });
  }
  statements.push(
    { type: 'classification.recorded', body: { agentId, proposal: hash, tier: decision.tier, risk: decision.risk, rules: decision.reasons.slice(0, 256).map((r) => r.slice(0, 256)), ...versionField(rules) } },
    {
      type: 'decision.recorded',
      body: { agentId, proposal: hash, outcome: decision.outcome, code: decision.code, tier: decision.tier, risk: decision.risk, authorityIndex: command.authorityIndex, grantId: decision.grantId, grantEntry: decision.grantEntry, ...versionField(rules) },
    },
  );
  if (decision.outcome === 'block' && decision.code !== null) {
    statements.push(refusal(agentId, hash, decision.code, decision.code === ReasonCode.KEY_REVOKED ? 'the proposing key is revoked' : `${waiting.body.actionType} on ${waiting.body.targetResource}`));
  }
  if (decision.outcome === 'verify_first') statements.push(confirmationRequest(agentId, hash, decision.tier, command.nowMs, command.confirmation));
  return { groups: [{ marks: [`first:${hash}`], statements }], screen: null };
}

/** The confirmation request of a proposal left to a human at `tier`, signed at `nowMs`: its deadline and approvers by the settings. */
function confirmationRequest(agentId: string, proposal: string, tier: BodyOf<'confirmation.requested'>['tier'], nowMs: number, settings: ConfirmationSettings): Said {
  const deadlineMs = settings.deadlinesMs[tier] ?? 30_000;
  return {
    type: 'confirmation.requested',
    body: { agentId, proposal, tier, deadline: new Date(nowMs + deadlineMs).toISOString(), approvalsRequired: tier === 4 ? settings.criticalApprovals : 1, channels: [...settings.channels] },
  };
}

function settle(command: Extract<LifeCommand, { type: 'settle' }>, state: LifeState): LifeDecision {
  const open = state.confirmations.get(command.proposal);
  if (open === undefined) return NONE;
  const final = finalDecision(open, command.rules, command.keyRevoked);
  if (final === null) return NONE;
  const statements: Said[] = [
    {
      type: 'decision.recorded',
      body: { agentId: open.agentId, proposal: open.proposal, outcome: final.outcome, code: final.code, tier: open.tier as 0, risk: 0, authorityIndex: command.authorityIndex, grantId: null, grantEntry: null, ...versionField(command.rules) },
    },
  ];
  if (final.code !== null) {
    const detail = final.code === ReasonCode.TIMEOUT ? 'no human answered before the deadline' : final.code === ReasonCode.KEY_REVOKED ? 'the proposing key was revoked before the approval' : 'an approver denied the action';
    statements.push(refusal(open.agentId, open.proposal, final.code, detail));
  }
  return { groups: [{ marks: [`final:${open.proposal}`], statements }], screen: null };
}

function tick(nowMs: number, state: LifeState): SaidGroup[] {
  const groups: SaidGroup[] = [];
  for (const open of state.confirmations.values()) {
    const request = open.request;
    if (request === null || open.status !== 'pending' || open.timeoutRecorded || request.deadlineMs >= nowMs) continue;
    const base = { agentId: open.agentId, proposal: open.proposal };
    groups.push({
      marks: [`timeout:${request.hash}`],
      statements: [
        { type: 'timeout.recorded', body: { ...base, request: request.hash, deadline: new Date(request.deadlineMs).toISOString() } },
        { type: 'escalation.raised', body: { ...base, ...escalationFor(open.tier) } },
      ],
    });
  }
  return groups;
}

function signals(command: Extract<LifeCommand, { type: 'signals' }>, state: LifeState): SaidGroup[] {
  const fatigue = state.fatigue;
  const settings = command.fatigue;
  const approval = fatigue.approvals.get(command.entry);
  if (approval !== undefined) {
    if (approval.rushed || settings.minReadMs <= 0 || command.sent(`rushed:${command.entry}`)) return [];
    const minReadMs = minimumReadingMs(approval.operationBytes, settings.minReadMs);
    if (approval.elapsedMs >= minReadMs) return [];
    const body: BodyOf<'approval.rushed'> = { agentId: approval.agentId, proposal: approval.proposal, request: approval.request, response: command.entry, approver: approval.approver, elapsedMs: approval.elapsedMs, minReadMs, operationBytes: approval.operationBytes };
    return [{ marks: [`rushed:${command.entry}`], statements: [{ type: 'approval.rushed', body }] }];
  }
  const closed = fatigue.allowedBy.get(command.entry);
  const last = closed === undefined ? undefined : fatigue.approved.get(closed);
  if (closed === undefined || last === undefined || settings.suggestAfter <= 0) return [];
  const open = (hash: string, approved: ApprovedRequest): boolean => !approved.suggested && !command.sent(`suggested:${hash}`);
  if (!open(closed, last)) return [];
  const named: [string, ApprovedRequest][] = [];
  for (const [hash, approved] of fatigue.approved) {
    if (approved.decisionIndex > last.decisionIndex) break;
    if (approved.key === last.key && open(hash, approved)) named.push([hash, approved]);
  }
  if (named.length < settings.suggestAfter) return [];
  const requests = named.slice(-MAX_SUGGESTED_REQUESTS);
  const tier = Math.max(...requests.map(([, a]) => a.tier));
  const body: BodyOf<'grant.suggested'> = {
    agentId: last.agentId,
    ...last.fields,
    tier,
    requests: requests.map(([hash]) => hash),
    notBefore: new Date(last.decisionAtMs).toISOString(),
    expiresAt: new Date(last.decisionAtMs + settings.suggestWindowMs).toISOString(),
  };
  return [{ marks: requests.map(([hash]) => `suggested:${hash}`), statements: [{ type: 'grant.suggested', body }] }];
}
