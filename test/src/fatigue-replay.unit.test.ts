import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventPartitionOf, type BodyOf } from '@agent-ledger/core';
import { operationBytes } from '@agent-ledger/rulebook';
import { TestLedger } from './fixtures.js';
import { GateFatigue, type FatigueSignal, approvedConfirmation, assertFailsAt, assertValid, finalDecision, iso, recordDecision, respond, secondApprover, verify, type Posted } from './replay-support.js';

// verify-chain re-derives the confirmation-fatigue signals (SPEC.md section 4,
// section 9 rule 15). The honest signals are the live gate's own (FatigueFold
// folded over the test ledger); every forged one below is signed with the
// gate's registered key, so signatures, roles, chains and checkpoints all
// verify, and must fail at exactly the signal's entry.

type Suggested = BodyOf<'grant.suggested'>;
type Rushed = BodyOf<'approval.rushed'>;

const BIG = { args: { memo: 'x'.repeat(1500) } };

function suggestionsIn(signals: readonly FatigueSignal[]): Suggested[] {
  return signals.flatMap((s) => (s.type === 'grant.suggested' ? [s.body] : []));
}

function rushedIn(signals: readonly FatigueSignal[]): Rushed[] {
  return signals.flatMap((s) => (s.type === 'approval.rushed' ? [s.body] : []));
}

/** An agent whose statements share the fixture agent's partition, so only the replay can tell them apart. */
function neighbourAgent(ledger: TestLedger): string {
  let other = 'agent:other-0';
  for (let i = 1; eventPartitionOf(other, ledger.eventPartitions) !== eventPartitionOf(ledger.agent.principal, ledger.eventPartitions); i++) other = `agent:other-${i}`;
  return other;
}

/** Three identical tier-2 approvals, read long enough not to be rushed; returns the gate's suggestion, unsigned. */
function threeApprovals(ledger: TestLedger, gate = new GateFatigue()): { suggestion: Suggested; confirmations: ReturnType<typeof approvedConfirmation>[] } {
  const confirmations = [0, 1, 2].map(() => approvedConfirmation(ledger, {}, { readMs: 5_000 }));
  const signals = gate.signals(ledger);
  assert.deepEqual(rushedIn(signals), []);
  const [suggestion] = suggestionsIn(signals);
  assert.ok(suggestion !== undefined, 'the gate suggests a grant');
  assert.deepEqual(suggestion.requests, confirmations.map((c) => c.request.hash));
  return { suggestion, confirmations };
}

function suggest(ledger: TestLedger, body: Suggested): Posted {
  return ledger.say('grant.suggested', body, ledger.gate);
}

function rush(ledger: TestLedger, body: Rushed): Posted {
  return ledger.say('approval.rushed', body, ledger.gate);
}

/** One rushed approval of the fixture's payment; returns the gate's signal, unsigned. */
function oneRushed(ledger: TestLedger, overrides: Parameters<typeof approvedConfirmation>[1] = {}, gate = new GateFatigue()): { signal: Rushed; confirmation: ReturnType<typeof approvedConfirmation> } {
  const confirmation = approvedConfirmation(ledger, overrides, { readMs: 100 });
  const [signal] = rushedIn(gate.signals(ledger));
  assert.ok(signal !== undefined, 'the gate signals a rushed approval');
  return { signal, confirmation };
}

