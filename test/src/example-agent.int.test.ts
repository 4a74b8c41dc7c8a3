import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { LedgerHome, RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { freshHome, start } from './live.js';

// The README's ten-line agent (examples/agent.mjs), run as a user would run
// it against a live ledger: it loads its key and the gate's pinned key with
// the SDK alone, proposes, and acts on the verified decision.

let home: LedgerHome;
let running: RunningLedger;

before(async () => {
  home = freshHome();
  running = await start(home);
});
after(async () => {
  await running?.stop();
});

test('examples/agent.mjs proposes and prints the verified decision', { timeout: 60_000 }, async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [join(repoRoot, 'examples/agent.mjs')], { cwd: repoRoot, env: { ...process.env, LEDGER_HOME: home.dir, LEDGER_API: running.apiUrl as string } }, (err, out, errOut) =>
      resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? -1), stdout: out, stderr: errOut }));
  });
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^(allowed: run it \(decision [0-9a-f]{16}\)|REFUSED: [A-Z_]+: .*|verify_first: do not run it)\n$/);
});
