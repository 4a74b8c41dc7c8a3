#!/usr/bin/env node
// Recovery and memory of the live ledger on the real broker and Postgres:
//  1. A sequencer killed (SIGKILL) on a log of BENCH_RECOVERY_ENTRIES entries
//     (default 100,000) is restarted; reported: seconds from the new
//     process's start to the first new statement sequenced, and how it
//     recovered (from its newest checkpoint, entries read back). Target: < 5 s.
//     This is the worst case the replay window allows: every entry is inside
//     it and no gate runs, so every proposal is still open and is read back.
//  2. The API process's RSS while BENCH_RSS_PROPOSALS proposals (default
//     50,000) go through it: sampled every 5,000 after a warm-up of 10,000
//     (the least of five readings 1 s apart: a collection's transient peak is not growth);
//     reported: min, max and max/min (flat within 20% is the target).
//  3. On that log (sequencer, gate, projector deciding): the whole pipeline
//     and the API restarted (SIGKILL): seconds to the first new statement
//     sequenced, where the gate's catch-up started and what it read, and how
//     the API's log index started (from the projection, not offset 0).
// Every wait has a deadline (BENCH_WAIT_S, default 300 s): a stuck step fails
// with what it was waiting for instead of printing nothing.
// Needs `bash scripts/kafka.sh start` and Postgres.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import * as core from '@agent-ledger/core';
import { createKafkaBus } from '@agent-ledger/kafka';
import { entryLocation, initHome, topicNames, verifyReceipt } from '@agent-ledger/ledger';
import { signedFetch } from '@agent-ledger/client';

const ENTRIES = Number(process.env.BENCH_RECOVERY_ENTRIES ?? 100_000);
const PROPOSALS = Number(process.env.BENCH_RSS_PROPOSALS ?? 50_000);
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = join(root, 'services/ledger/bin/ledger.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Progress on stderr, so a slow step shows where it is.
const progress = (message) => process.stderr.write(`[bench ${new Date().toISOString()}] ${message}\n`);
const WAIT_S = Number(process.env.BENCH_WAIT_S ?? 300);
/** Polls `check` until it returns a value other than undefined, or fails after WAIT_S with `what`. */
async function until(what, check, everyMs = 200) {
  const deadline = Date.now() + WAIT_S * 1000;
  for (;;) {
    if (crashed.length > 0) throw new Error(`bench: a role process ended while waiting for ${what}: ${crashed.join(', ')}`);
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`bench: gave up after ${WAIT_S} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function freshHome() {
  const id = randomBytes(4).toString('hex');
  return initHome(mkdtempSync(join(tmpdir(), 'ledger-bench-')), { origin: `ledger.bench/${id}`, eventPartitions: 2, topicPrefix: `r${id}`, pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_r${id}`, apiPort: await freePort() });
}

