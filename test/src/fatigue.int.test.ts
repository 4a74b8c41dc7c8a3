import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerError } from '@agent-ledger/refusals';
import { statementHash, type BodyOf, type Statement } from '@agent-ledger/core';
import { verifyBundle } from '@agent-ledger/verifier';
import { approveCommand, exportCommand, topicNames, type LedgerHome, type RunningLedger } from '@agent-ledger/ledger';
import { clientFor, eventually, freshHome, getJson, proposal, start } from './live.js';
import { signedFetch } from '@agent-ledger/client';

// Confirmation fatigue on the real broker and Postgres: identical approvals
// give one signed grant suggestion and change no decision; approvals faster
// than the operation can be read give a signed rubber-stamp signal and a
// metric; session trust never becomes a grant without a second admin; the
// exported log still verifies offline.

process.env.LEDGER_DEADLINES_MS = '2:30000,3:30000,4:30000';
process.env.LEDGER_SUGGEST_AFTER = '3';
// The longest reading time: an approval given as soon as the request is listed is always sooner.
process.env.LEDGER_MIN_READ_MS = '10000';

function grantOf(decision: { entry: { envelope: { statement: { body: unknown } } } }): string | null {
  return (decision.entry.envelope.statement.body as BodyOf<'decision.recorded'>).grantId;
}

interface LoggedStatement {
  type: string;
  author: { principal: string };
  body: Record<string, unknown>;
}

