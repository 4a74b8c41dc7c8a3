#!/usr/bin/env node
// The MCP gateway's added latency beside a direct MCP call, measured in the
// same run (compare ratios, not absolute numbers): the official SDK client
// calls the reference filesystem server's `list_directory`
//  - directly (client -> server over stdio), the baseline;
//  - through `ledger mcp-gateway` (client -> gateway -> server), every call a
//    signed proposal decided by a live ledger (real broker and Postgres), its
//    decision and receipt verified before it is forwarded;
// and, for scale, the raw API round trip of the same proposal (SDK propose +
// decision) that the gateway pays inside.
// Needs `bash scripts/kafka.sh start` and Postgres. BENCH_MCP_CALLS (default 30).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LedgerClient } from '@agent-ledger/client';
import { FailMode, Interceptor, initHome, proposalFor, serve } from '@agent-ledger/ledger';

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 30);
const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const bin = join(root, 'services/ledger/bin/ledger.js');
const server = join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const percentile = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const fmt = (xs) => `p50 ${percentile(xs, 50).toFixed(1)} ms  p90 ${percentile(xs, 90).toFixed(1)} ms`;

const id = randomBytes(4).toString('hex');
const home = initHome(mkdtempSync(join(tmpdir(), 'ledger-bench-mcp-')), { origin: `ledger.bench/${id}`, eventPartitions: 2, topicPrefix: `b${id}`, pgUrl: `postgres://postgres@127.0.0.1:5432/ledger_b${id}`, apiPort: 0 });
const running = await serve(home, ['api', 'sequencer', 'gate', 'projector', 'timer']);
const dir = mkdtempSync(join(tmpdir(), 'bench-mcp-root-'));
for (let i = 0; i < 20; i++) writeFileSync(join(dir, `file-${i}.txt`), `${i}\n`);

const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
await direct.connect(new StdioClientTransport({ command: process.execPath, args: [server, dir], stderr: 'ignore' }));
const gated = new Client({ name: 'bench-gateway', version: '1.0.0' });
await gated.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp-gateway', '--agent', 'agent:build-bot', '--home', home.dir, '--api', running.apiUrl, '--name', 'filesystem', '--', process.execPath, server, dir], stderr: 'ignore' }));
const sdk = new LedgerClient({ baseUrl: running.apiUrl, signer: home.key('agent-build-bot'), deciderKeys: [home.key('gate').keyId] });
const call = (n) => ({ tool: 'mcp__filesystem__list_directory', input: { path: dir }, interceptor: Interceptor.mcpGateway, server: 'filesystem', hints: { readOnlyHint: true }, callId: String(n) });

const list = async (client) => {
  const result = await client.callTool({ name: 'list_directory', arguments: { path: dir } });
  if (result.isError === true) throw new Error(`refused: ${JSON.stringify(result.content)}`);
};
await list(direct);
await list(gated);
await sdk.proposeAndWait(proposalFor(call(-1), FailMode.closed));

const directMs = [];
const gatedMs = [];
const rawMs = [];
for (let n = 0; n < CALLS; n++) {
  let t = performance.now();
  await list(direct);
  directMs.push(performance.now() - t);
  t = performance.now();
  await list(gated);
  gatedMs.push(performance.now() - t);
  t = performance.now();
  const decision = await sdk.proposeAndWait(proposalFor(call(n), FailMode.closed));
  rawMs.push(performance.now() - t);
  if (decision.outcome !== 'allow') throw new Error(`raw: ${decision.outcome}`);
}
await direct.close();
await gated.close();
await running.stop();

const base = percentile(directMs, 50);
console.log(`mcp bench: ${CALLS} list_directory calls per path, checkpoint interval ${home.config.checkpointIntervalMs} ms`);
console.log(`  direct MCP call (SDK client -> filesystem server)   ${fmt(directMs)}  1.00x`);
console.log(`  through ledger mcp-gateway (decision + receipt)     ${fmt(gatedMs)}  ${(percentile(gatedMs, 50) / base).toFixed(2)}x`);
console.log(`  added by the gateway (p50 difference)               ${(percentile(gatedMs, 50) - base).toFixed(1)} ms`);
console.log(`  raw API round trip of the same proposal             ${fmt(rawMs)}  ${(percentile(rawMs, 50) / base).toFixed(2)}x`);
process.exit(0);
