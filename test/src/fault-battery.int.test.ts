import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createStatement, eventPartitionOf, nodeEd25519, signStatement, statementHash, type Entry, type Envelope } from '@agent-ledger/core';
import { createKafkaBus, type LogBus } from '@agent-ledger/kafka';
import { verifyBundle } from '@agent-ledger/verifier';
import { LedgerClient } from '@agent-ledger/client';
import { entryLocation, exportCommand, initHome, topicNames, type LedgerHome } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { eventually, proposal } from './live.js';
import { PrivateBroker, PrivateCluster, freePort } from './private-stack.js';

// Fault batteries on the real roles (separate processes), each ending with
// the same tally: acknowledged statements, admitted exactly once, decided
// exactly once (one final decision each), lost, duplicated, role exits,
// and whether the exported ledger passes verify-chain.
//  1. the sequencer SIGKILLed again and again under a deep intake backlog;
//  2. a broker of the test's own killed while confirmations fall due;
//  3. pg_terminate_backend rounds against a Postgres cluster of the test's own.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A role process; `exits` collects every exit this test did not cause. */
class Role {
  readonly name: string;
  readonly #home: LedgerHome;
  readonly #roles: string[];
  readonly #env: Record<string, string>;
  #child: ChildProcess | undefined;
  #killing = false;
  readonly exits: string[] = [];

  constructor(home: LedgerHome, roles: string[], name: string, env: Record<string, string> = {}) {
    this.#home = home;
    this.#roles = roles;
    this.name = name;
    this.#env = env;
  }

  start(): void {
    const log = createWriteStream(join(this.#home.dir, `${this.name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [bin, 'serve', '--home', this.#home.dir, '--target', ...this.#roles], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.#env } });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    children.add(child);
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (!this.#killing) {
        this.exits.push(`${this.name}: ${code ?? signal}`);
        // The supervisor's part: start it again.
        this.start();
      }
    });
    this.#child = child;
  }

  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    this.#killing = true;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
    this.#killing = false;
  }
}

interface Tally {
  acknowledged: number;
  admittedOnce: number;
  decidedOnce: number;
  lost: number;
  duplicated: number;
  decidedTwice: number;
  undecided: number;
  roleExits: number;
  verifyChain: string;
}

function line(name: string, t: Tally): string {
  return `# ${name}: acknowledged ${t.acknowledged}, admitted once ${t.admittedOnce}, decided once ${t.decidedOnce}, lost ${t.lost}, duplicated ${t.duplicated}, decided twice ${t.decidedTwice}, undecided ${t.undecided}, role exits ${t.roleExits}, verify-chain ${t.verifyChain}\n`;
}

async function readAll(bus: LogBus, home: LedgerHome): Promise<Entry[]> {
  const topics = topicNames(home.config.topicPrefix);
  const entries: Entry[] = [];
  for (let p = 1; p <= home.config.eventPartitions; p++) {
    const { topic, partition } = entryLocation(topics, p);
    for await (const r of bus.readRange(topic, partition, '0')) entries.push(JSON.parse(r.value.toString('utf8')) as Entry);
  }
  return entries;
}

/** Counts, for the acknowledged statements (id -> proposal hash), what the log holds. */
function count(entries: readonly Entry[], acknowledged: ReadonlyMap<string, string>): Omit<Tally, 'roleExits' | 'verifyChain'> {
  const admitted = new Map<string, number>();
  const decided = new Map<string, number>();
  for (const entry of entries) {
    const statement = entry.envelope.statement;
    if (acknowledged.has(statement.id)) admitted.set(statement.id, (admitted.get(statement.id) ?? 0) + 1);
    if (statement.type === 'decision.recorded') {
      const body = statement.body as { proposal: string; outcome: string };
      if (body.outcome !== 'verify_first') decided.set(body.proposal, (decided.get(body.proposal) ?? 0) + 1);
    }
  }
  let admittedOnce = 0;
  let lost = 0;
  let duplicated = 0;
  let decidedOnce = 0;
  let decidedTwice = 0;
  let undecided = 0;
  for (const [id, hash] of acknowledged) {
    const n = admitted.get(id) ?? 0;
    if (n === 0) lost += 1;
    else if (n === 1) admittedOnce += 1;
    else duplicated += 1;
    const d = decided.get(hash) ?? 0;
    if (d === 1) decidedOnce += 1;
    else if (d > 1) decidedTwice += 1;
    else if (n > 0) undecided += 1;
  }
  return { acknowledged: acknowledged.size, admittedOnce, decidedOnce, lost, duplicated, decidedTwice, undecided };
}