/** Role processes that ended on their own (a crash): every wait fails at once naming them. */
const crashed = [];
/** Role processes started, killed when the bench ends however it ends. */
const children = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function startRoles(home, roles, name, env = {}) {
  const logPath = join(home.dir, `${name}.log`);
  const log = createWriteStream(logPath, { flags: 'a' });
  const child = spawn(process.execPath, [bin, 'serve', '--home', home.dir, '--target', ...roles], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  children.add(child);
  child.once('exit', (code, signal) => {
    children.delete(child);
    if (signal !== 'SIGKILL') crashed.push(`${name} (exit ${code ?? signal}; see ${logPath})`);
  });
  return child;
}

async function kill(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

function proposalOf(agent, n) {
  const st = core.createStatement('proposal.submitted', { agentId: agent.principal, tool: 'shell', actionType: 'shell.exec', targetResource: 'host/a', recipient: 'none', scope: 'workspace', args: { command: `ls ${n}` }, query: 'bench', labels: [], channel: 'api', context: {} }, agent);
  return core.signStatement(st, [agent], core.nodeEd25519);
}

// BENCH_PARTS=2 runs parts 2 and 3 only (they share one installation).
const PARTS = (process.env.BENCH_PARTS ?? '1,2').split(',');

// 1. Restart on a long log.
if (PARTS.includes('1')) {
  const home = await freshHome();
  const topics = topicNames(home.config.topicPrefix);
  const agent = home.key('agent-build-bot');
  const p = core.eventPartitionOf(agent.principal, home.config.eventPartitions);
  const { topic, partition } = entryLocation(topics, p);
  const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'bench-recovery' });
  const sizeOf = async () => {
    // Entries in the partition: the newest checkpoint's size is a lower bound; count exactly by reading the tail.
    const end = BigInt((await bus.endOffsets(topic)).get(partition) ?? '0');
    return end;
  };
  let sequencer = startRoles(home, ['sequencer'], 'sequencer');
  // Fill the log: statements signed here, published straight to intake (the sequencer is what is measured).
  const t0 = performance.now();
  for (let i = 0; i < ENTRIES; i += 1000) {
    const batch = [];
    for (let k = i; k < Math.min(ENTRIES, i + 1000); k++) batch.push({ topic: topics.intake, partition: p, key: agent.principal, value: JSON.stringify(proposalOf(agent, k)) });
    for (;;) {
      try {
        await bus.publish(batch);
        break;
      } catch {
        await sleep(500);
      }
    }
  }
  progress(`published ${ENTRIES} proposals to intake`);
  // Wait until all are sequenced: the end offset (entries plus one commit marker per transaction) stops moving past ENTRIES.
  let last = -1n;
  await until(`${ENTRIES} entries in ledger partition ${p}`, async () => {
    const end = await sizeOf();
    progress(`events partition end offset ${end}`);
    const settled = end >= BigInt(ENTRIES) && end === last;
    last = end;
    return settled ? end : undefined;
  }, 2000);
  const filled = (performance.now() - t0) / 1000;
  await sleep(1500); // a checkpoint by time seals the tail
  await kill(sequencer);
  const marker = proposalOf(agent, 'after-restart');
  const endBefore = await sizeOf();
  const started = performance.now();
  sequencer = startRoles(home, ['sequencer'], 'sequencer-restart');
  await bus.publish([{ topic: topics.intake, partition: p, key: agent.principal, value: JSON.stringify(marker) }]);
  const served = await until('the restarted sequencer to sequence a new statement', async () => ((await sizeOf()) > endBefore ? (performance.now() - started) / 1000 : undefined), 20);
  await sleep(300);
  await kill(sequencer);
  // Baselines in this run (the machine is shared: compare ratios): a process that only loads the
  // service's code, and a plain read of the same partition from offset 0.
  const loadStarted = performance.now();
  spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(join(root, 'services/ledger/dist/src/serve.js')).href)})`]);
  const loadOnly = (performance.now() - loadStarted) / 1000;
  const readStarted = performance.now();
  let rawRead = 0;
  for await (const _ of bus.readRange(topic, partition, '0')) rawRead++;
  const readOnly = (performance.now() - readStarted) / 1000;
  await bus.close();
  const log = readFileSync(join(home.dir, 'sequencer-restart.log'), 'utf8');
  const recovered = /sequencer \d+: recovered from ([^(]+)\((\d+) entries; (\d+) read in (\d+) ms\)/.exec(log.split('\n').filter((l) => l.includes(`sequencer ${p}: recovered`)).join('\n'));
  console.log(`sequencer restart on a log of ${ENTRIES} entries (filled in ${filled.toFixed(0)} s): serving ${served.toFixed(1)} s after the new process started (target < 5 s); recovered from ${recovered?.[1]?.trim() ?? '?'}: ${recovered?.[3] ?? '?'} entries read back in ${recovered?.[4] ?? '?'} ms`);
  const recoveryS = Number(recovered?.[4] ?? NaN) / 1000;
  console.log(`  baselines in this run: loading the service's code alone ${loadOnly.toFixed(1)} s; a plain read of the partition's ${rawRead} records ${readOnly.toFixed(1)} s; recovery / plain read ${(recoveryS / readOnly).toFixed(2)}; serving / (load + plain read) ${(served / (loadOnly + readOnly)).toFixed(2)}`);
}

// 2. API RSS over many proposals.
if (PARTS.includes('2')) {
  const home = await freshHome();
  const env = { LEDGER_API_RATE_LIMIT: '1000000/1000000' };
  const pipeline = startRoles(home, ['sequencer', 'gate', 'projector', 'timer', 'siem'], 'pipeline', env);
  const api = startRoles(home, ['api'], 'api', env);
  const base = `http://127.0.0.1:${home.config.apiPort}`;
  await until('the API ready', async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined));
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${api.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const agents = ['agent-build-bot', 'agent-ops-bot', 'agent-support-bot'].map((k) => home.key(k));
  const samples = [];
  const t0 = performance.now();
  let inFlight = [];
  for (let n = 0; n < PROPOSALS; n++) {
    const agent = agents[n % agents.length];
    const body = JSON.stringify(proposalOf(agent, n));
    inFlight.push(
      (async () => {
        for (;;) {
          const r = await fetch(`${base}/v1/statements`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          if (r.status === 202) {
            await r.arrayBuffer();
            return;
          }
          if (r.status !== 503) throw new Error(`HTTP ${r.status}: ${Buffer.from(await r.arrayBuffer()).toString()}`);
          await sleep(200);
        }
      })(),
    );
    if (inFlight.length >= 32) {
      await Promise.all(inFlight);
      inFlight = [];
    }
    if ((n + 1) % 5000 === 0) {
      await Promise.all(inFlight);
      inFlight = [];
      // The least of five readings 1 s apart: a collection's transient peak is not growth.
      if (n + 1 > 10_000) {
        const readings = [];
        for (let k = 0; k < 5; k++) {
          readings.push(rss());
          await sleep(1000);
        }
        samples.push(Math.min(...readings));
      }
      const metrics = await signedFetch(home.key('admin-alice'))(`${base}/metrics`).then((r) => r.text(), () => '');
      const gauge = (name) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN);
      progress(`${n + 1} proposals accepted; API RSS ${rss().toFixed(0)} MiB, heap used ${(gauge('nodejs_heap_size_used_bytes') / 2 ** 20).toFixed(0)} of ${(gauge('nodejs_heap_size_total_bytes') / 2 ** 20).toFixed(0)} MiB, ${gauge('ledger_api_pending_statements')} statements pending`);
    }
  }
  await Promise.all(inFlight);
  const seconds = (performance.now() - t0) / 1000;
  const min = Math.min(...samples);
  const max = Math.max(...samples);
  await kill(api);
  await kill(pipeline);
  console.log(`API RSS over ${PROPOSALS} proposals (${(PROPOSALS / seconds).toFixed(0)}/s): after warm-up min ${min.toFixed(0)} MiB, max ${max.toFixed(0)} MiB, max/min ${(max / min).toFixed(2)} (target <= 1.20); samples ${samples.map((s) => s.toFixed(0)).join(' ')}`);

  // 3. The pipeline and the API restarted on that log.
  const topics = topicNames(home.config.topicPrefix);
  const bus = createKafkaBus({ brokers: home.config.kafkaBrokers, clientId: 'bench-restart' });
  const agent = agents[0];
  const p = core.eventPartitionOf(agent.principal, home.config.eventPartitions);
  const { topic, partition } = entryLocation(topics, p);
  const endOf = async () => BigInt((await bus.endOffsets(topic)).get(partition) ?? '0');
  let entries = 0n;
  for (const [, end] of await bus.endOffsets(topics.events)) entries += BigInt(end);
  const endBefore = await endOf();
  const started = performance.now();
  const restarted = startRoles(home, ['sequencer', 'gate', 'projector', 'timer', 'siem'], 'pipeline-restart', env);
  await bus.publish([{ topic: topics.intake, partition: p, key: agent.principal, value: JSON.stringify(proposalOf(agent, 'after-restart')) }]);
  const served = await until('the restarted pipeline to sequence a new statement', async () => ((await endOf()) > endBefore ? (performance.now() - started) / 1000 : undefined), 20);
  const apiStarted = performance.now();
  const api2 = startRoles(home, ['api'], 'api-restart', env);
  const ready = await until('the restarted API ready', async () => ((await fetch(`${base}/readyz`)).status === 200 ? (performance.now() - apiStarted) / 1000 : undefined), 50);
  // A receipt of an early entry: its proof comes from the bounded index, the old chunk's leaves read back.
  const receipt = await until('a receipt of entry 5', async () => {
    const r = await signedFetch(home.key('admin-alice'))(`${base}/v1/receipts/${p}/5`);
    return r.status === 200 ? r.text() : undefined;
  });
  const receiptVerdict = verifyReceipt(receipt, home.trustRoot);
  await kill(api2);
  await kill(restarted);
  await bus.close();
  const pipelineLog = readFileSync(join(home.dir, 'pipeline-restart.log'), 'utf8');
  const apiLog = readFileSync(join(home.dir, 'api-restart.log'), 'utf8');
  const recovered = pipelineLog.split('\n').filter((l) => / sequencer \d+: recovered /.test(l)).map((l) => l.replace(/^\[[^\]]*\] /, ''));
  const caughtUp = pipelineLog.split('\n').filter((l) => / gate: events partition /.test(l)).map((l) => l.replace(/^\[[^\]]*\] /, ''));
  const indexed = /log index started from .*$/m.exec(apiLog)?.[0] ?? '?';
  console.log(`restart of the pipeline on that log (${entries} events offsets): serving ${served.toFixed(1)} s after start; ${recovered.join('; ')}; ${caughtUp.join('; ')}`);
  console.log(`restart of the API: ready ${ready.toFixed(1)} s after start; ${indexed}; receipt of entry ${p}/5 with a ${JSON.parse(receipt).inclusionProof.length}-hash proof: ${receiptVerdict.ok ? 'verifies' : `FAILS (${receiptVerdict.message})`}`);
}
process.exit(0);
