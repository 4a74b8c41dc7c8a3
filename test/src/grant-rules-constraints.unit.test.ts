import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { matchesPattern, narrows, satisfiesAll, type ArgumentConstraint, type BodyOf } from '@agent-ledger/core';
import { TestLedger } from './fixtures.js';
import { decideLatest, gateDecidesLatest, ledgerV2 } from './grant-rules-support.js';
import { assertFailsAt, assertValid, iso, verify, type Posted } from './replay-support.js';

// Grants constrain arguments (SPEC.md section 7.2, rule 7): a grant for a
// $19.99 refund does not allow a $19,990 one; constraints are signed in the
// grant, and a delegation may only narrow them.

const DAY = 86_400_000;
type GrantBody = BodyOf<'grant.proposed'>;

function refundGrant(ledger: TestLedger, grantId: string, overrides: Partial<GrantBody> = {}): GrantBody {
  return {
    grantId,
    agentId: ledger.agent.principal,
    actionType: 'refund.issue',
    targetResource: 'payments/refunds',
    recipient: 'customer:4711',
    scope: 'ticket:4711',
    notBefore: iso(ledger.clock - 60_000),
    expiresAt: iso(ledger.clock + DAY),
    effect: 'allow',
    tier: 3,
    parentGrantId: null,
    constraints: [
      { kind: 'range', path: 'amountUsd', min: 0, max: 19.99 },
      { kind: 'equals', path: 'currency', value: 'USD' },
      { kind: 'pattern', path: 'memo', pattern: 'ticket 4711*' },
    ],
    ...overrides,
  };
}

function writeGrant(ledger: TestLedger, body: GrantBody): Posted {
  const proposed = ledger.say('grant.proposed', body, ledger.admin);
  ledger.say('grant.cosigned', { grantId: body.grantId, grant: proposed.hash }, ledger.admin2);
  return proposed;
}

function refund(ledger: TestLedger, args: Record<string, unknown>): Posted {
  return ledger.propose({ tool: 'payments', actionType: 'refund.issue', targetResource: 'payments/refunds', recipient: 'customer:4711', scope: 'ticket:4711', args });
}

test('item 6: a $19.99 refund grant allows $19.99 and not $19,990 (GRANT_MISMATCH); a forged allow fails verify-chain', async () => {
  const { ledger } = ledgerV2();
  const grant = writeGrant(ledger, refundGrant(ledger, 'refund-small'));
  const small = refund(ledger, { amountUsd: 19.99, currency: 'USD', memo: 'ticket 4711: damaged item' });
  const allowed = decideLatest(ledger, small);
  assert.deepEqual([allowed.expected.outcome, allowed.expected.grantId], ['allow', 'refund-small']);
  for (const args of [
    { amountUsd: 19_990, currency: 'USD', memo: 'ticket 4711: damaged item' },
    { amountUsd: 19.99, currency: 'EUR', memo: 'ticket 4711: damaged item' },
    { amountUsd: 19.99, currency: 'USD', memo: 'another ticket' },
    { amountUsd: '19.99', currency: 'USD', memo: 'ticket 4711' },
    { currency: 'USD', memo: 'ticket 4711' },
  ]) {
    const d = gateDecidesLatest(ledger, refund(ledger, args));
    assert.deepEqual([d.outcome, d.code, d.grantId], ['verify_first', 'GRANT_MISMATCH', null], JSON.stringify(args));
  }
  assertValid(await verify(ledger));

  const { ledger: l2 } = ledgerV2();
  const g2 = writeGrant(l2, refundGrant(l2, 'refund-small'));
  const big = refund(l2, { amountUsd: 19_990, currency: 'USD', memo: 'ticket 4711' });
  const forged = decideLatest(l2, big, { outcome: 'allow', code: null, grantId: 'refund-small', grantEntry: g2.entry.index });
  assert.equal(forged.expected.code, 'GRANT_MISMATCH');
  assertFailsAt(await verify(l2), 'POLICY_VIOLATION', forged.decision.entry);
  assert.ok(grant);
});

