import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { createKafkaBus, type LogBus } from '@agent-ledger/kafka';
import { LedgerClient } from '@agent-ledger/client';
import { entryLocation, topicNames, type LedgerHome } from '@agent-ledger/ledger';
import { eventually } from './live.js';
import { PrivateKafkaCluster, freePort } from './private-stack.js';
import { Role, children, count, line, newHome, readAll, routine, settle, type Tally } from './battery-support.js';

// Fault battery on a three-node Kafka cluster of the test's own (scripts/kafka.sh
// cluster: each node broker + controller, replication factor 3,
// min.insync.replicas 2, no unclean election), with one `ledger serve` of
// every role on it and agents proposing through its API the whole time:
//  (a) the leader of the events partitions SIGKILLed and restarted, again and
//      again (LEDGER_CLUSTER_LEADER_KILLS, default below);
//  (b) one broker SIGSTOPped longer than the broker session timeout
//      (6 s in deploy/kafka/cluster.properties), then SIGCONT;
//  (c) the active controller SIGKILLed and restarted.
// Each fault gets its own tally: acknowledged, admitted once, decided once,
// lost, duplicated, role exits, and verify-chain of the export.

const LEADER_KILLS = Number(process.env.LEDGER_CLUSTER_LEADER_KILLS ?? '20');
/** Longer than broker.session.timeout.ms (6 s): the controller fences the paused broker. */
const PAUSE_MS = 15_000;
/**
 * The battery runs only with LEDGER_CLUSTER_FAULTS=1. It found two defects of
 * the Kafka client under these faults, both guarded in the adapter (a consumer
 * that stops fetching without a word, replaced by the subscription's stall
 * watch; a send that resolves without writing one of its partitions, checked
 * and aborted by the writer), and a startup race on a fresh cluster (a node
 * not yet knowing a topic being made, now retried). Run alone it passed 9 of
 * 10 runs with a busy core beside it; run inside the int tier, with other files
 * beside it, it has failed twice: once proposals admitted and never decided,
 * once the API refusing for minutes because a statement it accepted was never
 * seen sequenced, both after consumers were replaced and went on reading
 * nothing. Until that is understood it stays out of `npm test`.
 */
const RUN = process.env.LEDGER_CLUSTER_FAULTS === '1';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Node (1..3) leading most events partitions (ties: the lowest partition's leader). */
async function eventsLeader(admin: Admin, cluster: PrivateKafkaCluster, events: string): Promise<number> {
  const { topics } = await admin.fetchTopicMetadata({ topics: [events] });
  const partitions = [...(topics[0]?.partitions ?? [])].sort((a, b) => a.partitionId - b.partitionId);
  const led = new Map<number, number>();
  for (const p of partitions) if (p.leader >= 0) led.set(p.leader, (led.get(p.leader) ?? 0) + 1);
  const best = [...led].sort((a, b) => b[1] - a[1])[0];
  if (best === undefined) throw new Error(`no leader for ${events}`);
  // Node ids are 1..3 in the cluster template, as are the nodes of PrivateKafkaCluster.
  assert.ok(cluster.pid(best[0]) !== undefined, `leader ${best[0]} is a running node`);
  return best[0];
}

/** Waits until every partition of `topics` has all three replicas in sync again (the restarted node caught up). */
async function fullyInSync(admin: Admin, topics: readonly string[]): Promise<void> {
  await eventually(
    async () => {
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics: [...topics] }).catch(() => ({ topics: [] }));
      const partitions = metadata.flatMap((t) => t.partitions);
      return partitions.length > 0 && partitions.every((p) => p.isr.length === 3 && p.leader >= 0) ? true : undefined;
    },
    90_000,
    'every partition back to three in-sync replicas',
  );
}

/**
 * Forks on the committed log: a partition whose entries are not exactly
 * indexes 0..n-1 each chained to the one before (two entries at one index, a
 * gap, or a `prev` that is not the previous entry's hash).
 */
function forks(entries: readonly { partition: number; index: number; prev: string; hash: string }[]): number {
  const byPartition = new Map<number, { index: number; prev: string; hash: string }[]>();
  for (const e of entries) byPartition.set(e.partition, [...(byPartition.get(e.partition) ?? []), e]);
  let found = 0;
  for (const list of byPartition.values()) {
    list.forEach((e, i) => {
      if (e.index !== i || (i > 0 && e.prev !== list[i - 1]?.hash)) found += 1;
    });
  }
  return found;
}

/**
 * Where the committed log of each events partition first breaks its chain,
 * read straight from the log with record offsets: the diagnosis printed when
 * `forks` finds any (a second read tells a broken log from a broken read).
 */
