#!/usr/bin/env node
// The Claude Code hook's round trip on the allow path beside the raw API
// round trip, measured in the same run on one live ledger (real broker and
// Postgres; compare ratios, not absolute numbers):
//  - raw API: the SDK signs the same proposal, submits it and long-polls its
//    decision (signature and binding checked, no receipt);
//  - SDK decide(): the same plus the decision's receipt fetched and verified
//    offline against the pinned trust (its checkpoint is sealed at most
//    checkpointIntervalMs after the decision), what guard() pays;
//  - executor in-process: decide() plus the hook's own work (the proposal
//    built from the tool call, the verdict);
//  - hook process: `ledger hook claude-code` as Claude Code runs it, a new
//    Node process per call reading the PreToolUse JSON on stdin;
//  - node startup: `node -e 0`, the floor of any command hook.
// Needs `bash scripts/kafka.sh start` and Postgres. BENCH_HOOK_CALLS (default 30).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { FailMode, Interceptor, executorClient, initHome, judgeToolCall, proposalFor, readExecutorConfig, serve } from '@agent-ledger/ledger';

const CALLS = Number(process.env.BENCH_HOOK_CALLS ?? 30);
const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const bin = join(root, 'services/ledger/bin/ledger.js');
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const fmt = (xs) => `p50 ${percentile(xs, 50).toFixed(1)} ms  p90 ${percentile(xs, 90).toFixed(1)} ms`;

function run(args, stdin = '') {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

const id = randomBytes(4).toString('hex');
const home = initHome(mkdtempSync(join(tmpdir(), 'ledger-bench-hook-')), { origin: `ledger.bench/${id}`, eventPartitions: 2, topicPrefix: `b${id}`, pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_b${id}`, apiPort: 0 });
const running = await serve(home, ['api', 'sequencer', 'gate', 'projector', 'timer']);
const api = running.apiUrl;
const project = mkdtempSync(join(tmpdir(), 'bench-project-'));
const setup = await run([bin, 'setup', 'claude-code', '--project', project, '--home', home.dir, '--api', api, '--as', 'admin:alice', '--agent', 'agent:bench-hook', '--json']);
if (setup.code !== 0) throw new Error(`setup failed: ${setup.stdout}${setup.stderr}`);
const configFile = JSON.parse(setup.stdout).configFile;
const config = readExecutorConfig(configFile);
const client = executorClient(config);
const call = (n) => ({ tool: 'Bash', input: { command: 'git status', description: `Show status ${n}` }, interceptor: Interceptor.claudeCode, cwd: project, session: 'bench', callId: `toolu_bench_${n}` });
const event = (n) => JSON.stringify({ session_id: 'bench', transcript_path: join(project, 't.jsonl'), cwd: project, permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: call(n).input, tool_use_id: `toolu_bench_${n}` });

// Warm up every path once (connections, JIT, the gate's memos).
await client.proposeAndWait(proposalFor(call(-1), FailMode.closed));
await client.decide(proposalFor(call(-4), FailMode.closed));
await judgeToolCall(call(-2), { client, budgetMs: 30_000 });
await run([bin, 'hook', 'claude-code', '--config', configFile], event(-3));

const raw = [];
const decided = [];
const inProcess = [];
const hookProcess = [];
const nodeStartup = [];
for (let n = 0; n < CALLS; n++) {
  // Interleaved, so drift in the machine's load falls on every path alike.
  let t = performance.now();
  const decision = await client.proposeAndWait(proposalFor(call(n), FailMode.closed));
  raw.push(performance.now() - t);
  if (decision.outcome !== 'allow') throw new Error(`raw: ${decision.outcome}`);

  t = performance.now();
  const checked = await client.decide(proposalFor(call(n), FailMode.closed));
  decided.push(performance.now() - t);
  if (checked.outcome !== 'allow') throw new Error(`decide: ${checked.outcome}`);

  t = performance.now();
  const verdict = await judgeToolCall(call(n), { client, budgetMs: 30_000 });
  inProcess.push(performance.now() - t);
  if (verdict.permission !== 'allow') throw new Error(`in-process: ${verdict.reason}`);

  t = performance.now();
  const hooked = await run([bin, 'hook', 'claude-code', '--config', configFile], event(n));
  hookProcess.push(performance.now() - t);
  const answer = JSON.parse(hooked.stdout).hookSpecificOutput;
  if (answer.permissionDecision !== 'allow') throw new Error(`hook: ${answer.permissionDecisionReason}`);

  t = performance.now();
  await run(['-e', '0']);
  nodeStartup.push(performance.now() - t);
}
await running.stop();

const base = percentile(raw, 50);
console.log(`hook bench: ${CALLS} allowed Bash calls per path, checkpoint interval ${home.config.checkpointIntervalMs} ms`);
console.log(`  raw API round trip (SDK propose + decision)     ${fmt(raw)}  1.00x`);
console.log(`  SDK decide() (+ receipt verified)               ${fmt(decided)}  ${(percentile(decided, 50) / base).toFixed(2)}x`);
console.log(`  executor in-process (decide() + the verdict)    ${fmt(inProcess)}  ${(percentile(inProcess, 50) / base).toFixed(2)}x`);
console.log(`  ledger hook claude-code (process per call)      ${fmt(hookProcess)}  ${(percentile(hookProcess, 50) / base).toFixed(2)}x`);
console.log(`  node -e 0 (process floor)                       ${fmt(nodeStartup)}  ${(percentile(nodeStartup, 50) / base).toFixed(2)}x`);
process.exit(0);
