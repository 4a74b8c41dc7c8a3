import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statementHash, type BodyOf, type Entry, type Signer, type Statement } from '@agent-ledger/core';
import { decide, evolve, initialState, type GateDecision, type GateState } from '@agent-ledger/gate';
import { RulesScreener, applyScreening, isScreened, screeningPolicy, screeningStatement, type ScreenResult } from '@agent-ledger/screen';
import { newSigner } from '@agent-ledger/ledger';
import { verifyBundle, type VerificationReport, type VerifyOptions } from '@agent-ledger/verifier';
import { TestLedger } from './fixtures.js';

// Decision replay and deadline proofs, attacked from the operator's side: every
// forged statement below is signed with the gate's (or timer's, or approver's)
// own registered key, so signatures, roles, chains and checkpoints all verify;
// only the decision logic is wrong. Each must fail at that statement.

type Posted = { entry: Entry; hash: string };

async function verify(ledger: TestLedger, options: VerifyOptions = {}): Promise<VerificationReport> {
  ledger.sealAll();
  return verifyBundle([`${ledger.lines().join('\n')}\n`], ledger.trustRoot, { workers: 0, ...options });
}

function assertFailsAt(report: VerificationReport, code: string, at: Entry): void {
  assert.equal(report.ok, false, 'expected a failure');
  assert.deepEqual(
    { code: report.failure?.code, partition: report.failure?.partition, index: report.failure?.index },
    { code, partition: at.partition, index: at.index },
    report.failure?.message,
  );
}

function assertValid(report: VerificationReport): void {
  assert.equal(report.failure, null, report.failure?.message);
  assert.equal(report.ok, true);
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The pure gate as the live gate worker runs it, over the test ledger's authority stream. */
function gateState(ledger: TestLedger, size: number): GateState {
  let state = initialState();
  for (const line of ledger.lines()) {
    const parsed = JSON.parse(line) as { kind: string; partition?: number; index?: number; sequencedAt?: string; envelope?: { statement: Statement } };
    if (parsed.kind !== 'entry' || parsed.partition !== 0 || (parsed.index as number) >= size) continue;
    const statement = parsed.envelope?.statement as Statement;
    state = evolve(state, { statement, index: parsed.index as number, statementHash: statementHash(statement), sequencedAt: Date.parse(parsed.sequencedAt as string) });
  }
  return state;
}

const screener = new RulesScreener();

/** The gate's decision as the worker makes it: the pure gate, then the rules screener where it applies. */
function gateDecides(ledger: TestLedger, proposal: Posted, authorityIndex: number = ledger.authoritySize): GateDecision & { screening: ScreenResult | null } {
  const body = proposal.entry.envelope.statement.body as BodyOf<'proposal.submitted'>;
  const gated = decide({ now: Date.parse(proposal.entry.sequencedAt), channel: body.channel, context: body.context, proposal: body }, gateState(ledger, authorityIndex));
  if (!isScreened(gated)) return { ...gated, screening: null };
  const screening = screener.screenNow({ proposal: body, proposalHash: proposal.hash, tier: gated.tier, risk: gated.risk, rules: gated.reasons });
  return { ...applyScreening(gated, screeningPolicy(gated.tier, screening.verdict)), screening };
}

type DecisionBody = BodyOf<'decision.recorded'>;

/** Signs the gate's first decision as the worker does (classification, decision, request), with optional forged fields. */
function recordDecision(
  ledger: TestLedger,
  proposal: Posted,
  forged: Partial<DecisionBody> = {},
  options: { approvalsRequired?: number; deadlineMs?: number } = {},
): { decision: Posted; request: Posted | null; deadline: string; expected: GateDecision & { screening: ScreenResult | null } } {
  const authorityIndex = forged.authorityIndex ?? ledger.authoritySize;
  const expected = gateDecides(ledger, proposal, authorityIndex);
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

function respond(ledger: TestLedger, proposal: Posted, request: Posted, answer: 'approve' | 'deny', approver: Signer = ledger.approver): Posted {
  return ledger.say('human.response', { agentId: ledger.agent.principal, proposal: proposal.hash, request: request.hash, answer, assurance: 'self_signed', platformIdentity: null }, approver);
}

function finalDecision(ledger: TestLedger, proposal: Posted, tier: number, outcome: 'allow' | 'deny', code: DecisionBody['code']): Posted {
  return ledger.say(
    'decision.recorded',
    { agentId: ledger.agent.principal, proposal: proposal.hash, outcome, code, tier: tier as 0, risk: 0, authorityIndex: ledger.authoritySize, grantId: null, grantEntry: null },
    ledger.gate,
  );
}

function timeout(ledger: TestLedger, proposal: Posted, request: Posted, deadline: string): Posted {
  return ledger.say('timeout.recorded', { agentId: ledger.agent.principal, proposal: proposal.hash, request: request.hash, deadline }, ledger.gate);
}

/** An allow grant (tier 3) for the fixture's payment, proposed by one admin and co-signed by another. */
function writeGrant(ledger: TestLedger, grantId: string, effect: 'allow' | 'block' = 'allow'): Posted {
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

const SAFE = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'ls -la' } };
const CRITICAL = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'kill -9 -1' } };

