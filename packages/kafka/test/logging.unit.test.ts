import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logLevel } from 'kafkajs';
import type { LogEntry } from 'kafkajs';
import { kafkaLogLevel, ledgerLogCreator, subscriptionReporter, type KafkaLogFields, type KafkaLogSink } from '../src/kafkajs/logging.js';

test('LEDGER_LOG_LEVEL picks the kafkajs level; error when unset or unknown', (t) => {
  // Unset means unset here, whatever the environment the tests run in sets.
  const ambient = process.env.LEDGER_LOG_LEVEL;
  delete process.env.LEDGER_LOG_LEVEL;
  t.after(() => {
    if (ambient !== undefined) process.env.LEDGER_LOG_LEVEL = ambient;
  });
  assert.equal(kafkaLogLevel(undefined), logLevel.ERROR);
  assert.equal(kafkaLogLevel('verbose'), logLevel.ERROR);
  assert.equal(kafkaLogLevel(' DEBUG '), logLevel.DEBUG);
  assert.equal(kafkaLogLevel('nothing'), logLevel.NOTHING);
  assert.equal(kafkaLogLevel('warn'), logLevel.WARN);
  assert.equal(kafkaLogLevel('__proto__'), logLevel.ERROR);
});

/** What `work` writes to stderr, line by line (stderr itself untouched). */
function stderrOf(work: () => void): string[] {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => {
    lines.push(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    work();
  } finally {
    process.stderr.write = write;
  }
  return lines;
}

function captured(level: logLevel, entries: LogEntry[]): string[] {
  return stderrOf(() => {
    const log = ledgerLogCreator()(level);
    for (const entry of entries) log(entry);
  });
}

const entry = (namespace: string, level: logLevel, message: string, fields: Record<string, unknown> = { extra: 1 }): LogEntry => ({
  namespace,
  level,
  label: 'X',
  log: { timestamp: '2026-01-01T00:00:00.000Z', logger: 'kafkajs', message, ...fields },
});

/** What a sink was called with: source, level method, fields, message. */
type SinkCall = [string, string, KafkaLogFields, string];

/** Runs `entries` through a logCreator at `level` with a recording sink; the calls, and the sources the sink was asked for. */
function sunk(level: logLevel, entries: LogEntry[]): { calls: SinkCall[]; asked: string[] } {
  const calls: SinkCall[] = [];
  const asked: string[] = [];
  const sinkFor = (source: string): KafkaLogSink => {
    asked.push(source);
    const method = (name: string) => (fields: KafkaLogFields, message: string) => void calls.push([source, name, fields, message]);
    return { error: method('error'), warn: method('warn'), info: method('info'), debug: method('debug') };
  };
  const log = ledgerLogCreator(sinkFor)(level);
  for (const e of entries) log(e);
  return { calls, asked };
}

test('error responses kafkajs retries or hands to the adapter are warnings; crashes stay errors', () => {
  const entries = [
    entry('Connection', logLevel.ERROR, 'Response InitProducerId(key: 22, version: 1)'),
    entry('Producer', logLevel.ERROR, 'The request included a message larger than the max message size'),
    entry('Consumer', logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded'),
  ];
  const atError = captured(logLevel.ERROR, entries).map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    atError.map((l) => [l['level'], l['source'], l['extra']]),
    [['error', 'kafkajs.Consumer', 1]],
  );
  const atWarn = captured(logLevel.WARN, entries).map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(
    atWarn.map((l) => l['level']),
    ['warn', 'warn', 'error'],
  );
});

test('a sink gets each entry at its mapped level, by source, with its fields; the level filter still applies', () => {
  const entries = [
    entry('Connection', logLevel.ERROR, 'Response Metadata(key: 3, version: 6)', { broker: '127.0.0.1:9092', clientId: 'c', error: 'The coordinator is loading', correlationId: 7 }),
    entry('Connection', logLevel.ERROR, 'Connection error: connect ECONNREFUSED 127.0.0.1:1', { broker: '127.0.0.1:1', clientId: 'c', stack: 'Error: connect ECONNREFUSED' }),
    entry('Producer', logLevel.ERROR, 'Failed to send messages', { retryCount: 2 }),
    entry('Consumer', logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded', { groupId: 'g' }),
    entry('Consumer', logLevel.INFO, 'Consumer has joined the group', { groupId: 'g' }),
    entry('Connection', logLevel.DEBUG, 'Request Metadata(key: 3, version: 6)', { size: 10 }),
  ];
  const atWarn = sunk(logLevel.WARN, entries);
  assert.deepEqual(atWarn.calls, [
    ['kafkajs.Connection', 'warn', { broker: '127.0.0.1:9092', clientId: 'c', error: 'The coordinator is loading', correlationId: 7 }, 'Response Metadata(key: 3, version: 6)'],
    ['kafkajs.Connection', 'error', { broker: '127.0.0.1:1', clientId: 'c', stack: 'Error: connect ECONNREFUSED' }, 'Connection error: connect ECONNREFUSED 127.0.0.1:1'],
    ['kafkajs.Producer', 'warn', { retryCount: 2 }, 'Failed to send messages'],
    ['kafkajs.Consumer', 'error', { groupId: 'g' }, 'Crash: KafkaJSNumberOfRetriesExceeded'],
  ]);
  // One sink per source, asked for when its first entry is written.
  assert.deepEqual(atWarn.asked, ['kafkajs.Connection', 'kafkajs.Producer', 'kafkajs.Consumer']);

  assert.deepEqual(
    sunk(logLevel.ERROR, entries).calls.map(([source, level]) => [source, level]),
    [
      ['kafkajs.Connection', 'error'],
      ['kafkajs.Consumer', 'error'],
    ],
  );
  assert.deepEqual(
    sunk(logLevel.DEBUG, entries).calls.map(([, level]) => level),
    ['warn', 'error', 'warn', 'error', 'info', 'debug'],
  );
  assert.deepEqual(sunk(logLevel.NOTHING, entries), { calls: [], asked: [] });
});

test('a sink never writes to stderr, and an entry field named like a line member is renamed', () => {
  let stray = false;
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (() => {
    stray = true;
    return true;
  }) as typeof process.stderr.write;
  let result: ReturnType<typeof sunk>;
  try {
    result = sunk(logLevel.INFO, [entry('Admin', logLevel.INFO, 'm', { level: 'x', time: 1, source: 's', msg: 'n', topic: 't' })]);
  } finally {
    process.stderr.write = write;
  }
  assert.equal(stray, false);
  assert.deepEqual(result.calls, [['kafkajs.Admin', 'info', { kafkajs_level: 'x', kafkajs_time: 1, kafkajs_source: 's', kafkajs_msg: 'n', topic: 't' }, 'm']]);
  // Without a sink the stderr line keeps its own members first.
  const [line] = captured(logLevel.INFO, [entry('Admin', logLevel.INFO, 'm', { level: 'x', topic: 't' })]);
  assert.deepEqual(JSON.parse(line ?? ''), { time: '2026-01-01T00:00:00.000Z', level: 'info', source: 'kafkajs.Admin', message: 'm', kafkajs_level: 'x', topic: 't' });
});

test('a subscription without onError is still heard: its reports go to the sink (or stderr) unless the level is nothing', () => {
  const calls: [string, string, KafkaLogFields, string][] = [];
  const sinkFor = (source: string): KafkaLogSink => ({
    error: (fields, message) => calls.push([source, 'error', fields, message]),
    warn: (fields, message) => calls.push([source, 'warn', fields, message]),
    info: (fields, message) => calls.push([source, 'info', fields, message]),
    debug: (fields, message) => calls.push([source, 'debug', fields, message]),
  });
  const report = subscriptionReporter(logLevel.ERROR, sinkFor);
  report('ledger.gate', { code: 'UNAVAILABLE', message: 'read nothing for 41 s' }, false);
  report('ledger.gate', { code: 'UNAVAILABLE', message: 'stopped by its client' }, true);
  assert.deepEqual(calls, [
    ['ledger.subscription', 'warn', { groupId: 'ledger.gate', code: 'UNAVAILABLE', stopped: false }, 'read nothing for 41 s'],
    ['ledger.subscription', 'error', { groupId: 'ledger.gate', code: 'UNAVAILABLE', stopped: true }, 'stopped by its client'],
  ]);
  // Said whatever kafkajs's own level filters: these are the ledger's reports, not kafkajs entries.
  subscriptionReporter(logLevel.NOTHING, sinkFor)('g', { code: 'UNAVAILABLE', message: 'm' }, true);
  assert.equal(calls.length, 2, 'level nothing keeps quiet');
  const lines = stderrOf(() => subscriptionReporter(logLevel.ERROR)('g', { code: 'INTERNAL', message: 'batch handler failed' }, false));
  const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
  assert.deepEqual({ ...line, time: typeof line.time }, { time: 'string', level: 'warn', source: 'ledger.subscription', message: 'batch handler failed', groupId: 'g', code: 'INTERNAL', stopped: false });
});
