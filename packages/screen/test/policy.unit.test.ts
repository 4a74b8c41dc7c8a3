import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerError, ReasonCode, parseRefusal } from '@agent-ledger/refusals';
import { wellFormed } from './support.js';
import { MAX_CLEARED_TIER, SCREENING_DENIAL_CODE, ScreeningOutcome, Verdict, screeningPolicy, screeningRefusal } from '../src/index.js';

test('safe clears tier 0 and tier 1 only', () => {
  assert.equal(MAX_CLEARED_TIER, 1);
  assert.equal(screeningPolicy(0, Verdict.safe), ScreeningOutcome.clear);
  assert.equal(screeningPolicy(1, Verdict.safe), ScreeningOutcome.clear);
});

test('safe at tier 2 goes to a human', () => {
  assert.equal(screeningPolicy(2, Verdict.safe), ScreeningOutcome.human);
});

test('safe never clears tier 3 or 4: a human decides', () => {
  assert.equal(screeningPolicy(3, Verdict.safe), ScreeningOutcome.human);
  assert.equal(screeningPolicy(4, Verdict.safe), ScreeningOutcome.human);
});

test('uncertain goes to a human at every tier', () => {
  for (const tier of [0, 1, 2, 3, 4]) assert.equal(screeningPolicy(tier, Verdict.uncertain), ScreeningOutcome.human, `tier ${tier}`);
});

test('dangerous is denied at every tier', () => {
  for (const tier of [0, 1, 2, 3, 4]) assert.equal(screeningPolicy(tier, Verdict.dangerous), ScreeningOutcome.deny, `tier ${tier}`);
});

test('no verdict clears tier 3 or 4', () => {
  for (const tier of [3, 4]) for (const verdict of Object.values(Verdict)) assert.notEqual(screeningPolicy(tier, verdict), ScreeningOutcome.clear);
});

test('a tier outside the integers 0-4 is refused with SCHEMA_INVALID', () => {
  for (const tier of [-1, 5, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1' as unknown as number]) {
    assert.throws(() => screeningPolicy(tier, Verdict.safe), (err: unknown) => err instanceof LedgerError && err.code === ReasonCode.SCHEMA_INVALID, String(tier));
  }
});

test('an unknown verdict is refused with SCHEMA_INVALID, never cleared', () => {
  for (const verdict of ['SAFE', 'ok', '', 'clear']) {
    assert.throws(() => screeningPolicy(0, verdict as Verdict), (err: unknown) => err instanceof LedgerError && err.code === ReasonCode.SCHEMA_INVALID, verdict);
  }
});

test('a denial is a POLICY_VIOLATION refusal naming the screener', () => {
  assert.equal(SCREENING_DENIAL_CODE, ReasonCode.POLICY_VIOLATION);
  const { code, refusal } = screeningRefusal({ model: 'rules/v2', rationale: 'clearly destructive pattern: pattern.root_delete\nsecond line' });
  assert.equal(code, ReasonCode.POLICY_VIOLATION);
  const parsed = parseRefusal(refusal);
  assert.equal(parsed?.code, ReasonCode.POLICY_VIOLATION);
  assert.ok(parsed?.detail.includes('rules/v2'));
  assert.ok(!refusal.includes('\n'), 'one line');
});

test('a long rationale is clipped in the refusal without splitting a surrogate pair', () => {
  const { refusal } = screeningRefusal({ model: 'm', rationale: `${'a'.repeat(196)}😀😀😀` });
  assert.ok(refusal.length < 300);
  assert.ok(wellFormed(refusal));
});