/** A second approver, registered on the authority stream. */
function secondApprover(ledger: TestLedger): Signer {
  const eli = newSigner('approver:eli');
  ledger.say('key.registered', { keyId: eli.keyId, principal: eli.principal, roles: ['approver'] }, ledger.admin);
  return eli;
}

test('every path of the live gate replays: allow, grant allow, block grant, approve, deny, timeout, stale answer, two approvals', async () => {
  const ledger = new TestLedger();
  const eli = secondApprover(ledger);
  const allowGrant = writeGrant(ledger, 'grant-acme');

  const safe = ledger.propose(SAFE);
  assert.equal(recordDecision(ledger, safe).expected.outcome, 'allow');

  const paid = ledger.propose();
  const granted = recordDecision(ledger, paid).expected;
  assert.deepEqual([granted.outcome, granted.grantId, granted.grantEntry], ['allow', 'grant-acme', allowGrant.entry.index]);

  // Another recipient: no grant; a human approves in time.
  const other = { recipient: 'globex-ltd', targetResource: 'payments/vendors/globex' };
  const approved = ledger.propose(other);
  const a = recordDecision(ledger, approved);
  assert.equal(a.expected.outcome, 'verify_first');
  respond(ledger, approved, a.request as Posted, 'approve');
  finalDecision(ledger, approved, a.expected.tier, 'allow', null);

  const denied = ledger.propose(other);
  const d = recordDecision(ledger, denied);
  respond(ledger, denied, d.request as Posted, 'deny');
  finalDecision(ledger, denied, d.expected.tier, 'deny', 'HUMAN_DENIED');

  // Nobody answers in time: a late approval is not honoured, the timeout denies.
  const late = ledger.propose(other);
  const l = recordDecision(ledger, late);
  ledger.clock += 2_000;
  respond(ledger, late, l.request as Posted, 'approve');
  timeout(ledger, late, l.request as Posted, l.deadline);
  finalDecision(ledger, late, l.expected.tier, 'deny', 'TIMEOUT');

  // Critical: two distinct approvers.
  const critical = ledger.propose(CRITICAL);
  const c = recordDecision(ledger, critical);
  assert.deepEqual([c.expected.outcome, c.expected.tier], ['verify_first', 4]);
  respond(ledger, critical, c.request as Posted, 'approve');
  respond(ledger, critical, c.request as Posted, 'approve', eli);
  finalDecision(ledger, critical, 4, 'allow', null);

  // A block grant blocks.
  writeGrant(ledger, 'grant-block-acme', 'block');
  const blocked = ledger.propose();
  assert.equal(recordDecision(ledger, blocked).expected.code, 'GRANT_BLOCKED');

  assertValid(await verify(ledger));
});

test('an allow where the gate says verify_first fails at the decision', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  assert.equal(gateDecides(ledger, p).outcome, 'verify_first');
  const { decision } = recordDecision(ledger, p, { outcome: 'allow', code: null });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', decision.entry);
});

test('a wrong grant id, grant entry, tier, risk or code fails at the decision', async () => {
  const forgeries: Partial<DecisionBody>[] = [{ grantId: 'grant-other' }, { grantEntry: 2 }, { tier: 1 }, { risk: 0.5 }, { code: 'GRANT_MISSING' }];
  for (const forged of forgeries) {
    const ledger = new TestLedger();
    writeGrant(ledger, 'grant-acme');
    const p = ledger.propose();
    assert.deepEqual([gateDecides(ledger, p).grantId, gateDecides(ledger, p).grantEntry], ['grant-acme', 1]);
    const { decision } = recordDecision(ledger, p, forged);
    assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', decision.entry);
  }
});

test('a decision citing the registry from before a grant revocation fails', async () => {
  const ledger = new TestLedger();
  writeGrant(ledger, 'grant-acme');
  const beforeRevocation = ledger.authoritySize;
  ledger.say('grant.revoked', { grantId: 'grant-acme', reason: 'vendor offboarded' }, ledger.admin);
  const p = ledger.propose();
  assert.equal(gateDecides(ledger, p).outcome, 'verify_first');
  // At the old index the gate would indeed allow: the stale index is the forgery.
  assert.equal(gateDecides(ledger, p, beforeRevocation).outcome, 'allow');
  const { decision } = recordDecision(ledger, p, { authorityIndex: beforeRevocation });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', decision.entry);
});