async function firstBreaks(bus: LogBus, home: LedgerHome): Promise<string[]> {
  const topics = topicNames(home.config.topicPrefix);
  const found: string[] = [];
  for (let p = 1; p <= home.config.eventPartitions; p++) {
    const { topic, partition } = entryLocation(topics, p);
    let i = 0;
    let head = '';
    let broken: string | undefined;
    const seenAt = new Map<number, string>();
    for await (const r of bus.readRange(topic, partition, '0')) {
      const e = JSON.parse(r.value.toString('utf8')) as { index: number; prev: string; hash: string; sequencedAt: string; envelope: { statement: { type: string; id: string } } };
      const what = `offset ${r.offset} index ${e.index} ${e.envelope.statement.type} ${e.envelope.statement.id.slice(0, 8)} at ${e.sequencedAt} prev ${e.prev.slice(0, 8)}`;
      if (broken === undefined && (e.index !== i || (i > 0 && e.prev !== head))) {
        broken = `partition ${p}: entry ${i} expected, found ${what}; the entry before: ${seenAt.get(i - 1) ?? 'none'}; an earlier entry with index ${e.index}: ${seenAt.get(e.index) ?? 'none'}`;
      }
      if (!seenAt.has(e.index)) seenAt.set(e.index, what);
      head = e.hash;
      i += 1;
    }
    found.push(broken ?? `partition ${p}: ${i} entries, unbroken`);
  }
  return found;
}

/**
 * For each partition of `topics`: its last stable offset (what read_committed
 * readers stop at) beside its high watermark, and the records between them
 * with their producer and transaction flags, read with read_uncommitted. A
 * transaction left open (a hanging one) holds the LSO back for good: every
 * reader then waits without an error. Printed when the battery fails.
 */
async function unstableTails(kafka: Kafka, admin: Admin, topics: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const topic of topics) {
    const stable = await admin.fetchTopicOffsets(topic).catch(() => []);
    const tails = new Map<number, { hw: string; records: string[] }>();
    const consumer = kafka.consumer({ groupId: `diagnosis-${randomUUID()}`, readUncommitted: true, maxWaitTimeInMs: 200 });
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      await consumer.run({
        eachBatch: async ({ batch }) => {
          const from = BigInt(stable.find((p) => p.partition === batch.partition)?.offset ?? '0');
          const tail = tails.get(batch.partition) ?? { hw: batch.highWatermark, records: [] };
          tail.hw = batch.highWatermark;
          for (const m of batch.messages) {
            if (BigInt(m.offset) < from || tail.records.length >= 8) continue;
            const context = (m as unknown as { batchContext?: { producerId?: string; producerEpoch?: number; inTransaction?: boolean; isControlBatch?: boolean } }).batchContext;
            tail.records.push(`${m.offset}: producer ${context?.producerId ?? '?'} epoch ${context?.producerEpoch ?? '?'}${context?.inTransaction === true ? ' in a transaction' : ''}${context?.isControlBatch === true ? ' control' : ''}`);
          }
          tails.set(batch.partition, tail);
        },
      });
      for (const p of stable) consumer.seek({ topic, partition: p.partition, offset: p.offset });
      await sleep(4_000);
    } catch (err) {
      found.push(`${topic}: cannot read its tail: ${(err as Error).message}`);
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
    for (const p of stable) {
      const tail = tails.get(p.partition);
      found.push(`${topic}/${p.partition}: last stable offset ${p.offset}, high watermark ${tail?.hw ?? 'not read'}${tail !== undefined && tail.records.length > 0 ? `; past the LSO: ${tail.records.join('; ')}` : ''}`);
    }
  }
  return found;
}

interface Phase {
  readonly name: string;
  readonly acknowledged: Map<string, string>;
  exitsBefore: number;
  exitsAfter: number;
  wallMs: number;
}

