import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import xterm from '@xterm/headless';
import { countdownScreen, initHome, type PendingItem } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { assertJsonFailure } from './cli-json-shape.js';

const bin = join(repoRoot, 'services', 'ledger', 'dist', 'src', 'main.js');
const ledger = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });

test('ledger --version prints the package version', () => {
  const run = ledger('--version');
  assert.equal(run.status, 0);
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'services', 'ledger', 'package.json'), 'utf8')) as { version: string };
  assert.equal(run.stdout, `${manifest.version}\n`);
  const dir = join(mkdtempSync(join(tmpdir(), 'ledger-init-')), 'home');
  const init = ledger('init', '--home', dir, '--json');
  assert.equal(init.status, 0, init.stderr);
  const made = JSON.parse(init.stdout) as { ok: boolean; created: boolean; home: string; trustRoot: string };
  assert.deepEqual([made.ok, made.created, made.home, made.trustRoot], [true, true, dir, `${dir}/trust-root.json`]);
});

test('a usage error is one typed line, the usage line and a hint: no whole help, no stack, exit 2', () => {
  for (const [args, usage] of [
    [['approve', '--bogus'], 'usage: ledger approve [options]'],
    [['grant', 'propose', '--agent', 'agent:x'], 'usage: ledger grant propose [options]'],
    [['verify-chain'], 'usage: ledger verify-chain [options] <bundle>'],
    [['no-such-command'], 'usage: ledger [options] [command]'],
  ] as const) {
    const run = ledger(...args);
    assert.equal(run.status, 2, args.join(' '));
    const lines = run.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 3, `${args.join(' ')}: ${run.stderr}`);
    assert.match(lines[0] as string, /^ledger: BAD_ARGUMENT: /);
    assert.equal(lines[1], usage);
    assert.match(lines[2] as string, /^hint: run 'ledger.* --help' for the options$/);
    assert.equal(run.stdout, '');
  }
});

test('doctor and status with nothing running: typed findings with fixes, --json, no kafkajs lines, UNAVAILABLE exit 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-doctor-'));
  const home = initHome(dir, { origin: 'ledger.test/doctor', topicPrefix: 'tdoctor', pgUrl: 'postgres://postgres@127.0.0.1:1/none', apiPort: 1 });
  const config = JSON.parse(readFileSync(join(home.dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(config['pgUrl'], 'postgres://postgres@127.0.0.1:1/none');
  const env = { ...process.env, LEDGER_KAFKA_BROKERS: '127.0.0.1:1' };
  const doctor = spawnSync(process.execPath, [bin, 'doctor', '--home', dir, '--json'], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(doctor.stderr, '', 'nothing but the report');
  // Only the broker and Postgres fail: an outage, the checks beside the error.
  const report = assertJsonFailure(doctor, 'doctor --json', 'UNAVAILABLE') as { checks: { name: string; level: string; fix?: string }[] };
  const by = new Map(report.checks.map((c) => [c.name, c]));
  assert.equal(by.get('trust root')?.level, 'ok');
  assert.equal(by.get('keys')?.level, 'ok');
  assert.equal(by.get('broker')?.level, 'fail');
  assert.match(by.get('broker')?.fix ?? '', /kafka\.sh start/);
  assert.equal(by.get('postgres')?.level, 'fail');
  assert.match(by.get('postgres')?.fix ?? '', /postgres\.sh start/);
  assert.equal(by.get('api')?.level, 'warn');
  const human = spawnSync(process.execPath, [bin, 'doctor', '--home', dir], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(human.status, 2, 'the same exit status without --json');
  assert.match(human.stdout, /^FAIL {2}broker: 127\.0\.0\.1:1: not reachable/m);
  assert.match(human.stdout, /^ {6}fix: start the broker/m);
  const status = spawnSync(process.execPath, [bin, 'status', '--home', dir, '--json'], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(status.stderr, '');
  const parsed = assertJsonFailure(status, 'status --json', 'UNAVAILABLE') as { broker: { up: boolean }; postgres: { up: boolean }; api: { up: boolean }; partitions: unknown[] };
  assert.deepEqual([parsed.broker.up, parsed.postgres.up, parsed.api.up], [false, false, false]);
  assert.equal(parsed.partitions.length, home.config.eventPartitions + 1);
});

/** A terminal stream of `columns` x `rows` whose bytes go to a headless xterm. */
function terminal(columns: number, rows: number): { stream: NodeJS.WriteStream; screen: () => Promise<string[]> } {
  const term = new xterm.Terminal({ cols: columns, rows, allowProposedApi: true, convertEol: true /* the tty driver's onlcr */ });
  let pending = Promise.resolve();
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending = pending.then(() => new Promise<void>((resolve) => term.write(chunk, resolve)));
      done();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(stream, { columns, rows, isTTY: true });
  return {
    stream,
    screen: async () => {
      await pending;
      const buffer = term.buffer.active;
      const lines: string[] = [];
      for (let y = 0; y < buffer.length; y++) lines.push(buffer.getLine(y)?.translateToString(true) ?? '');
      return lines;
    },
  };
}

test('approve countdown: redrawn in place on a 40-column terminal where its lines wrap: no stale lines, the newest countdown only', async () => {
  const deadline = '2026-11-24T10:00:30.000Z';
  const item: PendingItem = {
    proposalHash: 'ab'.repeat(32), requestHash: 'cd'.repeat(32), agentId: 'agent:billing-bot', tier: 3, risk: 0.82, deadline, approvalsRequired: 1, approvedBy: [],
    operation: { agentId: 'agent:billing-bot', tool: 'payments', actionType: 'payment.send', targetResource: 'payments/vendors/globex', recipient: 'globex-ltd', scope: 'vendors', args: { amountUsd: 98000, iban: 'DE89370400440532013000', memo: 'Q4 consulting invoice 2026-118, net 30' }, query: 'pay the Globex invoice', labels: [], channel: 'api', context: {} },
  };
  const { stream, screen } = terminal(40, 40);
  const view = countdownScreen(stream);
  const t0 = Date.parse(deadline) - 30_000;
  for (let s = 0; s < 5; s++) view.draw([item], t0 + s * 1000);
  const lines = (await screen()).filter((l) => l.trim() !== '');
  const countdowns = lines.filter((l) => /expires in \d+s/.test(l));
  assert.deepEqual(countdowns.length, 1, lines.join('\n'));
  assert.match(countdowns[0] as string, /expires in 26s/);
  assert.equal(lines.filter((l) => l.startsWith('(Ctrl-C to stop')).length, 1, 'one footer');
  assert.ok(lines.length > 6, 'the lines wrapped at 40 columns');
  assert.ok(lines.every((l) => l.length <= 40));
  // The same frames written the old way (cursor up by the number of logical lines) leave stale rows behind on this terminal.
  const old = terminal(40, 40);
  let drawn = 0;
  for (let s = 0; s < 5; s++) {
    const frame = [`${item.proposalHash.slice(0, 12)}  tier 3  risk 0.82  agent:billing-bot  expires in ${30 - s}s`, `    args ${JSON.stringify(item.operation.args)}`, '(Ctrl-C to stop)'];
    if (drawn > 0) old.stream.write(`\x1b[${drawn}A\x1b[0J`);
    old.stream.write(`${frame.join('\n')}\n`);
    drawn = frame.length;
  }
  assert.ok((await old.screen()).filter((l) => /expires in \d+s/.test(l)).length > 1, 'the emulator shows the bug the old redraw had');
});
