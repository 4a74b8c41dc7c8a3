import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCheckpoint, fromHex, nodeEd25519, sequencerNoteSigner, sha256, signNote, signStatement, createStatement, toHex } from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import { verifyBundle, type VerificationReport, type VerifyOptions } from '@agent-ledger/verifier';
import { TestLedger } from './fixtures.js';

// Each rule of SPEC.md section 9, attacked on its own: a ledger that is valid
// but for one statement, which must fail at that statement with its code.

async function verify(ledger: TestLedger, options: VerifyOptions = {}): Promise<VerificationReport> {
  return verifyBundle([`${ledger.lines().join('\n')}\n`], ledger.trustRoot, { workers: 0, ...options });
}

function assertFailsAt(report: VerificationReport, code: string, partition: number, index: number): void {
  assert.equal(report.ok, false, 'expected a failure');
  assert.deepEqual(
    { code: report.failure?.code, partition: report.failure?.partition, index: report.failure?.index },
    { code, partition, index },
    report.failure?.message,
  );
}

test('a small hand-built ledger verifies', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  ledger.say('classification.recorded', { agentId: ledger.agent.principal, proposal: p.hash, tier: 3, risk: 3.5, rules: ['context.financial'] }, ledger.gate);
  ledger.sealAll();
  const report = await verify(ledger);
  assert.equal(report.failure, null);
  assert.equal(report.entries, 3);
});

test('a genesis with fewer root signatures than the threshold fails at 0/0', async () => {
  const ledger = new TestLedger({ genesis: false });
  ledger.say('genesis', { origin: ledger.origin, eventPartitions: 2, freshnessMs: 300_000, rootKeys: ledger.trustRoot.rootKeys, rootThreshold: 2, keys: [{ keyId: ledger.admin.keyId, principal: 'admin:alice', roles: ['admin'] }, { keyId: ledger.sequencer.keyId, principal: 'sequencer:main', roles: ['sequencer'] }] }, ledger.roots[0]!);
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'INVALID_SIGNATURE', 0, 0);
});

test('a genesis signed by a key outside the trust root fails at 0/0', async () => {
  const ledger = new TestLedger({ genesis: false });
  const impostor = newSigner('root:impostor');
  ledger.say('genesis', { origin: ledger.origin, eventPartitions: 2, freshnessMs: 300_000, rootKeys: ledger.trustRoot.rootKeys, rootThreshold: 2, keys: [{ keyId: ledger.sequencer.keyId, principal: 'sequencer:main', roles: ['sequencer'] }] }, ledger.roots[0]!, { extraSigners: [impostor] });
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'KEY_UNKNOWN', 0, 0);
});

test('a statement by an unregistered key fails with KEY_UNKNOWN at its index', async () => {
  const ledger = new TestLedger();
  ledger.propose();
  const stranger = newSigner('agent:billing-bot');
  const bad = ledger.propose({}, stranger);
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'KEY_UNKNOWN', bad.entry.partition, bad.entry.index);
});

test('a key counts only between its registration and its revocation', async () => {
  const ledger = new TestLedger();
  const late = newSigner('agent:late-bot');
  // Signed by a key not yet registered at its authority index: refused.
  const early = ledger.propose({}, late);
  ledger.say('key.registered', { keyId: late.keyId, principal: late.principal, roles: ['agent'] }, ledger.admin);
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'KEY_UNKNOWN', early.entry.partition, early.entry.index);

  const ledger2 = new TestLedger();
  const ok = ledger2.propose();
  ledger2.say('key.revoked', { keyId: ledger2.agent.keyId, reason: 'compromised' }, ledger2.admin);
  const after = ledger2.propose();
  ledger2.sealAll();
  const report = await verify(ledger2);
  assertFailsAt(report, 'KEY_REVOKED', after.entry.partition, after.entry.index);
  assert.ok(ok.entry.index < after.entry.index);
});

test('a key without the role, or speaking for another principal, fails with KEY_ROLE', async () => {
  const ledger = new TestLedger();
  const p = ledger.propose();
  const wrongRole = ledger.say('decision.recorded', { agentId: ledger.agent.principal, proposal: p.hash, outcome: 'allow', code: null, tier: 0, risk: 0, authorityIndex: 1, grantId: null, grantEntry: null }, ledger.agent);
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'KEY_ROLE', wrongRole.entry.partition, wrongRole.entry.index);

  const ledger2 = new TestLedger();
  const other = newSigner('agent:other-bot');
  ledger2.say('key.registered', { keyId: other.keyId, principal: other.principal, roles: ['agent'] }, ledger2.admin);
  const forOther = ledger2.propose({ agentId: ledger2.agent.principal }, { ...other, principal: other.principal });
  ledger2.sealAll();
  assertFailsAt(await verify(ledger2), 'KEY_ROLE', forOther.entry.partition, forOther.entry.index);
});

