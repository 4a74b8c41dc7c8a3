import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, evolve, grantFromScenario, grantStatus, initialState, type AuthorityEvent, type GateState, type Proposal } from '../src/index.js';
import { AuthorityLog, DAY, NOW, author, command, operationOf, payment } from './support.js';

const alice = author('admin:alice');
const bob = author('admin:bob');
const aliceSecondKey = author('admin:alice', 'alice-laptop');
const dana = author('approver:dana');
const mallory = author('admin:mallory');

/** A log with genesis naming alice (two keys) and bob as admins, dana as approver. */
function ledger(): AuthorityLog {
  const log = new AuthorityLog();
  log.genesis([
    { who: alice, roles: ['admin'] },
    { who: aliceSecondKey, roles: ['admin'] },
    { who: bob, roles: ['admin'] },
    { who: dana, roles: ['approver'] },
  ]);
  return log;
}

function fold(log: AuthorityLog): GateState {
  const state = initialState();
  for (const event of log.events) assert.equal(evolve(state, event), state, 'evolve returns the state it was given');
  return state;
}

function decidePayment(state: GateState, p: Proposal = payment(), now = NOW) {
  return decide(command(p, { now }), state);
}

describe('grant lifecycle through evolve', () => {
  test('proposed only: inactive, the payment still needs a human (GRANT_MISSING)', () => {
    const log = ledger();
    log.propose(alice, 'g1', payment());
    const state = fold(log);
    assert.equal(grantStatus(state, 'g1'), 'proposed');
    const d = decidePayment(state);
    assert.deepEqual([d.outcome, d.code, d.grantId], ['verify_first', 'GRANT_MISSING', null]);
  });

  test('co-signed by a different admin principal over the exact proposal hash: active, allows, cites the proposal entry', () => {
    const log = ledger();
    const proposed = log.propose(alice, 'g1', payment());
    log.cosign(bob, 'g1', proposed);
    const state = fold(log);
    assert.equal(grantStatus(state, 'g1'), 'active');
    const d = decidePayment(state);
    assert.deepEqual([d.outcome, d.code, d.grantId, d.grantEntry], ['allow', null, 'g1', proposed.index]);
    assert.ok(d.reasons.includes('grant.allowed:g1'));
  });

  test('co-signed by the same principal (even with another of its keys): inactive', () => {
    for (const cosigner of [alice, aliceSecondKey]) {
      const log = ledger();
      const proposed = log.propose(alice, 'g1', payment());
      log.cosign(cosigner, 'g1', proposed);
      const state = fold(log);
      assert.equal(grantStatus(state, 'g1'), 'proposed');
      assert.equal(decidePayment(state).outcome, 'verify_first');
      assert.equal(state.ignored, 1);
    }
  });

  test('a later co-signature by a different admin still activates it', () => {
    const log = ledger();
    const proposed = log.propose(alice, 'g1', payment());
    log.cosign(alice, 'g1', proposed);
    log.cosign(bob, 'g1', proposed);
    assert.equal(grantStatus(fold(log), 'g1'), 'active');
  });

  test('co-signatures that do not count: wrong hash, unknown grant, non-admin key, unregistered key', () => {
    const log = ledger();
    const proposed = log.propose(alice, 'g1', payment());
    const other = log.propose(alice, 'g2', payment({ scope: 'invoice:2026-12' }));
    log.cosign(bob, 'g1', other);
    log.cosign(bob, 'nope', proposed);
    log.cosign(dana, 'g1', proposed);
    log.cosign(mallory, 'g1', proposed);
    const state = fold(log);
    assert.equal(grantStatus(state, 'g1'), 'proposed');
    assert.equal(state.ignored, 4);
  });

  test('proposals that do not count: by a non-admin, or by a revoked key', () => {
    const log = ledger();
    log.propose(dana, 'by-approver', payment());
    log.say('key.revoked', { keyId: alice.keyId, reason: 'laptop lost' }, bob);
    log.propose(alice, 'after-revocation', payment());
    const state = fold(log);
    assert.equal(grantStatus(state, 'by-approver'), undefined);
    assert.equal(grantStatus(state, 'after-revocation'), undefined);
  });

  test('an admin registered by key.registered may write grants', () => {
    const log = ledger();
    const carol = author('admin:carol');
    log.say('key.registered', { keyId: carol.keyId, principal: carol.principal, roles: ['admin'] }, alice);
    const proposed = log.propose(carol, 'g1', payment());
    log.cosign(alice, 'g1', proposed);
    assert.equal(grantStatus(fold(log), 'g1'), 'active');
  });

  test('revoked: inactive for good, even if co-signed afterwards; a revoked block grant stops blocking', () => {
    const log = ledger();
    const proposed = log.propose(alice, 'g1', payment());
    log.cosign(bob, 'g1', proposed);
    log.say('grant.revoked', { grantId: 'g1', reason: 'vendor changed bank' }, bob);
    log.cosign(bob, 'g1', proposed);
    const state = fold(log);
    assert.equal(grantStatus(state, 'g1'), 'revoked');
    const d = decidePayment(state);
    assert.deepEqual([d.outcome, d.code], ['verify_first', 'GRANT_MISSING'], 'a revoked grant is no near miss either');

    const blocking = ledger();
    const block = blocking.propose(alice, 'b1', payment(), { effect: 'block' });
    blocking.cosign(bob, 'b1', block);
    const blockingState = fold(blocking);
    assert.equal(decidePayment(blockingState).code, 'GRANT_BLOCKED');
    evolve(blockingState, blocking.say('grant.revoked', { grantId: 'b1', reason: 'resolved' }, alice));
    assert.equal(decidePayment(blockingState).outcome, 'verify_first');
  });

  test('reauthorized: moves expiresAt of the grant it names by hash once a second admin co-signs it; an expired grant authorises again', () => {
    const log = ledger();
    const proposed = log.propose(alice, 'g1', payment(), { from: NOW - 10 * DAY, until: NOW - DAY });
    log.cosign(bob, 'g1', proposed);
    const state = fold(log);
    assert.deepEqual([decidePayment(state).outcome, decidePayment(state).code], ['verify_first', 'GRANT_EXPIRED']);
    const until = new Date(NOW + 20 * DAY).toISOString();

    const wrongHash = log.say('grant.reauthorized', { grantId: 'g1', grant: '0'.repeat(64), expiresAt: until }, bob);
    evolve(state, wrongHash);
    assert.equal(decidePayment(state).code, 'GRANT_EXPIRED');

    const byApprover = log.say('grant.reauthorized', { grantId: 'g1', grant: proposed.statementHash, expiresAt: until }, dana);
    evolve(state, byApprover);
    assert.equal(decidePayment(state).code, 'GRANT_EXPIRED');

    const reauth = log.say('grant.reauthorized', { grantId: 'g1', grant: proposed.statementHash, expiresAt: until }, bob);
    evolve(state, reauth);
    assert.equal(decidePayment(state).code, 'GRANT_EXPIRED', 'a re-authorisation without a co-signature changes nothing');
    evolve(state, log.say('grant.cosigned', { grantId: 'g1', grant: reauth.statementHash }, bob));
    assert.equal(decidePayment(state).code, 'GRANT_EXPIRED', 'the re-authoriser cannot co-sign its own re-authorisation');
    evolve(state, log.say('grant.cosigned', { grantId: 'g1', grant: reauth.statementHash }, alice));
    const d = decidePayment(state);
    assert.deepEqual([d.outcome, d.grantId, d.grantEntry], ['allow', 'g1', proposed.index]);
    assert.equal(decidePayment(state, payment(), NOW + 21 * DAY).code, 'GRANT_EXPIRED');
  });

  test('the window is [notBefore, expiresAt): not yet valid and just expired are GRANT_EXPIRED', () => {
    const log = ledger();
    const proposed = log.propose(alice, 'g1', payment(), { from: NOW, until: NOW + DAY });
    log.cosign(bob, 'g1', proposed);
    const state = fold(log);
    assert.equal(decidePayment(state, payment(), NOW - 1).code, 'GRANT_EXPIRED');
    assert.equal(decidePayment(state, payment(), NOW).outcome, 'allow');
    assert.equal(decidePayment(state, payment(), NOW + DAY - 1).outcome, 'allow');
    assert.equal(decidePayment(state, payment(), NOW + DAY).code, 'GRANT_EXPIRED');
  });

  test('the first proposal of a grant id wins; other statement types change nothing', () => {
    const log = ledger();
    const first = log.propose(alice, 'g1', payment());
    log.propose(bob, 'g1', payment({ recipient: 'mallory-ltd' }));
    log.cosign(bob, 'g1', first);
    const state = fold(log);
    assert.equal(decidePayment(state).grantId, 'g1');
    assert.equal(decidePayment(state, payment({ recipient: 'mallory-ltd' })).code, 'GRANT_MISMATCH');
    const before = JSON.stringify([...state.grants.values()]);
    evolve(state, { statement: { ...first.statement, type: 'intake.rejected' } as unknown as AuthorityEvent['statement'], index: 99, statementHash: 'x', sequencedAt: 0 });
    evolve(state, { statement: undefined as unknown as AuthorityEvent['statement'], index: 100, statementHash: 'y', sequencedAt: 0 });
    assert.equal(JSON.stringify([...state.grants.values()]), before);
    assert.equal(state.authoritySize, 101);
  });

  test('near misses follow activity: revoking the only grant for a target turns GRANT_MISMATCH into GRANT_MISSING', () => {
    const log = ledger();
    const proposed = log.propose(alice, 'g1', payment());
    log.cosign(bob, 'g1', proposed);
    const state = fold(log);
    const other = payment({ recipient: 'acme-offshore' });
    assert.equal(decidePayment(state, other).code, 'GRANT_MISMATCH');
    evolve(state, log.say('grant.revoked', { grantId: 'g1', reason: 'x' }, alice));
    assert.equal(decidePayment(state, other).code, 'GRANT_MISSING');
  });

  test('matching is exact: no field is normalised, so a look-alike never matches', () => {
    const state = initialState();
    grantFromScenario(state, { grantId: 'g1', ...operationOf(payment()), notBefore: NOW - DAY, expiresAt: NOW + DAY, effect: 'allow' }, 0);
    for (const variant of [payment({ recipient: 'ACME-corp' }), payment({ recipient: 'acme-corp ' }), payment({ recipient: 'ａｃｍｅ-corp' }), payment({ agentId: 'agent:billing-bot\u200b' })]) {
      assert.notEqual(decide(command(variant), state).outcome, 'allow', JSON.stringify(variant));
    }
  });

  test('grantFromScenario loads active grants; a repeated id is ignored', () => {
    const state = initialState();
    grantFromScenario(state, { grantId: 'g1', ...operationOf(payment()), notBefore: '2026-11-01T00:00:00Z', expiresAt: '2026-12-01T00:00:00Z', effect: 'allow' }, 7);
    grantFromScenario(state, { grantId: 'g1', ...operationOf(payment()), notBefore: 0, expiresAt: 1, effect: 'block' }, 8);
    assert.equal(grantStatus(state, 'g1'), 'active');
    assert.equal(state.ignored, 1);
    const d = decide(command(payment()), state);
    assert.deepEqual([d.outcome, d.grantId, d.grantEntry], ['allow', 'g1', 7]);
  });
});

