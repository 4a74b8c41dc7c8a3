import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { LedgerClient, signedFetch } from '@agent-ledger/client';
import { initHome, type LedgerHome } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { eventually, proposal } from './live.js';
import { PrivateBroker, PrivateCluster, freePort } from './private-stack.js';

// One `ledger serve --target all` process (api, sequencer, gate, projector,
// timer, siem, notify) rides out what used to end it: every one of its
// Postgres connections terminated (pg_terminate_backend, the API's LISTEN
// client included), Postgres restarting, and its broker killed while a
// confirmation deadline falls due (the timer's publish fails). It never
// exits, /readyz reports the outage and then recovers, and every proposal
// gets exactly its decision. Broker and Postgres are the test's own.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');

describe('a serve process survives blips', () => {
  let broker: PrivateBroker;
  let cluster: PrivateCluster;
  let home: LedgerHome;
  let child: ChildProcess;
  let api: string;
  const exits: string[] = [];
  const id = randomBytes(4).toString('hex');
  const database = `ledger_s${id}`;

  before(async () => {
    [broker, cluster] = await Promise.all([PrivateBroker.start(), PrivateCluster.start()]);
    process.env.LEDGER_KAFKA_BROKERS = broker.address;
    const dir = mkdtempSync(join(tmpdir(), 'ledger-survival-'));
    const apiPort = await freePort();
    home = initHome(dir, { origin: `ledger.test/${database}`, eventPartitions: 2, topicPrefix: `s${id}`, pgUrl: cluster.url(database), apiPort });
    api = `http://127.0.0.1:${apiPort}`;
    const log = createWriteStream(join(dir, 'serve.log'), { flags: 'a' });
    child = spawn(process.execPath, [bin, 'serve', '--home', dir, '--target', 'all'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LEDGER_KAFKA_BROKERS: broker.address, LEDGER_DEADLINES_MS: '2:2500,3:2500,4:2500' },
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    child.once('exit', (code, signal) => exits.push(`exit ${code ?? signal}`));
    await ready(120_000);
  });
  after(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    }
    await broker?.stop();
    await cluster?.stop();
  });

  async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
    try {
      const response = await fetch(`${api}/readyz`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    } catch {
      return { status: 0, body: {} };
    }
  }

  async function ready(timeoutMs: number): Promise<void> {
    await eventually(async () => ((await readyz()).status === 200 ? true : undefined), timeoutMs, '/readyz to answer 200');
  }

  const client = (key: string): LedgerClient => new LedgerClient({ baseUrl: api, signer: home.key(key), deciderKeys: [home.key('gate').keyId] });

  /** Proposes a routine call, retrying the submission while the API answers UNAVAILABLE, and waits for its decision. */
  async function routineAllowed(): Promise<void> {
    const agent = client('agent-build-bot');
    const decision = await eventually(async () => {
      try {
        return await agent.proposeAndWait(proposal(), 20_000);
      } catch (err) {
        if ((err as { retryable?: boolean }).retryable === true) return undefined;
        throw err;
      }
    }, 90_000, 'a routine proposal decided');
    assert.equal(decision.outcome, 'allow');
  }

  async function terminateBackends(): Promise<number> {
    const admin = new pg.Client({ connectionString: cluster.url('postgres') });
    admin.on('error', () => undefined);
    await admin.connect();
    try {
      const result = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      return result.rows.filter((r) => r.ok).length;
    } finally {
      await admin.end();
    }
  }

  test('pg_terminate_backend of every connection, five rounds, and a Postgres restart: the process stays up and decides', async () => {
    await routineAllowed();
    let terminated = 0;
    for (let round = 0; round < 5; round++) {
      terminated += await terminateBackends();
      await routineAllowed();
    }
    assert.ok(terminated >= 5, `connections terminated (${terminated}), the LISTEN connection among them`);
    await cluster.stopImmediately();
    await eventually(async () => ((await readyz()).status === 503 ? true : undefined), 30_000, '/readyz to report Postgres down');
    await cluster.restart();
    await ready(60_000);
    await routineAllowed();
    const metrics = await (await signedFetch(home.key('admin-alice'))(`${api}/metrics`)).text();
    assert.match(metrics, /^ledger_api_decision_listener_losses [1-9]\d*$/m, 'the LISTEN connection was lost and re-opened');
    assert.deepEqual(exits, [], 'the serve process never exited');
    process.stdout.write(`# postgres: ${terminated} connections terminated in 5 rounds, one restart; role exits: ${exits.length}\n`);
  });

  test('broker killed while a confirmation falls due: no crash, /readyz shows the outage, the timeout is decided once', async () => {
    const support = client('agent-support-bot');
    const { statementHash } = await support.propose(
      proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:4711', args: { to: 'customer@example.com', subject: 'Your refund' }, query: 'tell the customer' }),
    );
    await eventually(async () => {
      const list = (await (await signedFetch(home.key('admin-alice'))(`${api}/v1/pending`)).json()) as { pending: { proposalHash: string }[] };
      return list.pending.some((p) => p.proposalHash === statementHash) ? true : undefined;
    }, 30_000, 'the confirmation request');
    await broker.kill();
    // The deadline (2.5 s) passes while the broker is away: the timer's publish fails and is retried.
    await eventually(async () => ((await readyz()).status === 503 ? true : undefined), 30_000, '/readyz to report the broker down');
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await broker.restart();
    await ready(120_000);
    const decision = await support.awaitDecision(statementHash, 90_000);
    assert.deepEqual([decision.outcome, decision.code], ['deny', 'TIMEOUT']);
    await routineAllowed();
    const metrics = await (await signedFetch(home.key('admin-alice'))(`${api}/metrics`)).text();
    assert.match(metrics, /^ledger_dependency_failures_total\{dependency="broker",code="UNAVAILABLE"\} [1-9]\d*$/m, 'the outage is counted as UNAVAILABLE');
    assert.deepEqual(exits, [], 'the serve process never exited');
    process.stdout.write(`# broker: ${broker.kills} kill with an overdue confirmation; decided ${decision.outcome}/${decision.code}; role exits: ${exits.length}\n`);
  });
});
