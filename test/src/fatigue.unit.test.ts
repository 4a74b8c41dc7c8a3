import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createStatement, nodeEd25519, signStatement, statementHash, type BodyOf, type Entry, type StatementType } from '@agent-ledger/core';
import { LedgerError } from '@agent-ledger/refusals';
import { newSigner, parseSessionDuration, sessionGrant } from '@agent-ledger/ledger';
import { MAX_MIN_READ_MS, minimumReadingMs, operationBytes } from '@agent-ledger/rulebook';
import { FatigueFold, type FatigueSignal } from './replay-support.js';

// The confirmation-fatigue fold on hand-built entries: what the gate signs
// (grant.suggested, approval.rushed) follows from the log alone, never changes
// a decision, and folding an entry twice does not sign twice.

const agent = newSigner('agent:build-bot');
const gate = newSigner('service:gate');
const dana = newSigner('approver:dana');
const eli = newSigner('approver:eli');
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

class Log {
  readonly fold: FatigueFold;
  #index = 0;
  constructor(settings: ConstructorParameters<typeof FatigueFold>[0] = {}) {
    this.fold = new FatigueFold(settings);
  }

  /** Sequences a statement at `atMs` on partition 1 and folds it; returns its hash and the signals. */
  add<T extends StatementType>(type: T, body: BodyOf<T>, signer: ReturnType<typeof newSigner>, atMs: number): { hash: string; signals: readonly FatigueSignal[]; entry: Entry } {
    const statement = createStatement(type, body, signer, new Date(atMs));
    const envelope = signStatement(statement, [signer], nodeEd25519);
    const entry = { partition: 1, index: this.#index++, sequencedAt: new Date(atMs).toISOString(), authorityIndex: 1, envelope } as unknown as Entry;
    const hash = statementHash(statement);
    return { hash, signals: this.fold.evolve(entry, hash), entry };
  }

  /** A proposal left to a human: proposal, verify_first, confirmation request at `atMs`. */
  confirmation(atMs: number, overrides: Partial<BodyOf<'proposal.submitted'>> = {}, tier = 2): { proposal: string; request: string } {
    const proposal = this.add('proposal.submitted', {
      agentId: agent.principal, tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711',
      args: { subject: 'Your refund', n: atMs }, query: 'tell the customer', labels: [], channel: 'api', context: {}, ...overrides,
    }, agent, atMs).hash;
    this.add('decision.recorded', { agentId: agent.principal, proposal, outcome: 'verify_first', code: null, tier, risk: 2, authorityIndex: 1, grantId: null, grantEntry: null }, gate, atMs + 1);
    const request = this.add('confirmation.requested', { agentId: agent.principal, proposal, tier, deadline: new Date(atMs + 60_000).toISOString(), approvalsRequired: 1, channels: ['cli'] }, gate, atMs + 2).hash;
    return { proposal, request };
  }

  approve(c: { proposal: string; request: string }, atMs: number, by = dana): { hash: string; signals: readonly FatigueSignal[]; entry: Entry } {
    return this.add('human.response', { agentId: agent.principal, proposal: c.proposal, request: c.request, answer: 'approve', assurance: 'self_signed', platformIdentity: null }, by, atMs);
  }

  allow(c: { proposal: string }, atMs: number, tier = 2): { hash: string; signals: readonly FatigueSignal[]; entry: Entry } {
    return this.add('decision.recorded', { agentId: agent.principal, proposal: c.proposal, outcome: 'allow', code: null, tier, risk: 0, authorityIndex: 1, grantId: null, grantEntry: null }, gate, atMs);
  }
}

function suggestions(signals: readonly FatigueSignal[]): BodyOf<'grant.suggested'>[] {
  return signals.flatMap((s) => (s.type === 'grant.suggested' ? [s.body] : []));
}

describe('grant suggestions', () => {
  test('the third identical approval suggests a grant naming the three requests; decisions are untouched', () => {
    const log = new Log({ minReadMs: 0 });
    const seen: BodyOf<'grant.suggested'>[] = [];
    const requests: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = log.confirmation(T0 + i * 10_000);
      requests.push(c.request);
      log.approve(c, T0 + i * 10_000 + 5_000);
      const final = log.allow(c, T0 + i * 10_000 + 5_001);
      seen.push(...suggestions(final.signals));
      if (i < 2) assert.equal(final.signals.length, 0);
    }
    assert.equal(seen.length, 1);
    const s = seen[0] as BodyOf<'grant.suggested'>;
    assert.deepEqual(
      [s.agentId, s.actionType, s.targetResource, s.recipient, s.scope, s.tier, s.requests],
      [agent.principal, 'email.send', 'mail/outbound', 'customer@example.com', 'ticket:4711', 2, requests],
    );
    assert.equal(s.notBefore, new Date(T0 + 25_001).toISOString());
    assert.ok(Date.parse(s.expiresAt) > Date.parse(s.notBefore));
  });

  test('another recipient, a denial, a tier-3 approval or a rule allow does not count toward the same operation', () => {
    const log = new Log({ minReadMs: 0 });
    let all: FatigueSignal[] = [];
    const approveAndAllow = (c: { proposal: string; request: string }, t: number, tier = 2): void => {
      log.approve(c, t + 5_000);
      all = all.concat(log.allow(c, t + 5_001, tier).signals);
    };
    approveAndAllow(log.confirmation(T0), T0);
    approveAndAllow(log.confirmation(T0 + 10_000, { recipient: 'other@example.com' }), T0 + 10_000);
    approveAndAllow(log.confirmation(T0 + 20_000, {}, 3), T0 + 20_000, 3);
    const denied = log.confirmation(T0 + 30_000);
    all = all.concat(log.add('decision.recorded', { agentId: agent.principal, proposal: denied.proposal, outcome: 'deny', code: 'HUMAN_DENIED', tier: 2, risk: 0, authorityIndex: 1, grantId: null, grantEntry: null }, gate, T0 + 35_000).signals);
    // A first allow (no confirmation) is the gate's own rule, not a human approval.
    const ruled = log.add('proposal.submitted', { agentId: agent.principal, tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: {}, query: '', labels: [], channel: 'api', context: {} }, agent, T0 + 40_000).hash;
    all = all.concat(log.add('decision.recorded', { agentId: agent.principal, proposal: ruled, outcome: 'allow', code: null, tier: 1, risk: 0, authorityIndex: 1, grantId: null, grantEntry: null }, gate, T0 + 40_001).signals);
    approveAndAllow(log.confirmation(T0 + 50_000), T0 + 50_000);
    assert.deepEqual(suggestions(all), []);
    approveAndAllow(log.confirmation(T0 + 60_000), T0 + 60_000);
    assert.equal(suggestions(all).length, 1);
  });

  test('folding an entry again signs nothing new, and a suggestion on the log is never repeated', () => {
    const log = new Log({ minReadMs: 0 });
    let third: ReturnType<Log['allow']> | undefined;
    for (let i = 0; i < 3; i++) {
      const c = log.confirmation(T0 + i * 10_000);
      log.approve(c, T0 + i * 10_000 + 5_000);
      third = log.allow(c, T0 + i * 10_000 + 5_001);
    }
    const again = log.fold.evolve((third as { entry: Entry }).entry, (third as { hash: string }).hash);
    assert.deepEqual(again, []);
    const signal = suggestions((third as { signals: readonly FatigueSignal[] }).signals)[0] as BodyOf<'grant.suggested'>;
    // The gate's suggestion reaches the log; the fourth and fifth approvals do not suggest again, the sixth does (three new requests).
    log.add('grant.suggested', signal, gate, T0 + 26_000);
    const later: FatigueSignal[] = [];
    for (let i = 3; i < 6; i++) {
      const c = log.confirmation(T0 + i * 10_000);
      log.approve(c, T0 + i * 10_000 + 5_000);
      later.push(...log.allow(c, T0 + i * 10_000 + 5_001).signals);
    }
    const next = suggestions(later);
    assert.equal(next.length, 1);
    assert.equal(next[0]?.requests.filter((r) => signal.requests.includes(r)).length, 0);
  });
});

