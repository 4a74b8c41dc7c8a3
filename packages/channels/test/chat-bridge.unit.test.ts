import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { BODY_SCHEMAS, canonicalJson, createStatement, nodeEd25519, verifyEnvelopeSignatures } from '@agent-ledger/core';
import { ChatBridge } from '../src/chat-bridge.js';
import { requireSelfSignedAbove } from '../src/assurance-policy.js';
import { pendingApprovalFrom, describePendingApproval } from '../src/pending-approval.js';
import { makePending, makeSigner } from './support/fixtures.js';

const code = (expected: ReasonCode) => (e: unknown) => e instanceof LedgerError && e.code === expected;

test('a chat answer becomes a human.response signed by the bridge, with platform assurance and identity', () => {
  const bridge = makeSigner('service:chat-bridge');
  const { pending } = makePending();
  const envelope = new ChatBridge({ signer: bridge }).respond(pending, { channel: 'telegram', request: pending.request, answer: 'approve', platformIdentity: 'telegram:1001' });
  assert.equal(envelope.statement.type, 'human.response');
  assert.deepEqual(envelope.statement.author, { principal: 'service:chat-bridge', keyId: bridge.keyId });
  assert.deepEqual(envelope.statement.body, {
    agentId: pending.agentId,
    proposal: pending.proposal,
    request: pending.request,
    answer: 'approve',
    assurance: 'platform',
    platformIdentity: 'telegram:1001',
  });
  assert.ok(BODY_SCHEMAS['human.response'].safeParse(envelope.statement.body).success);
  assert.deepEqual(verifyEnvelopeSignatures(envelope, canonicalJson(envelope.statement), nodeEd25519), [bridge.keyId]);
  // Tampering with the identity after signing breaks the signature.
  const forged = { ...envelope, statement: { ...envelope.statement, body: { ...envelope.statement.body, platformIdentity: 'telegram:9' } } };
  assert.throws(() => verifyEnvelopeSignatures(forged, canonicalJson(forged.statement), nodeEd25519), code(ReasonCode.INVALID_SIGNATURE));
});

test('the bridge refuses answers for another request, identities of another channel, late answers and invalid identities', () => {
  const bridge = new ChatBridge({ signer: makeSigner('service:chat-bridge') });
  const { pending } = makePending();
  const other = makePending().pending;
  assert.throws(() => bridge.respond(pending, { channel: 'discord', request: other.request, answer: 'approve', platformIdentity: 'discord:1' }), code(ReasonCode.INTEGRITY_FAILURE));
  assert.throws(() => bridge.respond(pending, { channel: 'discord', request: pending.request, answer: 'approve', platformIdentity: 'telegram:1' }), code(ReasonCode.INTEGRITY_FAILURE));
  assert.throws(() => bridge.respond(pending, { channel: 'discord', request: pending.request, answer: 'approve', platformIdentity: `discord:${'9'.repeat(300)}` }), code(ReasonCode.SCHEMA_INVALID));
  const late = new ChatBridge({ signer: makeSigner('service:chat-bridge'), now: () => new Date(Date.parse(pending.deadline) + 1) });
  assert.throws(() => late.respond(pending, { channel: 'discord', request: pending.request, answer: 'deny', platformIdentity: 'discord:1' }), code(ReasonCode.STALE_APPROVAL));
});

test('requireSelfSignedAbove: by default platform answers count up to tier 2, self-signed always', () => {
  const policy = requireSelfSignedAbove();
  assert.equal(policy.maxPlatformTier, 2);
  assert.deepEqual([0, 1, 2, 3, 4].map((t) => policy.mayCount(t, 'platform')), [true, true, true, false, false]);
  assert.deepEqual([0, 1, 2, 3, 4].map((t) => policy.mayCount(t, 'self_signed')), [true, true, true, true, true]);
  assert.equal(requireSelfSignedAbove(4).mayCount(4, 'platform'), true);
  assert.equal(requireSelfSignedAbove(-1).mayCount(0, 'platform'), false);
  assert.equal(policy.mayCount(2.5, 'platform'), false);
  assert.equal(policy.mayCount(1, 'bogus' as 'platform'), false);
  for (const bad of [5, 1.5, Number.NaN, -2]) assert.throws(() => requireSelfSignedAbove(bad), code(ReasonCode.SCHEMA_INVALID));
});

test('pendingApprovalFrom refuses a request bound to another proposal or agent', () => {
  const a = makePending();
  const b = makePending();
  assert.throws(() => pendingApprovalFrom(a.request, b.proposal), code(ReasonCode.INTEGRITY_FAILURE));
  const otherAgent = createStatement('confirmation.requested', { ...a.request.body, agentId: 'agent:other' }, a.request.author);
  assert.throws(() => pendingApprovalFrom(otherAgent, a.proposal), code(ReasonCode.INTEGRITY_FAILURE));
  const text = describePendingApproval(a.pending);
  assert.ok(text.includes('recipient: vendor:acme-gmbh'));
  const huge = makePending();
  const big = { ...huge.pending, operation: { ...huge.pending.operation, args: { blob: 'x'.repeat(5000) } } };
  assert.match(describePendingApproval(big), /characters, cut; see the proposal/);
});