describe('confirmation fatigue, live', () => {
  let home: LedgerHome;
  let running: RunningLedger;

  before(async () => {
    home = freshHome();
    running = await start(home);
  });
  after(async () => {
    await running?.stop();
  });

  const refund = (): ReturnType<typeof proposal> =>
    proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' });

  async function confirmation(body: ReturnType<typeof proposal>): Promise<{ proposalHash: string; requestHash: string }> {
    const support = clientFor(home, running, 'agent-support-bot');
    const { statementHash } = await support.propose(body);
    return eventually(async () => {
      const { body: list } = await getJson<{ pending: { proposalHash: string; requestHash: string }[] }>(running, '/v1/pending');
      return list.pending.find((p) => p.proposalHash === statementHash);
    }, 20_000, 'a pending confirmation');
  }

  async function approve(p: { proposalHash: string; requestHash: string }): Promise<void> {
    const dana = clientFor(home, running, 'approver-dana');
    await dana.submit(dana.sign('human.response', { agentId: 'agent:support-bot', proposal: p.proposalHash, request: p.requestHash, answer: 'approve', assurance: 'self_signed', platformIdentity: null }));
  }

  async function events(): Promise<LoggedStatement[]> {
    const found: LoggedStatement[] = [];
    for (let k = 0; k < home.config.eventPartitions; k++) {
      for await (const r of running.bus.readRange(topicNames(home.config.topicPrefix).events, k, '0')) {
        found.push((JSON.parse(r.value.toString()) as { envelope: { statement: LoggedStatement } }).envelope.statement);
      }
    }
    return found;
  }

  async function authorityGrants(): Promise<{ hash: string; type: string; grantId: string | undefined }[]> {
    const found: { hash: string; type: string; grantId: string | undefined }[] = [];
    for await (const r of running.bus.readRange(topicNames(home.config.topicPrefix).authority, 0, '0')) {
      const statement = (JSON.parse(r.value.toString()) as { envelope: { statement: Statement } }).envelope.statement;
      found.push({ hash: statementHash(statement), type: statement.type, grantId: (statement.body as { grantId?: string }).grantId });
    }
    return found;
  }

  const requests: string[] = [];

  test('three identical approvals: three allows, one grant.suggested naming them, rubber-stamp signals and metrics', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    for (let i = 0; i < 3; i++) {
      const p = await confirmation(refund());
      requests.push(p.requestHash);
      await approve(p);
      const decision = await support.awaitDecision(p.proposalHash, 20_000);
      assert.deepEqual([decision.outcome, decision.code], ['allow', null]);
    }
    const suggested = await eventually(async () => {
      const found = (await events()).filter((s) => s.type === 'grant.suggested');
      return found.length > 0 ? found : undefined;
    }, 20_000, 'a grant.suggested on the log');
    assert.equal(suggested.length, 1);
    const body = (suggested[0] as LoggedStatement).body;
    assert.equal((suggested[0] as LoggedStatement).author.principal, 'service:gate');
    assert.deepEqual(
      [body.agentId, body.actionType, body.targetResource, body.recipient, body.scope, body.tier, body.requests],
      ['agent:support-bot', 'email.send', 'mail/outbound', 'customer@example.com', 'ticket:4711', 2, requests],
    );

    const rushed = await eventually(async () => {
      const found = (await events()).filter((s) => s.type === 'approval.rushed');
      return found.length >= 3 ? found : undefined;
    }, 20_000, 'three approval.rushed on the log');
    assert.deepEqual(rushed.map((s) => [s.body.approver, s.body.minReadMs]), [['approver:dana', 10_000], ['approver:dana', 10_000], ['approver:dana', 10_000]]);
    assert.ok(rushed.every((s) => (s.body.elapsedMs as number) < 10_000));

    const metrics = await (await signedFetch(home.key('admin-alice'))(`${running.apiUrl}/metrics`)).text();
    assert.match(metrics, /^ledger_grant_suggestions_total 1$/m);
    assert.match(metrics, /^ledger_rubber_stamp_total\{approver="approver:dana"\} 3$/m);

    // A suggestion is not a grant: the same operation still waits for a human.
    const fourth = await confirmation(refund());
    assert.ok(fourth.requestHash.length === 64);
    await approve(fourth);
    assert.equal((await support.awaitDecision(fourth.proposalHash, 20_000)).outcome, 'allow');
  });

  test('session trust cannot bypass four eyes', async () => {
    const support = clientFor(home, running, 'agent-support-bot');
    const api = running.apiUrl as string;
    const first = await confirmation(refund());
    // Longer than an hour: refused before anything is answered.
    await assert.rejects(approveCommand({ home: home.dir, api, approve: first.proposalHash.slice(0, 16), session: '2h', json: true }), (err: unknown) => err instanceof LedgerError && err.code === 'POLICY_VIOLATION');
    // Without an admin key: the approval is signed, the grant is only printed.
    assert.equal(await approveCommand({ home: home.dir, api, approve: first.proposalHash.slice(0, 16), session: '15m', json: true }), 0);
    assert.equal((await support.awaitDecision(first.proposalHash, 20_000)).outcome, 'allow');
    const grantId = `session-${first.proposalHash.slice(0, 16)}`;

    // An approver forging the grant with its own key: refused at intake (an approver key cannot write grants).
    const dana = clientFor(home, running, 'approver-dana');
    const now = Date.now();
    const forged = { grantId: 'forged-session', agentId: 'agent:support-bot', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', notBefore: new Date(now).toISOString(), expiresAt: new Date(now + 900_000).toISOString(), effect: 'allow' as const, tier: 2, parentGrantId: null };
    await dana.submit(dana.sign('grant.proposed', forged)).catch(() => undefined);

    // With admin:alice: proposed, not active. Alice co-signing her own proposal is refused.
    const second = await confirmation(refund());
    assert.equal(await approveCommand({ home: home.dir, api, approve: second.proposalHash.slice(0, 16), session: '15m', admin: 'admin:alice', json: true }), 0);
    assert.equal((await support.awaitDecision(second.proposalHash, 20_000)).outcome, 'allow');
    const sessionGrantId = `session-${second.proposalHash.slice(0, 16)}`;
    const proposed = await eventually(async () => {
      const { body } = await getJson<{ grants: { grantId: string; proposalHash?: string; status: string }[] }>(running, '/v1/grants');
      return body.grants.find((g) => g.grantId === sessionGrantId);
    }, 20_000, 'the session grant in the projection');
    assert.notEqual(proposed.status, 'active');
    const authority = await authorityGrants();
    assert.equal(authority.filter((e) => e.grantId === grantId || e.grantId === 'forged-session').length, 0, 'neither the printed nor the forged grant is on the authority log');
    const grantStatement = (authority.find((e) => e.type === 'grant.proposed' && e.grantId === sessionGrantId) as { hash: string }).hash;
    const alice = clientFor(home, running, 'admin-alice');
    await assert.rejects(
      alice.submit(alice.sign('grant.cosigned', { grantId: sessionGrantId, grant: grantStatement })),
      (err: unknown) => err instanceof LedgerError && err.code === 'SEPARATION_OF_DUTIES',
      'the proposer cannot co-sign her own session grant',
    );
    // Still left to a human (a grant-allowed proposal never reaches the pending queue).
    const third = await confirmation(refund());
    await approve(third);
    assert.equal(grantOf(await support.awaitDecision(third.proposalHash, 20_000)), null, 'a session grant without a second admin authorises nothing');

    // A second admin co-signs: the gate's one grant rule now allows the exact operation, citing the grant.
    const bob = clientFor(home, running, 'admin-bob');
    await bob.submit(bob.sign('grant.cosigned', { grantId: sessionGrantId, grant: grantStatement }));
    const allowed = await eventually(async () => {
      const d = await support.proposeAndWait(refund(), 20_000);
      return d.outcome === 'allow' && grantOf(d) === sessionGrantId ? d : undefined;
    }, 30_000, 'an allow citing the co-signed session grant');
    assert.equal(grantOf(allowed), sessionGrantId);
    // Another recipient is not covered.
    const other = await confirmation(proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'someone-else@example.com', scope: 'ticket:4711', args: {}, query: 'tell them' }));
    assert.equal(other.proposalHash.length, 64);
  });

  test('the exported log, signals included, verifies offline', async () => {
    await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2));
    const out = join(home.dir, 'fatigue.ndjson');
    assert.equal(await exportCommand({ out, home: home.dir }), 0);
    const text = readFileSync(out, 'utf8');
    assert.match(text, /"type":"grant\.suggested"/);
    assert.match(text, /"type":"approval\.rushed"/);
    const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
    assert.equal(report.failure, null);
  });
});