describe('rubber-stamp signal', () => {
  test('an approval sooner than the reading time is signalled; a read one is not; the approval itself is untouched', () => {
    const log = new Log();
    const fast = log.confirmation(T0);
    const rushed = log.approve(fast, T0 + 2 + 400);
    assert.equal(rushed.signals.length, 1);
    const signal = rushed.signals[0] as FatigueSignal;
    assert.equal(signal.type, 'approval.rushed');
    const body = signal.body as BodyOf<'approval.rushed'>;
    assert.deepEqual([body.approver, body.response, body.request, body.elapsedMs, body.minReadMs], [dana.principal, rushed.hash, fast.request, 400, 2000]);

    const slow = log.confirmation(T0 + 100_000);
    assert.deepEqual(log.approve(slow, T0 + 100_002 + 2_000).signals, []);
    // A deny is never a rubber stamp.
    const denied = log.confirmation(T0 + 200_000);
    assert.deepEqual(log.add('human.response', { agentId: agent.principal, proposal: denied.proposal, request: denied.request, answer: 'deny', assurance: 'self_signed', platformIdentity: null }, dana, T0 + 200_003).signals, []);
  });

  test('a batch of approvals of long-waiting requests is signalled after the first: one approver cannot read two operations in 100 ms', () => {
    const log = new Log();
    const a = log.confirmation(T0);
    const b = log.confirmation(T0 + 10);
    const c = log.confirmation(T0 + 20);
    assert.deepEqual(log.approve(a, T0 + 30_000).signals, []);
    const second = log.approve(b, T0 + 30_100);
    assert.equal((second.signals[0]?.body as BodyOf<'approval.rushed'>).elapsedMs, 100);
    // Another approver's clock is their own.
    assert.deepEqual(log.approve(c, T0 + 30_150, eli).signals, []);
  });

  test('the reading time scales with the operation size, capped', () => {
    const log = new Log();
    const big = log.confirmation(T0, { args: { body: 'x'.repeat(1500) } });
    const r = log.approve(big, T0 + 2 + 5_000);
    const body = r.signals[0]?.body as BodyOf<'approval.rushed'>;
    assert.ok(body.operationBytes > 1536, `${body.operationBytes}`);
    assert.equal(body.minReadMs, 8_000);
    assert.equal(minimumReadingMs(100_000, 2_000), MAX_MIN_READ_MS);
    assert.equal(minimumReadingMs(10, 2_000), 2_000);
    assert.equal(operationBytes({ agentId: 'agent:a', tool: 't', actionType: 'a', targetResource: 'r', recipient: 'p', scope: 's', args: {}, query: '', labels: ['ignored'], channel: 'api', context: { ignored: true } }), Buffer.byteLength('{"actionType":"a","args":{},"query":"","recipient":"p","scope":"s","targetResource":"r","tool":"t"}'));
  });
});

