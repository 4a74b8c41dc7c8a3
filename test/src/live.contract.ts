import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { awaitStatement, signedFetch, type LedgerClient } from '@agent-ledger/client';
import { sha256Hex, type Envelope, type Entry } from '@agent-ledger/core';
import type { LogBus } from '@agent-ledger/kafka';
import { projectionDigest, resetProjection } from '@agent-ledger/store';
import { verifyBundle } from '@agent-ledger/verifier';
import { Projector, entryLocation, exportCommand, topicNames, type LedgerHome, type RunningLedger, type ServeRole } from '@agent-ledger/ledger';
import { clientFor, eventually, getJson, proposal, readAs } from './live.js';

/** One way to run the live ledger: on Kafka and PostgreSQL, or embedded (`ledger dev`). */
export interface LiveMode {
  readonly name: string;
  /** A new installation of this mode (its genesis with `freshnessMs` when given). */
  freshHome(options?: { freshnessMs?: number }): LedgerHome;
  /** Starts roles in this process on the installation's log and database. */
  start(home: LedgerHome, roles?: readonly ServeRole[]): Promise<RunningLedger>;
  /** A bus that reads the installation's committed log (as `ledger export` does). */
  reader(home: LedgerHome): LogBus;
}

const ALL: readonly ServeRole[] = ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem'];

/** Freshness of the installation whose gate decision waits out a sequencer outage (the genesis minimum is 1 s). */
const SHORT_FRESHNESS_MS = 3_000;

/** Every record of `topic` on Kafka partitions 0..partitions-1, as JSON, with its raw value. */
async function readAll<T>(bus: LogBus, topic: string, partitions: readonly number[]): Promise<{ value: Buffer; parsed: T }[]> {
  const found: { value: Buffer; parsed: T }[] = [];
  for (const partition of partitions) for await (const r of bus.readRange(topic, partition, '0')) found.push({ value: r.value, parsed: JSON.parse(r.value.toString()) as T });
  return found;
}

/**
 * The live ledger's main job, the same in every mode: decisions signed by the
 * gate, grants under four eyes, human approvals, denials and timeouts,
 * refusals on their SIEM topics, a restart that keeps every decision and
 * grant and continues every chain, export verified offline, and a
 * projection rebuilt from offset 0 to byte-identical tables. Set
 * LEDGER_DEADLINES_MS before calling (deadlines are read at start).
 */
