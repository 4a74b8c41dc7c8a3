import { test } from 'node:test';
import assert from 'node:assert/strict';
import { logLevel } from 'kafkajs';
import type { LogEntry } from 'kafkajs';
import { kafkaLogLevel, ledgerLogCreator } from '../src/kafkajs/logging.js';

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

function captured(level: logLevel, entries: LogEntry[]): string[] {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => {
    lines.push(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    const log = ledgerLogCreator()(level);
    for (const entry of entries) log(entry);
  } finally {
    process.stderr.write = write;
  }
  return lines;
}

const entry = (namespace: string, level: logLevel, message: string): LogEntry => ({
  namespace,
  level,
  label: 'X',
  log: { timestamp: '2026-01-01T00:00:00.000Z', logger: 'kafkajs', message, extra: 1 },
});

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