test('the gate\'s own signals verify: a suggestion after three approvals, rushed approvals, a batch, a large operation, another base', async () => {
  const ledger = new TestLedger();
  const eli = secondApprover(ledger);
  const gate = new GateFatigue();
  // Approved as soon as asked: each approval is rushed, and the third allow calls for a suggestion.
  for (let i = 0; i < 3; i++) approvedConfirmation(ledger, {}, { readMs: 0 });
  const signals = gate.signals(ledger);
  assert.deepEqual(signals.map((s) => s.type), ['approval.rushed', 'approval.rushed', 'approval.rushed', 'grant.suggested']);
  for (const signal of signals) ledger.say(signal.type, signal.body as never, ledger.gate);

  // A batch: two requests wait long, the approver reads the first and stamps the second 80 ms later.
  const a = ledger.propose({ args: { amountUsd: 10 } });
  const ra = recordDecision(ledger, a, {}, { deadlineMs: 60_000 }).request as Posted;
  const b = ledger.propose({ args: { amountUsd: 20 } });
  const rb = recordDecision(ledger, b, {}, { deadlineMs: 60_000 }).request as Posted;
  ledger.clock += 30_000;
  const read = respond(ledger, a, ra, 'approve');
  finalDecision(ledger, a, 2, 'allow', null);
  ledger.clock += 70;
  const stamped = respond(ledger, b, rb, 'approve');
  const batch = gate.sign(ledger);
  assert.equal(batch.length, 1);
  assert.equal((batch[0]?.entry.envelope.statement.body as Rushed).elapsedMs, Date.parse(stamped.entry.sequencedAt) - Date.parse(read.entry.sequencedAt));
  finalDecision(ledger, b, 2, 'allow', null);

  // Another approver's clock is their own; a large operation needs longer. Its allow is the third of a new round: a second suggestion.
  const big = approvedConfirmation(ledger, BIG, { readMs: 3_000, approver: eli });
  const more = gate.signals(ledger);
  assert.deepEqual(more.map((s) => s.type), ['approval.rushed', 'grant.suggested']);
  const large = rushedIn(more)[0] as Rushed;
  assert.deepEqual([large.approver, large.operationBytes, large.minReadMs], [eli.principal, operationBytes(big.proposal.entry.envelope.statement.body as BodyOf<'proposal.submitted'>), 8_000]);
  assert.deepEqual(suggestionsIn(more)[0]?.requests, [ra.hash, rb.hash, big.request.hash]);
  for (const signal of more) ledger.say(signal.type, signal.body as never, ledger.gate);
  assertValid(await verify(ledger));

  // A gate run with another reading-time base (any whole base is accepted).
  const other = new TestLedger();
  const slowGate = new GateFatigue({ minReadMs: 3_700 });
  approvedConfirmation(other, BIG, { readMs: 0 });
  const signed = slowGate.sign(other);
  assert.equal((signed[0]?.entry.envelope.statement.body as Rushed).minReadMs, 10_000);
  approvedConfirmation(other, {}, { readMs: 0 });
  assert.equal((slowGate.sign(other)[0]?.entry.envelope.statement.body as Rushed).minReadMs, 3_700);
  assertValid(await verify(other));
});

test('grant.suggested naming a request that no human approved fails at the suggestion', async () => {
  // Denied, still pending, or not a request at all.
  const denied = new TestLedger();
  const { suggestion } = threeApprovals(denied);
  const p = denied.propose();
  const d = recordDecision(denied, p, {}, { deadlineMs: 60_000 });
  respond(denied, p, d.request as Posted, 'deny');
  const deniedFinal = finalDecision(denied, p, 2, 'deny', 'HUMAN_DENIED');
  const s1 = suggest(denied, { ...suggestion, requests: [...suggestion.requests.slice(1), (d.request as Posted).hash], notBefore: deniedFinal.entry.sequencedAt });
  assertFailsAt(await verify(denied), 'POLICY_VIOLATION', s1.entry);

  const pending = new TestLedger();
  const three = threeApprovals(pending);
  const q = pending.propose();
  const open = recordDecision(pending, q, {}, { deadlineMs: 60_000 });
  respond(pending, q, open.request as Posted, 'approve');
  const s2 = suggest(pending, { ...three.suggestion, requests: [...three.suggestion.requests.slice(1), (open.request as Posted).hash] });
  finalDecision(pending, q, 2, 'allow', null);
  assertFailsAt(await verify(pending), 'POLICY_VIOLATION', s2.entry);

  const proposalNamed = new TestLedger();
  const named = threeApprovals(proposalNamed);
  const first = named.confirmations[0] as ReturnType<typeof approvedConfirmation>;
  const s3 = suggest(proposalNamed, { ...named.suggestion, requests: [first.proposal.hash, ...named.suggestion.requests.slice(1)] });
  assertFailsAt(await verify(proposalNamed), 'POLICY_VIOLATION', s3.entry);
});

test('grant.suggested naming a request pushed out of the replay window fails at the suggestion', async () => {
  const ledger = new TestLedger();
  const { suggestion } = threeApprovals(ledger);
  const posted = suggest(ledger, suggestion);
  assertValid(await verify(ledger, { replay: { maxPending: 3 } }));
  assertFailsAt(await verify(ledger, { replay: { maxPending: 2 } }), 'POLICY_VIOLATION', posted.entry);
});