describe('session trust', () => {
  test('durations are bounded to an hour and malformed ones are typed refusals', () => {
    assert.equal(parseSessionDuration('15m'), 900_000);
    assert.equal(parseSessionDuration('1h'), 3_600_000);
    assert.equal(parseSessionDuration('90s'), 90_000);
    for (const [text, code] of [['61m', 'POLICY_VIOLATION'], ['2h', 'POLICY_VIOLATION'], ['15', 'SCHEMA_INVALID'], ['-5m', 'SCHEMA_INVALID'], ['0m', 'SCHEMA_INVALID'], ['1d', 'SCHEMA_INVALID'], ['15m ', 'SCHEMA_INVALID']] as const) {
      assert.throws(() => parseSessionDuration(text), (err: unknown) => err instanceof LedgerError && err.code === code, text);
    }
  });

  test('the session grant binds exactly the approved operation, for the given window, at its tier', () => {
    const operation: BodyOf<'proposal.submitted'> = { agentId: 'agent:build-bot', tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'a@example.com', scope: 'ticket:1', args: {}, query: '', labels: [], channel: 'api', context: {} };
    const grant = sessionGrant({ proposalHash: 'ab'.repeat(32), requestHash: 'cd'.repeat(32), agentId: operation.agentId, tier: 2, risk: 2, deadline: new Date(T0 + 60_000).toISOString(), approvalsRequired: 1, approvedBy: [], operation }, T0, 900_000);
    assert.deepEqual(grant, {
      grantId: `session-${'ab'.repeat(8)}`, agentId: 'agent:build-bot', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'a@example.com', scope: 'ticket:1',
      notBefore: new Date(T0).toISOString(), expiresAt: new Date(T0 + 900_000).toISOString(), effect: 'allow', tier: 2, parentGrantId: null,
    });
  });
});