export function runLiveContract(mode: LiveMode): void {
  describe(`live ledger: ${mode.name}`, { timeout: 600_000 }, () => {
    let home: LedgerHome;
    let running: RunningLedger;
    const decided: { agent: string; hash: string; outcome: string }[] = [];

    before(async () => {
      home = mode.freshHome();
      running = await mode.start(home, ALL);
      readAs(running, home.key('admin-alice'));
    });
    after(async () => {
      await running?.stop();
    });

    const client = (key: string): LedgerClient => clientFor(home, running, key);

    async function confirmation(body: ReturnType<typeof proposal>, agentKey = 'agent-support-bot'): Promise<{ proposalHash: string; requestHash: string }> {
      const { statementHash } = await client(agentKey).propose(body);
      return eventually(async () => {
        const { body: list } = await getJson<{ pending: { proposalHash: string; requestHash: string }[] }>(running, '/v1/pending');
        return list.pending.find((p) => p.proposalHash === statementHash);
      }, 30_000, 'a pending confirmation');
    }
    const emailCustomer = (): ReturnType<typeof proposal> =>
      proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' });

    test('a routine call is allowed by a decision the gate signed, bound to the proposal', async () => {
      const decision = await client('agent-build-bot').proposeAndWait(proposal(), 30_000);
      assert.equal(decision.outcome, 'allow');
      assert.equal(decision.entry.envelope.statement.author.keyId, home.key('gate').keyId);
      decided.push({ agent: 'agent-build-bot', hash: decision.proposal, outcome: decision.outcome });
    });

    test('grants take effect only co-signed; an exact block grant blocks and its refusal reaches the SIEM topic', async () => {
      const alice = client('admin-alice');
      const bob = client('admin-bob');
      const now = Date.now();
      const op = { agentId: 'agent:ops-bot', actionType: 'shell.exec', targetResource: 'host/db-01', recipient: 'none', scope: 'production' };
      const proposed = await alice.submit(alice.sign('grant.proposed', { grantId: 'block-db', ...op, notBefore: new Date(now - 60_000).toISOString(), expiresAt: new Date(now + 86_400_000).toISOString(), effect: 'block', tier: 3, parentGrantId: null }));
      const statusOf = async (): Promise<string | undefined> => (await getJson<{ grants: { grantId: string; status: string }[] }>(running, '/v1/grants')).body.grants.find((g) => g.grantId === 'block-db')?.status;
      assert.equal(await eventually(statusOf, 30_000, 'the proposed grant'), 'proposed');
      await bob.submit(bob.sign('grant.cosigned', { grantId: 'block-db', grant: proposed.statementHash }));
      await eventually(async () => ((await statusOf()) === 'active' ? true : undefined), 30_000, 'the co-signed grant to be active');
      await running.follower.waitFor(running.follower.current().size);
      const decision = await client('agent-ops-bot').proposeAndWait(proposal({ actionType: op.actionType, targetResource: op.targetResource, recipient: op.recipient, scope: op.scope, args: { command: 'systemctl restart postgresql' }, context: { environment: 'production' } }), 30_000);
      assert.deepEqual([decision.outcome, decision.code], ['block', 'GRANT_BLOCKED']);
      decided.push({ agent: 'agent-ops-bot', hash: decision.proposal, outcome: decision.outcome });
      const bus = mode.reader(home);
      try {
        const record = await eventually(async () => {
          for await (const r of bus.readRange(topicNames(home.config.topicPrefix).refusal('GRANT_BLOCKED'), 0, '0')) return JSON.parse(r.value.toString()) as Record<string, unknown>;
          return undefined;
        }, 30_000, 'a record on the GRANT_BLOCKED topic');
        assert.equal(record.status_code, 'GRANT_BLOCKED');
      } finally {
        await bus.close();
      }
    });

    test('approve, deny and timeout: silence is never consent', async () => {
      const support = client('agent-support-bot');
      const dana = client('approver-dana');
      const answer = async (p: { proposalHash: string; requestHash: string }, verdict: 'approve' | 'deny'): Promise<void> => {
        await dana.submit(dana.sign('human.response', { agentId: 'agent:support-bot', proposal: p.proposalHash, request: p.requestHash, answer: verdict, assurance: 'self_signed', platformIdentity: null }));
      };
      const approved = await confirmation(emailCustomer());
      await answer(approved, 'approve');
      assert.equal((await support.awaitDecision(approved.proposalHash, 30_000)).outcome, 'allow');
      const denied = await confirmation(emailCustomer());
      await answer(denied, 'deny');
      const deny = await support.awaitDecision(denied.proposalHash, 30_000);
      assert.deepEqual([deny.outcome, deny.code], ['deny', 'HUMAN_DENIED']);
      const silent = await confirmation(emailCustomer());
      const timeout = await support.awaitDecision(silent.proposalHash, 30_000);
      assert.deepEqual([timeout.outcome, timeout.code], ['deny', 'TIMEOUT']);
      decided.push(...[approved, denied, silent].map((p, i) => ({ agent: 'agent-support-bot', hash: p.proposalHash, outcome: i === 0 ? 'allow' : 'deny' })));
    });

    test('an insider with the gate\'s key signs answers the rules do not give: each is rejected on the log, live, with the code verify-chain would give', async () => {
      const gate = client('gate');
      const support = client('agent-support-bot');
      const alice = home.key('admin-alice');
      const pending = await confirmation(emailCustomer());
      // The gate's own statements on this proposal, read back from the log: the forgeries copy them field for field.
      const bus = mode.reader(home);
      const own = new Map<string, Record<string, unknown>>();
      try {
        await eventually(async () => {
          for (let p = 1; p <= home.config.eventPartitions; p++) {
            const { topic, partition } = entryLocation(topicNames(home.config.topicPrefix), p);
            for await (const r of bus.readRange(topic, partition, '0')) {
              const statement = (JSON.parse(r.value.toString()) as { envelope: { statement: { type: string; body: Record<string, unknown> } } }).envelope.statement;
              if (statement.body.proposal === pending.proposalHash) own.set(statement.type, statement.body);
            }
          }
          return own.has('decision.recorded') && own.has('confirmation.requested') ? true : undefined;
        }, 30_000, 'the gate\'s verify_first and its confirmation request on the log');
      } finally {
        await bus.close();
      }
      const first = own.get('decision.recorded') as Record<string, unknown>;
      assert.equal(first.outcome, 'verify_first');
      const forgeries: [string, ReturnType<LedgerClient['sign']>][] = [
        // No approval yet: an allow would be consent from silence.
        ['an allow without an approval', gate.sign('decision.recorded', { ...first, outcome: 'allow', code: null } as never)],
        // A first decision again: the proposal is no longer waiting for one.
        ['a second first decision (a block)', gate.sign('decision.recorded', { ...first, outcome: 'block', code: 'POLICY_VIOLATION' } as never)],
        // A second request for the same proposal, with a later deadline: the human's clock would start again.
        ['a second confirmation request', gate.sign('confirmation.requested', { ...own.get('confirmation.requested'), deadline: new Date(Date.now() + 3_600_000).toISOString() } as never)],
      ];
      for (const [what, envelope] of forgeries) {
        const { id } = await gate.submit(envelope);
        const outcome = await awaitStatement(running.apiUrl ?? '', id, 30_000, { signer: alice });
        assert.equal(outcome.status, 'rejected', `${what}: ${JSON.stringify(outcome)}`);
        assert.equal(outcome.status === 'rejected' ? outcome.code : null, 'POLICY_VIOLATION', what);
      }
      // The real request still stands, and the one answer that counts decides.
      const dana = client('approver-dana');
      await dana.submit(dana.sign('human.response', { agentId: 'agent:support-bot', proposal: pending.proposalHash, request: pending.requestHash, answer: 'approve', assurance: 'self_signed', platformIdentity: null }));
      const decision = await support.awaitDecision(pending.proposalHash, 30_000);
      assert.equal(decision.outcome, 'allow');
      assert.equal(decision.entry.envelope.statement.author.keyId, home.key('gate').keyId);
      decided.push({ agent: 'agent-support-bot', hash: pending.proposalHash, outcome: 'allow' });
    });

    test('a gate decision the sequencer rejects (it waited in intake through a sequencer outage) is made again by the restarted gate: one decision, and the export verifies', async () => {
      const outage = mode.freshHome({ freshnessMs: SHORT_FRESHNESS_MS });
      const topics = topicNames(outage.config.topicPrefix);
      const eventPartitions = Array.from({ length: outage.config.eventPartitions }, (_, k) => k);
      const intakePartitions = eventPartitions.map((k) => k + 1);
      const gateKeyId = outage.key('gate').keyId;
      // The proposal is sequenced while no gate runs.
      let ledger = await mode.start(outage, ['api', 'sequencer', 'projector']);
      let proposalHash: string;
      try {
        const submitted = await clientFor(outage, ledger, 'agent-build-bot').propose(proposal({ scope: 'outage' }));
        proposalHash = submitted.statementHash;
        const admitted = await awaitStatement(ledger.apiUrl ?? '', submitted.id, 30_000, { signer: outage.key('admin-alice') });
        assert.equal(admitted.status, 'admitted');
      } finally {
        await ledger.stop();
      }
      // The gate alone: it decides and commits its decision to intake, where no sequencer reads it.
      ledger = await mode.start(outage, ['gate']);
      const reader = mode.reader(outage);
      let first: { value: Buffer; parsed: Envelope };
      try {
        first = await eventually(async () => {
          const intake = await readAll<Envelope>(reader, topics.intake, intakePartitions);
          return intake.find(({ parsed }) => parsed.statement.type === 'decision.recorded' && parsed.statement.author.keyId === gateKeyId && (parsed.statement.body as { proposal: string }).proposal === proposalHash);
        }, 30_000, 'the gate\'s decision on intake');
      } finally {
        await ledger.stop();
      }
      // The sequencer stays down until the decision is older than the freshness the genesis sets.
      const staleAt = Date.parse(first.parsed.statement.issuedAt) + SHORT_FRESHNESS_MS + 100;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, staleAt - Date.now())));
      ledger = await mode.start(outage, ALL);
      try {
        const decision = await clientFor(outage, ledger, 'agent-build-bot').awaitDecision(proposalHash, 30_000);
        assert.equal(decision.outcome, 'allow');
        assert.equal(decision.entry.envelope.statement.author.keyId, gateKeyId);
        assert.notEqual(decision.entry.envelope.statement.id, first.parsed.statement.id, 'a new statement');
        // On the log: the first decision rejected as not fresh (by its input hash), then exactly one decision.
        const entries = (await readAll<Entry>(reader, topics.events, eventPartitions)).map((e) => e.parsed.envelope.statement);
        const rejected = entries.filter((st) => st.type === 'intake.rejected' && (st.body as { input: string }).input === sha256Hex(first.value));
        assert.deepEqual(rejected.map((st) => (st.body as { code: string }).code), ['REPLAY']);
        assert.equal(entries.filter((st) => st.type === 'decision.recorded' && (st.body as { proposal: string }).proposal === proposalHash).length, 1, 'exactly one decision');
        const metrics = await (await signedFetch(outage.key('admin-alice'))(`${ledger.apiUrl}/metrics`)).text();
        assert.match(metrics, /^ledger_rejected_signings_total\{role="gate",outcome="signed_again"\} 1$/m);
        assert.match(metrics, /^ledger_rejected_signings_total\{role="gate",outcome="abandoned"\} 0$/m);
        // verify-chain accepts the whole log, the rejection and the decision made again included.
        await new Promise((resolve) => setTimeout(resolve, outage.config.checkpointIntervalMs * 2));
        const out = join(outage.dir, 'export.ndjson');
        assert.equal(await exportCommand({ out, home: outage.dir }), 0);
        const report = await verifyBundle(createReadStream(out), outage.trustRoot, { workers: 1 });
        assert.equal(report.failure, null);
      } finally {
        await reader.close();
        await ledger.stop();
      }
    });

    test('after a restart on the same installation: every decision and grant is still there, and the chains go on', async () => {
      const sizeBefore = running.sequencers.map((s) => s.size);
      await running.stop();
      running = await mode.start(home, ALL);
      readAs(running, home.key('admin-alice'));
      for (const d of decided) {
        const again = await client(d.agent).awaitDecision(d.hash, 30_000);
        assert.equal(again.outcome, d.outcome, `decision of ${d.hash.slice(0, 12)}`);
      }
      const { body } = await getJson<{ grants: { grantId: string; status: string }[] }>(running, '/v1/grants');
      assert.equal(body.grants.find((g) => g.grantId === 'block-db')?.status, 'active');
      const after = await client('agent-build-bot').proposeAndWait(proposal({ scope: 'after-restart' }), 30_000);
      assert.equal(after.outcome, 'allow');
      const sizeAfter = running.sequencers.map((s) => s.size);
      assert.ok(sizeAfter.every((n, p) => n >= (sizeBefore[p] ?? 0)), `no partition went back: ${sizeBefore.join(',')} -> ${sizeAfter.join(',')}`);
    });

    test('the export verifies offline, and a projection rebuilt from offset 0 is byte-identical', async () => {
      await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2));
      const out = join(home.dir, 'export.ndjson');
      assert.equal(await exportCommand({ out, home: home.dir }), 0);
      const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
      assert.equal(report.failure, null);
      assert.ok(report.entries > 20, `${report.entries} entries`);
      await running.projector?.stop();
      const topics = topicNames(home.config.topicPrefix);
      const catchUp = new Projector(running.bus, running.pool, home.config.eventPartitions, topics);
      await catchUp.start();
      await catchUp.stop();
      const digest = await projectionDigest(running.pool);
      await resetProjection(running.pool);
      const rebuild = new Projector(running.bus, running.pool, home.config.eventPartitions, topics);
      await rebuild.start();
      await rebuild.stop();
      assert.equal(await projectionDigest(running.pool), digest);
    });
  });
}
