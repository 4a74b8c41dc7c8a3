#!/usr/bin/env node
// Verifies one bundle in a fresh process and prints its peak resident set
// size (main thread and worker threads together), for the memory target.
import { createReadStream } from 'node:fs';
import { verifyBundle } from '@agent-ledger/verifier';
import { readTrustRoot } from '@agent-ledger/ledger';

const [bundle, trustRootPath, workers] = process.argv.slice(2);
const started = performance.now();
const report = await verifyBundle(createReadStream(bundle, { highWaterMark: 1 << 20 }), readTrustRoot(trustRootPath), { workers: Number(workers ?? 2) });
const seconds = (performance.now() - started) / 1000;
const peakMiB = process.resourceUsage().maxRSS / 1024;
console.log(`verify-chain ${report.entries} entries: ok=${report.ok} in ${seconds.toFixed(1)}s (${(report.entries / seconds).toFixed(0)} entries/s), peak RSS ${peakMiB.toFixed(0)} MiB`);
if (!report.ok) process.exit(1);