test('item 6: a delegation may only narrow the constraints (DELEGATION_WIDENS)', async () => {
  const widenings: Partial<GrantBody>[] = [
    { constraints: [{ kind: 'range', path: 'amountUsd', min: 0, max: 19_990 }, { kind: 'equals', path: 'currency', value: 'USD' }, { kind: 'pattern', path: 'memo', pattern: 'ticket 4711*' }] },
    { constraints: [{ kind: 'range', path: 'amountUsd', max: 10 }, { kind: 'equals', path: 'currency', value: 'USD' }, { kind: 'pattern', path: 'memo', pattern: 'ticket 4711*' }] },
    { constraints: [{ kind: 'range', path: 'amountUsd', min: 0, max: 10 }, { kind: 'equals', path: 'currency', value: 'USD' }, { kind: 'pattern', path: 'memo', pattern: '*' }] },
    { constraints: [{ kind: 'range', path: 'amountUsd', min: 0, max: 10 }, { kind: 'equals', path: 'currency', value: 'USD' }] },
    { constraints: undefined },
  ];
  for (const overrides of widenings) {
    const { ledger } = ledgerV2();
    const parent = refundGrant(ledger, 'parent');
    writeGrant(ledger, parent);
    // The same window and fields as the parent: only the constraints differ.
    const body: GrantBody = { ...parent, grantId: 'child', parentGrantId: 'parent', ...overrides };
    if (overrides.constraints === undefined) delete (body as { constraints?: unknown }).constraints;
    const child = ledger.say('grant.proposed', body, ledger.admin);
    assertFailsAt(await verify(ledger), 'DELEGATION_WIDENS', child.entry);
  }
  const { ledger } = ledgerV2();
  const parent = refundGrant(ledger, 'parent');
  writeGrant(ledger, parent);
  writeGrant(
    ledger,
    refundGrant(ledger, 'child', {
      notBefore: parent.notBefore,
      expiresAt: parent.expiresAt,
      parentGrantId: 'parent',
      constraints: [
        { kind: 'range', path: 'amountUsd', min: 1, max: 9.99 },
        { kind: 'equals', path: 'currency', value: 'USD' },
        { kind: 'equals', path: 'memo', value: 'ticket 4711 partial' },
        { kind: 'equals', path: 'approvedBy', value: 'support-lead' },
      ],
    }),
  );
  assertValid(await verify(ledger));
});

test('constraints exist from authority rules 2, on allow grants, well formed', async () => {
  const v1 = new TestLedger();
  const under1 = v1.say('grant.proposed', refundGrant(v1, 'g'), v1.admin);
  assertFailsAt(await verify(v1), 'POLICY_VIOLATION', under1.entry);

  const { ledger } = ledgerV2();
  const block = ledger.say('grant.proposed', refundGrant(ledger, 'g', { effect: 'block' }), ledger.admin);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', block.entry);

  const { ledger: l3 } = ledgerV2();
  const empty = l3.say('grant.proposed', refundGrant(l3, 'g', { constraints: [{ kind: 'range', path: 'amountUsd', min: 5, max: 1 }] }), l3.admin);
  assertFailsAt(await verify(l3), 'SCHEMA_INVALID', empty.entry);
});

// Property tests of the pure functions both folds share.
const path = fc.constantFrom('amount', 'currency', 'memo', 'nested.value');
const bound = fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined });
const scalar = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('a', 'ab', 'b', 'USD', ''), fc.boolean(), fc.constant(null));
const pattern = fc.stringMatching(/^[ab*?]{1,5}$/);
const constraint: fc.Arbitrary<ArgumentConstraint> = fc.oneof(
  fc.record({ kind: fc.constant('range' as const), path, min: bound, max: bound }).map(({ kind, path: p, min, max }) => ({ kind, path: p, ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) })),
  fc.record({ kind: fc.constant('equals' as const), path, value: scalar }),
  fc.record({ kind: fc.constant('pattern' as const), path, pattern }),
);
const constraints = fc.array(constraint, { minLength: 0, maxLength: 4 });
const argValue = fc.oneof(scalar, fc.stringMatching(/^[ab]{0,5}$/), fc.integer({ min: -6, max: 6 }));
const args = fc.record({ amount: argValue, currency: argValue, memo: argValue, nested: fc.record({ value: argValue }, { requiredKeys: [] }) }, { requiredKeys: [] });

test('narrowing is sound: whatever meets a narrower child\'s constraints meets its parent\'s', () => {
  fc.assert(
    fc.property(constraints, constraints, fc.array(args, { minLength: 1, maxLength: 20 }), (parent, child, samples) => {
      if (!narrows(parent, child)) return;
      for (const a of samples) if (satisfiesAll(child, a)) assert.ok(satisfiesAll(parent, a), JSON.stringify({ parent, child, a }));
    }),
    { numRuns: 3000 },
  );
  // Narrowing to one's own constraints, or adding one, always narrows; dropping one never does.
  fc.assert(
    fc.property(constraints, constraint, (parent, extra) => {
      assert.ok(narrows(parent, parent));
      assert.ok(narrows(parent, [...parent, extra]));
      if (parent.length > 0) assert.equal(narrows(parent, []), false);
    }),
  );
});

test('the safe pattern language is the glob it documents (checked against a regular expression)', () => {
  const toRegExp = (p: string): RegExp => new RegExp(`^${[...p].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`, 's');
  fc.assert(
    fc.property(fc.stringMatching(/^[ab*?.]{0,8}$/), fc.stringMatching(/^[ab.]{0,10}$/), (p, value) => {
      if (p === '') return;
      assert.equal(matchesPattern(p, value), toRegExp(p).test(value), JSON.stringify({ p, value }));
    }),
    { numRuns: 5000 },
  );
  assert.equal(matchesPattern('ticket 4711*', 'ticket 4711: x'), true);
  assert.equal(matchesPattern('*'.repeat(200), 'a'.repeat(4000) + 'b'), true);
  // A long argument meets no pattern (bounded work, fail closed), even one that would match.
  const memo = (text: string): boolean => satisfiesAll([{ kind: 'pattern', path: 'memo', pattern: '*' }], { memo: text });
  assert.deepEqual([memo('x'.repeat(4096)), memo('x'.repeat(4097))], [true, false]);
});
