import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createKafkaBus } from '@agent-ledger/kafka';
import { LedgerClient, signedFetch } from '@agent-ledger/client';
import { topicNames } from '@agent-ledger/ledger';
import { eventually } from './live.js';
import { PrivateBroker, PrivateCluster, freePort } from './private-stack.js';
import { Role, assertClean, children, email, line, newHome, publish, routine, settle } from './battery-support.js';

// Fault batteries on the real roles (separate processes), each ending with
// the same tally: acknowledged statements, admitted exactly once, decided
// exactly once (one final decision each), lost, duplicated, role exits,
// and whether the exported ledger passes verify-chain.
//  1. the sequencer SIGKILLed again and again under a deep intake backlog;
//  2. a broker of the test's own killed while confirmations fall due;
//  3. pg_terminate_backend rounds against a Postgres cluster of the test's own.

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
        const response = await signedFetch(home.key('admin-alice'))(`${api}/v1/decisions/${hash}`);
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
