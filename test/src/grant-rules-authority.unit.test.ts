import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type BodyOf, type Role, type Signer } from '@agent-ledger/core';
import { newSigner } from '@agent-ledger/ledger';
import { TestLedger } from './fixtures.js';
import { decideLatest, ledgerV2 } from './grant-rules-support.js';
import { decide } from '@agent-ledger/gate';
import { CRITICAL, assertFailsAt, assertValid, gateState, iso, recordDecision, verify, type Posted } from './replay-support.js';

// Authority rules version 2 (SPEC.md section 7.3), attacked offline: each
// bundle is built with the project's own signer, every other statement is
// valid, and verify-chain must fail at exactly the attacking entry with the
// rule's code. The same AuthorityState fold runs in the sequencer's
// admission and the API's dry run (grant-rules-authority.int.test.ts).

/** A key registration authored by `author`, also signed by `cosigners` (other admins, the subject's current key, the new key itself). */
function register(ledger: TestLedger, key: Signer, roles: Role[], author: Signer, cosigners: readonly Signer[]): Posted {
  return ledger.say('key.registered', { keyId: key.keyId, principal: key.principal, roles }, author, { extraSigners: cosigners });
}

test('attack 1: one admin registers a new admin (a key she holds) alone: SEPARATION_OF_DUTIES', async () => {
  const { ledger } = ledgerV2();
  const mallory = newSigner('admin:mallory');
  const alone = register(ledger, mallory, ['admin'], ledger.admin, [mallory]);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', alone.entry);
});

test('attack 1: one admin registers a second key for another admin: refused without that admin\'s current key, and with one admin', async () => {
  const { ledger, carol } = ledgerV2();
  const bob2 = newSigner(ledger.admin2.principal);
  // alice and carol (two admins) but not bob's current key: no proof that bob asked for it.
  const noCurrent = register(ledger, bob2, ['admin'], ledger.admin, [carol, bob2]);
  assertFailsAt(await verify(ledger), 'INVALID_SIGNATURE', noCurrent.entry);

  // bob's current key and alice alone: one admin other than bob, two needed.
  const { ledger: l2 } = ledgerV2();
  const bob3 = newSigner(l2.admin2.principal);
  const oneAdmin = register(l2, bob3, ['admin'], l2.admin, [l2.admin2, bob3]);
  assertFailsAt(await verify(l2), 'SEPARATION_OF_DUTIES', oneAdmin.entry);
});

test('attack 1: two keys of one admin count once toward four eyes', async () => {
  const { ledger, carol } = ledgerV2();
  const alice2 = newSigner(ledger.admin.principal);
  // A legitimate second key for alice: her current key, bob and carol, and the key itself.
  register(ledger, alice2, ['admin'], ledger.admin, [ledger.admin2, carol, alice2]);
  const mallory = newSigner('admin:mallory');
  const twoKeys = register(ledger, mallory, ['admin'], ledger.admin, [alice2, mallory]);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', twoKeys.entry);
});

test('every new key proves possession of itself: a registration the new key did not sign is INVALID_SIGNATURE', async () => {
  const { ledger } = ledgerV2();
  const erin = newSigner('admin:erin');
  const unsigned = register(ledger, erin, ['admin'], ledger.admin, [ledger.admin2]);
  assertFailsAt(await verify(ledger), 'INVALID_SIGNATURE', unsigned.entry);

  const { ledger: l2 } = ledgerV2();
  const agent = newSigner('agent:new-bot');
  const agentUnsigned = register(l2, agent, ['agent'], l2.admin, []);
  assertFailsAt(await verify(l2), 'INVALID_SIGNATURE', agentUnsigned.entry);
});

test('a co-signer without the admin role does not count: KEY_ROLE', async () => {
  const { ledger } = ledgerV2();
  const erin = newSigner('admin:erin');
  const byApprover = register(ledger, erin, ['admin'], ledger.admin, [ledger.approver, erin]);
  assertFailsAt(await verify(ledger), 'KEY_ROLE', byApprover.entry);
});

