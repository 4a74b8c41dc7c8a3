import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Signer } from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import { TestLedger } from './fixtures.js';
import { type Posted, verify, assertFailsAt, assertValid, iso, gateState, screener, gateDecides, type DecisionBody, recordDecision, respond, finalDecision, timeout, writeGrant, SAFE, CRITICAL, secondApprover } from './replay-support.js';

// Decision replay and deadline proofs, attacked from the operator's side: every
// forged statement below is signed with the gate's (or timer's, or approver's)
// own registered key, so signatures, roles, chains and checkpoints all verify;
// only the decision logic is wrong. Each must fail at that statement.

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

test('the replay window is bounded: a proposal beyond it fails where admission would have refused it, one inside it passes', async () => {
  const build = (): { ledger: TestLedger; third: Posted; decision: Posted; lineBytes: number } => {
    const ledger = new TestLedger();
    const oldest = ledger.propose(SAFE);
    ledger.propose(SAFE);
    const third = ledger.propose(SAFE);
    const lineBytes = Buffer.byteLength(JSON.stringify({ kind: 'entry', ...oldest.entry }));
    return { ledger, third, decision: recordDecision(ledger, oldest).decision, lineBytes };
  };
  const small = build();
  assertFailsAt(await verify(small.ledger, { replay: { maxPending: 2 } }), 'POLICY_VIOLATION', small.third.entry);
  const bytes = build();
  // Room for two proposal lines and a half: the third does not fit.
  assertFailsAt(await verify(bytes.ledger, { replay: { maxPendingBytes: Math.floor(bytes.lineBytes * 2.5) } }), 'POLICY_VIOLATION', bytes.third.entry);
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