test('a decision citing authority entries sequenced after it fails', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const future = ledger.authoritySize + 2;
  // The grant is written after the decision, but the decision already cites it.
  const { decision } = recordDecision(ledger, p, { outcome: 'allow', code: null, grantId: 'grant-acme', grantEntry: ledger.authoritySize, authorityIndex: future });
  writeGrant(ledger, 'grant-acme');
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', decision.entry);
});

test('an approval sequenced after the deadline, honoured, fails with STALE_APPROVAL', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const { request, expected } = recordDecision(ledger, p);
  ledger.clock += 2_000;
  respond(ledger, p, request as Posted, 'approve');
  const allow = finalDecision(ledger, p, expected.tier, 'allow', null);
  assertFailsAt(await verify(ledger), 'STALE_APPROVAL', allow.entry);
});

test('a timeout sequenced before its deadline fails at the timeout', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const { request, deadline } = recordDecision(ledger, p, {}, { deadlineMs: 60_000 });
  const early = timeout(ledger, p, request as Posted, deadline);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', early.entry);
});

test('a timeout naming a later deadline than its request fails', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const { request, deadline } = recordDecision(ledger, p);
  ledger.clock += 2_000;
  const wrong = timeout(ledger, p, request as Posted, iso(Date.parse(deadline) + 500));
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', wrong.entry);
});

test('nothing is approved by a timeout, and a TIMEOUT denial needs a recorded timeout', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const { request, deadline, expected } = recordDecision(ledger, p);
  ledger.clock += 2_000;
  timeout(ledger, p, request as Posted, deadline);
  const allow = finalDecision(ledger, p, expected.tier, 'allow', null);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', allow.entry);

  const ledger2 = new TestLedger();
  const p2 = ledger2.propose();
  const r2 = recordDecision(ledger2, p2);
  ledger2.clock += 2_000;
  const deny = finalDecision(ledger2, p2, r2.expected.tier, 'deny', 'TIMEOUT');
  assertFailsAt(await verify(ledger2), 'POLICY_VIOLATION', deny.entry);
});

test('a tier-4 allow with one approval where two are required fails', async () => {
  const ledger = new TestLedger();
  secondApprover(ledger);
  const p = ledger.propose(CRITICAL);
  const { request, expected } = recordDecision(ledger, p);
  assert.equal(expected.tier, 4);
  respond(ledger, p, request as Posted, 'approve');
  const allow = finalDecision(ledger, p, 4, 'allow', null);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', allow.entry);
});

test('two approvals by one principal count once', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose(CRITICAL);
  const { request } = recordDecision(ledger, p);
  respond(ledger, p, request as Posted, 'approve');
  respond(ledger, p, request as Posted, 'approve');
  const allow = finalDecision(ledger, p, 4, 'allow', null);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', allow.entry);
});

test('an allow after a human denied, or a denial nobody made, fails', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const { request, expected } = recordDecision(ledger, p);
  respond(ledger, p, request as Posted, 'deny');
  const allow = finalDecision(ledger, p, expected.tier, 'allow', null);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', allow.entry);

  const ledger2 = new TestLedger();
  const p2 = ledger2.propose();
  const r2 = recordDecision(ledger2, p2);
  const deny = finalDecision(ledger2, p2, r2.expected.tier, 'deny', 'HUMAN_DENIED');
  assertFailsAt(await verify(ledger2), 'POLICY_VIOLATION', deny.entry);
});

test('a second decision, a decision without a proposal, or a first decision of deny fails', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose(SAFE);
  const { decision } = recordDecision(ledger, p);
  const again = ledger.say('decision.recorded', { ...(decision.entry.envelope.statement.body as DecisionBody), authorityIndex: ledger.authoritySize }, ledger.gate);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', again.entry);

  const ledger2 = new TestLedger();
  const orphan = ledger2.say(
    'decision.recorded',
    { agentId: ledger2.agent.principal, proposal: 'ab'.repeat(32), outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: ledger2.authoritySize, grantId: null, grantEntry: null },
    ledger2.gate,
  );
  assertFailsAt(await verify(ledger2), 'POLICY_VIOLATION', orphan.entry);

  const ledger3 = new TestLedger();
  const p3 = ledger3.propose();
  const { decision: deny } = recordDecision(ledger3, p3, { outcome: 'deny', code: 'HUMAN_DENIED' });
  assertFailsAt(await verify(ledger3), 'POLICY_VIOLATION', deny.entry);
});

test('a confirmation request without a verify_first decision fails', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose(SAFE);
  recordDecision(ledger, p);
  const request = ledger.say(
    'confirmation.requested',
    { agentId: ledger.agent.principal, proposal: p.hash, tier: 0, deadline: iso(ledger.clock + 1_000), approvalsRequired: 1, channels: ['cli'] },
    ledger.gate,
  );
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', request.entry);
});

