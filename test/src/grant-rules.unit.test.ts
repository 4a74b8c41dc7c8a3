import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toHex, sha256, type BodyOf, type GrantPolicy, type Signer } from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import { TestLedger } from './fixtures.js';
import { assertFailsAt, assertValid, gateDecides, iso, recordDecision, verify, type Posted } from './replay-support.js';

// The write-time grant rules (SPEC.md section 10), attacked one at a time on
// an otherwise valid ledger: every statement is signed by a registered key
// holding the right role, so only the rule under attack can catch it, and
// verify-chain must fail at exactly that statement with the rule's code.

const DAY = 86_400_000;
type GrantBody = BodyOf<'grant.proposed'>;

/** A ledger whose genesis sets `policy` and registers a third admin (carol). */
function ledgerWith(policy?: GrantPolicy): { ledger: TestLedger; carol: Signer } {
  const ledger = new TestLedger({ genesis: false });
  const carol = newSigner('admin:carol');
  ledger.say(
    'genesis',
    {
      origin: ledger.origin,
      eventPartitions: ledger.eventPartitions,
      freshnessMs: 300_000,
      rootKeys: ledger.trustRoot.rootKeys,
      rootThreshold: 2,
      keys: [
        { keyId: ledger.admin.keyId, principal: ledger.admin.principal, roles: ['admin'] },
        { keyId: ledger.admin2.keyId, principal: ledger.admin2.principal, roles: ['admin'] },
        { keyId: carol.keyId, principal: carol.principal, roles: ['admin'] },
        { keyId: ledger.sequencer.keyId, principal: ledger.sequencer.principal, roles: ['sequencer'] },
        { keyId: ledger.gate.keyId, principal: ledger.gate.principal, roles: ['service'] },
        { keyId: ledger.agent.keyId, principal: ledger.agent.principal, roles: ['agent'] },
        { keyId: ledger.approver.keyId, principal: ledger.approver.principal, roles: ['approver'] },
      ],
      ...(policy === undefined ? {} : { grantPolicy: { ...policy, cosigners: [...policy.cosigners], maxLifetimeMs: [...policy.maxLifetimeMs] } }),
    },
    ledger.roots[0] as Signer,
    { extraSigners: [ledger.roots[1] as Signer] },
  );
  return { ledger, carol };
}

/** The fixture agent's payment, as a grant body valid for a day. */
function grant(ledger: TestLedger, grantId: string, overrides: Partial<GrantBody> = {}): GrantBody {
  return {
    grantId,
    agentId: ledger.agent.principal,
    actionType: 'payment.send',
    targetResource: 'payments/vendors/acme',
    recipient: 'acme-corp',
    scope: 'invoice:2026-11',
    notBefore: iso(ledger.clock - 60_000),
    expiresAt: iso(ledger.clock + DAY),
    effect: 'allow',
    tier: 3,
    parentGrantId: null,
    ...overrides,
  };
}

function propose(ledger: TestLedger, body: GrantBody, by: Signer = ledger.admin): Posted {
  return ledger.say('grant.proposed', body, by);
}

function cosign(ledger: TestLedger, grantId: string, hash: string, by: Signer = ledger.admin2): Posted {
  return ledger.say('grant.cosigned', { grantId, grant: hash }, by);
}

