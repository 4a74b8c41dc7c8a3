import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import type { Admin } from 'kafkajs';
import { DEFAULT_BROKERS, createKafkaBus, ledgerTopics, loadTopicConfig } from '../src/index.js';
import type { LogBus } from '../src/index.js';
import { runLogBusContract } from './log-bus.contract.js';
import { drain } from './support/waiting.js';

const run = randomBytes(4).toString('hex');
/** Raw kafkajs, for what the interface deliberately cannot do: hold a transaction open, list and delete groups. */
const raw = new Kafka({ clientId: `raw.${run}`, brokers: [...DEFAULT_BROKERS], logLevel: logLevel.NOTHING });

async function withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = raw.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

async function cleanup(created: { readonly topics: readonly string[]; readonly groups: readonly string[] }): Promise<void> {
  await withAdmin(async (admin) => {
    const existing = new Set(await admin.listTopics());
    const topics = created.topics.filter((t) => existing.has(t));
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 30_000 });
    const groups = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
    const ours = created.groups.filter((g) => groups.has(g));
    if (ours.length > 0) await admin.deleteGroups(ours).catch(() => undefined);
  });
}

runLogBusContract({
  name: 'kafkajs 2.2.4',
  makeBus: () => createKafkaBus({ brokers: DEFAULT_BROKERS, clientId: `contract.${run}` }),
  cleanup,
});

describe('kafkajs adapter', { timeout: 120_000 }, () => {
  const clientId = `adapter.${run}`;
  const topics: string[] = [];
  let bus: LogBus;

  before(() => {
    bus = createKafkaBus({ brokers: DEFAULT_BROKERS, clientId });
  });

  after(async () => {
    await bus.close();
    await cleanup({ topics, groups: [] });
  });

  test('readRange and endOffsets stop at the last stable offset while a transaction is open, not the high watermark', async () => {
    const name = `adapter.lso.${run}`;
    topics.push(name);
    await bus.ensureTopics([{ name, partitions: 1 }]);
    await bus.publish([{ topic: name, partition: 0, value: 'c0' }]);
    const producer = raw.producer({ transactionalId: `adapter.lso.${run}`, idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      const open = await producer.transaction();
      await open.send({ topic: name, messages: [{ partition: 0, value: 'uncommitted' }] });
      assert.equal((await bus.endOffsets(name)).get(0), '1');
      const read = await drain(bus.readRange(name, 0, '0'), 20_000, 'read under an open transaction');
      assert.deepEqual(
        read.map((r) => r.value.toString()),
        ['c0'],
      );
      await open.abort();
      // The aborted record (offset 1) and its abort marker (offset 2) come to lie
      // below the LSO once the coordinator has written the marker, which Kafka
      // does after answering EndTxn: wait for it (bounded), then read.
      let end = (await bus.endOffsets(name)).get(0);
      for (let tries = 0; end !== '3' && tries < 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        end = (await bus.endOffsets(name)).get(0);
      }
      assert.equal(end, '3');
      const after = await drain(bus.readRange(name, 0, '0'), 20_000, 'read after the abort');
      assert.deepEqual(
        after.map((r) => r.value.toString()),
        ['c0'],
      );
      assert.deepEqual(await drain(bus.readRange(name, 0, '2'), 20_000, 'read from the abort marker'), []);
    } finally {
      await producer.disconnect();
    }
  });

  test('the single broker says it was built for one replica per topic (default.replication.factor), and one broker is live', async () => {
    assert.equal(await bus.defaultReplicationFactor?.(), 1);
    assert.equal(await bus.clusterSize?.(), 1);
  });

  test('the settings of deploy/topics.json are accepted by the broker and read back equal', async () => {
    const specs = ledgerTopics(await loadTopicConfig(), 'single-broker')
      .slice(0, 5)
      .map((spec) => ({ ...spec, name: `${spec.name}.${run}` }));
    topics.push(...specs.map((spec) => spec.name));
    await bus.ensureTopics(specs);
    await bus.ensureTopics(specs);
  });

  test('an existing topic less durable than asked is refused with BAD_CONFIGURATION naming topic, setting, found and required', async () => {
    const name = `adapter.weak.${run}`;
    topics.push(name);
    // Made by hand, as an operator might: one replica, min.insync.replicas 1, unclean leader election on.
    await withAdmin((admin) =>
      admin.createTopics({ topics: [{ topic: name, numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'min.insync.replicas', value: '1' }, { name: 'unclean.leader.election.enable', value: 'true' }] }], waitForLeaders: true }),
    );
    const durable = { name, partitions: 2, config: { 'min.insync.replicas': '2', 'unclean.leader.election.enable': 'false' } };
    const refusal = async (spec: Parameters<LogBus['ensureTopics']>[0][number]): Promise<string> => {
      const error = await bus.ensureTopics([spec]).then(
        () => assert.fail(`${JSON.stringify(spec)} was accepted`),
        (err: unknown) => err as { code?: string; retryable?: boolean; message: string },
      );
      assert.equal(error.code, 'BAD_CONFIGURATION', error.message);
      assert.equal(error.retryable, false);
      return error.message;
    };
    const all = await refusal({ ...durable, replicationFactor: 3 });
    assert.match(all, new RegExp(`topic ${name}: replication factor 1 found, 3 required`));
    assert.match(all, new RegExp(`topic ${name}: min.insync.replicas 1 found, at least 2 required`));
    assert.match(all, new RegExp(`topic ${name}: unclean.leader.election.enable true found, false required`));
    // Each weakness alone is enough.
    assert.match(await refusal({ name, partitions: 2, replicationFactor: 2 }), /replication factor 1 found, 2 required/);
    assert.match(await refusal({ name, partitions: 2, config: { 'min.insync.replicas': '2' } }), /min.insync.replicas 1 found, at least 2 required/);
    assert.match(await refusal({ name, partitions: 2, config: { 'unclean.leader.election.enable': 'false' } }), /unclean.leader.election.enable true found, false required/);
    // As durable or more is accepted: min.insync.replicas is a minimum.
    await withAdmin((admin) => admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name, configEntries: [{ name: 'unclean.leader.election.enable', value: 'false' }] }] }));
    await bus.ensureTopics([{ name, partitions: 2, replicationFactor: 1, config: { 'min.insync.replicas': '1', 'unclean.leader.election.enable': 'false' } }]);
    // A wrong partition count stays an integrity failure, not a configuration one.
    await assert.rejects(bus.ensureTopics([{ ...durable, partitions: 3 }]), (err: { code?: string }) => err.code === 'INTEGRITY_FAILURE');
  });

  test('readRange leaves no consumer group behind', async () => {
    const name = `adapter.groups.${run}`;
    topics.push(name);
    await bus.ensureTopics([{ name, partitions: 3 }]);
    await bus.publish([{ topic: name, partition: 2, value: 'only' }]);
    const read = await drain(bus.readRange(name, 2, '0'), 20_000, 'read partition 2');
    assert.deepEqual(
      read.map((r) => [r.partition, r.value.toString()]),
      [[2, 'only']],
    );
    const left = await withAdmin(async (admin) => (await admin.listGroups()).groups.filter((g) => g.groupId.startsWith(`${clientId}.range.`)));
    assert.deepEqual(left, []);
  });
});
