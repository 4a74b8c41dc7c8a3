import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerTopic, loadTopicConfig } from '@agent-ledger/kafka';
import { kafkaSecurity, topicNames, topicSpecs } from '@agent-ledger/ledger';

test('kafkaSecurity reads the CA and the first line of the password file; a missing or empty file is BAD_CONFIGURATION naming the path, never the content', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-kafka-security-'));
  writeFileSync(join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  writeFileSync(join(dir, 'pw'), 's3cret-value\nignored second line\n', { mode: 0o600 });
  writeFileSync(join(dir, 'empty'), '\n', { mode: 0o600 });
  assert.equal(kafkaSecurity({}), undefined);
  assert.deepEqual(kafkaSecurity({ ssl: { caFile: join(dir, 'ca.pem') }, sasl: { mechanism: 'scram-sha-512', username: 'ledger', passwordFile: join(dir, 'pw') } }), {
    ssl: { ca: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' },
    sasl: { mechanism: 'scram-sha-512', username: 'ledger', password: 's3cret-value' },
  });
  const refused = (settings: Parameters<typeof kafkaSecurity>[0], path: string) => (err: unknown): boolean => {
    const { code, message } = err as { code?: unknown; message: string };
    assert.equal(code, 'BAD_CONFIGURATION');
    assert.ok(message.includes(path), message);
    assert.ok(!message.includes('s3cret'), message);
    return true;
  };
  const missing = { ssl: { caFile: join(dir, 'nope.pem') } };
  assert.throws(() => kafkaSecurity(missing), refused(missing, join(dir, 'nope.pem')));
  const empty = { sasl: { mechanism: 'scram-sha-256' as const, username: 'u', passwordFile: join(dir, 'empty') } };
  assert.throws(() => kafkaSecurity(empty), refused(empty, join(dir, 'empty')));
});

test('the settings the ledger gives each topic are the ones deploy/topics.json documents', async () => {
  const file = await loadTopicConfig();
  const topics = topicNames('k1');
  const specs = new Map(topicSpecs(topics, file.eventPartitions, file.deployments.cluster).map((s) => [s.name, s]));
  const documented: [string, Readonly<Record<string, string>>][] = [
    [topics.intake, file.topics[LedgerTopic.intake]],
    [topics.authority, file.topics[LedgerTopic.authority]],
    [topics.events, file.topics[LedgerTopic.events]],
    [topics.checkpoints, file.topics[LedgerTopic.checkpoints]],
    ...topics.refusals.map((name): [string, Readonly<Record<string, string>>] => [name, file.refusalTopic.settings]),
  ];
  for (const [name, settings] of documented) {
    const spec = specs.get(name);
    assert.ok(spec !== undefined, name);
    for (const [key, value] of Object.entries(settings)) assert.equal(spec.config[key], value, `${name} ${key}`);
    assert.equal(spec.replicationFactor, file.deployments.cluster.replicationFactor, name);
    assert.equal(spec.config['min.insync.replicas'], String(file.deployments.cluster.minInsyncReplicas), name);
  }
});
