#!/usr/bin/env node
// Benchmarks of the ledger core and the offline verifier, each beside a raw
// node:crypto baseline measured in the same run (machines are noisy: compare
// the ratios, not the absolute numbers).
//
//   npm run bench                      100k-event verify-chain, micro benchmarks
//   BENCH_EVENTS=20000 npm run bench   smaller
//   BENCH_LARGE=1 npm run bench        also peak RSS of verify-chain on a 1M-event bundle
import { createReadStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createPrivateKey, createPublicKey, sign as rawSign, verify as rawVerify, generateKeyPairSync } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as core from '@agent-ledger/core';
import { verifyBundle } from '@agent-ledger/verifier';
import { synthesizeDemo, readTrustRoot } from '@agent-ledger/ledger';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const out = join(root, 'bench-out');
mkdirSync(out, { recursive: true });
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const rows = [];

function rate(n, ms) {
  return (n / ms) * 1000;
}
function time(fn) {
  const t = performance.now();
  fn();
  return performance.now() - t;
}
async function timeAsync(fn) {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
}
/** CPU time of this process (every thread: main, workers, V8's helpers), ms. */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
/** CPU time of the main thread alone, ms (Linux /proc; null elsewhere). */
const MAIN_THREAD_STAT = `/proc/self/task/${process.pid}/stat`;
function mainThreadCpuMs() {
  if (!existsSync(MAIN_THREAD_STAT)) return null;
  const stat = readFileSync(MAIN_THREAD_STAT, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime (fields 14 and 15 of proc(5)), in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
/** Wall time, process CPU time and main-thread CPU time of `fn`. */
async function measure(fn) {
  const cpu = cpuMs();
  const main = mainThreadCpuMs();
  const { ms, value } = await timeAsync(fn);
  const mainAfter = mainThreadCpuMs();
  return { ms, cpu: cpuMs() - cpu, main: main === null || mainAfter === null ? null : mainAfter - main, value };
}
function report(name, n, ms, baselineName, baselineMs) {
  const ours = rate(n, ms);
  const base = rate(n, baselineMs);
  rows.push({ name, ours, baselineName, base, ratio: ours / base });
  console.log(`${name.padEnd(34)} ${ours.toFixed(0).padStart(9)}/s   ${baselineName.padEnd(34)} ${base.toFixed(0).padStart(9)}/s   ratio ${(ours / base).toFixed(2)}`);
}

// --- sign / verify, one thread ------------------------------------------------
{
  const n = 20_000;
  const seed = core.generateSeed();
  const pk = core.nodeEd25519.publicKeyFromSeed(seed);
  const message = new Uint8Array(700).fill(7);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  core.nodeEd25519.sign(seed, message);
  const sig = core.nodeEd25519.sign(seed, message);
  const rawSig = rawSign(null, message, privateKey);
  const oursSign = time(() => { for (let i = 0; i < n; i++) core.nodeEd25519.sign(seed, message); });
  const rawSignMs = time(() => { for (let i = 0; i < n; i++) rawSign(null, message, privateKey); });
  report('sign (nodeEd25519)', n, oursSign, 'raw crypto.sign', rawSignMs);
  const oursVerify = time(() => { for (let i = 0; i < n; i++) core.nodeEd25519.verify(pk, message, sig); });
  const rawVerifyMs = time(() => { for (let i = 0; i < n; i++) rawVerify(null, message, publicKey, rawSig); });
  report('verify (nodeEd25519)', n, oursVerify, 'raw crypto.verify', rawVerifyMs);
  const nn = 500;
  const nobleMs = time(() => { for (let i = 0; i < nn; i++) core.nobleEd25519.verify(pk, message, sig); });
  const rawSmall = time(() => { for (let i = 0; i < nn; i++) rawVerify(null, message, publicKey, rawSig); });
  report('verify (nobleEd25519, same rule)', nn, nobleMs, 'raw crypto.verify', rawSmall);
}

// --- chain append and Merkle proofs ---------------------------------------------
{
  const n = 50_000;
  const seed = core.generateSeed();
  const author = { principal: 'agent:bench', keyId: core.keyIdOf(seed, core.nodeEd25519) };
  const envelopes = [];
  for (let i = 0; i < n; i++) {
    const st = core.createStatement('proposal.submitted', { agentId: 'agent:bench', tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: `ls ${i}` }, query: 'q', labels: [], channel: 'api', context: {} }, author, new Date(1_800_000_000_000 + i));
    envelopes.push({ statement: st, signatures: [{ keyId: author.keyId, sig: 'A'.repeat(86) + '==' }] });
  }
  const chain = new core.PartitionChain(1);
  const now = new Date();
  const appendMs = time(() => { for (const e of envelopes) chain.append(e, now, 0); });
  const bytes = envelopes.map((e) => JSON.stringify(e));
  const rawHashMs = time(() => { for (const b of bytes) core.sha256(b); });
  report('chain append (JCS + 2 hashes)', n, appendMs, 'raw sha256 of the envelope', rawHashMs);

  const tree = new core.MerkleTree();
  const leaves = [];
  for (let i = 0; i < 100_000; i++) leaves.push(core.sha256(String(i)));
  for (const l of leaves) tree.append(l);
  const root100k = tree.root();
  const proofs = 20_000;
  const proofList = [];
  const genMs = time(() => { for (let i = 0; i < proofs; i++) proofList.push(tree.inclusionProof((i * 7919) % 100_000)); });
  const verMs = time(() => { for (let i = 0; i < proofs; i++) core.verifyInclusion(leaves[(i * 7919) % 100_000], (i * 7919) % 100_000, 100_000, proofList[i], root100k); });
  const rawSeventeen = time(() => { for (let i = 0; i < proofs; i++) for (let j = 0; j < 17; j++) core.sha256(leaves[j]); });
  report('inclusion proof gen @100k', proofs, genMs, 'raw 17 x sha256', rawSeventeen);
  report('inclusion proof verify @100k', proofs, verMs, 'raw 17 x sha256', rawSeventeen);
  const consMs = time(() => { for (let i = 1; i <= 2000; i++) core.verifyConsistency(i * 50, 100_000, tree.root(i * 50), root100k, tree.consistencyProof(i * 50)); });
  report('consistency proof gen+verify @100k', 2000, consMs, 'raw 17 x sha256', rawSeventeen / (proofs / 2000));
}

// --- verify-chain end to end --------------------------------------------------------
async function rawParallelVerify(items, workers) {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { createPublicKey, verify } = require('node:crypto');
    const prefix = Buffer.from('302a300506032b6570032100', 'hex');
    const keys = new Map();
    let bad = 0;
    for (const [pk, msg, sig] of workerData) {
      let key = keys.get(pk);
      if (!key) { key = createPublicKey({ key: Buffer.concat([prefix, Buffer.from(pk, 'hex')]), format: 'der', type: 'spki' }); keys.set(pk, key); }
      if (!verify(null, msg, key, sig)) bad++;
    }
    parentPort.postMessage(bad);`;
  const chunks = Array.from({ length: workers }, (_, w) => items.filter((_, i) => i % workers === w));
  // Start the clock when every worker is up and holds its share, as the verifier's workers are.
  const started = [];
  const ms = await timeAsync(() => Promise.all(chunks.map((chunk) => new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: chunk });
    started.push(worker);
    worker.on('message', (bad) => { if (bad !== 0) reject(new Error(`${bad} bad signatures`)); else resolve(); worker.terminate(); });
    worker.on('error', reject);
  }))));
  return ms.ms;
}

{
  const bundle = join(out, `bench-${EVENTS}.ndjson`);
  const trustRootPath = join(out, `bench-${EVENTS}.trust-root.json`);
  const made = await timeAsync(() => synthesizeDemo({ events: EVENTS, out: bundle, trustRootOut: trustRootPath }));
  console.log(`\nsynthesized ${made.value.entries} entries in ${(made.ms / 1000).toFixed(1)}s`);
  const trustRoot = readTrustRoot(trustRootPath);
  // The same signatures, as raw (public key, message, signature) triples.
  const items = [];
  for (const line of readFileSync(bundle, 'utf8').split('\n')) {
    if (!line.startsWith('{"kind":"entry"')) continue;
    const env = JSON.parse(line).envelope;
    const msg = Buffer.from(core.signingMessage(core.canonicalJson(env.statement)));
    for (const s of env.signatures) items.push([s.keyId, msg, Buffer.from(s.sig, 'base64')]);
  }
  // The baseline runs before and after verify-chain and counts as their mean: on a shared machine the load
  // moves during a run. Wall time is what a user waits; CPU time (all threads) is the work done, which
  // the load of other processes changes far less, and which bounds the wall ratio on a machine with as
  // many cores as workers (verify-chain's main thread takes its CPU from the same cores).
  const rawBefore = await measure(() => rawParallelVerify(items, WORKERS));
  const ours = await measure(() => verifyBundle(createReadStream(bundle, { highWaterMark: 1 << 20 }), trustRoot, { workers: WORKERS }));
  if (!ours.value.ok) throw new Error(`bench bundle did not verify: ${JSON.stringify(ours.value.failure)}`);
  const rawAfter = await measure(() => rawParallelVerify(items, WORKERS));
  const rawMs = (rawBefore.ms + rawAfter.ms) / 2;
  const rawCpu = (rawBefore.cpu + rawAfter.cpu) / 2;
  report(`verify-chain ${WORKERS} workers (sigs/s)`, items.length, ours.ms, `raw crypto.verify ${WORKERS} workers`, rawMs);
  report(`verify-chain sigs per CPU-second`, items.length, ours.cpu, `raw crypto.verify per CPU-second`, rawCpu);
  const mainShare = ours.main === null ? 'n/a' : `${((100 * ours.main) / ours.cpu).toFixed(0)}%`;
  console.log(`  verify-chain: wall ${(ours.ms / 1000).toFixed(1)}s, CPU ${(ours.cpu / 1000).toFixed(1)}s (main thread ${mainShare} of it); raw ${WORKERS} workers: wall ${(rawBefore.ms / 1000).toFixed(1)}s/${(rawAfter.ms / 1000).toFixed(1)}s before/after, CPU ${(rawCpu / 1000).toFixed(1)}s`);
  const rawOne = await rawParallelVerify(items, 1);
  report('verify-chain vs 1 raw worker', items.length, ours.ms, 'raw crypto.verify 1 worker', rawOne);
  rmSync(bundle);
}

if (process.env.BENCH_LARGE === '1') {
  const n = Number(process.env.BENCH_LARGE_EVENTS ?? 1_000_000);
  const bundle = join(out, `bench-large.ndjson`);
  const trustRootPath = join(out, `bench-large.trust-root.json`);
  const made = await timeAsync(() => synthesizeDemo({ events: n, out: bundle, trustRootOut: trustRootPath }));
  console.log(`\nsynthesized ${made.value.entries} entries in ${(made.ms / 1000).toFixed(1)}s`);
  const child = spawnSync(process.execPath, [join(root, 'scripts/bench/rss-verify.mjs'), bundle, trustRootPath, String(WORKERS)], { encoding: 'utf8' });
  process.stdout.write(child.stdout);
  if (child.status !== 0) throw new Error(child.stderr);
  rmSync(bundle);
}

console.log('\nsummary (ratio = ours / baseline in this run):');
for (const r of rows) console.log(`  ${r.name}: ${r.ratio.toFixed(2)}x ${r.baselineName}`);
