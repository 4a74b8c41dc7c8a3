#!/usr/bin/env node
// Verifies one bundle as `ledger verify-chain` does and prints its peak resident set size (main thread and
// worker threads together), for the memory target (1M entries under 256 MB).
// Usage: node scripts/bench/rss-verify.mjs <bundle> <trust-root> [workers, default 2]
// Like services/ledger/bin/ledger.js it re-runs itself once with the CLI's bounds (--max-semi-space-size=4,
// MALLOC_ARENA_MAX=2), and loads only what the CLI loads for the command (commands/verify-chain.js), so the
// figure is the command's own. (The same figure from outside: /usr/bin/time -f %M ledger verify-chain ...)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const [bundle, trustRootPath, workers] = process.argv.slice(2);
if (process.env.LEDGER_BOUNDED_RUN !== '1') {
  const result = spawnSync(process.execPath, ['--max-semi-space-size=4', ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2', LEDGER_BOUNDED_RUN: '1' },
  });
  process.exit(result.status ?? 2);
}
const { verifyChainCommand } = await import('../../services/ledger/dist/src/commands/verify-chain.js');
const started = performance.now();
const status = await verifyChainCommand(bundle, { trustRoot: trustRootPath, json: true, workers: Number(workers ?? 2) });
const seconds = (performance.now() - started) / 1000;
const peakMiB = process.resourceUsage().maxRSS / 1024;
console.log(`verify-chain: exit ${status} in ${seconds.toFixed(1)}s, peak RSS ${peakMiB.toFixed(0)} MiB`);
process.exit(status);
