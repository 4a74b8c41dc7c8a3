import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as kafka from '../src/index.js';

test('the package index exports exactly the documented names', () => {
  assert.deepEqual(Object.keys(kafka).sort(), [
    'ChunkedCommitter',
    'DEFAULT_BROKERS',
    'DEPLOYMENTS',
    'LedgerTopic',
    'TRANSACTION_BYTES',
    'UNREACHABLE_CODE',
    'WriterFencedError',
    'brokersFromEnv',
    'createEmbeddedBus',
    'createKafkaBus',
    'durabilitySettings',
    'ledgerTopics',
    'loadTopicConfig',
    'parseTopicConfig',
    'readEmbeddedLayout',
    'refusalTopicName',
  ]);
});

test('brokers come from LEDGER_KAFKA_BROKERS, comma-separated, with the local broker as default', () => {
  assert.deepEqual(kafka.brokersFromEnv({}), ['127.0.0.1:9092']);
  assert.deepEqual(kafka.brokersFromEnv({ LEDGER_KAFKA_BROKERS: ' , ' }), ['127.0.0.1:9092']);
  assert.deepEqual(kafka.brokersFromEnv({ LEDGER_KAFKA_BROKERS: 'a:9092, b:9093,,c:1' }), ['a:9092', 'b:9093', 'c:1']);
  assert.ok(Object.isFrozen(kafka.DEFAULT_BROKERS));
});

test('createKafkaBus refuses an empty broker list or client id without connecting', () => {
  const isSchemaInvalid = (err: unknown): boolean => (err as { code?: unknown }).code === 'BAD_ARGUMENT';
  assert.throws(() => kafka.createKafkaBus({ brokers: [], clientId: 'x' }), isSchemaInvalid);
  assert.throws(() => kafka.createKafkaBus({ brokers: [''], clientId: 'x' }), isSchemaInvalid);
  assert.throws(() => kafka.createKafkaBus({ brokers: ['127.0.0.1:9092'], clientId: '' }), isSchemaInvalid);
});

test('WriterFencedError is a non-retryable INTEGRITY_FAILURE naming the transactional id', () => {
  const err = new kafka.WriterFencedError('ledger-sequencer-3', new Error('epoch'));
  assert.equal(err.code, 'INTEGRITY_FAILURE');
  assert.equal(err.retryable, false);
  assert.equal(err.transactionalId, 'ledger-sequencer-3');
  assert.equal(err.name, 'WriterFencedError');
  assert.deepEqual(Object.keys(err.toJSON()).sort(), ['code', 'message', 'retryable']);
});
