import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { createKafkaBus } from '@agent-ledger/kafka';
import { projectionDigest, resetProjection } from '@agent-ledger/store';
import { verifyBundle } from '@agent-ledger/verifier';
import { LedgerClient, signedFetch } from '@agent-ledger/client';
import { Projector, exportCommand, topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';

// The live ledger on the real broker and Postgres: proposals through the API,
// decisions signed by the gate, human answers, timeouts, the projection, the
// SIEM topics, export and offline verification, and hostile HTTP input.

process.env.LEDGER_DEADLINES_MS = '2:3000,3:3000,4:3000';

describe('live ledger', () => {
  let home: LedgerHome;
  let running: RunningLedger;
  let agent: LedgerClient;
  let ops: LedgerClient;

  before(async () => {
    home = freshHome();
    running = await start(home);
    agent = clientFor(home, running, 'agent-build-bot');
    ops = clientFor(home, running, 'agent-ops-bot');
  });
  after(async () => {
    await running?.stop();
  });

  test('a routine call is allowed, with a decision signed by the gate and bound to the proposal', async () => {
    const decision = await agent.proposeAndWait(proposal(), 30_000);
    assert.equal(decision.outcome, 'allow');
    assert.equal(decision.code, null);
    assert.equal(decision.entry.envelope.statement.author.keyId, home.key('gate').keyId);
  });

  test('an exact block grant blocks, and the refusal reaches its SIEM topic', async () => {
    const alice = clientFor(home, running, 'admin-alice');
    const bob = clientFor(home, running, 'admin-bob');
    const now = Date.now();
    const op = { agentId: 'agent:ops-bot', actionType: 'shell.exec', targetResource: 'host/db-01', recipient: 'none', scope: 'production' };
    const proposed = await alice.submit(alice.sign('grant.proposed', { grantId: 'block-db', ...op, notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 86_400_000).toISOString(), effect: 'block', tier: 3, parentGrantId: null }));
    await bob.submit(bob.sign('grant.cosigned', { grantId: 'block-db', grant: proposed.statementHash }));
    await eventually(async () => {
      const { body } = await getJson<{ grants: { grantId: string; status: string }[] }>(running, '/v1/grants');
      return body.grants.find((g) => g.grantId === 'block-db' && g.status === 'active');
    }, 20_000, 'the co-signed grant to be active');
    // The gate folds the authority stream on its own; give it the grant before proposing.
    await running.follower.waitFor(running.follower.current().size);
    const decision = await ops.proposeAndWait(proposal({ actionType: op.actionType, targetResource: op.targetResource, recipient: op.recipient, scope: op.scope, args: { command: 'systemctl restart postgresql' }, context: { environment: 'production' } }), 30_000);
    assert.equal(decision.outcome, 'block');
    assert.equal(decision.code, 'GRANT_BLOCKED');
    assert.match(decision.refusal ?? '', /^REFUSED: GRANT_BLOCKED: /);

    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'siem-check' });
    try {
      const topics = topicNames(home.config.topicPrefix);
      const record = await eventually(async () => {
        for await (const r of bus.readRange(topics.refusal('GRANT_BLOCKED'), 0, '0')) return JSON.parse(r.value.toString()) as Record<string, unknown>;
        return undefined;
      }, 20_000, 'a record on the GRANT_BLOCKED topic');
      assert.equal(record.class_uid, 6003);
      assert.equal(record.disposition, 'Blocked');
      assert.equal(record.status_code, 'GRANT_BLOCKED');
      assert.deepEqual((record.actor as { user: { uid: string } }).user.uid, 'agent:ops-bot');
    } finally {
      await bus.close();
    }
  });

  async function confirmation(body: ReturnType<typeof proposal>, agentKey = 'agent-support-bot'): Promise<{ proposalHash: string; requestHash: string }> {
    const support = clientFor(home, running, agentKey);
    const { statementHash } = await support.propose(body);
    return eventually(async () => {
      const { body: list } = await getJson<{ pending: { proposalHash: string; requestHash: string; status: string }[] }>(running, '/v1/pending');
      return list.pending.find((p) => p.proposalHash === statementHash);
    }, 20_000, 'a pending confirmation');
  }
  const emailCustomer = (): ReturnType<typeof proposal> =>
    proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' });

  test('approve, deny and timeout: silence is never consent', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const dana = clientFor(home, running, 'approver-dana');
    const answer = async (p: { proposalHash: string; requestHash: string }, verdict: 'approve' | 'deny'): Promise<void> => {
      await dana.submit(dana.sign('human.response', { agentId: 'agent:support-bot', proposal: p.proposalHash, request: p.requestHash, answer: verdict, assurance: 'self_signed', platformIdentity: null }));
    };
    const approved = await confirmation(emailCustomer());
    await answer(approved, 'approve');
    assert.equal((await support.awaitDecision(approved.proposalHash, 20_000)).outcome, 'allow');

    const denied = await confirmation(emailCustomer());
    await answer(denied, 'deny');
    const deny = await support.awaitDecision(denied.proposalHash, 20_000);
    assert.deepEqual([deny.outcome, deny.code], ['deny', 'HUMAN_DENIED']);

    const silent = await confirmation(emailCustomer());
    const timeout = await support.awaitDecision(silent.proposalHash, 30_000);
    assert.deepEqual([timeout.outcome, timeout.code], ['deny', 'TIMEOUT']);
  });

  test('tier 4 needs two distinct approvers; high and critical timeouts escalate and never approve', async () => {
    const answer = async (key: string, p: { proposalHash: string; requestHash: string }): Promise<void> => {
      const approver = clientFor(home, running, key);
      await approver.submit(approver.sign('human.response', { agentId: 'agent:ops-bot', proposal: p.proposalHash, request: p.requestHash, answer: 'approve', assurance: 'self_signed', platformIdentity: null }));
    };
    const levels = async (proposalHash: string): Promise<string[]> => {
      const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'escalation-check' });
      const found: string[] = [];
      try {
        for (let k = 0; k < home.config.eventPartitions; k++) {
          for await (const r of bus.readRange(topicNames(home.config.topicPrefix).events, k, '0')) {
            const statement = (JSON.parse(r.value.toString()) as { envelope: { statement: { type: string; body: { proposal?: string; level?: string } } } }).envelope.statement;
            if (statement.type === 'escalation.raised' && statement.body.proposal === proposalHash) found.push(String(statement.body.level));
          }
        }
      } finally {
        await bus.close();
      }
      return found;
    };
    const tierOf = (d: { entry: { envelope: { statement: { body: unknown } } } }): number => (d.entry.envelope.statement.body as { tier: number }).tier;
    const killAll = (): ReturnType<typeof proposal> => proposal({ args: { command: 'kill -9 -1' }, query: 'stop everything', context: { environment: 'production', crisis: false } });

    // Two approvals from ONE principal are one approval: the critical item times out.
    const once = await confirmation(killAll(), 'agent-ops-bot');
    await answer('approver-dana', once);
    await answer('approver-dana', once);
    const lonely = await ops.awaitDecision(once.proposalHash, 30_000);
    assert.deepEqual([lonely.outcome, lonely.code, tierOf(lonely)], ['deny', 'TIMEOUT', 4]);
    assert.deepEqual(await eventually(async () => ((await levels(once.proposalHash)).length > 0 ? levels(once.proposalHash) : undefined), 20_000, 'an escalation'), ['emergency']);

    // Two distinct approvers: allowed.
    const twice = await confirmation(killAll(), 'agent-ops-bot');
    await answer('approver-dana', twice);
    await answer('approver-eli', twice);
    const allowed = await ops.awaitDecision(twice.proposalHash, 20_000);
    assert.deepEqual([allowed.outcome, allowed.code], ['allow', null]);

    // A high-tier call nobody answers: denied (TIMEOUT) and escalated to an admin.
    const silent = await confirmation(proposal({ targetResource: 'repo/payments-service', scope: 'main', args: { command: 'git push --force origin main' }, context: { environment: 'production', crisis: false } }), 'agent-ops-bot');
    const timedOut = await ops.awaitDecision(silent.proposalHash, 30_000);
    assert.deepEqual([timedOut.outcome, timedOut.code, tierOf(timedOut)], ['deny', 'TIMEOUT', 3]);
    assert.deepEqual(await eventually(async () => ((await levels(silent.proposalHash)).length > 0 ? levels(silent.proposalHash) : undefined), 20_000, 'an escalation'), ['admin']);
  });

  test('hostile HTTP input gets a 4xx with its code; every refusal of a request the API read is recorded, marked with its code', async () => {
    const post = async (body: string | Buffer, type = 'application/json'): Promise<{ status: number; code: string }> => {
      const response = await fetch(`${running.apiUrl}/v1/statements`, { method: 'POST', headers: { 'content-type': type }, body });
      const json = (await response.json()) as { error?: { code: string } };
      return { status: response.status, code: json.error?.code ?? 'none' };
    };
    const envelope = agent.sign('proposal.submitted', { ...proposal(), agentId: 'agent:build-bot' });
    const text = JSON.stringify(envelope);
    const cases: [string, string | Buffer, string, number, string][] = [
      ['duplicate keys', text.replace('{"statement":', '{"signatures":[],"statement":'), 'application/json', 400, 'SCHEMA_INVALID'],
      ['not JSON', '{"statement":', 'application/json', 400, 'SCHEMA_INVALID'],
      ['wrong content type', text, 'text/plain', 400, 'SCHEMA_INVALID'],
      ['too deep', `${'['.repeat(100)}${']'.repeat(100)}`, 'application/json', 400, 'SCHEMA_INVALID'],
      ['oversize', Buffer.alloc(300 * 1024, 0x20), 'application/json', 400, 'SCHEMA_INVALID'],
      ['unknown field', JSON.stringify({ ...envelope, extra: 1 }), 'application/json', 400, 'SCHEMA_INVALID'],
      ['big integer', text.replace('"args":{', '"args":{"n":9007199254740993,'), 'application/json', 400, 'SCHEMA_INVALID'],
      ['bad signature', text.replace('check the build output', 'check the build outpuT'), 'application/json', 401, 'INVALID_SIGNATURE'],
      // The role first, as in the sequencer's admission and verify-chain: an agent's key may not write it.
      ['intake.rejected from outside', JSON.stringify(agent.sign('intake.rejected', { agentId: 'agent:build-bot', code: 'REPLAY', detail: 'x', input: '0'.repeat(64) })), 'application/json', 403, 'KEY_ROLE'],
    ];
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'intake-check' });
    const topics = topicNames(home.config.topicPrefix);
    try {
      const before = await bus.endOffsets(topics.intake);
      for (const [name, body, type, status, code] of cases) {
        assert.deepEqual(await post(body, type), { status, code }, name);
      }
      // Every refusal went to intake, marked with its code, those refused before the body was read (content type, size) too.
      const markedSince = async (from: ReadonlyMap<number, string>): Promise<string[]> => {
        const marked: string[] = [];
        for (const [partition, end] of await bus.endOffsets(topics.intake)) {
          if (end === from.get(partition)) continue;
          for await (const r of bus.readRange(topics.intake, partition, from.get(partition) ?? '0')) marked.push(r.headers['ledger-refused'] ?? 'none');
        }
        return marked.sort();
      };
      const recordedCodes = cases.map(([, , , , code]) => code);
      assert.deepEqual(await markedSince(before), [...recordedCodes].sort());
      // A signed statement refused at the API is recorded too: one intake record, marked with the API's code.
      const afterHostile = await bus.endOffsets(topics.intake);
      const stranger = new LedgerClient({ baseUrl: running.apiUrl as string, signer: { ...home.key('agent-build-bot'), seed: home.key('admin-alice').seed, keyId: home.key('admin-alice').keyId }, deciderKeys: [] });
      await assert.rejects(stranger.propose(proposal()), (err: { code?: string }) => err.code === 'KEY_ROLE');
      assert.deepEqual(await markedSince(afterHostile), ['KEY_ROLE']);
    } finally {
      await bus.close();
    }
    assert.equal((await signedFetch(home.key('admin-alice'))(`${running.apiUrl}/v1/decisions/not-a-hash`)).status, 400);
    assert.equal((await fetch(`${running.apiUrl}/no/such/route`)).status, 404);
    const metrics = await (await signedFetch(home.key('admin-alice'))(`${running.apiUrl}/metrics`)).text();
    assert.match(metrics, /ledger_api_refusals_total\{code="SCHEMA_INVALID"\} \d+/);
    assert.equal((await fetch(`${running.apiUrl}/healthz`)).status, 200);
    const openapi = (await (await fetch(`${running.apiUrl}/openapi.json`)).json()) as { openapi: string };
    assert.equal(openapi.openapi, '3.1.0');
  });

  test('export verifies offline; receipts verify; a rebuild gives byte-identical tables', async () => {
    await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2));
    const out = join(home.dir, 'export.ndjson');
    assert.equal(await exportCommand({ out, home: home.dir }), 0);
    const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
    assert.equal(report.failure, null);
    assert.ok(report.entries > 20, `${report.entries} entries`);

    const { status, body: receipt } = await getJson<{ entry: { index: number } }>(running, '/v1/receipts/0/1');
    assert.equal(status, 200);
    assert.equal(receipt.entry.index, 1);

    const pool = new pg.Pool({ connectionString: home.config.pgUrl });
    try {
      // Stop the live projector and bring the tables to the log's end, then rebuild from offset 0.
      await running.projector?.stop();
      const topics = topicNames(home.config.topicPrefix);
      const catchUp = new Projector(running.bus, pool, home.config.eventPartitions, topics);
      await catchUp.start();
      await catchUp.stop();
      const digest = await projectionDigest(pool);
      await resetProjection(pool);
      const rebuild = new Projector(running.bus, pool, home.config.eventPartitions, topics);
      await rebuild.start();
      await rebuild.stop();
      assert.equal(await projectionDigest(pool), digest);
    } finally {
      await pool.end();
    }
  });
});
