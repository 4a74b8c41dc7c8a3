import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KNOWN_CODES, ReasonCode } from '@agent-ledger/refusals';
import { LedgerTopic, ledgerTopics, loadTopicConfig, parseTopicConfig, refusalTopicName } from '../src/index.js';

const isSchemaInvalid = (err: unknown): boolean => (err as { code?: unknown }).code === 'BAD_CONFIGURATION';

function document(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventPartitions: 3,
    deployments: { 'single-broker': { replicationFactor: 1, minInsyncReplicas: 1 }, cluster: { replicationFactor: 3, minInsyncReplicas: 2 } },
    topics: {
      'ledger.intake': { 'retention.ms': '604800000' },
      'ledger.authority': { 'retention.ms': '-1' },
      'ledger.events': { 'retention.ms': '-1' },
      'ledger.checkpoints': {},
    },
    refusalTopic: { partitions: 2, config: { 'cleanup.policy': 'delete' } },
    ...overrides,
  };
}

test('deploy/topics.json loads and keeps the ledger topics forever', async () => {
  const config = await loadTopicConfig();
  assert.ok(config.eventPartitions >= 1);
  for (const name of [LedgerTopic.authority, LedgerTopic.events, LedgerTopic.checkpoints]) {
    assert.equal(config.topics[name]['retention.ms'], '-1', name);
    assert.equal(config.topics[name]['retention.bytes'], '-1', name);
    assert.equal(config.topics[name]['cleanup.policy'], 'delete', name);
  }
});

test('deploy/topics.json requires three replicas and two in sync on a cluster, and never an unclean leader', async () => {
  const config = await loadTopicConfig();
  assert.deepEqual(config.deployments.cluster, { replicationFactor: 3, minInsyncReplicas: 2 });
  assert.deepEqual(config.deployments['single-broker'], { replicationFactor: 1, minInsyncReplicas: 1 });
  for (const spec of ledgerTopics(config, 'cluster')) {
    assert.equal(spec.replicationFactor, 3, spec.name);
    assert.equal(spec.config?.['min.insync.replicas'], '2', spec.name);
    assert.equal(spec.config?.['unclean.leader.election.enable'], 'false', spec.name);
  }
});

test('ledgerTopics derives every topic and partition count from eventPartitions', () => {
  const specs = ledgerTopics(parseTopicConfig(JSON.stringify(document())), 'single-broker');
  const byName = new Map(specs.map((s) => [s.name, s]));
  assert.equal(byName.get('ledger.intake')?.partitions, 4);
  assert.equal(byName.get('ledger.authority')?.partitions, 1);
  assert.equal(byName.get('ledger.events')?.partitions, 3);
  assert.equal(byName.get('ledger.checkpoints')?.partitions, 4);
  assert.deepEqual(byName.get('ledger.authority')?.config, { 'retention.ms': '-1', 'min.insync.replicas': '1', 'unclean.leader.election.enable': 'false' });
  const refusals = specs.slice(4);
  assert.deepEqual(
    refusals.map((s) => s.name),
    KNOWN_CODES.map((code) => `ledger.refusals.${code}`),
  );
  assert.ok(refusals.every((s) => s.partitions === 2 && s.replicationFactor === 1 && s.config?.['cleanup.policy'] === 'delete'));
  assert.equal(specs.length, 4 + KNOWN_CODES.length);
  assert.equal(new Set(specs.map((s) => s.name)).size, specs.length);
  assert.equal(refusalTopicName(ReasonCode.RATE_LIMIT), 'ledger.refusals.RATE_LIMIT');
});

test('parseTopicConfig refuses anything but the documented shape', () => {
  const bad: [string, string][] = [
    ['not JSON', '{'],
    ['an array', '[]'],
    ['an unknown key', JSON.stringify(document({ extra: 1 }))],
    ['a missing key', JSON.stringify({ ...document(), deployments: undefined })],
    ['a missing deployment', JSON.stringify(document({ deployments: { cluster: { replicationFactor: 3, minInsyncReplicas: 2 } } }))],
    ['min.insync above the replication factor', JSON.stringify(document({ deployments: { 'single-broker': { replicationFactor: 1, minInsyncReplicas: 2 }, cluster: { replicationFactor: 3, minInsyncReplicas: 2 } } }))],
    ['an unknown deployment key', JSON.stringify(document({ deployments: { 'single-broker': { replicationFactor: 1, minInsyncReplicas: 1, acks: 1 }, cluster: { replicationFactor: 3, minInsyncReplicas: 2 } } }))],
    ['zero event partitions', JSON.stringify(document({ eventPartitions: 0 }))],
    ['fractional partitions', JSON.stringify(document({ eventPartitions: 1.5 }))],
    ['partitions as a string', JSON.stringify(document({ eventPartitions: '4' }))],
    ['a missing ledger topic', JSON.stringify(document({ topics: { 'ledger.intake': {}, 'ledger.authority': {}, 'ledger.events': {} } }))],
    [
      'an extra topic',
      JSON.stringify(document({ topics: { 'ledger.intake': {}, 'ledger.authority': {}, 'ledger.events': {}, 'ledger.checkpoints': {}, 'ledger.other': {} } })),
    ],
    ['a numeric setting', JSON.stringify(document({ refusalTopic: { partitions: 1, config: { 'retention.ms': -1 } } }))],
    ['a malformed setting name', JSON.stringify(document({ refusalTopic: { partitions: 1, config: { __proto__x: '1' } } }))],
    ['a refusal topic without partitions', JSON.stringify(document({ refusalTopic: { config: {} } }))],
  ];
  for (const [what, text] of bad) assert.throws(() => parseTopicConfig(text), isSchemaInvalid, what);
});

test('loadTopicConfig reports an unreadable file as BAD_CONFIGURATION', async () => {
  await assert.rejects(loadTopicConfig('/nonexistent/topics.json'), isSchemaInvalid);
});