test('privileged roles and new keys of an existing agent need four eyes; a new agent needs one admin and its own key', async () => {
  for (const role of ['approver', 'gate', 'timer', 'bridge', 'sequencer'] as const) {
    const { ledger } = ledgerV2();
    const key = newSigner(`${role}:extra`);
    const alone = register(ledger, key, [role], ledger.admin, [key]);
    assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', alone.entry);
  }
  const { ledger } = ledgerV2();
  const second = newSigner(ledger.agent.principal);
  const agentAlone = register(ledger, second, ['agent'], ledger.admin, [ledger.agent, second]);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', agentAlone.entry);

});

test('honest registrations under four eyes verify', async () => {
  const { ledger, carol } = ledgerV2();
  const newBot = newSigner('agent:other-bot');
  register(ledger, newBot, ['agent'], ledger.admin, [newBot]);
  const erin = newSigner('admin:erin');
  register(ledger, erin, ['admin'], ledger.admin, [ledger.admin2, erin]);
  const bob2 = newSigner(ledger.admin2.principal);
  register(ledger, bob2, ['admin'], carol, [ledger.admin2, erin, bob2]);
  const second = newSigner(ledger.agent.principal);
  register(ledger, second, ['agent'], ledger.admin, [carol, ledger.agent, second]);
  assertValid(await verify(ledger));
});

test('agents hold the agent role only; a bridge is neither approver nor admin: SEPARATION_OF_DUTIES', async () => {
  for (const roles of [['agent', 'gate'], ['agent', 'timer'], ['bridge', 'approver']] as Role[][]) {
    const { ledger } = ledgerV2();
    const key = newSigner(roles[0] === 'agent' ? 'agent:sneaky' : 'bridge:two');
    const both = register(ledger, key, roles, ledger.admin, [ledger.admin2, key]);
    assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', both.entry);
  }
  const { ledger } = ledgerV2();
  const agentKind = newSigner('agent:gate-bot');
  const asGate = register(ledger, agentKind, ['gate'], ledger.admin, [ledger.admin2, agentKind]);
  assertFailsAt(await verify(ledger), 'SEPARATION_OF_DUTIES', asGate.entry);
});

test('the generic service role is of rules 1: refused under rules 2 (POLICY_VIOLATION)', async () => {
  const { ledger } = ledgerV2();
  const key = newSigner('service:old');
  const old = register(ledger, key, ['service'], ledger.admin, [ledger.admin2, key]);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', old.entry);
});

test('attacks 2 and 11: a decision signed by the timer\'s key fails KEY_ROLE, live and offline alike', async () => {
  const { ledger, timer } = ledgerV2();
  const proposal = ledger.propose();
  const first = decideLatest(ledger, proposal);
  const forged = ledger.say(
    'decision.recorded',
    { agentId: ledger.agent.principal, proposal: proposal.hash, outcome: 'allow', code: null, tier: first.expected.tier, risk: 0, authorityIndex: ledger.authoritySize, grantId: null, grantEntry: null, rulesVersion: 2 },
    timer,
  );
  assertFailsAt(await verify(ledger), 'KEY_ROLE', forged.entry);
});

test('only the gate signs classifications, screening, confirmations, refusals and fatigue signals; only the timer signs timeouts and escalations', async () => {
  const cases: { type: 'classification.recorded' | 'timeout.recorded' | 'escalation.raised' | 'refusal.recorded'; body: (p: string, r: string) => unknown; wrong: 'gate' | 'timer' }[] = [
    { type: 'classification.recorded', wrong: 'timer', body: (p) => ({ proposal: p, tier: 1, risk: 0, rules: [] }) },
    { type: 'refusal.recorded', wrong: 'timer', body: (p) => ({ proposal: p, code: 'POLICY_VIOLATION', refusal: 'REFUSED: POLICY_VIOLATION: x' }) },
    { type: 'timeout.recorded', wrong: 'gate', body: (p, r) => ({ proposal: p, request: r, deadline: '2026-11-01T08:00:01.000Z' }) },
    { type: 'escalation.raised', wrong: 'gate', body: (p) => ({ proposal: p, level: 'admin', reason: 'no answer' }) },
  ];
  for (const c of cases) {
    const { ledger, timer } = ledgerV2();
    const proposal = ledger.propose();
    const signer = c.wrong === 'gate' ? ledger.gate : timer;
    const body = { agentId: ledger.agent.principal, ...(c.body(proposal.hash, proposal.hash) as object) };
    const wrong = ledger.say(c.type, body as never, signer);
    assertFailsAt(await verify(ledger), 'KEY_ROLE', wrong.entry);
  }
});

