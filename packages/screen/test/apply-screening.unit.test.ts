import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReasonCode } from '@agent-ledger/refusals';
import { applyScreening, isScreened, ScreeningOutcome, SCREENING_DENIAL_CODE, type GateOutcome } from '../src/index.js';

type Decision = GateOutcome & { readonly tier: number };

const allowByRules: Decision = { outcome: 'allow', code: null, grantId: null, tier: 1, reasons: ['precedence.7_below_threshold'] };
const allowByGrant: Decision = { outcome: 'allow', code: null, grantId: 'g-1', tier: 2, reasons: ['grant.allowed:g-1', 'precedence.6_grant_allowed'] };
const needsHuman: Decision = { outcome: 'verify_first', code: ReasonCode.GRANT_MISSING, grantId: null, tier: 3, reasons: ['grant.missing', 'precedence.8_needs_human'] };
const crisisSupport: Decision = { outcome: 'allow', code: null, grantId: null, tier: 0, reasons: ['crisis.support', 'precedence.3_crisis_support'] };
const crisisDecision: Decision = { outcome: 'verify_first', code: null, grantId: null, tier: 3, reasons: ['crisis.decision', 'precedence.4_crisis_decision'] };
const blocked: Decision = { outcome: 'block', code: ReasonCode.GRANT_BLOCKED, grantId: 'g-2', tier: 3, reasons: ['grant.blocked:g-2', 'precedence.1_grant_blocked'] };

test('only decisions settled by the gate rules are screened: not blocks, grant allows or crisis actions', () => {
  assert.equal(isScreened(allowByRules), true);
  assert.equal(isScreened(needsHuman), true);
  assert.equal(isScreened(allowByGrant), false);
  assert.equal(isScreened(blocked), false);
  assert.equal(isScreened(crisisSupport), false, 'crisis support is never gated or delayed');
  assert.equal(isScreened(crisisDecision), false, 'a crisis decision always goes to a human, never refused by a model');
});

test('a denial blocks with the screening code, whatever the gate said', () => {
  for (const decision of [allowByRules, needsHuman]) {
    const after = applyScreening(decision, ScreeningOutcome.deny);
    assert.equal(after.outcome, 'block');
    assert.equal(after.code, SCREENING_DENIAL_CODE);
    assert.equal(after.tier, decision.tier, 'other fields are kept');
  }
});

test('an uncertain screen sends an allow to a human and keeps a verify_first', () => {
  assert.deepEqual(applyScreening(allowByRules, ScreeningOutcome.human), { ...allowByRules, outcome: 'verify_first', code: ReasonCode.GRANT_MISSING });
  assert.deepEqual(applyScreening(needsHuman, ScreeningOutcome.human), needsHuman);
});

test('a clear never lowers what the gate asked for', () => {
  assert.deepEqual(applyScreening(allowByRules, ScreeningOutcome.clear), allowByRules);
  assert.deepEqual(applyScreening(needsHuman, ScreeningOutcome.clear), needsHuman);
});

test('blocks and grant allows pass through every screening outcome unchanged', () => {
  for (const action of Object.values(ScreeningOutcome)) {
    assert.deepEqual(applyScreening(blocked, action), blocked);
    assert.deepEqual(applyScreening(allowByGrant, action), allowByGrant);
    assert.deepEqual(applyScreening(crisisSupport, action), crisisSupport);
    assert.deepEqual(applyScreening(crisisDecision, action), crisisDecision);
  }
});
