import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import type { Admin } from 'kafkajs';
import { fromKafkaError, isFencing } from '../src/kafkajs/errors.js';
import { ensureTopics } from '../src/kafkajs/topic-admin.js';

/** kafkajs's error shapes: protocol errors carry `type`; wrappers carry `cause`, aggregates `errors`. */
const protocol = (type: string): Error => Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });
const wrapped = (cause: unknown): Error => Object.assign(new Error('retries exceeded'), { name: 'KafkaJSNumberOfRetriesExceeded', cause });

test('fencing is INVALID_PRODUCER_EPOCH or PRODUCER_FENCED anywhere in the error tree', () => {
  assert.ok(isFencing(protocol('INVALID_PRODUCER_EPOCH')));
  assert.ok(isFencing(wrapped(wrapped(protocol('INVALID_PRODUCER_EPOCH')))));
  assert.ok(isFencing(Object.assign(new Error('agg'), { errors: [protocol('NONE'), protocol('PRODUCER_FENCED')] })));
  // kafkajs 2.2.4 does not know code 90 and keeps it only in the message.
  assert.ok(isFencing(Object.assign(new Error('Unknown error code 90'), { type: 'KAFKAJS_UNKNOWN_ERROR_CODE' })));
  assert.ok(!isFencing(protocol('CONCURRENT_TRANSACTIONS')));
  assert.ok(!isFencing(new Error('INVALID_PRODUCER_EPOCH')));
  const cyclic: { cause?: unknown } = {};
  cyclic.cause = cyclic;
  assert.ok(!isFencing(cyclic));
});

test('kafkajs errors map to codes by the broker answer', () => {
  const cases: [unknown, string, boolean][] = [
    [protocol('MESSAGE_TOO_LARGE'), OperationalCode.BAD_ARGUMENT, false],
    [wrapped(protocol('INVALID_TOPIC_EXCEPTION')), OperationalCode.BAD_ARGUMENT, false],
    [wrapped(protocol('UNKNOWN_TOPIC_OR_PARTITION')), ReasonCode.INTEGRITY_FAILURE, false],
    [protocol('TOPIC_AUTHORIZATION_FAILED'), OperationalCode.BAD_CONFIGURATION, false],
    [wrapped(protocol('REQUEST_TIMED_OUT')), OperationalCode.UNAVAILABLE, true],
    [Object.assign(new Error('Connection error: ECONNREFUSED'), { name: 'KafkaJSConnectionError' }), OperationalCode.UNAVAILABLE, true],
    // Wrong SCRAM credentials, a CA that did not sign the broker: an operator must fix the configuration.
    [wrapped(Object.assign(new Error('SASL SCRAM SHA256 authentication failed'), { name: 'KafkaJSSASLAuthenticationError' })), OperationalCode.BAD_CONFIGURATION, false],
    [Object.assign(new Error('Connection error: self-signed certificate in certificate chain'), { name: 'KafkaJSConnectionError', code: 'SELF_SIGNED_CERT_IN_CHAIN' }), OperationalCode.BAD_CONFIGURATION, false],
    [Object.assign(new Error('Connection error: altnames'), { name: 'KafkaJSConnectionError', code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), OperationalCode.BAD_CONFIGURATION, false],
    // A plain-text client at a TLS listener sees the connection closed: an outage as far as it can tell.
    [Object.assign(new Error('Closed connection'), { name: 'KafkaJSConnectionClosedError' }), OperationalCode.UNAVAILABLE, true],
    ['not even an error', OperationalCode.UNAVAILABLE, true],
  ];
  for (const [error, code, retryable] of cases) {
    const mapped = fromKafkaError(error, 'doing it');
    // Outages and mistakes are operational errors; only the log's shape speaks in refusal codes.
    assert.ok(code === ReasonCode.INTEGRITY_FAILURE ? mapped instanceof LedgerError : mapped instanceof OperationalError, String(error));
    assert.equal(mapped.code, code, String(error));
    assert.equal(mapped.retryable, retryable, String(error));
    assert.equal(mapped.cause, error);
  }
  const typed = new LedgerError(ReasonCode.REPLAY, 'already typed');
  assert.equal(fromKafkaError(typed, 'x'), typed);
});

test('a topic the cluster is still making is a passing state at startup (UNAVAILABLE, retryable), not a missing topic', async () => {
  // The race seen on a fresh three-node cluster: CreateTopics done, a node's metadata not caught up yet.
  const notYet = wrapped(protocol('UNKNOWN_TOPIC_OR_PARTITION'));
  const admin = {
    listTopics: async () => [],
    createTopics: async () => {
      throw notYet;
    },
  } as unknown as Admin;
  await assert.rejects(ensureTopics(admin, [{ name: 'l.events', partitions: 2 }]), (err: unknown) => {
    assert.ok(err instanceof OperationalError);
    assert.equal(err.code, OperationalCode.UNAVAILABLE);
    assert.equal(err.retryable, true);
    assert.equal(err.cause, notYet);
    return true;
  });
  // The same answer from the metadata read that checks what was made.
  const made = { listTopics: async () => ['l.events'], fetchTopicMetadata: async () => Promise.reject(notYet) } as unknown as Admin;
  await assert.rejects(ensureTopics(made, [{ name: 'l.events', partitions: 2 }]), (err: unknown) => err instanceof OperationalError && err.code === OperationalCode.UNAVAILABLE && err.retryable);
  // Elsewhere a missing topic stays what it is: the log's shape is wrong.
  assert.equal(fromKafkaError(notYet, 'reading').code, ReasonCode.INTEGRITY_FAILURE);
});