test('a replayed statement and a stale statement fail with REPLAY', async () => {
  const ledger = new TestLedger();
  const statement = createStatement('proposal.submitted', { agentId: ledger.agent.principal, tool: 't', actionType: 'a', targetResource: 'r', recipient: 'x', scope: 's', args: {}, query: '', labels: [], channel: 'api', context: {} }, { principal: ledger.agent.principal, keyId: ledger.agent.keyId }, new Date(ledger.clock));
  const envelope = signStatement(statement, [ledger.agent], nodeEd25519);
  ledger.append(envelope);
  const replay = ledger.append(envelope);
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'REPLAY', replay.partition, replay.index);

  const ledger2 = new TestLedger({ freshnessMs: 60_000 });
  const stale = ledger2.say('proposal.submitted', { agentId: ledger2.agent.principal, tool: 't', actionType: 'a', targetResource: 'r', recipient: 'x', scope: 's', args: {}, query: '', labels: [], channel: 'api', context: {} }, ledger2.agent, { issuedAtOffsetMs: -61_000 });
  ledger2.sealAll();
  assertFailsAt(await verify(ledger2), 'REPLAY', stale.entry.partition, stale.entry.index);
});

test('a statement in the wrong partition, or citing an authority index that does not exist, breaks integrity', async () => {
  const ledger = new TestLedger({ eventPartitions: 3 });
  const p = ledger.propose();
  const home = p.entry.partition;
  const wrong = ledger.say('classification.recorded', { agentId: ledger.agent.principal, proposal: p.hash, tier: 0, risk: 0, rules: [] }, ledger.gate, { partition: home === 1 ? 2 : 1 });
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'INTEGRITY_FAILURE', wrong.entry.partition, wrong.entry.index);

  const ledger2 = new TestLedger();
  const future = ledger2.say('classification.recorded', { agentId: ledger2.agent.principal, proposal: p.hash, tier: 0, risk: 0, rules: [] }, ledger2.gate, { authorityIndex: 99 });
  ledger2.sealAll();
  assertFailsAt(await verify(ledger2), 'INTEGRITY_FAILURE', future.entry.partition, future.entry.index);
});

test('registry rules: weak keys, agent keys with admin power, double registration', async () => {
  // The identity point (small order) as a public key.
  const identity = `01${'00'.repeat(31)}`;
  const ledger = new TestLedger();
  const weak = ledger.say('key.registered', { keyId: identity, principal: 'agent:weak', roles: ['agent'] }, ledger.admin);
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'WEAK_KEY', 0, weak.entry.index);

  const ledger2 = new TestLedger();
  const k = newSigner('agent:sneaky');
  const both = ledger2.say('key.registered', { keyId: k.keyId, principal: k.principal, roles: ['agent', 'admin'] }, ledger2.admin);
  ledger2.sealAll();
  assertFailsAt(await verify(ledger2), 'SEPARATION_OF_DUTIES', 0, both.entry.index);

  const ledger3 = new TestLedger();
  const again = ledger3.say('key.registered', { keyId: ledger3.agent.keyId, principal: 'agent:billing-bot', roles: ['agent'] }, ledger3.admin);
  ledger3.sealAll();
  assertFailsAt(await verify(ledger3), 'POLICY_VIOLATION', 0, again.entry.index);
});

test('a statement carrying a second signature fails', async () => {
  const ledger = new TestLedger();
  const bad = ledger.say('proposal.submitted', { agentId: ledger.agent.principal, tool: 't', actionType: 'a', targetResource: 'r', recipient: 'x', scope: 's', args: {}, query: '', labels: [], channel: 'api', context: {} }, ledger.agent, { extraSigners: [ledger.admin] });
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'INVALID_SIGNATURE', bad.entry.partition, bad.entry.index);
});

