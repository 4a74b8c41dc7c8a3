import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerError } from '@agent-ledger/refusals';
import { createKafkaBus } from '@agent-ledger/kafka';
import { LedgerClient } from '@agent-ledger/client';
import { EntrySchema, createStatement, nodeEd25519, parseStrictJson, partitionOf, sha256Hex, signStatement, type BodyOf, type Entry, type Envelope } from '@agent-ledger/core';
import { entryLocation, newSigner, topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';

// Authority rules 2 on the running ledger (real broker and Postgres; `ledger
// init` writes version 2): each attack is refused by the API's dry run with
// the rule's ReasonCode, and, published straight to the intake topic, by the
// sequencer as a signed intake.rejected entry with the same code: the one
// AuthorityState fold verify-chain runs (grant-rules-authority.unit.test.ts).

describe('authority rules 2, live', { timeout: 240_000 }, () => {
  let home: LedgerHome;
  let running: RunningLedger;

  before(async () => {
    home = freshHome();
    running = await start(home);
  });
  after(async () => {
    await running?.stop();
  });

  async function refused(promise: Promise<unknown>, code: string): Promise<void> {
    await assert.rejects(promise, (err: unknown) => err instanceof LedgerError && err.code === code, `expected ${code}`);
  }

  /** Publishes an envelope straight to intake, past the API, and returns the code of the intake.rejected entry the sequencer signs for it. */
  async function rejectedPastTheApi(envelope: Envelope): Promise<string> {
    const raw = JSON.stringify(envelope);
    const input = sha256Hex(raw);
    const partition = partitionOf(envelope.statement, home.config.eventPartitions);
    const topics = topicNames(home.config.topicPrefix);
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: `authority-bypass-${input.slice(0, 8)}` });
    try {
      await bus.publish([{ topic: topics.intake, partition, key: null, value: raw }]);
      const where = entryLocation(topics, partition);
      return await eventually(async () => {
        for await (const record of bus.readRange(where.topic, where.partition, '0')) {
          const entry = EntrySchema.parse(parseStrictJson(record.value.toString('utf8'))) as unknown as Entry;
          const statement = entry.envelope.statement;
          if (statement.type === 'intake.rejected' && (statement.body as BodyOf<'intake.rejected'>).input === input) return (statement.body as BodyOf<'intake.rejected'>).code;
        }
        return undefined;
      }, 30_000, 'the intake.rejected entry');
    } finally {
      await bus.close();
    }
  }

  /** A pending confirmation for a support-bot email (tier 2: a human confirms). */
  async function pendingEmail(): Promise<{ proposalHash: string; requestHash: string }> {
    const support = clientFor(home, running, 'agent-support-bot');
    const { statementHash } = await support.propose(
      proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' }),
    );
    return eventually(async () => {
      const { body } = await getJson<{ pending: { proposalHash: string; requestHash: string }[] }>(running, '/v1/pending');
      return body.pending.find((p) => p.proposalHash === statementHash);
    }, 30_000, 'a pending confirmation');
  }

  test('attack 1: one admin registering a new admin (a key she holds) is SEPARATION_OF_DUTIES at the API and at the sequencer', async () => {
    const alice = clientFor(home, running, 'admin-alice');
    const mallory = newSigner('admin:mallory');
    const statement = createStatement('key.registered', { keyId: mallory.keyId, principal: mallory.principal, roles: ['admin'] }, home.key('admin-alice'));
    const alone = signStatement(statement, [home.key('admin-alice'), mallory], nodeEd25519);
    await refused(alice.submit(alone), 'SEPARATION_OF_DUTIES');
    assert.equal(await rejectedPastTheApi(alone), 'SEPARATION_OF_DUTIES');
    // A second key for admin:bob signed by alice alone (without bob's current key).
    const bob2 = newSigner('admin:bob');
    const forBob = signStatement(createStatement('key.registered', { keyId: bob2.keyId, principal: bob2.principal, roles: ['admin'] }, home.key('admin-alice')), [home.key('admin-alice'), bob2], nodeEd25519);
    await refused(alice.submit(forBob), 'INVALID_SIGNATURE');
    assert.equal(running.follower.current().state.key(mallory.keyId), undefined);
    // Four eyes: alice and bob together, with the new key's proof of possession, register it.
    const carol = newSigner('admin:carol');
    const both = signStatement(createStatement('key.registered', { keyId: carol.keyId, principal: carol.principal, roles: ['admin'] }, home.key('admin-alice')), [home.key('admin-alice'), home.key('admin-bob'), carol], nodeEd25519);
    await alice.submit(both);
    // Refusals are recorded on the log too (intake.rejected): wait for the registration itself.
    const registered = await eventually(async () => running.follower.current().state.key(carol.keyId), 30_000, 'the registration');
    assert.equal(registered.principal, 'admin:carol');
  });

  test('attack 2: a final decision signed by the timer\'s key is KEY_ROLE at the API and at the sequencer', async () => {
    const pending = await pendingEmail();
    const timer = new LedgerClient({ baseUrl: running.apiUrl as string, signer: home.key('timer'), deciderKeys: [home.key('gate').keyId] });
    const forged = timer.sign('decision.recorded', {
      agentId: 'agent:support-bot', proposal: pending.proposalHash, outcome: 'allow', code: null, tier: 2, risk: 0, authorityIndex: running.follower.current().size, grantId: null, grantEntry: null,
    });
    await refused(timer.submit(forged), 'KEY_ROLE');
    assert.equal(await rejectedPastTheApi(forged), 'KEY_ROLE');
  });

  test('attack 9: the chat bridge claiming self_signed assurance is KEY_ROLE at the API and at the sequencer', async () => {
    const pending = await pendingEmail();
    const bridge = new LedgerClient({ baseUrl: running.apiUrl as string, signer: home.key('bridge-chat'), deciderKeys: [home.key('gate').keyId] });
    const lie = bridge.sign('human.response', { agentId: 'agent:support-bot', proposal: pending.proposalHash, request: pending.requestHash, answer: 'approve', assurance: 'self_signed', platformIdentity: 'telegram:42' });
    await refused(bridge.submit(lie), 'KEY_ROLE');
    assert.equal(await rejectedPastTheApi(lie), 'KEY_ROLE');
  });

  test('attack 3: the same call gets the same decision whatever channel the agent claims', async () => {
    const ops = clientFor(home, running, 'agent-ops-bot');
    // Tier 1, risk 2 (production and crisis context): under the channel rule "cli" (3.0) allowed it at once and "api" (1.5) did not.
    const call = (channel: 'api' | 'cli') => proposal({ args: { command: 'ls' }, channel, context: { environment: 'production', crisis: true, nonce: channel } });
    const outcomes: string[] = [];
    for (const channel of ['api', 'cli'] as const) {
      const { statementHash } = await ops.propose(call(channel));
      const decided = await eventually(async () => {
        const { body } = await getJson<{ records: { proposalHash: string; outcome: string; code: string | null }[] }>(running, '/v1/enforcement?agentId=agent:ops-bot&limit=50');
        return body.records.find((r) => r.proposalHash === statementHash);
      }, 30_000, 'the first decision');
      outcomes.push(`${decided.outcome}:${String(decided.code)}`);
    }
    assert.deepEqual(outcomes, ['verify_first:GRANT_MISSING', 'verify_first:GRANT_MISSING']);
  });

  test('item 6: a grant for a $19.99 payment allows $19.99, not $19,990 (GRANT_MISMATCH); a widening delegation is refused; the trail shows the constraints', async () => {
    const alice = clientFor(home, running, 'admin-alice');
    const bob = clientFor(home, running, 'admin-bob');
    const billing = clientFor(home, running, 'agent-billing-bot');
    const op = { actionType: 'payment.send', targetResource: 'payments/vendors/acme', recipient: 'acme-corp', scope: 'invoice:2026-11' };
    const constraints: NonNullable<BodyOf<'grant.proposed'>['constraints']> = [{ kind: 'range', path: 'amountUsd', min: 0, max: 19.99 }];
    const grant: BodyOf<'grant.proposed'> = {
      grantId: 'small-payment', agentId: 'agent:billing-bot', ...op, notBefore: new Date(Date.now() - 60_000).toISOString(), expiresAt: new Date(Date.now() + 86_400_000).toISOString(), effect: 'allow', tier: 3, parentGrantId: null, constraints,
    };
    const { statementHash } = await alice.submit(alice.sign('grant.proposed', grant));
    await bob.submit(bob.sign('grant.cosigned', { grantId: 'small-payment', grant: statementHash }));
    // Refusals are recorded on the log too: wait for the grant itself to be in force.
    await eventually(async () => (running.follower.current().state.grants.grant('small-payment')?.proposal.effectiveAt ?? null) !== null || undefined, 30_000, 'the grant in force');
    await refused(
      alice.submit(alice.sign('grant.proposed', { ...grant, grantId: 'wider', parentGrantId: 'small-payment', constraints: [{ kind: 'range', path: 'amountUsd', min: 0, max: 19_990 }] })),
      'DELEGATION_WIDENS',
    );
    const pay = (amountUsd: number) => proposal({ tool: 'payments', ...op, args: { amountUsd }, query: 'pay the invoice', context: { environment: 'staging', nonce: String(amountUsd) } });
    const small = await billing.proposeAndWait(pay(19.99), 30_000);
    assert.deepEqual([small.outcome, (small.entry.envelope.statement.body as BodyOf<'decision.recorded'>).grantId], ['allow', 'small-payment']);
    const big = await billing.propose(pay(19_990));
    const decided = await eventually(async () => {
      const { body } = await getJson<{ records: { proposalHash: string; outcome: string; code: string | null }[] }>(running, '/v1/enforcement?agentId=agent:billing-bot&limit=50');
      return body.records.find((r) => r.proposalHash === big.statementHash);
    }, 30_000, 'the first decision');
    assert.deepEqual([decided.outcome, decided.code], ['verify_first', 'GRANT_MISMATCH']);
    const trail = await eventually(async () => {
      const { status, body } = await getJson<{ grant?: { constraints?: unknown } }>(running, '/v1/grants/small-payment/trail');
      return status === 200 ? body : undefined;
    }, 30_000, 'the grant trail');
    assert.deepEqual(trail.grant?.constraints, constraints);
  });
});
