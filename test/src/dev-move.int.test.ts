import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createReadStream, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { verifyBundle } from '@agent-ledger/verifier';
import { LedgerHome, exportCommand, serve } from '@agent-ledger/ledger';
import { freshDevHome, startDev } from './dev-mode.js';
import { assertJsonSuccess } from './cli-json-shape.js';
import { repoRoot } from './fixtures.js';
import { clientFor, getJson, proposal, readAs } from './live.js';

// Growing out of one machine: an installation run with ledger dev is moved to
// Kafka and Postgres with one command; its entries, chains and checkpoints are
// the same bytes there, verify-chain passes across the move, and the roles
// carry on from where the embedded ones stopped.

process.env.LEDGER_DEADLINES_MS = '2:3000,3:3000,4:3000';

const entryLines = (path: string): string[] => readFileSync(path, 'utf8').split('\n').filter((l) => l.includes('"kind":"entry"'));

test('ledger move-to-kafka: the log replayed byte for byte, verify-chain across the move, and the roles carry on', { timeout: 600_000 }, async (t) => {
  const home = freshDevHome();
  t.after(() => rmSync(home.dir, { recursive: true, force: true }));
  let running = await startDev(home, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']);
  const decided: { agent: string; hash: string; outcome: string }[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      const d = await clientFor(home, running, 'agent-build-bot').proposeAndWait(proposal({ scope: `before-${i}` }), 30_000);
      decided.push({ agent: 'agent-build-bot', hash: d.proposal, outcome: d.outcome });
    }
    // One confirmation left to time out on the embedded side.
    const support = clientFor(home, running, 'agent-support-bot');
    const silent = await support.proposeAndWait(proposal({ tool: 'email', actionType: 'email.send', targetResource: 'mail/outbound', recipient: 'customer@example.com', scope: 'ticket:1', args: { to: 'customer@example.com' }, query: 'tell the customer' }), 30_000);
    decided.push({ agent: 'agent-support-bot', hash: silent.proposal, outcome: silent.outcome });
    await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2 + 500));
  } finally {
    await running.stop();
  }
  const before = join(home.dir, 'before.ndjson');
  assert.equal(await exportCommand({ out: before, home: home.dir }), 0);

  const id = randomBytes(4).toString('hex');
  // The CLI itself, as an operator runs it: with --json one success object on stdout, progress on stderr.
  const move = spawnSync(process.execPath, [join(repoRoot, 'services', 'ledger', 'bin', 'ledger.js'), 'move-to-kafka', '--home', home.dir, '--pg-url', `postgres://postgres@127.0.0.1:5432/ledger_moved_${id}`, '--json'], { encoding: 'utf8', timeout: 300_000 });
  assertJsonSuccess(move, 'move-to-kafka --json');
  const moved = LedgerHome.open(home.dir);
  assert.equal(moved.config.storage, undefined, 'the configuration names Kafka and Postgres');

  // The same export from Kafka: the same entries and checkpoints, byte for byte.
  const onKafka = join(home.dir, 'on-kafka.ndjson');
  assert.equal(await exportCommand({ out: onKafka, home: home.dir }), 0);
  assert.deepEqual(entryLines(onKafka), entryLines(before));

  running = await serve(moved, ['api', 'sequencer', 'gate', 'projector', 'timer', 'siem']);
  readAs(running, moved.key('admin-alice'));
  try {
    // Every decision made on the embedded side is served from the rebuilt projection, and nothing was decided twice.
    for (const d of decided) assert.equal((await clientFor(moved, running, d.agent).awaitDecision(d.hash, 60_000)).outcome, d.outcome);
    const after = await clientFor(moved, running, 'agent-build-bot').proposeAndWait(proposal({ scope: 'after-move' }), 60_000);
    assert.equal(after.outcome, 'allow');
    const { status } = await getJson(running, '/v1/checkpoints/latest');
    assert.equal(status, 200);
    await new Promise((resolve) => setTimeout(resolve, moved.config.checkpointIntervalMs * 2 + 500));
  } finally {
    await running.stop();
  }
  const afterMove = join(home.dir, 'after.ndjson');
  assert.equal(await exportCommand({ out: afterMove, home: home.dir }), 0);
  const report = await verifyBundle(createReadStream(afterMove), moved.trustRoot, { workers: 1 });
  assert.equal(report.failure, null);
  const old = entryLines(before);
  const all = entryLines(afterMove);
  assert.ok(all.length > old.length, `the chains went on (${old.length} -> ${all.length} entries)`);
  for (const line of old) assert.ok(all.includes(line), 'every entry from before the move is in the export after it');
  // No proposal was decided again by the roles on Kafka: one decision per proposal and outcome.
  const decisions = all
    .map((l) => (JSON.parse(l) as { envelope: { statement: { type: string; body: { proposal?: string; outcome?: string } } } }).envelope.statement)
    .filter((s) => s.type === 'decision.recorded')
    .map((s) => `${s.body.proposal ?? ''}:${s.body.outcome ?? ''}`);
  assert.ok(decisions.length >= decided.length);
  assert.equal(new Set(decisions).size, decisions.length, 'no decision made twice');
  t.diagnostic(`moved ${old.length} entries; ${all.length} after the move; verify-chain: ${report.entries} entries OK`);
});