test('checkpoints: uncovered tails, foreign signers, and the known checkpoint', async () => {
  const ledger = new TestLedger();
  ledger.sealAll();
  const p1 = ledger.propose();
  const p2 = ledger.propose();
  // p1 and p2 are after the last checkpoint of their partition.
  assertFailsAt(await verify(ledger), 'UNCOVERED_TAIL', p1.entry.partition, p1.entry.index);
  assert.equal((await verify(ledger, { allowUncoveredTail: true })).ok, true);
  const known = ledger.checkpoint(p2.entry.partition);
  assert.equal((await verify(ledger, { knownCheckpoint: known })).ok, true);

  // A checkpoint the same sequencer key signed over a different history: a fork.
  const forkRoot = sha256('another history');
  const fork = signNote(formatCheckpoint({ origin: `${ledger.origin}/${p2.entry.partition}`, size: p2.entry.index + 1, rootHash: forkRoot, extensions: [] }), [sequencerNoteSigner(ledger.origin, ledger.sequencer, nodeEd25519)]);
  assertFailsAt(await verify(ledger, { knownCheckpoint: fork }), 'INCONSISTENT_HISTORY', p2.entry.partition, p2.entry.index);
  // A known checkpoint larger than the bundle: the bundle rolled history back.
  const ahead = signNote(formatCheckpoint({ origin: `${ledger.origin}/${p2.entry.partition}`, size: p2.entry.index + 5, rootHash: forkRoot, extensions: [] }), [sequencerNoteSigner(ledger.origin, ledger.sequencer, nodeEd25519)]);
  const rolledBack = await verify(ledger, { knownCheckpoint: ahead });
  assert.equal(rolledBack.failure?.code, 'INCONSISTENT_HISTORY');

  // A checkpoint signed by a key that is not a sequencer key.
  const ledger2 = new TestLedger();
  ledger2.checkpoint(0);
  const q = ledger2.propose();
  const lines = ledger2.lines();
  const forged = signNote(formatCheckpoint({ origin: `${ledger2.origin}/${q.entry.partition}`, size: 1, rootHash: fromHex(q.entry.hash, 32), extensions: [] }), [sequencerNoteSigner(ledger2.origin, ledger2.admin, nodeEd25519)]);
  const at = lines.findIndex((l) => l.includes(q.entry.hash) && l.startsWith('{"kind":"entry"'));
  lines.splice(at + 1, 0, JSON.stringify({ kind: 'checkpoint', partition: q.entry.partition, note: forged }));
  const report = await verifyBundle([`${lines.join('\n')}\n`], ledger2.trustRoot, { workers: 0 });
  assertFailsAt(report, 'CHECKPOINT_INVALID', q.entry.partition, q.entry.index);
  assert.equal(toHex(fromHex(q.entry.hash, 32)), q.entry.hash);
});

test('intake rejections signed by the sequencer are part of a valid ledger', async () => {
  const ledger = new TestLedger();
  ledger.say('intake.rejected', { agentId: ledger.agent.principal, code: 'INVALID_SIGNATURE', detail: 'bad signature at intake', input: toHex(sha256('x')) }, ledger.sequencer);
  ledger.sealAll();
  assert.equal((await verify(ledger)).ok, true);
});

test('an intake rejection on the authority stream advances the authority index like any entry', async () => {
  const ledger = new TestLedger();
  ledger.say('intake.rejected', { agentId: 'unknown', code: 'SCHEMA_INVALID', detail: 'not an envelope', input: toHex(sha256('junk')) }, ledger.sequencer, { partition: 0 });
  ledger.say('key.registered', { keyId: newSigner('agent:x').keyId, principal: 'agent:x', roles: ['agent'] }, ledger.admin);
  ledger.propose();
  ledger.sealAll();
  const report = await verify(ledger);
  assert.equal(report.failure, null);
  assert.equal(report.partitions[0]?.size, 3);
});

test('grant writes: ids are unique, co-signatures name the exact proposal bytes', async () => {
  const grant = (ledger: TestLedger, grantId: string) => ({
    grantId, agentId: ledger.agent.principal, actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme-corp', scope: 'invoice:2026-11',
    notBefore: '2026-11-01T00:00:00.000Z', expiresAt: '2026-12-01T00:00:00.000Z', effect: 'allow' as const, tier: 3, parentGrantId: null,
  });
  const ledger = new TestLedger();
  const proposed = ledger.say('grant.proposed', grant(ledger, 'g1'), ledger.admin);
  ledger.say('grant.cosigned', { grantId: 'g1', grant: proposed.hash }, ledger.admin2);
  const dup = ledger.say('grant.proposed', grant(ledger, 'g1'), ledger.admin);
  ledger.sealAll();
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', 0, dup.entry.index);

  const ledger2 = new TestLedger();
  ledger2.say('grant.proposed', grant(ledger2, 'g2'), ledger2.admin);
  const otherBytes = ledger2.say('grant.cosigned', { grantId: 'g2', grant: toHex(sha256('other bytes')) }, ledger2.admin2);
  ledger2.sealAll();
  assertFailsAt(await verify(ledger2), 'GRANT_MISMATCH', 0, otherBytes.entry.index);

  const ledger3 = new TestLedger();
  const unknown = ledger3.say('grant.revoked', { grantId: 'nope', reason: 'x' }, ledger3.admin);
  ledger3.sealAll();
  assertFailsAt(await verify(ledger3), 'GRANT_MISSING', 0, unknown.entry.index);
});
