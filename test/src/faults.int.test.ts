import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createStatement, eventPartitionOf, nodeEd25519, signStatement, utf8, type Entry } from '@agent-ledger/core';
import { createKafkaBus, type LogBus } from '@agent-ledger/kafka';
import { checkLine } from '@agent-ledger/verifier';
import pg from 'pg';
import { Projection, projectionDigest, resetProjection } from '@agent-ledger/store';
import { Projector, entryLocation, topicNames, type LedgerHome } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { eventually, freshHome } from './live.js';

// Faults against the real processes: a sequencer killed with SIGKILL at
// random points, many times, under load; a zombie sequencer (paused,
// replaced, resumed) fenced; no acknowledged statement lost, none duplicated,
// no fork: the committed log still verifies as one chain per partition.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function startRole(home: LedgerHome, roles: string[], logName: string): ChildProcess {
  const log = createWriteStream(join(home.dir, `${logName}.log`), { flags: 'a' });
  const child = spawn(process.execPath, [bin, 'serve', '--home', home.dir, '--target', ...roles], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Every committed entry of one ledger partition, in order. */
async function readPartition(bus: LogBus, home: LedgerHome, partition: number): Promise<Entry[]> {
  const { topic, partition: kafkaPartition } = entryLocation(topicNames(home.config.topicPrefix), partition);
  const entries: Entry[] = [];
  for await (const record of bus.readRange(topic, kafkaPartition, '0')) entries.push(JSON.parse(record.value.toString('utf8')) as Entry);
  return entries;
}

/** Checks chain continuity of committed entries the way the verifier does (positions, links, hashes, signatures). */
function assertOneChain(entries: readonly Entry[], partition: number): void {
  entries.forEach((entry, i) => {
    assert.equal(entry.partition, partition);
    assert.equal(entry.index, i, `partition ${partition}: gap or duplicate at ${i}`);
    if (i > 0) assert.equal(entry.prev, entries[i - 1]?.hash, `partition ${partition}: fork at ${i}`);
    const result = checkLine(utf8(JSON.stringify({ kind: 'entry', ...entry })), i + 1, nodeEd25519);
    assert.equal(result.kind, 'entry', `partition ${partition}: entry ${i} does not check`);
    assert.equal((result as { hashMatches: boolean }).hashMatches, true);
  });
}

describe('sequencer faults', () => {
  let home: LedgerHome;
  let bus: LogBus;

  before(async () => {
    home = freshHome();
    bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'faults' });
  });
  after(async () => {
    for (const child of children) await killHard(child);
    await bus?.close();
  });

  test('SIGKILL of the sequencer at random points, many times: nothing acknowledged lost, nothing duplicated, no fork', async () => {
    const topics = topicNames(home.config.topicPrefix);
    let sequencer = startRole(home, ['sequencer'], 'sequencer');
    // The authority stream holds genesis once the first sequencer is up.
    await eventually(async () => {
      // The topics are new: until their leader is known, reading offsets fails and is retried.
      const ends = await bus.endOffsets(topics.authority).catch(() => undefined);
      return ends !== undefined && ends.get(0) !== '0' ? true : undefined;
    }, 60_000, 'genesis');
    const agent = home.key('agent-build-bot');
    const acknowledged: string[] = [];
    const kills = Number(process.env.FAULT_KILLS ?? 12);
    let kill = 0;
    const load = (async () => {
      for (let n = 0; n < 400; n++) {
        const statement = createStatement('proposal.submitted', { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { n }, query: 'fault load', labels: [], channel: 'api', context: {} }, agent);
        const envelope = signStatement(statement, [agent], nodeEd25519);
        // Published with acks from all in-sync replicas: acknowledged once this resolves.
        await bus.publish([{ topic: topics.intake, partition: partitionFor(home, agent.principal), key: agent.principal, value: JSON.stringify(envelope) }]);
        acknowledged.push(statement.id);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    while (kill < kills) {
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.floor(Math.random() * 900)));
      await killHard(sequencer);
      kill += 1;
      sequencer = startRole(home, ['sequencer'], 'sequencer');
    }
    await load;
    const p = partitionFor(home, agent.principal);
    const entries = await eventually(async () => {
      const all = await readPartition(bus, home, p);
      const ids = new Set(all.map((e) => e.envelope.statement.id));
      return acknowledged.every((id) => ids.has(id)) ? all : undefined;
    }, 120_000, 'every acknowledged statement to be sequenced');
    await killHard(sequencer);
    const ids = entries.map((e) => e.envelope.statement.id);
    assert.equal(new Set(ids).size, ids.length, 'no statement sequenced twice');
    assertOneChain(entries, p);
    assertOneChain(await readPartition(bus, home, 0), 0);
    process.stdout.write(`# sequencer SIGKILLs: ${kill}, acknowledged statements: ${acknowledged.length}, entries: ${entries.length}\n`);
  });

  test('a zombie sequencer (paused, replaced, resumed) is fenced and writes nothing', async () => {
    const topics = topicNames(home.config.topicPrefix);
    const zombie = startRole(home, ['sequencer'], 'zombie');
    const agent = home.key('agent-build-bot');
    const p = partitionFor(home, agent.principal);
    const ids: string[] = [];
    const send = async (tag: string, n: number): Promise<void> => {
      const statement = createStatement('proposal.submitted', { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { [tag]: n }, query: 'zombie', labels: [], channel: 'api', context: {} }, agent);
      await bus.publish([{ topic: topics.intake, partition: p, key: agent.principal, value: JSON.stringify(signStatement(statement, [agent], nodeEd25519)) }]);
      ids.push(statement.id);
    };
    // The zombie-to-be does some work first, so it holds the partition and a committed offset.
    const start = (await readPartition(bus, home, p)).length;
    for (let n = 0; n < 5; n++) await send('before', n);
    await eventually(async () => ((await readPartition(bus, home, p)).length >= start + 5 ? true : undefined), 120_000, 'the first instance to sequence');
    zombie.kill('SIGSTOP');
    const replacement = startRole(home, ['sequencer'], 'replacement');
    const before = (await readPartition(bus, home, p)).length;
    for (let n = 0; n < 20; n++) await send('during', n);
    await eventually(async () => ((await readPartition(bus, home, p)).length >= before + 20 ? true : undefined), 120_000, 'the replacement to sequence');
    // Listen before resuming: the zombie may meet the fence and exit at once.
    const exited = new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), 90_000);
      zombie.once('exit', (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    zombie.kill('SIGCONT');
    // Work for the zombie: when the group hands it partitions back, its next commit meets the fence.
    for (let n = 0; n < 20; n++) {
      await send('after', n);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const exitCode = await exited;
    await killHard(zombie);
    const entries = await eventually(async () => {
      const all = await readPartition(bus, home, p);
      return all.filter((e) => ids.includes(e.envelope.statement.id)).length >= ids.length ? all : undefined;
    }, 120_000, 'every statement to be sequenced');
    await killHard(replacement);
    assertOneChain(entries, p);
    const seen = entries.map((e) => e.envelope.statement.id).filter((id) => ids.includes(id));
    assert.equal(seen.length, ids.length, 'each statement exactly once');
    process.stdout.write(`# zombie exit code after resume: ${String(exitCode)}\n`);
    assert.equal(exitCode, 3, 'the zombie stopped because it was fenced');
  });
});

describe('projector and broker faults', () => {
  let home: LedgerHome;
  let bus: LogBus;

  before(async () => {
    home = freshHome();
    bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'faults-2' });
  });
  after(async () => {
    for (const child of children) await killHard(child);
    await bus?.close();
  });

  /** Publishes one signed proposal; resolves only when the broker acknowledged it (retrying while it is down). */
  async function submit(n: number, tag: string): Promise<string> {
    const agent = home.key('agent-build-bot');
    const topics = topicNames(home.config.topicPrefix);
    const statement = createStatement('proposal.submitted', { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { [tag]: n }, query: tag, labels: [], channel: 'api', context: {} }, agent);
    const value = JSON.stringify(signStatement(statement, [agent], nodeEd25519));
    for (let attempt = 0; ; attempt++) {
      try {
        await bus.publish([{ topic: topics.intake, partition: partitionFor(home, agent.principal), key: agent.principal, value }]);
        return statement.id;
      } catch (err) {
        if (attempt > 200) throw err;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  test('projector killed with SIGKILL between applying and committing: no gap, no duplicate, rebuild equal', async () => {
    const sequencer = startRole(home, ['sequencer'], 'sequencer');
    let projector = startRole(home, ['projector'], 'projector');
    const ids: string[] = [];
    let kills = 0;
    const load = (async () => {
      for (let n = 0; n < 300; n++) ids.push(await submit(n, 'projector'));
    })();
    while (kills < 6) {
      await new Promise((resolve) => setTimeout(resolve, 400 + Math.floor(Math.random() * 800)));
      await killHard(projector);
      kills += 1;
      projector = startRole(home, ['projector'], 'projector');
    }
    await load;
    const p = partitionFor(home, home.key('agent-build-bot').principal);
    const logSize = await eventually(async () => {
      const all = await readPartition(bus, home, p);
      return all.filter((e) => ids.includes(e.envelope.statement.id)).length === ids.length ? all.length : undefined;
    }, 120_000, 'the load to be sequenced');
    const pool = new pg.Pool({ connectionString: home.config.pgUrl });
    try {
      const projection = new Projection(pool);
      // The last projector started may still be creating its database and tables: until then the head cannot be read.
      const caughtUp = async (): Promise<true | undefined> => {
        try {
          return (await projection.head(p)).size === logSize ? true : undefined;
        } catch {
          return undefined;
        }
      };
      await eventually(caughtUp, 120_000, 'the projector to catch up');
      await killHard(projector);
      await killHard(sequencer);
      const head = await projection.head(p);
      assert.equal(head.halted, null);
      const seen = await pool.query('SELECT count(*)::int AS n, count(DISTINCT index)::int AS d, max(index)::int AS m FROM entries_seen WHERE partition = $1', [p]);
      assert.deepEqual(seen.rows[0], { n: logSize, d: logSize, m: logSize - 1 }, 'every entry once, no gap');
      const digest = await projectionDigest(pool);
      await resetProjection(pool);
      const rebuild = new Projector(bus, pool, home.config.eventPartitions, topicNames(home.config.topicPrefix));
      await rebuild.start();
      await rebuild.stop();
      assert.equal(await projectionDigest(pool), digest, 'a rebuild from offset 0 gives byte-identical tables');
    } finally {
      await pool.end();
    }
    process.stdout.write(`# projector SIGKILLs: ${kills}, entries projected: ${logSize}\n`);
  });

  // Broker kills run against a broker of the test's own: fault-battery.int.test.ts.
});

function partitionFor(home: LedgerHome, agentId: string): number {
  return eventPartitionOf(agentId, home.config.eventPartitions);
}
