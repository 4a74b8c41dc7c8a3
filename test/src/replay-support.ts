import assert from 'node:assert/strict';
import { statementHash, type BodyOf, type Entry, type Signer, type Statement } from '@agent-ledger/core';
import { LATEST_RULES_VERSION, evolve, initialState, type GateDecision, type GateState } from '@agent-ledger/gate';
import { RulesScreener, screeningStatement, type ScreenResult } from '@agent-ledger/screen';
import { newSigner } from '@agent-ledger/ledger';
import {
  DEFAULT_FATIGUE,
  RELEASED_RULES,
  decide as lifeDecide,
  evolve as lifeEvolve,
  firstDecision,
  initialState as lifeInitial,
  lifeEntryOf,
  type FatigueSettings,
  type LifeState,
  type RulesSpec,
  type Said,
} from '@agent-ledger/rulebook';
import { verifyBundle, type VerificationReport, type VerifyOptions } from '@agent-ledger/verifier';
import { TestLedger } from './fixtures.js';

// Helpers for decision-replay tests: the gate's decisions as the live worker
// signs them, over a hand-built ledger, and the verifier's verdict on it.

export type Posted = { entry: Entry; hash: string };

export async function verify(ledger: TestLedger, options: VerifyOptions = {}): Promise<VerificationReport> {
  ledger.sealAll();
  return verifyBundle([`${ledger.lines().join('\n')}\n`], ledger.trustRoot, { workers: 0, ...options });
}

export function assertFailsAt(report: VerificationReport, code: string, at: Entry): void {
  assert.equal(report.ok, false, 'expected a failure');
  assert.deepEqual(
    { code: report.failure?.code, partition: report.failure?.partition, index: report.failure?.index },
    { code, partition: at.partition, index: at.index },
    report.failure?.message,
  );
}