test('attack 9: a bridge claiming self_signed fails KEY_ROLE; a bridge plus one approver never makes two at tier 4', async () => {
  const { ledger, bridge } = ledgerV2();
  const proposal = ledger.propose(CRITICAL);
  const first = decideLatest(ledger, proposal);
  assert.equal(first.expected.tier, 4);
  const request = first.request as Posted;
  const claim = (assurance: 'self_signed' | 'platform'): BodyOf<'human.response'> => ({
    agentId: ledger.agent.principal, proposal: proposal.hash, request: request.hash, answer: 'approve', assurance, platformIdentity: 'telegram:42',
  });
  const lie = ledger.say('human.response', claim('self_signed'), bridge);
  assertFailsAt(await verify(ledger), 'KEY_ROLE', lie.entry);

  const { ledger: l2, bridge: bridge2 } = ledgerV2();
  const p2 = l2.propose(CRITICAL);
  const f2 = decideLatest(l2, p2);
  const r2 = f2.request as Posted;
  l2.say('human.response', { agentId: l2.agent.principal, proposal: p2.hash, request: r2.hash, answer: 'approve', assurance: 'platform', platformIdentity: 'telegram:42' }, bridge2);
  l2.say('human.response', { agentId: l2.agent.principal, proposal: p2.hash, request: r2.hash, answer: 'approve', assurance: 'self_signed', platformIdentity: null }, l2.approver);
  const allowed = l2.say(
    'decision.recorded',
    { agentId: l2.agent.principal, proposal: p2.hash, outcome: 'allow', code: null, tier: 4, risk: 0, authorityIndex: l2.authoritySize, grantId: null, grantEntry: null, rulesVersion: 2 },
    l2.gate,
  );
  assertFailsAt(await verify(l2), 'POLICY_VIOLATION', allowed.entry);
});

test('an approver key claiming platform assurance fails KEY_ROLE (assurance is the key\'s role, both ways)', async () => {
  const { ledger } = ledgerV2();
  const proposal = ledger.propose();
  const first = decideLatest(ledger, proposal);
  const request = first.request as Posted;
  const claim = ledger.say(
    'human.response',
    { agentId: ledger.agent.principal, proposal: proposal.hash, request: request.hash, answer: 'deny', assurance: 'platform', platformIdentity: 'web' },
    ledger.approver,
  );
  assertFailsAt(await verify(ledger), 'KEY_ROLE', claim.entry);
});

test('a timer timeout and a gate final decision verify under rules 2', async () => {
  const { ledger, timer } = ledgerV2();
  const proposal = ledger.propose();
  const first = decideLatest(ledger, proposal, {}, { deadlineMs: 100 });
  assert.equal(first.expected.outcome, 'verify_first');
  ledger.clock += 200;
  ledger.say('timeout.recorded', { agentId: ledger.agent.principal, proposal: proposal.hash, request: (first.request as Posted).hash, deadline: first.deadline }, timer);
  ledger.say('escalation.raised', { agentId: ledger.agent.principal, proposal: proposal.hash, level: 'admin', reason: 'no answer before the deadline' }, timer);
  ledger.say(
    'decision.recorded',
    { agentId: ledger.agent.principal, proposal: proposal.hash, outcome: 'deny', code: 'TIMEOUT', tier: first.expected.tier, risk: 0, authorityIndex: ledger.authoritySize, grantId: null, grantEntry: null, rulesVersion: 2 },
    ledger.gate,
  );
  assertValid(await verify(ledger));
});

test('rules 1 ledgers keep today\'s rules: one admin registers an admin, a service key signs everything', async () => {
  const ledger = new TestLedger();
  const erin = newSigner('admin:erin');
  ledger.say('key.registered', { keyId: erin.keyId, principal: erin.principal, roles: ['admin'] }, ledger.admin);
  const gateKind = newSigner('service:new');
  const v2role = ledger.say('key.registered', { keyId: gateKind.keyId, principal: gateKind.principal, roles: ['gate'] }, ledger.admin);
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', v2role.entry);
  assert.ok(iso(0));
});