/** The payment the fixture grants cover. */
function pay(ledger: TestLedger, overrides: Partial<BodyOf<'proposal.submitted'>> = {}): Posted {
  return ledger.propose({ tool: 'payments', actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme-corp', scope: 'invoice:2026-11', args: { amountUsd: 1200 }, ...overrides });
}

/** A second key for an existing principal, registered by alice. */
function secondKey(ledger: TestLedger, principal: string): Signer {
  const key = newSigner(principal);
  ledger.say('key.registered', { keyId: key.keyId, principal, roles: ['admin'] }, ledger.admin);
  return key;
}

const TIER3_NEEDS_TWO: GrantPolicy = { cosigners: [1, 1, 1, 2, 2], maxLifetimeMs: [365 * DAY, 180 * DAY, 90 * DAY, 30 * DAY, 7 * DAY], cosignWindowMs: DAY };

test('a self-grant: an admin proposing a grant for its own principal fails with SEPARATION_OF_DUTIES', async () => {
  const { ledger } = ledgerWith();
  const self = propose(ledger, grant(ledger, 'g-self', { agentId: ledger.admin.principal }));
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', self.entry);
});

test('the proposer co-signing its own proposal, even with a second key, fails with SEPARATION_OF_DUTIES', async () => {
  const { ledger } = ledgerWith();
  const alice2 = secondKey(ledger, ledger.admin.principal);
  const p = propose(ledger, grant(ledger, 'g1'));
  const own = cosign(ledger, 'g1', p.hash, alice2);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', own.entry);
});

test('one principal with two keys counts once: a second co-signature by bob fails; carol makes the tier-3 grant count (k = 2)', async () => {
  const { ledger, carol } = ledgerWith(TIER3_NEEDS_TWO);
  const bob2 = secondKey(ledger, ledger.admin2.principal);
  const p = propose(ledger, grant(ledger, 'g1'));
  cosign(ledger, 'g1', p.hash);
  const twice = cosign(ledger, 'g1', p.hash, bob2);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', twice.entry);

  // Without the second key: one co-signature of two leaves the grant inactive.
  const { ledger: honest, carol: carol2 } = ledgerWith(TIER3_NEEDS_TWO);
  const q = propose(honest, grant(honest, 'g1'));
  cosign(honest, 'g1', q.hash);
  const early = pay(honest);
  assert.equal(gateDecides(honest, early).code, 'GRANT_MISSING', 'one co-signature of two: not in force');
  const forged = recordDecision(honest, early, { outcome: 'allow', code: null, grantId: 'g1', grantEntry: q.entry.index });
  cosign(honest, 'g1', q.hash, carol2);
  assertFailsAt(await verify(honest), 'POLICY_VIOLATION', forged.decision.entry);
  assert.ok(carol);

  const { ledger: done, carol: carol3 } = ledgerWith(TIER3_NEEDS_TWO);
  const r = propose(done, grant(done, 'g1'));
  cosign(done, 'g1', r.hash);
  cosign(done, 'g1', r.hash, carol3);
  const later = pay(done);
  const decided = recordDecision(done, later);
  assert.deepEqual([decided.expected.outcome, decided.expected.grantId], ['allow', 'g1']);
  assertValid(await verify(done));
});

test('a co-signature over different bytes (another hash, or another grant\'s proposal) fails with GRANT_MISMATCH', async () => {
  const { ledger } = ledgerWith();
  propose(ledger, grant(ledger, 'g1'));
  const other = cosign(ledger, 'g1', toHex(sha256('other bytes')));
  assertFailsAt(await verify(ledger), 'GRANT_MISMATCH', other.entry);

  const { ledger: l2 } = ledgerWith();
  propose(l2, grant(l2, 'g1'));
  const p2 = propose(l2, grant(l2, 'g2', { scope: 'invoice:2026-12' }));
  const crossed = cosign(l2, 'g1', p2.hash);
  assertFailsAt(await verify(l2), 'GRANT_MISMATCH', crossed.entry);
});

test('a co-signature by a revoked key fails with KEY_REVOKED', async () => {
  const { ledger, carol } = ledgerWith();
  const p = propose(ledger, grant(ledger, 'g1'));
  ledger.say('key.revoked', { keyId: ledger.admin2.keyId, reason: 'laptop stolen' }, carol);
  const revoked = cosign(ledger, 'g1', p.hash);
  assertFailsAt(await verify(ledger), 'KEY_REVOKED', revoked.entry);
});

test('a co-signature sequenced after the proposal\'s co-signing deadline fails with STALE_APPROVAL', async () => {
  const { ledger } = ledgerWith();
  const p = propose(ledger, grant(ledger, 'g1', { expiresAt: iso(ledger.clock + 10 * DAY) }));
  ledger.clock += DAY + 1000;
  const late = cosign(ledger, 'g1', p.hash);
  assertFailsAt(await verify(ledger), 'STALE_APPROVAL', late.entry);
});

test('an allow grant longer than its tier\'s maximum lifetime fails; a block grant may outlive it', async () => {
  const { ledger } = ledgerWith();
  propose(ledger, grant(ledger, 'g-block', { effect: 'block', expiresAt: iso(ledger.clock + 365 * DAY) }));
  const long = propose(ledger, grant(ledger, 'g-long', { expiresAt: iso(ledger.clock + 31 * DAY) }));
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', long.entry);
});

test('delegation: a subset of the parent is derived and authorises; widening scope, resource, recipient, tier, agent or window fails with DELEGATION_WIDENS', async () => {
  const parentBody = (l: TestLedger): GrantBody => grant(l, 'parent', { targetResource: 'payments/vendors/*', scope: 'invoice:*', recipient: '*', expiresAt: iso(l.clock + 5 * DAY) });
  const child = (l: TestLedger, overrides: Partial<GrantBody>): GrantBody => grant(l, 'child', { parentGrantId: 'parent', ...overrides });

  const { ledger } = ledgerWith();
  const p = propose(ledger, parentBody(ledger));
  cosign(ledger, 'parent', p.hash);
  const c = propose(ledger, child(ledger, {}));
  cosign(ledger, 'child', c.hash);
  const decided = recordDecision(ledger, pay(ledger));
  assert.deepEqual([decided.expected.outcome, decided.expected.grantId], ['allow', 'child'], 'the exact resource wins over the covering pattern');
  const other = recordDecision(ledger, pay(ledger, { targetResource: 'payments/vendors/globex', recipient: 'globex', scope: 'invoice:2026-12' }));
  assert.deepEqual([other.expected.outcome, other.expected.grantId], ['allow', 'parent'], 'the subtree pattern covers another vendor');
  assertValid(await verify(ledger));

  const widenings: [string, (l: TestLedger) => Partial<GrantBody>][] = [
    ['scope', () => ({ scope: '*' })],
    ['resource', () => ({ targetResource: 'payments/*' })],
    ['resource outside the subtree', () => ({ targetResource: 'payroll/vendors/acme' })],
    ['tier', () => ({ tier: 4 })],
    ['agent', () => ({ agentId: 'agent:other-bot' })],
    ['window', (l) => ({ expiresAt: iso(l.clock + 6 * DAY) })],
    ['action', () => ({ actionType: 'payment.refund' })],
  ];
  for (const [what, overrides] of widenings) {
    const { ledger: l } = ledgerWith();
    const pp = propose(l, parentBody(l));
    cosign(l, 'parent', pp.hash);
    const wide = propose(l, child(l, overrides(l)));
    assertFailsAt(await verify(l), 'DELEGATION_WIDENS', wide.entry);
    assert.ok(what);
  }

  const { ledger: orphan } = ledgerWith();
  const pp = propose(orphan, parentBody(orphan));
  const early = propose(orphan, child(orphan, {}));
  assertFailsAt(await verify(orphan), 'GRANT_MISSING', early.entry);
  assert.ok(pp);
});

test('a grant used after its revocation, or after its parent\'s, fails at the decision; the honest decision needs a human', async () => {
  const { ledger } = ledgerWith();
  const p = propose(ledger, grant(ledger, 'parent', { targetResource: 'payments/vendors/*', expiresAt: iso(ledger.clock + 5 * DAY) }));
  cosign(ledger, 'parent', p.hash);
  const c = propose(ledger, grant(ledger, 'child', { parentGrantId: 'parent' }));
  cosign(ledger, 'child', c.hash);
  assert.equal(recordDecision(ledger, pay(ledger)).expected.grantId, 'child');
  ledger.say('grant.revoked', { grantId: 'parent', reason: 'vendor offboarded' }, ledger.admin2);
  const honest = recordDecision(ledger, pay(ledger));
  assert.deepEqual([honest.expected.outcome, honest.expected.code], ['verify_first', 'GRANT_MISSING'], 'the derived grant fell with its parent');
  assertValid(await verify(ledger));

  const forged = recordDecision(ledger, pay(ledger), { outcome: 'allow', code: null, grantId: 'child', grantEntry: c.entry.index });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', forged.decision.entry);

  // A proposal revoked before it was co-signed cannot be brought to life afterwards.
  const { ledger: l2 } = ledgerWith();
  const q = propose(l2, grant(l2, 'g1'));
  l2.say('grant.revoked', { grantId: 'g1', reason: 'written by mistake' }, l2.admin);
  const after = cosign(l2, 'g1', q.hash);
  assertFailsAt(await verify(l2), 'POLICY_VIOLATION', after.entry);
});

test('a re-authorisation without a co-signature extends nothing: an allow on it fails; co-signed, it authorises', async () => {
  const { ledger, carol } = ledgerWith();
  const p = propose(ledger, grant(ledger, 'g1', { expiresAt: iso(ledger.clock + 200) }));
  cosign(ledger, 'g1', p.hash);
  const reauth = ledger.say('grant.reauthorized', { grantId: 'g1', grant: p.hash, expiresAt: iso(ledger.clock + 20 * DAY) }, ledger.admin2);
  ledger.clock += 1000;
  const expired = pay(ledger);
  assert.equal(gateDecides(ledger, expired).code, 'GRANT_EXPIRED');
  const forged = recordDecision(ledger, expired, { outcome: 'allow', code: null, grantId: 'g1', grantEntry: p.entry.index });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', forged.decision.entry);

  const { ledger: l2, carol: carol2 } = ledgerWith();
  const q = propose(l2, grant(l2, 'g1', { expiresAt: iso(l2.clock + 200) }));
  cosign(l2, 'g1', q.hash);
  const r = l2.say('grant.reauthorized', { grantId: 'g1', grant: q.hash, expiresAt: iso(l2.clock + 20 * DAY) }, l2.admin2);
  const own = cosign(l2, 'g1', r.hash, l2.admin2);
  assertFailsAt(await verify(l2), 'SEPARATION_OF_DUTIES', own.entry);

  const { ledger: l3, carol: carol3 } = ledgerWith();
  const s = propose(l3, grant(l3, 'g1', { expiresAt: iso(l3.clock + 200) }));
  cosign(l3, 'g1', s.hash);
  const t = l3.say('grant.reauthorized', { grantId: 'g1', grant: s.hash, expiresAt: iso(l3.clock + 20 * DAY) }, l3.admin2);
  cosign(l3, 'g1', t.hash, carol3);
  l3.clock += 1000;
  const renewed = recordDecision(l3, pay(l3));
  assert.deepEqual([renewed.expected.outcome, renewed.expected.grantId], ['allow', 'g1']);
  assertValid(await verify(l3));
  assert.ok(carol && carol2 && reauth);
});

test('conflicting grants: block overrides allow whatever their order; the same grant id twice: the first in ledger order stands', async () => {
  const { ledger } = ledgerWith();
  const allow = propose(ledger, grant(ledger, 'g-allow'));
  cosign(ledger, 'g-allow', allow.hash);
  const block = propose(ledger, grant(ledger, 'g-block', { effect: 'block' }));
  cosign(ledger, 'g-block', block.hash);
  const honest = recordDecision(ledger, pay(ledger));
  assert.deepEqual([honest.expected.outcome, honest.expected.code, honest.expected.grantId], ['block', 'GRANT_BLOCKED', 'g-block']);
  assertValid(await verify(ledger));
  const forged = recordDecision(ledger, pay(ledger), { outcome: 'allow', code: null, grantId: 'g-allow', grantEntry: allow.entry.index });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', forged.decision.entry);

  const { ledger: l2 } = ledgerWith();
  propose(l2, grant(l2, 'g1'));
  const second = propose(l2, grant(l2, 'g1', { recipient: 'mallory-ltd' }), l2.admin2);
  assertFailsAt(await verify(l2), 'POLICY_VIOLATION', second.entry);
});

test('an agent principal never holds the admin or approver role, on any of its keys', async () => {
  const { ledger } = ledgerWith();
  const sneaky = newSigner(ledger.agent.principal);
  const bad = ledger.say('key.registered', { keyId: sneaky.keyId, principal: ledger.agent.principal, roles: ['approver'] }, ledger.admin);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', bad.entry);

  const { ledger: l2 } = ledgerWith();
  const named = newSigner('agent:helper');
  const asAdmin = l2.say('key.registered', { keyId: named.keyId, principal: 'agent:helper', roles: ['admin'] }, l2.admin);
  assertFailsAt(await verify(l2), 'SEPARATION_OF_DUTIES', asAdmin.entry);

  const { ledger: l3 } = ledgerWith();
  const agentKey = newSigner('admin:alice');
  const adminAsAgent = l3.say('key.registered', { keyId: agentKey.keyId, principal: 'admin:alice', roles: ['agent'] }, l3.admin);
  assertFailsAt(await verify(l3), 'SEPARATION_OF_DUTIES', adminAsAgent.entry);
});

/** A rotation body: `roots` become the root set (threshold 2); `extra` revokes and registers keys. */
function rotation(roots: readonly Signer[], extra: Partial<BodyOf<'root.rotated'>> = {}): BodyOf<'root.rotated'> {
  return { rootKeys: roots.map((r) => r.keyId), rootThreshold: 2, revokeKeys: [], registerKeys: [], reason: 'annual rotation', ...extra };
}

test('trust-root rotation: signed by a threshold of the old and of the new roots, it can revoke a compromised admin and register a new one', async () => {
  const { ledger } = ledgerWith();
  const next = [newSigner('root:a'), newSigner('root:b'), newSigner('root:c')];
  const erin = newSigner('admin:erin');
  const [r0, r1] = ledger.roots as [Signer, Signer];
  ledger.say('root.rotated', rotation(next, { revokeKeys: [ledger.admin2.keyId], registerKeys: [{ keyId: erin.keyId, principal: erin.principal, roles: ['admin'] }], reason: 'bob\'s key compromised' }), r0, { extraSigners: [r1, next[0] as Signer, next[1] as Signer] });
  const p = propose(ledger, grant(ledger, 'g1'));
  cosign(ledger, 'g1', p.hash, erin);
  assert.equal(recordDecision(ledger, pay(ledger)).expected.grantId, 'g1', 'the admin registered by the rotation co-signs');
  // A second rotation by the new set alone (old = new here) is fine.
  ledger.say('root.rotated', rotation(next.slice(0, 2)), next[0] as Signer, { extraSigners: [next[1] as Signer] });
  assertValid(await verify(ledger));

  const after = cosign(ledger, 'g1', p.hash);
  assertFailsAt(await verify(ledger), 'KEY_REVOKED', after.entry);
});

test('trust-root rotation without the old threshold, without the new one, or by a replaced root set fails at its index', async () => {
  const next = [newSigner('root:a'), newSigner('root:b')];
  {
    const { ledger } = ledgerWith();
    const onlyOld = ledger.say('root.rotated', rotation(next), ledger.roots[0] as Signer, { extraSigners: [ledger.roots[1] as Signer] });
    assertFailsAt(await verify(ledger), 'INVALID_SIGNATURE', onlyOld.entry);
  }
  {
    const { ledger } = ledgerWith();
    const onlyNew = ledger.say('root.rotated', rotation(next), next[0] as Signer, { extraSigners: [next[1] as Signer, ledger.roots[0] as Signer] });
    assertFailsAt(await verify(ledger), 'INVALID_SIGNATURE', onlyNew.entry);
  }
  {
    const { ledger } = ledgerWith();
    const [r0, r1] = ledger.roots as [Signer, Signer];
    ledger.say('root.rotated', rotation(next), r0, { extraSigners: [r1, next[0] as Signer, next[1] as Signer] });
    // The replaced roots take their power back: they are only "new" keys here, the current threshold is missing.
    const stale = ledger.say('root.rotated', rotation([r0, r1]), r0, { extraSigners: [r1] });
    assertFailsAt(await verify(ledger), 'INVALID_SIGNATURE', stale.entry);
    // ...or name a third set: signatures by keys that are neither current nor new.
    const { ledger: l2 } = ledgerWith();
    const [s0, s1] = l2.roots as [Signer, Signer];
    l2.say('root.rotated', rotation(next), s0, { extraSigners: [s1, next[0] as Signer, next[1] as Signer] });
    const third = [newSigner('root:x'), newSigner('root:y')];
    const hijack = l2.say('root.rotated', rotation(third), s0, { extraSigners: [s1, third[0] as Signer, third[1] as Signer] });
    assertFailsAt(await verify(l2), 'KEY_UNKNOWN', hijack.entry);
  }
  {
    const { ledger } = ledgerWith();
    const [r0, r1] = ledger.roots as [Signer, Signer];
    const agentAdmin = newSigner('agent:billing-bot');
    const bad = ledger.say('root.rotated', rotation(next, { registerKeys: [{ keyId: agentAdmin.keyId, principal: agentAdmin.principal, roles: ['admin'] }] }), r0, { extraSigners: [r1, next[0] as Signer, next[1] as Signer] });
    assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', bad.entry);
  }
});