export function assertValid(report: VerificationReport): void {
  assert.equal(report.failure, null, report.failure?.message);
  assert.equal(report.ok, true);
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** The pure gate as the live gate worker runs it, over the test ledger's authority stream. */
export function gateState(ledger: TestLedger, size: number): GateState {
  let state = initialState();
  for (const line of ledger.lines()) {
    const parsed = JSON.parse(line) as { kind: string; partition?: number; index?: number; sequencedAt?: string; envelope?: { statement: Statement } };
    if (parsed.kind !== 'entry' || parsed.partition !== 0 || (parsed.index as number) >= size) continue;
    const statement = parsed.envelope?.statement as Statement;
    state = evolve(state, { statement, index: parsed.index as number, statementHash: statementHash(statement), sequencedAt: Date.parse(parsed.sequencedAt as string) });
  }
  return state;
}

export const screener = new RulesScreener();

/** Rules version 1 (what recordDecision signs unless told otherwise: no rulesVersion field). */
export const RULES_V1 = RELEASED_RULES.get(1) as RulesSpec;
/** The latest released rules (what the live gate signs with). */
export const RULES_LATEST = RELEASED_RULES.get(LATEST_RULES_VERSION) as RulesSpec;

/** The gate's decision as the worker makes it: the rulebook's first decision, with the rules screener where it applies. */
export function gateDecides(
  ledger: TestLedger,
  proposal: Posted,
  authorityIndex: number = ledger.authoritySize,
  options: { rules?: RulesSpec; keyRevoked?: boolean } = {},
): GateDecision & { screening: ScreenResult | null } {
  const body = proposal.entry.envelope.statement.body as BodyOf<'proposal.submitted'>;
  const waiting = { hash: proposal.hash, keyId: proposal.entry.envelope.statement.author.keyId, sequencedAtMs: Date.parse(proposal.entry.sequencedAt), authorityIndex: proposal.entry.authorityIndex, body, bytes: 0, screening: null };
  const facts = { gate: gateState(ledger, authorityIndex), keyRevoked: options.keyRevoked ?? false, rules: options.rules ?? RULES_V1 };
  const first = firstDecision(waiting, { ...facts, screening: null });
  if (!first.screen) return { ...first.decision, screening: null };
  const screening = screener.screenNow({ proposal: body, proposalHash: proposal.hash, tier: first.decision.tier, risk: first.decision.risk, rules: first.decision.reasons });
  return { ...firstDecision(waiting, { ...facts, screening: screening.verdict }).decision, screening };
}

export type DecisionBody = BodyOf<'decision.recorded'>;

/** Signs the gate's first decision as the worker does (classification, decision, request), with optional forged fields. */
export function recordDecision(
  ledger: TestLedger,
  proposal: Posted,
  forged: Partial<DecisionBody> = {},
  options: { approvalsRequired?: number; deadlineMs?: number; rules?: RulesSpec; keyRevoked?: boolean } = {},
): { decision: Posted; request: Posted | null; deadline: string; expected: GateDecision & { screening: ScreenResult | null } } {
  const authorityIndex = forged.authorityIndex ?? ledger.authoritySize;
  // The rules the caller names, else those the (forged) decision names, else version 1.
  const rules = options.rules ?? (forged.rulesVersion === undefined ? undefined : RELEASED_RULES.get(forged.rulesVersion)) ?? RULES_V1;
  const expected = gateDecides(ledger, proposal, authorityIndex, { rules, keyRevoked: options.keyRevoked ?? false });
  const version = rules.version === 1 ? {} : { rulesVersion: rules.version };
  const agentId = ledger.agent.principal;
  if (expected.screening !== null) ledger.say('screening.verdict', screeningStatement(expected.screening, agentId, proposal.hash), ledger.gate);
  ledger.say('classification.recorded', { agentId, proposal: proposal.hash, tier: expected.tier, risk: expected.risk, rules: expected.reasons.slice(0, 256) }, ledger.gate);
  const body: DecisionBody = {
    agentId,
    proposal: proposal.hash,
    outcome: expected.outcome,
    code: expected.code,
    tier: expected.tier,
    risk: expected.risk,
    authorityIndex,
    grantId: expected.grantId,
    grantEntry: expected.grantEntry,
    ...version,
    ...forged,
  };
  const decision = ledger.say('decision.recorded', body, ledger.gate);
  const deadline = iso(ledger.clock + (options.deadlineMs ?? 1_000));
  let request: Posted | null = null;
  if (body.outcome === 'verify_first') {
    request = ledger.say(
      'confirmation.requested',
      { agentId, proposal: proposal.hash, tier: body.tier, deadline, approvalsRequired: options.approvalsRequired ?? (body.tier === 4 ? 2 : 1), channels: ['cli', 'web'] },
      ledger.gate,
    );
  }
  return { decision, request, deadline, expected };
}

export function respond(ledger: TestLedger, proposal: Posted, request: Posted, answer: 'approve' | 'deny', approver: Signer = ledger.approver): Posted {
  return ledger.say('human.response', { agentId: ledger.agent.principal, proposal: proposal.hash, request: request.hash, answer, assurance: 'self_signed', platformIdentity: null }, approver);
}

export function finalDecision(ledger: TestLedger, proposal: Posted, tier: number, outcome: 'allow' | 'deny', code: DecisionBody['code']): Posted {
  return ledger.say(
    'decision.recorded',
    { agentId: ledger.agent.principal, proposal: proposal.hash, outcome, code, tier: tier as 0, risk: 0, authorityIndex: ledger.authoritySize, grantId: null, grantEntry: null },
    ledger.gate,
  );
}

export function timeout(ledger: TestLedger, proposal: Posted, request: Posted, deadline: string): Posted {
  return ledger.say('timeout.recorded', { agentId: ledger.agent.principal, proposal: proposal.hash, request: request.hash, deadline }, ledger.gate);
}

/** An allow grant (tier 3) for the fixture's payment, proposed by one admin and co-signed by another. */
export function writeGrant(ledger: TestLedger, grantId: string, effect: 'allow' | 'block' = 'allow'): Posted {
  const proposed = ledger.say(
    'grant.proposed',
    {
      grantId,
      agentId: ledger.agent.principal,
      actionType: 'payment.send',
      targetResource: 'payments/vendors/acme',
      recipient: 'acme-corp',
      scope: 'invoice:2026-11',
      notBefore: iso(ledger.clock - 60_000),
      expiresAt: iso(ledger.clock + 86_400_000),
      effect,
      tier: 3,
      parentGrantId: null,
    },
    ledger.admin,
  );
  ledger.say('grant.cosigned', { grantId, grant: proposed.hash }, ledger.admin2);
  return proposed;
}

export const SAFE = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'ls -la' } };
export const CRITICAL = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'kill -9 -1' } };