// Attack 3: the agent signs `channel` itself, so under gate rules 2 the risk
// threshold comes from what the authority says about the agent (its
// registration, else the genesis default), never from the proposal.
const RISKY = { tool: 'shell', actionType: 'shell.exec', targetResource: 'host/build-01', recipient: 'none', scope: 'workspace', args: { command: 'ls' }, context: { environment: 'production', crisis: true } };
const CHANNELS = ['api', 'cli', 'telegram', 'discord', 'web'] as const;

test('attack 3: the same call gets the same outcome whatever channel it claims (gate rules 2)', () => {
  for (const [options, expected] of [[{}, 'verify_first'], [{ agentThreshold: 3 }, 'allow'], [{ riskThreshold: 2.5 }, 'allow'], [{ riskThreshold: 2.5, agentThreshold: 1 }, 'verify_first']] as const) {
    const { ledger } = ledgerV2(options);
    const state = gateState(ledger, ledger.authoritySize);
    const outcomes = CHANNELS.map((channel) => {
      const body = { ...ledger.propose({ ...RISKY, channel }).entry.envelope.statement.body } as BodyOf<'proposal.submitted'>;
      const d = decide({ now: ledger.clock, channel, context: body.context, proposal: body }, state, { rulesVersion: 2 });
      assert.deepEqual([d.tier, d.risk], [1, 2]);
      return d.outcome;
    });
    assert.deepEqual(outcomes, CHANNELS.map(() => expected), JSON.stringify(options));
  }
  // Rules 1, kept to replay old decisions, still read the channel.
  const { ledger } = ledgerV2();
  const state = gateState(ledger, ledger.authoritySize);
  const byChannel = (channel: 'api' | 'cli') => decide({ now: ledger.clock, channel, context: RISKY.context, proposal: { ...RISKY, agentId: ledger.agent.principal, query: '' } }, state, { rulesVersion: 1 }).outcome;
  assert.deepEqual([byChannel('api'), byChannel('cli')], ['verify_first', 'allow']);
});

test('attack 3 offline: an allow the claimed channel would have earned fails verify-chain at the decision (POLICY_VIOLATION)', async () => {
  const { ledger } = ledgerV2();
  const proposal = ledger.propose({ ...RISKY, channel: 'cli' });
  const forged = decideLatest(ledger, proposal, { outcome: 'allow', code: null });
  assert.equal(forged.expected.outcome, 'verify_first');
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', forged.decision.entry);

  const { ledger: honest } = ledgerV2({ agentThreshold: 3 });
  const allowed = decideLatest(honest, honest.propose({ ...RISKY, channel: 'api' }));
  assert.equal(allowed.expected.outcome, 'allow');
  assertValid(await verify(honest));
});

test('a decision under gate rules 1 (the channel threshold; no rulesVersion named) on an authority-rules-2 ledger is POLICY_VIOLATION', async () => {
  const { ledger } = ledgerV2();
  // A payment both rule versions leave to a human: only the version (absent: 1) is wrong.
  const named = recordDecision(ledger, ledger.propose());
  assert.equal(named.expected.outcome, 'verify_first');
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', named.decision.entry);
  const { ledger: honest } = ledgerV2();
  decideLatest(honest, honest.propose());
  assertValid(await verify(honest));
});

test('a risk threshold on a non-agent key, or under rules 1, is POLICY_VIOLATION', async () => {
  const { ledger } = ledgerV2();
  const erin = newSigner('approver:erin');
  const onApprover = ledger.say('key.registered', { keyId: erin.keyId, principal: erin.principal, roles: ['approver'], riskThreshold: 9 }, ledger.admin, { extraSigners: [ledger.admin2, erin] });
  assertFailsAt(await verify(ledger), 'POLICY_VIOLATION', onApprover.entry);

  const v1 = new TestLedger();
  const bot = newSigner('agent:new-bot');
  const underV1 = v1.say('key.registered', { keyId: bot.keyId, principal: bot.principal, roles: ['agent'], riskThreshold: 9 }, v1.admin);
  assertFailsAt(await verify(v1), 'POLICY_VIOLATION', underV1.entry);
});
