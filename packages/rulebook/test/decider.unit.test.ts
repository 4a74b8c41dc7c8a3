import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BodyOf } from '@agent-ledger/core';
import { DEFAULT_CONFIRMATION, countResponse, decide, escalationFor } from '../src/index.js';
import { AGENT, Partition, V1, V2 } from './support.js';

// The Decider on hand-built entries of one partition: what the gate and the
// timer sign follows from the state alone.

const CRITICAL = { command: 'kill -9 -1' };
const NEEDS_HUMAN = { command: 'sudo systemctl restart nginx' };

function typesOf(said: readonly { type: string }[]): string[] {
  return said.map((s) => s.type);
}

function leftToHuman(p: Partition): { proposal: string; request: string; tier: number } {
  const proposal = p.propose(NEEDS_HUMAN);
  const said = p.decideAndFold(proposal);
  const decision = said.find((s) => s.type === 'decision.recorded')?.body as BodyOf<'decision.recorded'>;
  assert.equal(decision.outcome, 'verify_first');
  const open = p.life.confirmations.get(proposal.statementHash);
  assert.ok(open?.request);
  return { proposal: proposal.statementHash, request: open.request.hash, tier: decision.tier };
}

test('a first decision names its rules version from 2 on and never under 1', () => {
  const p = new Partition();
  const v2 = p.decideAndFold(p.propose()).filter((s) => s.type !== 'screening.verdict');
  assert.deepEqual(typesOf(v2), ['classification.recorded', 'decision.recorded']);
  assert.equal((v2[1]?.body as BodyOf<'decision.recorded'>).rulesVersion, 2);
  assert.equal((v2[0]?.body as BodyOf<'classification.recorded'>).rulesVersion, 2);
  const v1 = p.decideAndFold(p.propose({ command: 'ls' }), V1).filter((s) => s.type !== 'screening.verdict');
  assert.equal('rulesVersion' in (v1[1]?.body as object), false);
});

test('an approval settles the confirmation into one allow; a second settle says nothing', () => {
  const p = new Partition();
  const c = leftToHuman(p);
  assert.deepEqual(p.ask({ type: 'settle', proposal: c.proposal, rules: V2, keyRevoked: false, authorityIndex: 3 }), []);
  p.add('human.response', { agentId: AGENT, proposal: c.proposal, request: c.request, answer: 'approve', assurance: 'self_signed', platformIdentity: null }, 'approver:dana');
  const final = p.ask({ type: 'settle', proposal: c.proposal, rules: V2, keyRevoked: false, authorityIndex: 3 });
  assert.deepEqual(final.map((s) => [s.type, (s.body as { outcome?: string }).outcome]), [['decision.recorded', 'allow']]);
  for (const s of final) p.add(s.type, s.body as never);
  assert.deepEqual(p.ask({ type: 'settle', proposal: c.proposal, rules: V2, keyRevoked: false, authorityIndex: 3 }), []);
});

test('a response from another partition does not count, is refused, and the deadline is still enforced', () => {
  const home = new Partition(1);
  const elsewhere = new Partition(2);
  const c = leftToHuman(home);
  // The same answer sequenced on another partition (its agentId routes there): the live gate once counted it.
  const misrouted = elsewhere.add('human.response', { agentId: 'agent:other', proposal: c.proposal, request: c.request, answer: 'approve', assurance: 'self_signed', platformIdentity: null }, 'approver:dana');
  const refusal = elsewhere.ask({ type: 'answer', response: misrouted.statementHash });
  assert.deepEqual(refusal.map((s) => [s.type, (s.body as { code?: string }).code]), [['refusal.recorded', 'STALE_APPROVAL']]);
  assert.equal(home.life.confirmations.get(c.proposal)?.status, 'pending');
  const open = home.life.confirmations.get(c.proposal);
  const tick = home.ask({ type: 'tick', nowMs: (open?.request?.deadlineMs ?? 0) + 1 });
  assert.deepEqual(typesOf(tick), ['timeout.recorded', 'escalation.raised']);
});

test('an answer naming another agent than its request is refused with GRANT_MISMATCH and does not count', () => {
  const p = new Partition();
  const c = leftToHuman(p);
  const forged = p.add('human.response', { agentId: 'agent:someone-else', proposal: c.proposal, request: c.request, answer: 'approve', assurance: 'self_signed', platformIdentity: null }, 'approver:dana');
  assert.deepEqual(p.ask({ type: 'answer', response: forged.statementHash }).map((s) => (s.body as { code?: string }).code), ['GRANT_MISMATCH']);
  assert.equal(p.life.confirmations.get(c.proposal)?.status, 'pending');
});

test('a counted answer is not refused', () => {
  const p = new Partition();
  const c = leftToHuman(p);
  const ok = p.add('human.response', { agentId: AGENT, proposal: c.proposal, request: c.request, answer: 'deny', assurance: 'self_signed', platformIdentity: null }, 'approver:dana');
  assert.deepEqual(p.ask({ type: 'answer', response: ok.statementHash }), []);
  assert.equal(p.life.confirmations.get(c.proposal)?.status, 'denied');
});

test('a timeout escalates by tier: notify, admin, emergency', () => {
  assert.deepEqual([2, 3, 4].map((tier) => escalationFor(tier).level), ['notify', 'admin', 'emergency']);
});

test('under rules 2 a proposal whose key is revoked is blocked with KEY_REVOKED; rules 1 did not look', () => {
  const p = new Partition();
  const v2 = p.decideAndFold(p.propose(), V2, true);
  const d2 = v2.find((s) => s.type === 'decision.recorded')?.body as BodyOf<'decision.recorded'>;
  assert.deepEqual([d2.outcome, d2.code], ['block', 'KEY_REVOKED']);
  assert.ok(v2.some((s) => s.type === 'refusal.recorded'));
  const v1 = p.decideAndFold(p.propose({ command: 'pwd' }), V1, true);
  assert.equal((v1.find((s) => s.type === 'decision.recorded')?.body as BodyOf<'decision.recorded'>).outcome, 'allow');
});