describe('fault battery on a three-node Kafka cluster', { skip: RUN ? false : 'LEDGER_CLUSTER_FAULTS=1 runs it: an open defect, consumers replaced under these faults can go on reading nothing (proposals left undecided, or the API refusing for minutes)' }, () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    for (const child of children) child.kill('SIGKILL');
  });

  test('leader kills, a paused broker and a killed controller: every acknowledged proposal admitted once and decided once', async () => {
    const cluster = await PrivateKafkaCluster.start();
    cleanups.push(() => cluster.stop());
    const brokers = cluster.brokers.join(',');
    // exportCommand opens the home, which takes LEDGER_KAFKA_BROKERS: this cluster, never the shared broker.
    const previous = process.env.LEDGER_KAFKA_BROKERS;
    process.env.LEDGER_KAFKA_BROKERS = brokers;
    cleanups.push(async () => {
      if (previous === undefined) delete process.env.LEDGER_KAFKA_BROKERS;
      else process.env.LEDGER_KAFKA_BROKERS = previous;
    });
    const apiPort = await freePort();
    const home: LedgerHome = newHome({ apiPort });
    const topics = topicNames(home.config.topicPrefix);
    const raw = new Kafka({ clientId: 'cluster-faults-admin', brokers: cluster.brokers, logLevel: logLevel.NOTHING });
    const admin = raw.admin();
    await admin.connect();
    cleanups.push(() => admin.disconnect());
    const bus: LogBus = createKafkaBus({ brokers: cluster.brokers, clientId: 'cluster-faults', logLevel: 'nothing' });
    cleanups.push(() => bus.close());

    const everything = new Role(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem'], 'all', { LEDGER_KAFKA_BROKERS: brokers });
    everything.start();
    cleanups.push(() => everything.kill());
    const api = `http://127.0.0.1:${apiPort}`;
    await eventually(async () => ((await fetch(`${api}/readyz`).then((r) => r.status, () => 0)) === 200 ? true : undefined), 180_000, '/readyz');

    // The ledger chose the cluster deployment by itself: three replicas, two in sync, no unclean election, on every topic it made.
    const ledgerTopics = [topics.intake, topics.authority, topics.events, topics.checkpoints];
    const { topics: made } = await admin.fetchTopicMetadata({ topics: [...ledgerTopics, ...topics.refusals] });
    for (const topic of made) for (const p of topic.partitions) assert.equal(p.replicas.length, 3, `${topic.name}/${p.partitionId} replicas`);
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: ledgerTopics.map((name) => ({ type: 2, name, configNames: ['min.insync.replicas', 'unclean.leader.election.enable'] })),
    });
    // What a ledger started while two of the nodes are down reads to refuse one-replica topics.
    assert.equal(await bus.defaultReplicationFactor?.(), 3, 'default.replication.factor of a live node');
    for (const resource of described.resources) {
      const value = (name: string): string | undefined => resource.configEntries.find((e) => e.configName === name)?.configValue;
      assert.deepEqual([value('min.insync.replicas'), value('unclean.leader.election.enable')], ['2', 'false'], resource.resourceName);
    }

    // Load: two agents (two partitions) proposing through the API all along; an answer with a receipt id is an acknowledgement.
    const agents = ['agent-build-bot', 'agent-ops-bot'].map((key) => new LedgerClient({ baseUrl: api, signer: home.key(key), deciderKeys: [home.key('gate').keyId] }));
    let current: Phase | undefined;
    let stop = false;
    // The agents stop however the test ends (a failed wait included): their loops must not keep this file's process alive.
    cleanups.push(async () => {
      stop = true;
    });
    let refusedRetryable = 0;
    /** What the agents were answered besides acknowledgements, by code (named when a wait times out). */
    const answers = new Map<string, number>();
    let lastError = '';
    const load = agents.map(async (agent, a) => {
      for (let n = 0; !stop; n++) {
        const phase = current;
        try {
          const submitted = await agent.propose(routine(n * 2 + a));
          // Counted in the phase it was submitted in.
          phase?.acknowledged.set(submitted.id, submitted.statementHash);
        } catch (err) {
          const code = String((err as { code?: unknown }).code ?? (err as Error).name);
          answers.set(code, (answers.get(code) ?? 0) + 1);
          lastError = `${new Date().toISOString()} ${(err as Error).message}`;
          if ((err as { retryable?: boolean }).retryable !== true) throw err;
          refusedRetryable += 1;
          await sleep(200);
        }
        await sleep(50);
      }
    });
    // A loop that ended on an error that is not retryable fails the test when it is awaited; until then, it is not an unhandled rejection.
    for (const loop of load) loop.catch(() => undefined);
    const agentsSaid = (): string => `agents were answered ${JSON.stringify(Object.fromEntries(answers))}; last: ${lastError}; role exits: ${everything.exits.join(', ') || 'none'}`;

    const phases: Phase[] = [];
    const run = async (name: string, fault: () => Promise<void>): Promise<void> => {
      const phase: Phase = { name, acknowledged: new Map(), exitsBefore: everything.exits.length, exitsAfter: 0, wallMs: 0 };
      const started = Date.now();
      current = phase;
      await fault();
      // The cluster has healed: the ledger takes proposals again (during a pause it may answer only UNAVAILABLE), then the next phase takes over.
      // The bound is for a wedge, not a speed figure (each phase's wall time is printed): clients refresh stale metadata slowly on a loaded machine.
      await eventually(async () => (phase.acknowledged.size > 0 ? true : undefined), 300_000, `${name}: a proposal acknowledged after the fault`).catch(async (err: Error) => {
        for (const where of await unstableTails(raw, admin, [topics.intake, topics.events, topics.authority])) process.stdout.write(`# ${where}\n`);
        process.stdout.write(`# ${await everything.diagnose()}\n`);
        throw new Error(`${err.message} (${agentsSaid()})`);
      });
      await sleep(2000);
      phase.wallMs = Date.now() - started;
      phase.exitsAfter = everything.exits.length;
      phases.push(phase);
    };

    await sleep(2000);
    let leaderKills = 0;
    await run(`(a) events leader SIGKILLed and restarted`, async () => {
      for (let round = 0; round < LEADER_KILLS; round++) {
        const leader = await eventsLeader(admin, cluster, topics.events);
        await cluster.signal(leader, 'SIGKILL');
        leaderKills += 1;
        await sleep(1500);
        await cluster.startMissing();
        await fullyInSync(admin, [topics.intake, topics.authority, topics.events, topics.checkpoints]);
      }
    });
    let paused = 0;
    await run(`(b) broker SIGSTOPped ${PAUSE_MS / 1000} s, then SIGCONT`, async () => {
      paused = await eventsLeader(admin, cluster, topics.events);
      await cluster.signal(paused, 'SIGSTOP');
      await sleep(PAUSE_MS);
      await cluster.signal(paused, 'SIGCONT');
      await fullyInSync(admin, [topics.intake, topics.authority, topics.events, topics.checkpoints]);
    });
    let controller = 0;
    await run('(c) active controller SIGKILLed and restarted', async () => {
      controller = await cluster.activeController();
      await cluster.signal(controller, 'SIGKILL');
      await sleep(3000);
      await cluster.startMissing();
      await fullyInSync(admin, [topics.intake, topics.authority, topics.events, topics.checkpoints]);
    });
    stop = true;
    await Promise.all(load);

    // All acknowledged statements, then per phase what the log holds for that phase's statements.
    const all = new Map(phases.flatMap((p) => [...p.acknowledged]));
    const total = await settle(bus, home, all, [everything], 180_000);
    const entries = await readAll(bus, home);
    const tallies: Tally[] = phases.map((p) => ({ ...count(entries, p.acknowledged), roleExits: p.exitsAfter - p.exitsBefore, verifyChain: total.verifyChain }));
    phases.forEach((p, i) => process.stdout.write(line(`${p.name} [${(p.wallMs / 1000).toFixed(1)} s]`, tallies[i] as Tally)));
    process.stdout.write(`# leader kills ${leaderKills}, paused node ${paused}, killed controller node ${controller}; submissions answered UNAVAILABLE (retryable): ${refusedRetryable}\n`);
    process.stdout.write(line('all faults', total));
    const forked = forks(entries);
    process.stdout.write(`# forks on the events partitions: ${forked} (${entries.length} entries read back)\n`);
    if (forked > 0 || total.lost > 0 || total.undecided > 0) {
      for (const where of await unstableTails(raw, admin, [topics.intake, topics.events, topics.authority])) process.stdout.write(`# ${where}\n`);
      // Is the ledger process alive, what is it doing, and what does it say of itself.
      process.stdout.write(`# ${await everything.diagnose()}\n`);
      const ready = await fetch(`${api}/readyz`).then(async (r) => `${r.status} ${await r.text()}`, (err: Error) => `no answer: ${err.message}`);
      process.stdout.write(`# /readyz: ${ready.slice(0, 2000)}\n`);
    }
    if (forked > 0) {
      for (const read of [1, 2]) for (const where of await firstBreaks(bus, home)) process.stdout.write(`# read ${read}: ${where}\n`);
    }
    assert.equal(forked, 0, 'forks');
    for (const [i, t] of tallies.entries()) {
      const what = phases[i]?.name ?? '';
      assert.deepEqual(
        { lost: t.lost, duplicated: t.duplicated, decidedTwice: t.decidedTwice, undecided: t.undecided, roleExits: t.roleExits, decidedOnce: t.decidedOnce },
        { lost: 0, duplicated: 0, decidedTwice: 0, undecided: 0, roleExits: 0, decidedOnce: t.acknowledged },
        line(what, t),
      );
    }
    assert.ok(total.verifyChain.startsWith('passes'), total.verifyChain);
    // Including exits outside the phases (starting on a fresh cluster, settling).
    assert.equal(total.roleExits, 0, `role exits: ${everything.exits.join(', ')}`);
    assert.equal(leaderKills, LEADER_KILLS);
  });
});