test('grant.suggested naming a tier-3 approval fails at the suggestion', async () => {
  const ledger = new TestLedger();
  const shell = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'rm -rf build' } };
  const approved = [0, 1, 2].map(() => approvedConfirmation(ledger, shell, { readMs: 5_000 }));
  assert.deepEqual(approved.map((c) => c.tier), [3, 3, 3]);
  const last = approved[2] as ReturnType<typeof approvedConfirmation>;
  const posted = suggest(ledger, {
    agentId: ledger.agent.principal, actionType: shell.actionType, targetResource: shell.targetResource, recipient: shell.recipient, scope: shell.scope,
    tier: 3, requests: approved.map((c) => c.request.hash), notBefore: last.final.entry.sequencedAt, expiresAt: iso(Date.parse(last.final.entry.sequencedAt) + 3_600_000),
  });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', posted.entry);
});

test('grant.suggested for another operation than its requests\' proposals fails at the suggestion', async () => {
  const forgeries: Partial<Suggested>[] = [{ agentId: neighbourAgent(new TestLedger()) }, { actionType: 'payment.refund' }, { targetResource: 'payments/vendors/*' }, { recipient: 'globex-ltd' }, { scope: 'invoice:2026-12' }];
  for (const forged of forgeries) {
    const ledger = new TestLedger();
    const { suggestion } = threeApprovals(ledger);
    const posted = suggest(ledger, { ...suggestion, ...forged });
    assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', posted.entry);
  }
});

test('a request named by two suggestions, or twice by one, fails at the suggestion that names it again', async () => {
  const again = new TestLedger();
  const { suggestion } = threeApprovals(again);
  suggest(again, suggestion);
  const second = suggest(again, suggestion);
  assertFailsAt(await verify(again), 'POLICY_VIOLATION', second.entry);

  const twice = new TestLedger();
  const three = threeApprovals(twice);
  const requests = three.suggestion.requests;
  const posted = suggest(twice, { ...three.suggestion, requests: [requests[0] as string, ...requests] });
  assertFailsAt(await verify(twice), 'POLICY_VIOLATION', posted.entry);
});

test('a suggestion\'s tier, notBefore or expiresAt that does not follow from its requests fails at the suggestion', async () => {
  const forgeries: ((s: Suggested) => Partial<Suggested>)[] = [
    () => ({ tier: 1 }),
    () => ({ tier: 3 }),
    (s) => ({ notBefore: iso(Date.parse(s.notBefore) + 1) }),
    (s) => ({ notBefore: iso(Date.parse(s.notBefore) - 1) }),
    // The last request named must be the one decided last (notBefore is its decision's time).
    (s) => ({ requests: [s.requests[0] as string, s.requests[2] as string, s.requests[1] as string] }),
    (s) => ({ expiresAt: s.notBefore }),
    (s) => ({ expiresAt: iso(Date.parse(s.notBefore) - 60_000) }),
  ];
  for (const forge of forgeries) {
    const ledger = new TestLedger();
    const { suggestion } = threeApprovals(ledger);
    const posted = suggest(ledger, { ...suggestion, ...forge(suggestion) });
    assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', posted.entry);
  }
});

test('approval.rushed naming no in-time approve of its request by its approver fails at the signal', async () => {
  const cases: { name: string; build: (ledger: TestLedger) => Rushed }[] = [
    {
      name: 'a deny',
      build: (ledger) => {
        const { signal } = oneRushed(ledger);
        const p = ledger.propose();
        const d = recordDecision(ledger, p, {}, { deadlineMs: 60_000 });
        const no = respond(ledger, p, d.request as Posted, 'deny');
        finalDecision(ledger, p, 2, 'deny', 'HUMAN_DENIED');
        return { ...signal, proposal: p.hash, request: (d.request as Posted).hash, response: no.hash };
      },
    },
    {
      name: 'an approval after the deadline',
      build: (ledger) => {
        const p = ledger.propose();
        const d = recordDecision(ledger, p, {}, { deadlineMs: 1_000 });
        ledger.clock += 2_000;
        const late = respond(ledger, p, d.request as Posted, 'approve');
        return { agentId: ledger.agent.principal, proposal: p.hash, request: (d.request as Posted).hash, response: late.hash, approver: ledger.approver.principal, elapsedMs: 50, minReadMs: 2_000, operationBytes: operationBytes(p.entry.envelope.statement.body as BodyOf<'proposal.submitted'>) };
      },
    },
    { name: 'not a response', build: (ledger) => ({ ...oneRushed(ledger).signal, response: '00'.repeat(32) }) },
    { name: 'another approver', build: (ledger) => ({ ...oneRushed(ledger).signal, approver: 'approver:eli' }) },
    { name: 'another agent', build: (ledger) => ({ ...oneRushed(ledger).signal, agentId: neighbourAgent(ledger) }) },
    {
      name: 'another request',
      build: (ledger) => {
        const { signal } = oneRushed(ledger);
        return { ...signal, request: approvedConfirmation(ledger, {}, { readMs: 5_000 }).request.hash };
      },
    },
    {
      name: 'another proposal',
      build: (ledger) => {
        const { signal } = oneRushed(ledger);
        return { ...signal, proposal: approvedConfirmation(ledger, {}, { readMs: 5_000 }).proposal.hash };
      },
    },
  ];
  for (const { name, build } of cases) {
    const ledger = new TestLedger();
    const posted = rush(ledger, build(ledger));
    const report = await verify(ledger);
    assert.equal(report.failure?.index, posted.entry.index, name);
    assertFailsAt(report, 'POLICY_VIOLATION', posted.entry);
  }
});