describe('grant rules shared with the ledger: patterns, k of n, delegation, cascade', () => {
  /** A grant body for the fixture payment with `overrides`, valid [NOW - DAY, NOW + DAY). */
  function body(grantId: string, overrides: Record<string, unknown> = {}) {
    return {
      grantId, ...operationOf(payment()), notBefore: new Date(NOW - DAY).toISOString(), expiresAt: new Date(NOW + DAY).toISOString(),
      effect: 'allow' as const, tier: 3, parentGrantId: null as string | null, ...overrides,
    };
  }
  function write(log: AuthorityLog, grantId: string, overrides: Record<string, unknown> = {}): AuthorityEvent {
    const proposed = log.say('grant.proposed', body(grantId, overrides), alice);
    log.cosign(bob, grantId, proposed);
    return proposed;
  }

  test('a subtree pattern covers values below its prefix, and only those', () => {
    const log = ledger();
    write(log, 'vendors', { targetResource: 'payments/vendors/*', scope: 'invoice:*' });
    const state = fold(log);
    const covered = decidePayment(state, payment({ targetResource: 'payments/vendors/globex', scope: 'invoice:2027-01' }));
    assert.deepEqual([covered.outcome, covered.grantId], ['allow', 'vendors']);
    for (const targetResource of ['payments/vendors', 'payments/vendorsX/acme', 'payments/other/acme']) {
      assert.equal(decidePayment(state, payment({ targetResource })).grantId, null, targetResource);
    }
    assert.equal(decidePayment(state, payment({ scope: 'invoice' })).grantId, null);
  });

  test('a pattern grant with another recipient is a near miss (GRANT_MISMATCH); a block pattern beats an exact allow', () => {
    const log = ledger();
    write(log, 'other', { targetResource: 'payments/*', recipient: 'globex-inc' });
    const miss = decidePayment(fold(log));
    assert.deepEqual([miss.outcome, miss.code], ['verify_first', 'GRANT_MISMATCH']);
    write(log, 'exact');
    write(log, 'freeze', { targetResource: 'payments/vendors/*', recipient: '*', scope: '*', effect: 'block' });
    const blocked = decidePayment(fold(log));
    assert.deepEqual([blocked.outcome, blocked.code, blocked.grantId], ['block', 'GRANT_BLOCKED', 'freeze']);
  });

  test('tier 4 needs two distinct co-signers under the default policy; genesis can change the count', () => {
    const log = ledger();
    const proposed = log.say('grant.proposed', body('t4', { tier: 4 }), alice);
    log.cosign(bob, 't4', proposed);
    const state = fold(log);
    assert.equal(grantStatus(state, 't4'), 'proposed');
    evolve(state, log.cosign(mallory, 't4', proposed));
    assert.equal(grantStatus(state, 't4'), 'proposed', 'mallory is no admin: her co-signature is ignored');
    assert.equal(state.ignored, 1);
    const carol = author('admin:carol');
    evolve(state, log.say('key.registered', { keyId: carol.keyId, principal: carol.principal, roles: ['admin'] }, alice));
    evolve(state, log.cosign(carol, 't4', proposed));
    assert.equal(grantStatus(state, 't4'), 'active');
  });

  test('revoking a parent revokes the grants derived from it; a widening child never enters the table', () => {
    const log = ledger();
    write(log, 'parent', { targetResource: 'payments/vendors/*' });
    write(log, 'child', { parentGrantId: 'parent' });
    log.say('grant.proposed', body('wide', { parentGrantId: 'parent', targetResource: 'payments/*' }), alice);
    const state = fold(log);
    assert.equal(grantStatus(state, 'wide'), undefined);
    assert.equal(decidePayment(state).grantId, 'child');
    evolve(state, log.say('grant.revoked', { grantId: 'parent', reason: 'vendor offboarded' }, bob));
    assert.equal(grantStatus(state, 'child'), 'revoked');
    assert.deepEqual([decidePayment(state).outcome, decidePayment(state).code], ['verify_first', 'GRANT_MISSING']);
  });
});