/** A second approver, registered on the authority stream. */
export function secondApprover(ledger: TestLedger): Signer {
  const eli = newSigner('approver:eli');
  ledger.say('key.registered', { keyId: eli.keyId, principal: eli.principal, roles: ['approver'] }, ledger.admin);
  return eli;
}


/** A fatigue signal the gate signs. */
export type FatigueSignal = Extract<Said, { type: 'grant.suggested' | 'approval.rushed' }>;

/**
 * The live gate's confirmation-fatigue signals over hand-built entries: each
 * entry is folded into its partition's rulebook state and the rulebook's
 * `signals` command says what to sign; a signal returned once counts as sent
 * (as the gate marks it once its transaction commits), so folding an entry
 * again returns nothing new.
 */
export class FatigueFold {
  readonly #settings: FatigueSettings;
  readonly #lives = new Map<number, LifeState>();
  readonly #sent = new Set<string>();

  constructor(settings: Partial<FatigueSettings> = {}) {
    this.#settings = { ...DEFAULT_FATIGUE, ...settings };
  }

  evolve(entry: Entry, hash: string): FatigueSignal[] {
    let life = this.#lives.get(entry.partition);
    if (life === undefined) {
      life = lifeInitial();
      this.#lives.set(entry.partition, life);
    }
    lifeEvolve(life, lifeEntryOf(entry, hash));
    const found: FatigueSignal[] = [];
    for (const group of lifeDecide({ type: 'signals', entry: hash, fatigue: this.#settings, sent: (mark) => this.#sent.has(mark) }, life).groups) {
      for (const mark of group.marks) this.#sent.add(mark);
      found.push(...(group.statements as FatigueSignal[]));
    }
    return found;
  }
}

/**
 * The live gate's confirmation-fatigue signals over a test ledger: each call folds
 * the events entries sequenced since the previous call, in partition order, and
 * returns the signals the gate would sign for them (unsigned, so a test can
 * sign them as they are or forged).
 */
export class GateFatigue {
  readonly fold: FatigueFold;
  readonly #folded = new Set<string>();

  constructor(settings: Partial<FatigueSettings> = {}) {
    this.fold = new FatigueFold(settings);
  }

  signals(ledger: TestLedger): FatigueSignal[] {
    const found: FatigueSignal[] = [];
    for (const line of ledger.lines()) {
      const parsed = JSON.parse(line) as { kind: string } & Entry;
      if (parsed.kind !== 'entry' || parsed.partition === 0) continue;
      const hash = statementHash(parsed.envelope.statement);
      if (this.#folded.has(hash)) continue;
      this.#folded.add(hash);
      found.push(...this.fold.evolve(parsed, hash));
    }
    return found;
  }

  /** Folds the new entries and signs every signal they call for with the gate's key, as the live gate does. */
  sign(ledger: TestLedger): Posted[] {
    return this.signals(ledger).map((signal) => ledger.say(signal.type, signal.body as never, ledger.gate));
  }
}

/** A proposal left to a human, approved by `approver` after `readMs`, and allowed. */
export function approvedConfirmation(
  ledger: TestLedger,
  overrides: Partial<BodyOf<'proposal.submitted'>> = {},
  options: { readMs?: number; approver?: Signer; deadlineMs?: number } = {},
): { proposal: Posted; request: Posted; response: Posted; final: Posted; tier: number } {
  const proposal = ledger.propose(overrides);
  const first = recordDecision(ledger, proposal, {}, { deadlineMs: options.deadlineMs ?? 60_000 });
  assert.equal(first.expected.outcome, 'verify_first');
  ledger.clock += options.readMs ?? 0;
  const response = respond(ledger, proposal, first.request as Posted, 'approve', options.approver);
  const final = finalDecision(ledger, proposal, first.expected.tier, 'allow', null);
  return { proposal, request: first.request as Posted, response, final, tier: first.expected.tier };
}