test('approval.rushed with numbers that do not follow from the log fails at the signal', async () => {
  const cases: { name: string; forge: (s: Rushed) => Partial<Rushed>; big?: boolean }[] = [
    { name: 'operationBytes', forge: (s) => ({ operationBytes: s.operationBytes + 1 }) },
    { name: 'elapsedMs', forge: (s) => ({ elapsedMs: s.elapsedMs - 1 }) },
    { name: 'elapsedMs not below minReadMs', forge: (s) => ({ elapsedMs: s.elapsedMs, minReadMs: s.elapsedMs }) },
    { name: 'minReadMs above the cap', forge: () => ({ minReadMs: 10_001 }) },
    // About 1.6 kB: four reading units, so a minimum reading time is a multiple of 4 (or the 10 s cap).
    { name: 'minReadMs of no base', forge: () => ({ minReadMs: 7_001 }), big: true },
  ];
  for (const { name, forge, big } of cases) {
    const ledger = new TestLedger();
    const { signal } = oneRushed(ledger, big === true ? BIG : {});
    const posted = rush(ledger, { ...signal, ...forge(signal) });
    const report = await verify(ledger);
    assert.equal(report.failure?.index, posted.entry.index, `${name}: ${report.failure?.message ?? 'valid'}`);
    assertFailsAt(report, 'POLICY_VIOLATION', posted.entry);
  }

  // In a batch, elapsedMs runs from the approver's previous approval, not from the (long-waiting) request.
  const ledger = new TestLedger();
  const a = ledger.propose({ args: { amountUsd: 10 } });
  const ra = recordDecision(ledger, a, {}, { deadlineMs: 60_000 }).request as Posted;
  const b = ledger.propose({ args: { amountUsd: 20 } });
  const rb = recordDecision(ledger, b, {}, { deadlineMs: 60_000 });
  ledger.clock += 3_000;
  respond(ledger, a, ra, 'approve');
  finalDecision(ledger, a, 2, 'allow', null);
  const stamped = respond(ledger, b, rb.request as Posted, 'approve');
  finalDecision(ledger, b, 2, 'allow', null);
  const fromRequest = Date.parse(stamped.entry.sequencedAt) - Date.parse((rb.request as Posted).entry.sequencedAt);
  assert.ok(fromRequest > 3_000 && fromRequest < 10_000);
  const posted = rush(ledger, {
    agentId: ledger.agent.principal, proposal: b.hash, request: (rb.request as Posted).hash, response: stamped.hash, approver: ledger.approver.principal,
    elapsedMs: fromRequest, minReadMs: 10_000, operationBytes: operationBytes(b.entry.envelope.statement.body as BodyOf<'proposal.submitted'>),
  });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', posted.entry);
});

test('a second approval.rushed for one response fails at the second', async () => {
  const ledger = new TestLedger();
  const { signal } = oneRushed(ledger);
  rush(ledger, signal);
  const second = rush(ledger, signal);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', second.entry);
});

test('approval.rushed naming a response pushed out of the replay window fails at the signal', async () => {
  const ledger = new TestLedger();
  const gate = new GateFatigue();
  const { signal } = oneRushed(ledger, {}, gate);
  approvedConfirmation(ledger, { args: { amountUsd: 7 } }, { readMs: 5_000 });
  assert.deepEqual(gate.signals(ledger), []);
  const posted = rush(ledger, signal);
  assertValid(await verify(ledger, { replay: { maxPending: 2 } }));
  assertFailsAt(await verify(ledger, { replay: { maxPending: 1 } }), 'POLICY_VIOLATION', posted.entry);
});
