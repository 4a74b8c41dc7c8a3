import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerHome, initHome } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';

// A `ledger serve` whose broker refuses connections logs kafkajs's connection
// errors and its own "not reachable yet" through one pino logger: every
// stderr line is one JSON object of the same shape (services/ledger
// logging.ts), at the level LEDGER_LOG_LEVEL sets for both.

const bin = join(repoRoot, 'services/ledger/bin/ledger.js');
const LEVELS = ['error', 'warn', 'info', 'debug'];
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A fresh installation whose only broker is `broker`. */
function homeWithBroker(broker: string): LedgerHome {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-logging-'));
  const home = join(dir, 'home');
  initHome(home, { rootKeysDir: join(dir, 'root-keys'), apiPort: 0 });
  const configPath = join(home, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(configPath, `${JSON.stringify({ ...config, kafkaBrokers: [broker] }, null, 2)}\n`);
  return LedgerHome.open(home);
}

/**
 * The stderr lines of `ledger serve --target sequencer` at `level`, stopped
 * (SIGTERM, before serve installs its handlers: nothing more is written) once
 * `enough` holds for the lines so far or after `limitMs`.
 */
async function serveStderr(home: LedgerHome, level: string, limitMs: number, enough: (lines: readonly string[]) => boolean = () => false): Promise<string[]> {
  const child = spawn(process.execPath, [bin, 'serve', '--home', home.dir, '--target', 'sequencer'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LEDGER_LOG_LEVEL: level, KAFKAJS_LOG_LEVEL: '' },
  });
  let text = '';
  const lines = (): string[] => text.split('\n').slice(0, -1);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGTERM'), limitMs);
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    text += chunk;
    if (enough(lines())) child.kill('SIGTERM');
  });
  await exited;
  clearTimeout(timer);
  return lines();
}

/** Each line parsed, after checking it is one JSON object of the ledger log's shape. */
function ledgerLines(lines: readonly string[]): Record<string, unknown>[] {
  return lines.map((line) => {
    const value = JSON.parse(line) as unknown;
    assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), line);
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    // pino's order: level and time, the child's binding, the entry's fields, the message last.
    assert.deepEqual(keys.slice(0, 3), ['level', 'time', 'source'], line);
    assert.equal(keys.at(-1), 'message', line);
    assert.ok(LEVELS.includes(record['level'] as string), line);
    assert.match(record['time'] as string, ISO_TIME, line);
    assert.equal(typeof record['source'], 'string', line);
    assert.equal(typeof record['message'], 'string', line);
    return record;
  });
}

test('kafkajs lines and the ledger own lines share the pino format, level filter and destination', { timeout: 120_000 }, async () => {
  const home = homeWithBroker(`127.0.0.1:${await closedPort()}`);
  const isOwn = (line: string): boolean => line.includes('"source":"ledger"');
  const [atWarn, atDebug, atError, atNothing] = await Promise.all([
    // The ledger says "not reachable yet" once kafkajs has given up its retries (about 20 s).
    serveStderr(home, 'warn', 90_000, (lines) => lines.some(isOwn)),
    // Each stops at the first line that shows what it is for (a loaded machine may take seconds to start a process).
    serveStderr(home, 'debug', 60_000, (lines) => lines.some((l) => l.includes('"level":"debug"') && l.includes('"source":"kafkajs.'))),
    serveStderr(home, 'error', 60_000, (lines) => lines.length > 0),
    // Silence is shown over a window as long as the others' first lines take.
    serveStderr(home, 'nothing', 8_000),
  ]);

  const warn = ledgerLines(atWarn);
  const sources = new Set(warn.map((l) => l['source']));
  assert.ok(sources.has('kafkajs.Connection') && sources.has('ledger'), `sources: ${[...sources].join(', ')}`);
  const refused = warn.find((l) => l['source'] === 'kafkajs.Connection');
  assert.equal(refused?.['level'], 'error');
  assert.match(refused?.['message'] as string, /ECONNREFUSED/);
  assert.equal(typeof refused?.['broker'], 'string');
  const own = warn.find((l) => l['source'] === 'ledger');
  assert.equal(own?.['level'], 'warn');
  assert.match(own?.['message'] as string, /^broker: not reachable yet/);

  // At debug kafkajs writes its requests and connections too, through the same logger.
  const debug = ledgerLines(atDebug);
  assert.ok(debug.some((l) => l['level'] === 'debug' && (l['source'] as string).startsWith('kafkajs.')));
  // At error only errors, and nothing at all at `nothing`.
  const error = ledgerLines(atError);
  assert.ok(error.length > 0);
  assert.deepEqual(new Set(error.map((l) => l['level'])), new Set(['error']));
  assert.deepEqual(atNothing, []);
});
