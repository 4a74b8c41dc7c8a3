import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createReadStream, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { statementHash, type Statement } from '@agent-ledger/core';
import { verifyBundle } from '@agent-ledger/verifier';
import { LedgerClient } from '@agent-ledger/client';
import { exportCommand } from '@agent-ledger/ledger';
import { freshDevHome } from './dev-mode.js';
import { repoRoot } from './fixtures.js';
import { eventually, proposal } from './live.js';

// `ledger dev` as a real process, killed with SIGKILL while agents submit
// proposals, and restarted on the same .ledger/: every proposal the API
// acknowledged is decided, each sequenced once, and the export verifies.

const ROUNDS = 3;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function startDev(home: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(repoRoot, 'services/ledger/bin/ledger.js'), 'dev', '--home', home], {
    env: { ...process.env, LEDGER_API_PORT: String(port), LEDGER_DEADLINES_MS: '2:3000,3:3000,4:3000' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString('utf8')).slice(-4000)));
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`ledger dev exited ${child.exitCode}: ${log}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
    return ready ? true : undefined;
  }, 120_000, 'ledger dev to be ready');
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

test('ledger dev killed with SIGKILL mid-load and restarted: every acknowledged proposal is decided, once, and the export verifies', { timeout: 600_000 }, async (t) => {
  const home = freshDevHome();
  t.after(() => rmSync(home.dir, { recursive: true, force: true }));
  const port = await freePort();
  const client = new LedgerClient({ baseUrl: `http://127.0.0.1:${port}`, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
  const acknowledged: string[] = [];
  let child = await startDev(home.dir, port);
  for (let round = 0; round < ROUNDS; round++) {
    let stop = false;
    const load = (async () => {
      for (let n = 0; !stop; n++) {
        try {
          const { statementHash } = await client.propose(proposal({ scope: `round-${round}-${n}` }));
          acknowledged.push(statementHash);
        } catch {
          // The process died under the request: not acknowledged, nothing is owed.
          return;
        }
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 800 + Math.floor(Math.random() * 1500)));
    await killHard(child);
    stop = true;
    await load;
    child = await startDev(home.dir, port);
  }
  const out = join(home.dir, 'export.ndjson');
  try {
    for (const hash of acknowledged) {
      const decision = await client.awaitDecision(hash, 60_000);
      assert.equal(decision.outcome, 'allow', `decision of ${hash.slice(0, 12)}`);
    }
    // Two checkpoint intervals, then export beside the running process (it reads the log read-only).
    await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 2 + 500));
    assert.equal(await exportCommand({ out, home: home.dir }), 0);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  const report = await verifyBundle(createReadStream(out), home.trustRoot, { workers: 1 });
  assert.equal(report.failure, null);
  // Each acknowledged proposal sequenced exactly once.
  const seen = new Map<string, number>();
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    if (line === '') continue;
    const parsed = JSON.parse(line) as { kind?: string; envelope?: { statement: Statement } };
    if (parsed.kind !== 'entry' || parsed.envelope?.statement.type !== 'proposal.submitted') continue;
    const hash = statementHash(parsed.envelope.statement);
    seen.set(hash, (seen.get(hash) ?? 0) + 1);
  }
  for (const hash of acknowledged) assert.equal(seen.get(hash), 1, `proposal ${hash.slice(0, 12)} sequenced once`);
  t.diagnostic(`${ROUNDS} SIGKILLs of ledger dev; ${acknowledged.length} acknowledged proposals; ${report.entries} entries verified`);
  assert.ok(acknowledged.length > 0);
});