/** Waits until every acknowledged statement is admitted and decided (or the time is up), then exports and verifies. */
async function settle(bus: LogBus, home: LedgerHome, acknowledged: ReadonlyMap<string, string>, roles: readonly Role[], timeoutMs: number): Promise<Tally> {
  const deadline = Date.now() + timeoutMs;
  let counts = count(await readAll(bus, home), acknowledged);
  while ((counts.admittedOnce + counts.duplicated < counts.acknowledged || counts.undecided > 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    counts = count(await readAll(bus, home).catch(() => []), acknowledged);
  }
  // Sealed checkpoints for the tail, then the offline check.
  await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2));
  const out = join(home.dir, 'export.ndjson');
  let verifyChain: string;
  if ((await exportCommand({ out, home: home.dir })) !== 0) verifyChain = 'export failed';
  else {
    const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
    verifyChain = report.failure === null ? `passes (${report.entries} entries)` : `fails: ${report.failure.code} at ${report.failure.partition}/${report.failure.index}`;
  }
  return { ...counts, roleExits: roles.reduce((n, r) => n + r.exits.length, 0), verifyChain };
}

function assertClean(t: Tally, what: string): void {
  assert.deepEqual(
    { lost: t.lost, duplicated: t.duplicated, decidedTwice: t.decidedTwice, undecided: t.undecided, roleExits: t.roleExits, decidedOnce: t.decidedOnce, verifies: t.verifyChain.startsWith('passes') },
    { lost: 0, duplicated: 0, decidedTwice: 0, undecided: 0, roleExits: 0, decidedOnce: t.acknowledged, verifies: true },
    `${what}: ${line(what, t)}`,
  );
}

function newHome(options: { pgUrl?: string; apiPort?: number } = {}): LedgerHome {
  const id = randomBytes(4).toString('hex');
  return initHome(mkdtempSync(join(tmpdir(), 'ledger-battery-')), {
    origin: `ledger.test/${id}`,
    eventPartitions: 2,
    topicPrefix: `f${id}`,
    pgUrl: options.pgUrl ?? `postgres://postgres@127.0.0.1:5432/ledger_f${id}`,
    apiPort: options.apiPort ?? 0,
  });
}

const routine = (n: number): ReturnType<typeof proposal> => proposal({ args: { command: `ls -la /srv/app/${n}` } });
const email = (n: number): ReturnType<typeof proposal> =>
  proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: `ticket:${n}`, args: { to: 'customer@example.com', subject: `Your refund ${n}` }, query: 'tell the customer' });

