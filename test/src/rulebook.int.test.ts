import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { eventPartitionOf } from '@agent-ledger/core';
import { LATEST_RULES_VERSION } from '@agent-ledger/gate';
import { createKafkaBus } from '@agent-ledger/kafka';
import { verifyBundle } from '@agent-ledger/verifier';
import { exportCommand, serve, topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';

// The rulebook's holes closed live, on the real broker and Postgres, exactly
// as verify-chain judges them: a revoked key's pending proposal (attack 12)
// and an answer sequenced on another partition (attack 10).

process.env.LEDGER_DEADLINES_MS = '2:3000,3:3000,4:3000';

describe('the rulebook, live', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let gate: RunningLedger | undefined;

  before(async () => {
    home = freshHome();
    // No gate yet: proposals wait undecided, as under a gate outage.
    running = await start(home, ['api', 'sequencer', 'projector', 'timer', 'siem']);
  });
  after(async () => {
    await gate?.stop();
    await running?.stop();
  });

  async function eventsOf(type: string): Promise<{ body: Record<string, unknown>; partition: number }[]> {
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'rulebook-check' });
    const found: { body: Record<string, unknown>; partition: number }[] = [];
    try {
      for (let k = 0; k < home.config.eventPartitions; k++) {
        for await (const r of bus.readRange(topicNames(home.config.topicPrefix).events, k, '0')) {
          const entry = JSON.parse(r.value.toString()) as { partition: number; envelope: { statement: { type: string; body: Record<string, unknown> } } };
          if (entry.envelope.statement.type === type) found.push({ body: entry.envelope.statement.body, partition: entry.partition });
        }
      }
    } finally {
      await bus.close();
    }
    return found;
  }

  test('attack 12: a proposal sequenced before its key was revoked and decided after is blocked with KEY_REVOKED', async () => {
    const deploy = clientFor(home, running, 'agent-deploy-bot');
    const alice = clientFor(home, running, 'admin-alice');
    const { statementHash } = await deploy.propose(proposal());
    const keyId = home.key('agent-deploy-bot').keyId;
    await alice.submit(alice.sign('key.revoked', { keyId, reason: 'key compromised' }));
    await eventually(async () => (running.follower.current().state.key(keyId)?.revokedAt !== undefined ? true : undefined), 20_000, 'the revocation on the authority stream');
    gate = await serve(home, ['gate']);
    // The revoked key reads nothing any more (signed reads): an admin reads the decision.
    const decision = await alice.awaitDecision(statementHash, 60_000);
    assert.deepEqual([decision.outcome, decision.code], ['block', 'KEY_REVOKED']);
    assert.equal((decision.entry.envelope.statement.body as { rulesVersion?: number }).rulesVersion, LATEST_RULES_VERSION);
  });

  test('attack 10: an answer on another partition does not count, is refused on the log, and the deadline is enforced', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const dana = clientFor(home, running, 'approver-dana');
    const home1 = eventPartitionOf('agent:support-bot', home.config.eventPartitions);
    const elsewhere = ['agent:ops-bot', 'agent:billing-bot', 'agent:build-bot', 'agent:deploy-bot'].find((a) => eventPartitionOf(a, home.config.eventPartitions) !== home1) as string;
    assert.ok(elsewhere, 'an agent on another partition');
    const { statementHash } = await support.propose(proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' }));
    const pending = await eventually(async () => {
      const { body } = await getJson<{ pending: { proposalHash: string; requestHash: string }[] }>(running, '/v1/pending');
      return body.pending.find((p) => p.proposalHash === statementHash);
    }, 20_000, 'a pending confirmation');
    // The answer names the right proposal and request, but an agent whose statements live on another partition.
    let accepted = true;
    try {
      await dana.submit(dana.sign('human.response', { agentId: elsewhere, proposal: statementHash, request: pending.requestHash, answer: 'approve', assurance: 'self_signed', platformIdentity: null }));
    } catch {
      accepted = false; // refused at the API: it never reaches the log, which is as good
    }
    const decision = await support.awaitDecision(statementHash, 60_000);
    assert.deepEqual([decision.outcome, decision.code], ['deny', 'TIMEOUT']);
    if (accepted) {
      const refusals = await eventually(async () => {
        const found = (await eventsOf('refusal.recorded')).filter((r) => r.body.proposal === statementHash && r.body.code === 'STALE_APPROVAL');
        return found.length > 0 ? found : undefined;
      }, 20_000, 'the misrouted answer refused on the log');
      assert.equal(refusals[0]?.partition, eventPartitionOf(elsewhere, home.config.eventPartitions));
    }
  });

  test('the export verifies offline', async () => {
    await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2));
    const out = join(home.dir, 'export.ndjson');
    assert.equal(await exportCommand({ out, home: home.dir }), 0);
    const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
    assert.equal(report.failure, null, report.failure?.message);
  });
});
