import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LogBus } from '@agent-ledger/kafka';
import { ConfigSchema, kafkaSettings, topicDurability, topicNames, topicSpecs, type HomeConfig, type LedgerHome } from '@agent-ledger/ledger';

const base = {
  v: 1,
  origin: 'ledger.test/kafka',
  eventPartitions: 2,
  freshnessMs: 300_000,
  checkpointEvery: 1000,
  checkpointIntervalMs: 200,
  kafkaBrokers: ['127.0.0.1:9092'],
  pgUrl: 'postgres://postgres@127.0.0.1:5432/x',
  apiPort: 0,
  topicPrefix: 'k1',
};
const config = (kafka?: unknown): HomeConfig => ConfigSchema.parse(kafka === undefined ? base : { ...base, kafka });
const isBadConfiguration = (err: unknown): boolean => (err as { code?: unknown }).code === 'BAD_CONFIGURATION';

test('the kafka section: relative files are in the installation directory; absent means plain text', () => {
  assert.deepEqual(kafkaSettings(config(), '/home/l', {}), {});
  assert.deepEqual(
    kafkaSettings(config({ ssl: { caFile: 'ca.pem', certFile: '/etc/c.pem', keyFile: 'k.pem' }, sasl: { mechanism: 'scram-sha-512', username: 'ledger', passwordFile: 'pw' }, deployment: 'cluster' }), '/home/l', {}),
    { ssl: { caFile: '/home/l/ca.pem', certFile: '/etc/c.pem', keyFile: '/home/l/k.pem' }, sasl: { mechanism: 'scram-sha-512', username: 'ledger', passwordFile: '/home/l/pw' }, deployment: 'cluster' },
  );
});

test('each LEDGER_KAFKA_* variable wins over the field it names', () => {
  const env = {
    LEDGER_KAFKA_SSL_CA: '/run/ca.pem',
    LEDGER_KAFKA_SASL_MECHANISM: 'scram-sha-256',
    LEDGER_KAFKA_SASL_USERNAME: 'other',
    LEDGER_KAFKA_SASL_PASSWORD_FILE: '/run/pw',
    LEDGER_KAFKA_DEPLOYMENT: 'single-broker',
  };
  assert.deepEqual(kafkaSettings(config({ ssl: { caFile: 'ca.pem' }, sasl: { mechanism: 'scram-sha-512', username: 'ledger', passwordFile: 'pw' }, deployment: 'cluster' }), '/home/l', env), {
    ssl: { caFile: '/run/ca.pem' },
    sasl: { mechanism: 'scram-sha-256', username: 'other', passwordFile: '/run/pw' },
    deployment: 'single-broker',
  });
  // The environment alone is enough; empty variables count as unset.
  assert.deepEqual(kafkaSettings(config(), '/h', { ...env, LEDGER_KAFKA_DEPLOYMENT: '' }), { ssl: { caFile: '/run/ca.pem' }, sasl: { mechanism: 'scram-sha-256', username: 'other', passwordFile: '/run/pw' } });
});

test('half a SASL setting, an unknown mechanism or deployment, a certificate without its key: BAD_CONFIGURATION', () => {
  assert.throws(() => kafkaSettings(config(), '/h', { LEDGER_KAFKA_SASL_USERNAME: 'ledger' }), isBadConfiguration);
  assert.throws(() => kafkaSettings(config(), '/h', { LEDGER_KAFKA_SASL_MECHANISM: 'plain', LEDGER_KAFKA_SASL_USERNAME: 'u', LEDGER_KAFKA_SASL_PASSWORD_FILE: '/pw' }), isBadConfiguration);
  assert.throws(() => kafkaSettings(config(), '/h', { LEDGER_KAFKA_DEPLOYMENT: 'two-brokers' }), isBadConfiguration);
  assert.throws(() => kafkaSettings(config({ ssl: { caFile: 'ca.pem', certFile: 'c.pem' } }), '/h', {}), isBadConfiguration);
  // The config file itself refuses a password in place of a password file, and unknown keys.
  for (const kafka of [{ sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'secret' } }, { ssl: { caFile: 'ca.pem', insecure: true } }, { sasl: { mechanism: 'plain', username: 'u', passwordFile: 'p' } }]) {
    assert.equal(ConfigSchema.safeParse({ ...base, kafka }).success, false, JSON.stringify(kafka));
  }
});

test('topicSpecs on Kafka: every topic with the deployment replication factor, min.insync.replicas and no unclean election; on the embedded log none of it', () => {
  const topics = topicNames('k1');
  const replicated = topicSpecs(topics, 2, { replicationFactor: 3, minInsyncReplicas: 2 });
  assert.equal(replicated.length, 4 + topics.refusals.length);
  for (const spec of replicated) {
    assert.equal(spec.replicationFactor, 3, spec.name);
    assert.equal(spec.config['min.insync.replicas'], '2', spec.name);
    assert.equal(spec.config['unclean.leader.election.enable'], 'false', spec.name);
  }
  assert.equal(replicated.find((s) => s.name === topics.authority)?.config['retention.ms'], '-1');
  for (const spec of topicSpecs(topics, 2)) {
    assert.equal(spec.replicationFactor, undefined, spec.name);
    assert.equal(spec.config['min.insync.replicas'], undefined, spec.name);
  }
});

test('the deployment follows the live brokers, and one broker of a cluster built for three replicas is refused, not given one-replica topics', async () => {
  const previous = process.env.LEDGER_KAFKA_DEPLOYMENT;
  delete process.env.LEDGER_KAFKA_DEPLOYMENT;
  try {
    const home = { config: config(), dir: '/home/l' } as unknown as LedgerHome;
    const bus = (live: number, builtFor: number | undefined): LogBus => ({ clusterSize: async () => live, defaultReplicationFactor: async () => builtFor }) as unknown as LogBus;
    assert.equal((await topicDurability(bus(1, 1), home)).deployment, 'single-broker');
    assert.equal((await topicDurability(bus(1, undefined), home)).deployment, 'single-broker');
    assert.equal((await topicDurability(bus(3, 3), home)).deployment, 'cluster');
    await assert.rejects(topicDurability(bus(1, 3), home), (err: Error) => isBadConfiguration(err) && /only 1 live broker answers.*3 replicas/.test(err.message));
    await assert.rejects(topicDurability(bus(2, 3), home), isBadConfiguration);
    // Named, the deployment is taken as it is: a cluster with brokers down then fails on its topics, not here.
    const named = { config: config({ deployment: 'cluster' }), dir: '/home/l' } as unknown as LedgerHome;
    assert.equal((await topicDurability(bus(1, 3), named)).deployment, 'cluster');
  } finally {
    if (previous !== undefined) process.env.LEDGER_KAFKA_DEPLOYMENT = previous;
  }
});