/** Signs a proposal of `key` and publishes it to intake, retrying while the broker is away; acknowledged once the broker has it. */
async function publish(bus: LogBus, home: LedgerHome, key: string, body: ReturnType<typeof proposal>, acknowledged: Map<string, string>): Promise<void> {
  const agent = home.key(key);
  const statement = createStatement('proposal.submitted', { ...body, agentId: agent.principal }, agent);
  const envelope: Envelope = signStatement(statement, [agent], nodeEd25519);
  const topics = topicNames(home.config.topicPrefix);
  const partition = eventPartitionOf(agent.principal, home.config.eventPartitions);
  for (let attempt = 0; ; attempt++) {
    try {
      await bus.publish([{ topic: topics.intake, partition, key: agent.principal, value: JSON.stringify(envelope) }]);
      acknowledged.set(statement.id, statementHash(statement));
      return;
    } catch (err) {
      if (attempt > 600) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

describe('fault batteries', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    for (const child of children) child.kill('SIGKILL');
  });

  test('sequencer SIGKILLed under a deep backlog: every acknowledged proposal admitted once and decided once', async () => {
    const home = newHome();
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'battery-1' });
    cleanups.push(() => bus.close());
    const sequencer = new Role(home, ['sequencer'], 'sequencer');
    const gate = new Role(home, ['gate', 'timer'], 'gate');
    sequencer.start();
    cleanups.push(() => sequencer.kill());
    cleanups.push(() => gate.kill());
    const topics = topicNames(home.config.topicPrefix);
    await eventually(async () => ((await bus.endOffsets(topics.authority).catch(() => undefined))?.get(0) ?? '0') !== '0' ? true : undefined, 120_000, 'genesis');
    gate.start();
    const acknowledged = new Map<string, string>();
    // The backlog: published as fast as the broker takes it, two agents, two partitions.
    const load = (async () => {
      for (let n = 0; n < 1200; n++) await publish(bus, home, n % 2 === 0 ? 'agent-build-bot' : 'agent-ops-bot', routine(n), acknowledged);
    })();
    let kills = 0;
    while (kills < 6) {
      await new Promise((resolve) => setTimeout(resolve, 1500 + Math.floor(Math.random() * 2500)));
      await sequencer.kill();
      kills += 1;
      sequencer.start();
    }
    await load;
    const tally = await settle(bus, home, acknowledged, [sequencer, gate], 240_000);
    process.stdout.write(line(`sequencer kills (${kills}) under a deep backlog`, tally));
    assertClean(tally, 'sequencer kills');
  });

  test('broker killed three times while confirmations fall due: every proposal decided once, no role exits', async () => {
    const broker = await PrivateBroker.start();
    cleanups.push(() => broker.stop());
    const previous = process.env.LEDGER_KAFKA_BROKERS;
    process.env.LEDGER_KAFKA_BROKERS = broker.address;
    cleanups.push(async () => {
      if (previous === undefined) delete process.env.LEDGER_KAFKA_BROKERS;
      else process.env.LEDGER_KAFKA_BROKERS = previous;
    });
    const home = newHome();
    const env = { LEDGER_KAFKA_BROKERS: broker.address, LEDGER_DEADLINES_MS: '2:2000,3:2000,4:2000' };
    const bus = createKafkaBus({ brokers: [broker.address], clientId: 'battery-2', logLevel: 'nothing' });
    cleanups.push(() => bus.close());
    const roles = new Role(home, ['sequencer', 'gate', 'timer'], 'roles', env);
    roles.start();
    cleanups.push(() => roles.kill());
    const topics = topicNames(home.config.topicPrefix);
    await eventually(async () => ((await bus.endOffsets(topics.authority).catch(() => undefined))?.get(0) ?? '0') !== '0' ? true : undefined, 120_000, 'genesis');
    const acknowledged = new Map<string, string>();
    let stop = false;
    const load = (async () => {
      for (let n = 0; !stop; n++) {
        await publish(bus, home, n % 3 === 0 ? 'agent-support-bot' : 'agent-build-bot', n % 3 === 0 ? email(n) : routine(n), acknowledged);
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    })();
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await broker.kill();
      // Down past the confirmation deadline: the timer's timeouts are overdue while it cannot publish.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      await broker.restart();
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
    stop = true;
    await load;
    const tally = await settle(bus, home, acknowledged, [roles], 240_000);
    process.stdout.write(line(`broker kills (${broker.kills}) with overdue confirmations`, tally));
    assertClean(tally, 'broker kills');
  });

  test('pg_terminate_backend rounds against a cluster of the test own: the API and projector ride them out', async () => {
    const cluster = await PrivateCluster.start();
    cleanups.push(() => cluster.stop());
    const apiPort = await freePort();
    const id = randomBytes(4).toString('hex');
    const database = `ledger_p${id}`;
    const home = newHome({ pgUrl: cluster.url(database), apiPort });
    const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'battery-3' });
    cleanups.push(() => bus.close());
    const everything = new Role(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem'], 'all');
    everything.start();
    cleanups.push(() => everything.kill());
    const api = `http://127.0.0.1:${apiPort}`;
    await eventually(async () => ((await fetch(`${api}/readyz`).then((r) => r.status, () => 0)) === 200 ? true : undefined), 120_000, '/readyz');
    const agent = new LedgerClient({ baseUrl: api, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
    const acknowledged = new Map<string, string>();
    let stop = false;
    let refusedRetryable = 0;
    const load = (async () => {
      for (let n = 0; !stop; n++) {
        const body = routine(n);
        try {
          const submitted = await agent.propose(body);
          acknowledged.set(submitted.id, submitted.statementHash);
        } catch (err) {
          if ((err as { retryable?: boolean }).retryable !== true) throw err;
          refusedRetryable += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();
    const admin = new pg.Client({ connectionString: cluster.url('postgres') });
    admin.on('error', () => undefined);
    await admin.connect();
    cleanups.push(() => admin.end());
    let terminated = 0;
    for (let round = 0; round < 8; round++) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const result = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]);
      terminated += result.rows.filter((r) => r.ok).length;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    stop = true;
    await load;
    // Every decision also reaches the projection (and so the long-poll).
    const decisions = [...acknowledged.values()];
    await eventually(async () => {
      for (const hash of decisions) {
        const response = await fetch(`${api}/v1/decisions/${hash}`);
        if (response.status !== 200) return undefined;
      }
      return true;
    }, 120_000, 'every decision in the projection');
    const tally = await settle(bus, home, acknowledged, [everything], 120_000);
    process.stdout.write(line(`pg_terminate_backend (8 rounds, ${terminated} connections)`, tally));
    process.stdout.write(`# submissions answered UNAVAILABLE (retryable) during the rounds: ${refusedRetryable}\n`);
    assert.ok(terminated >= 8, `connections terminated: ${terminated}`);
    assertClean(tally, 'pg_terminate_backend');
  });
});
