#!/usr/bin/env node
// verify-chain streams a bundle of any length in a bounded working set, but on
// very long bundles glibc's per-thread malloc arenas (buffers move between the
// signature-check workers and the main thread) and V8's default young
// generation let the resident size drift upward. The CLI re-runs itself once
// for that command with both bounded: measured on a 1M-entry bundle, peak RSS
// 205 MiB instead of 281-288 MiB, at the same speed.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === 'verify-chain' && process.env.LEDGER_BOUNDED_RUN !== '1') {
  const result = spawnSync(process.execPath, ['--max-semi-space-size=4', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2', LEDGER_BOUNDED_RUN: '1' },
  });
  // Killed or not started: not a verdict on the bundle (exit 2, like an I/O error).
  process.exit(result.status ?? 2);
} else if (process.argv[2] === 'hook' && (await (await import('../dist/src/hook/entry.js')).runHookFast(process.argv.slice(2)))) {
  // Claude Code's hook runs before every tool call: it loads its own module, not the whole CLI.
} else {
  await import('../dist/src/main.js');
}