test('under rules 2 an approval of a revoked key\'s proposal becomes a deny with KEY_REVOKED', () => {
  const p = new Partition();
  const c = leftToHuman(p);
  p.add('human.response', { agentId: AGENT, proposal: c.proposal, request: c.request, answer: 'approve', assurance: 'self_signed', platformIdentity: null }, 'approver:dana');
  const final = p.ask({ type: 'settle', proposal: c.proposal, rules: V2, keyRevoked: true, authorityIndex: 3 });
  const d = final[0]?.body as BodyOf<'decision.recorded'>;
  assert.deepEqual([d.outcome, d.code], ['deny', 'KEY_REVOKED']);
});

test('tier-4 confirmations need two distinct approvers; a repeated approver is a duplicate', () => {
  const p = new Partition();
  const proposal = p.propose(CRITICAL);
  const said = p.decideAndFold(proposal);
  const decision = said.find((s) => s.type === 'decision.recorded')?.body as BodyOf<'decision.recorded'>;
  if (decision.outcome !== 'verify_first') return assert.equal(decision.outcome, 'block');
  const open = p.life.confirmations.get(proposal.statementHash);
  assert.equal(open?.request?.approvalsRequired, 2);
});

test('countResponse: late, closed and platform answers never count', () => {
  const request = { proposal: 'p', request: 'r', agentId: AGENT, partition: 1, tier: 3, deadlineMs: 1_000, approvalsRequired: 1, status: 'pending' as const, approvedBy: [] };
  const response = { proposal: 'p', request: 'r', agentId: AGENT, partition: 1, answer: 'approve' as const, assurance: 'self_signed' as const, author: 'approver:dana', sequencedAtMs: 500 };
  assert.equal(countResponse(request, response), 'approved');
  assert.equal(countResponse(request, { ...response, sequencedAtMs: 1_001 }), 'late');
  assert.equal(countResponse({ ...request, status: 'approved' }, response), 'closed');
  assert.equal(countResponse({ ...request, tier: 4 }, { ...response, assurance: 'platform' }), 'not_enough_assurance');
  assert.equal(countResponse(request, { ...response, partition: 2 }), 'misrouted');
  assert.equal(countResponse(undefined, response), 'misrouted');
  assert.equal(countResponse({ ...request, approvedBy: ['approver:dana'], approvalsRequired: 2 }, response), 'duplicate');
});

test('a final decision that does not follow (an allow while pending) closes nothing: the timeout and the gate\'s own deny still come', () => {
  const p = new Partition();
  const c = leftToHuman(p);
  p.add('decision.recorded', { agentId: AGENT, proposal: c.proposal, outcome: 'allow', code: null, tier: c.tier as 0, risk: 0, authorityIndex: 3, grantId: null, grantEntry: null }, 'service:timer');
  const open = p.life.confirmations.get(c.proposal);
  assert.equal(open?.status, 'pending');
  const tick = p.ask({ type: 'tick', nowMs: (open?.request?.deadlineMs ?? 0) + 1 });
  assert.deepEqual(typesOf(tick), ['timeout.recorded', 'escalation.raised']);
  for (const s of tick) p.add(s.type, s.body as never, 'service:timer');
  const final = p.ask({ type: 'settle', proposal: c.proposal, rules: V2, keyRevoked: false, authorityIndex: 3 });
  assert.deepEqual(final.map((s) => [s.type, (s.body as { code?: string }).code]), [['decision.recorded', 'TIMEOUT'], ['refusal.recorded', 'TIMEOUT']]);
});

test('a request the sequencer rejected is requested again from the state, once, with a deadline from then; never for a request on the log', () => {
  const p = new Partition();
  const proposal = p.propose(NEEDS_HUMAN);
  const signedAt = p.clock;
  const first = p.decideNow(proposal).filter((s) => s.type !== 'screening.verdict');
  assert.deepEqual(typesOf(first), ['classification.recorded', 'decision.recorded', 'confirmation.requested']);
  // The decision is sequenced, its request is not (an intake.rejected took its place).
  for (const s of first.slice(0, 2)) p.add(s.type, s.body as never);
  const open = p.life.confirmations.get(proposal.statementHash);
  assert.equal(open?.request, null);
  const againAt = p.clock + 5_000;
  const again = decide({ type: 'request', proposal: proposal.statementHash, nowMs: againAt, confirmation: DEFAULT_CONFIRMATION }, p.life).groups;
  assert.deepEqual(again.map((g) => g.marks), [[`request:${proposal.statementHash}`]]);
  const request = again[0]?.statements[0]?.body as BodyOf<'confirmation.requested'>;
  const original = first[2]?.body as BodyOf<'confirmation.requested'>;
  assert.deepEqual({ ...request, deadline: '' }, { ...original, deadline: '' }, 'the same request but for its deadline');
  assert.equal(Date.parse(request.deadline) - Date.parse(original.deadline), againAt - signedAt);
  p.add('confirmation.requested', request);
  assert.deepEqual(decide({ type: 'request', proposal: proposal.statementHash, nowMs: p.clock, confirmation: DEFAULT_CONFIRMATION }, p.life).groups, [], 'a request on the log is not requested again');
  assert.deepEqual(decide({ type: 'request', proposal: 'f'.repeat(64), nowMs: p.clock, confirmation: DEFAULT_CONFIRMATION }, p.life).groups, [], 'nor one of no open confirmation');
});