test('the replay window is bounded: a decision for a proposal pushed out of it fails, one inside it passes', async () => {
  const build = (): { ledger: TestLedger; decision: Posted; lineBytes: number } => {
    const ledger = new TestLedger();
    const oldest = ledger.propose(SAFE);
    ledger.propose(SAFE);
    ledger.propose(SAFE);
    const lineBytes = Buffer.byteLength(JSON.stringify({ kind: 'entry', ...oldest.entry }));
    return { ledger, decision: recordDecision(ledger, oldest).decision, lineBytes };
  };
  const small = build();
  assertFailsAt(await verify(small.ledger, { replay: { maxPending: 2 } }), 'POLICY_VIOLATION', small.decision.entry);
  const bytes = build();
  // Room for two proposal lines and a half: the third pushes the first out.
  assertFailsAt(await verify(bytes.ledger, { replay: { maxPendingBytes: Math.floor(bytes.lineBytes * 2.5) } }), 'POLICY_VIOLATION', bytes.decision.entry);
  const roomy = build();
  assertValid(await verify(roomy.ledger, { replay: { maxPendingBytes: roomy.lineBytes * 4 } }));
  assertValid(await verify(build().ledger, { replay: { maxPending: 3 } }));
});

test('the streaming verifier with worker threads gives the same replay verdicts', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const { request, expected } = recordDecision(ledger, p);
  ledger.clock += 2_000;
  respond(ledger, p, request as Posted, 'approve');
  const allow = finalDecision(ledger, p, expected.tier, 'allow', null);
  assertFailsAt(await verify(ledger, { workers: 2, batchLines: 3 }), 'STALE_APPROVAL', allow.entry);
});

test('screening replays: a screened decision needs its signed verdict, and the verdict shapes the outcome by the shared rule', async () => {
  /** A proposal, an optional screening verdict signed by the gate, then a decision with the given outcome and code. */
  const screenedCase = (
    proposal: Parameters<TestLedger['propose']>[0],
    verdict: 'safe' | 'uncertain' | null,
    outcome: DecisionBody['outcome'],
    code: DecisionBody['code'],
  ): { ledger: TestLedger; decision: Posted; gated: ReturnType<typeof gateDecides> } => {
    const ledger = new TestLedger();
    const p = ledger.propose(proposal);
    const gated = gateDecides(ledger, p);
    const agentId = ledger.agent.principal;
    if (verdict !== null) ledger.say('screening.verdict', { agentId, proposal: p.hash, verdict, rationale: 'test verdict', model: 'm', promptHash: p.hash }, ledger.gate);
    const decision = ledger.say('decision.recorded', { agentId, proposal: p.hash, outcome, code, tier: gated.tier, risk: gated.risk, authorityIndex: ledger.authoritySize, grantId: null, grantEntry: null }, ledger.gate);
    return { ledger, decision, gated };
  };
  // No verdict before the decision of a screened proposal.
  const unscreened = screenedCase(SAFE, null, 'allow', null);
  assert.ok(unscreened.gated.screening !== null && unscreened.gated.outcome === 'allow', 'an allow by the rules is screened');
  assertFailsAt(await verify(unscreened.ledger), 'POLICY_VIOLATION', unscreened.decision.entry);
  // An uncertain verdict: the gate must ask a human, so an allow fails and verify_first (GRANT_MISSING) follows.
  const uncertainAllow = screenedCase(SAFE, 'uncertain', 'allow', null);
  assertFailsAt(await verify(uncertainAllow.ledger), 'POLICY_VIOLATION', uncertainAllow.decision.entry);
  assertValid(await verify(screenedCase(SAFE, 'uncertain', 'verify_first', 'GRANT_MISSING').ledger));
  // A "safe" verdict never clears what the gate left to a human.
  const cleared = screenedCase(undefined, 'safe', 'allow', null);
  assert.equal(cleared.gated.outcome, 'verify_first');
  assertFailsAt(await verify(cleared.ledger), 'POLICY_VIOLATION', cleared.decision.entry);
});

test('a chat bridge answer (platform assurance) does not approve above tier 2; the same answer self-signed does', async () => {
  for (const assurance of ['platform', 'self_signed'] as const) {
    const ledger = new TestLedger();
    const p = ledger.propose(CRITICAL);
    const r = recordDecision(ledger, p, {}, { approvalsRequired: 1 });
    assert.deepEqual([r.expected.outcome, r.expected.tier], ['verify_first', 4]);
    ledger.say('human.response', { agentId: ledger.agent.principal, proposal: p.hash, request: (r.request as Posted).hash, answer: 'approve', assurance, platformIdentity: assurance === 'platform' ? 'telegram:7001' : null }, ledger.approver);
    const allowed = finalDecision(ledger, p, 4, 'allow', null);
    if (assurance === 'platform') assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', allowed.entry);
    else assertValid(await verify(ledger));
  }
});
