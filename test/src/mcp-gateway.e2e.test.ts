import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { parseRefusal } from '@agent-ledger/refusals';
import { statementHash, type BodyOf, type Entry } from '@agent-ledger/core';
import type { LedgerHome, RunningLedger } from '@agent-ledger/ledger';
import { repoRoot } from './fixtures.js';
import { exportAndVerify, foreignTrustFile, ledgerBin, nextPending, runLedger } from './hook-support.js';
import { freshHome, start } from './live.js';

// The MCP gateway end to end: the official MCP TypeScript SDK's client talks
// to `ledger mcp-gateway`, which stands in front of the reference filesystem
// MCP server (@modelcontextprotocol/server-filesystem, from npm), with a live
// ledger (real broker and Postgres) deciding every tools/call.

const AGENT = 'agent:build-bot';
const filesystemServer = join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
let home: LedgerHome;
let running: RunningLedger;
let root: string;

before(async () => {
  process.env.LEDGER_DEADLINES_MS = '2:6000,3:6000,4:6000';
  home = freshHome();
  running = await start(home);
  root = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-root-')));
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, '.ssh'));
  mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(root, 'src', 'app.ts'), 'export const answer = 42;\n');
  writeFileSync(join(root, '.ssh', 'id_ed25519'), '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n');
});
after(async () => {
  delete process.env.LEDGER_DEADLINES_MS;
  await running?.stop();
});

/** The gateway's command line in front of the filesystem server rooted at `root`. */
function gatewayArgs(extra: readonly string[] = []): string[] {
  return [ledgerBin, 'mcp-gateway', '--agent', AGENT, '--home', home.dir, '--api', running.apiUrl as string, '--name', 'filesystem', ...extra, '--', process.execPath, filesystemServer, root];
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function meta(result: CallToolResult): { code: string | null; proposal: string | null; decision: { partition: number; index: number } | null } {
  return (result._meta as Record<string, unknown>)['agent-ledger/decision'] as ReturnType<typeof meta>;
}

describe('ledger mcp-gateway over stdio', () => {
  let client: Client;
  let tools: Tool[];
  const proposals: string[] = [];

  before(async () => {
    client = new Client({ name: 'gateway-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: gatewayArgs(), cwd: repoRoot, stderr: 'ignore' }));
  });
  after(async () => {
    await client?.close();
  });

  test('tools/list passes through with the annotations', { timeout: 60_000 }, async () => {
    tools = (await client.listTools()).tools;
    const names = tools.map((t) => t.name);
    for (const name of ['list_directory', 'read_text_file', 'write_file']) assert.ok(names.includes(name), names.join(','));
    assert.equal(tools.find((t) => t.name === 'list_directory')?.annotations?.readOnlyHint, true);
  });

  test('listing a directory is allowed and forwarded', { timeout: 60_000 }, async () => {
    const result = (await client.callTool({ name: 'list_directory', arguments: { path: root } })) as CallToolResult;
    assert.notEqual(result.isError, true, text(result));
    assert.match(text(result), /\[DIR\] src/);
  });

  test('reading a credential file is refused: a tool error with the refusal and the log position', { timeout: 60_000 }, async () => {
    const result = (await client.callTool({ name: 'read_text_file', arguments: { path: join(root, '.ssh', 'id_ed25519') } })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.doesNotMatch(text(result), /PRIVATE KEY/);
    const refusal = parseRefusal(text(result));
    assert.ok(refusal !== null, text(result));
    assert.equal(meta(result).code, refusal.code);
    assert.match(text(result), /\(decision at partition \d+, index \d+\)$/);
    assert.ok(meta(result).decision !== null);
    proposals.push(meta(result).proposal as string);
  });

  test('a write to a protected path waits for an approver and is denied when the deadline passes', { timeout: 60_000 }, async () => {
    const target = join(root, '.git', 'hooks', 'pre-commit');
    const seen = new Set<string>();
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: '#!/bin/sh\nnpm test\n' } });
    const row = await nextPending(running, AGENT, seen);
    assert.ok(row.tier >= 2);
    const result = (await call) as CallToolResult;
    assert.equal(result.isError, true);
    assert.equal(parseRefusal(text(result))?.code, 'TIMEOUT');
    assert.equal(meta(result).proposal, row.proposalHash);
    assert.equal(existsSync(target), false);
    proposals.push(row.proposalHash);
  });

  test('the same write, approved through ledger approve, goes through', { timeout: 60_000 }, async () => {
    const target = join(root, '.git', 'hooks', 'pre-commit');
    const seen = new Set<string>(proposals);
    const call = client.callTool({ name: 'write_file', arguments: { path: target, content: '#!/bin/sh\nnpm test\n' } });
    const row = await nextPending(running, AGENT, seen);
    const approvers = row.tier >= 4 ? ['approver:dana', 'approver:eli'] : ['approver:dana'];
    for (const approver of approvers) {
      const approved = await runLedger(['approve', '--home', home.dir, '--api', running.apiUrl as string, '--approve', row.proposalHash.slice(0, 16), '--as', approver]);
      assert.equal(approved.code, 0, approved.stdout + approved.stderr);
    }
    const result = (await call) as CallToolResult;
    assert.notEqual(result.isError, true, text(result));
    assert.equal(readFileSync(target, 'utf8'), '#!/bin/sh\nnpm test\n');
    proposals.push(row.proposalHash);
  });

  test('arguments that cannot be signed faithfully are refused, not forwarded', { timeout: 60_000 }, async () => {
    // An integer beyond 2^53 would be signed as a different number than the server receives (RFC 8785).
    const result = (await client.callTool({ name: 'write_file', arguments: { path: join(root, 'src', 'big.txt'), content: 'x', mode: 2 ** 60 } })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.equal(parseRefusal(text(result))?.code, 'SCHEMA_INVALID', text(result));
    assert.equal(existsSync(join(root, 'src', 'big.txt')), false);
  });

  test('every step is on the log with the tool annotations, and the export verifies', { timeout: 60_000 }, async () => {
    const { verify, entries } = await exportAndVerify(home);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    assert.equal((JSON.parse(verify.stdout) as { ok: boolean }).ok, true);
    const byHash = new Map<string, Entry>();
    for (const e of entries) if (e.envelope.statement.type === 'proposal.submitted') byHash.set(statementHash(e.envelope.statement), e);
    const gateway = [...byHash.values()].filter((e) => (e.envelope.statement.body as BodyOf<'proposal.submitted'>).context.interceptor === 'mcp-gateway');
    // The list, the refused read, the timed-out write, the approved write.
    assert.equal(gateway.length, 4);
    for (const e of gateway) {
      const body = e.envelope.statement.body as BodyOf<'proposal.submitted'>;
      const name = body.tool.replace(/^mcp__filesystem__/, '');
      const declared = tools.find((t) => t.name === name)?.annotations ?? {};
      const recorded = (body.context as { mcp: { server: string; annotations: Record<string, unknown> } }).mcp;
      assert.equal(recorded.server, 'filesystem');
      for (const [hint, value] of Object.entries(declared)) assert.equal(recorded.annotations[hint], value, `${name} ${hint}`);
      assert.equal(body.agentId, AGENT);
    }
    const outcomes = proposals.map((p) => entries.filter((e) => e.envelope.statement.type === 'decision.recorded' && (e.envelope.statement.body as { proposal: string }).proposal === p).map((e) => (e.envelope.statement.body as { outcome: string }).outcome).at(-1));
    assert.equal(outcomes.length, 3);
    assert.ok(outcomes[0] === 'block' || outcomes[0] === 'deny', outcomes[0]);
    assert.equal(outcomes[1], 'deny');
    assert.equal(outcomes[2], 'allow');
    assert.ok(entries.some((e) => e.envelope.statement.type === 'timeout.recorded' && (e.envelope.statement.body as { proposal: string }).proposal === proposals[1]));
    assert.ok(entries.some((e) => e.envelope.statement.type === 'human.response' && (e.envelope.statement.body as { proposal: string }).proposal === proposals[2]));
  });
});

describe('ledger mcp-gateway with a trust document of another log', () => {
  test('an allowed call is not forwarded when its receipt does not verify, and the refusal is on the log', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
    const config = join(dir, 'agent-ledger.json');
    writeFileSync(config, JSON.stringify({ v: 1, api: running.apiUrl, keyFile: join(home.dir, 'keys', 'agent-build-bot.key'), trust: foreignTrustFile(join(dir, 'trust.json')), failMode: 'closed', budgetMs: 30_000 }));
    const client = new Client({ name: 'gateway-foreign-trust', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [ledgerBin, 'mcp-gateway', '--config', config, '--name', 'filesystem', '--', process.execPath, filesystemServer, root], cwd: repoRoot, stderr: 'ignore' }));
    try {
      const result = (await client.callTool({ name: 'write_file', arguments: { path: join(root, 'src', 'untrusted.ts'), content: 'x' } })) as CallToolResult;
      assert.equal(result.isError, true);
      assert.equal(parseRefusal(text(result))?.code, 'INTEGRITY_FAILURE', text(result));
      assert.equal(existsSync(join(root, 'src', 'untrusted.ts')), false);
      const { entries } = await exportAndVerify(home);
      const refusal = entries.find((e) => e.envelope.statement.type === 'execution.refused' && (e.envelope.statement.body as { proposal: string }).proposal === meta(result).proposal);
      assert.equal(refusal?.envelope.statement.author.principal, AGENT);
    } finally {
      await client.close();
    }
  });
});

describe('ledger mcp-gateway over Streamable HTTP', () => {
  let gateway: ChildProcess;
  let url: string;

  before(async () => {
    gateway = spawn(process.execPath, gatewayArgs(['--http', '0']), { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      gateway.stderr?.setEncoding('utf8').on('data', (d: string) => {
        seen += d;
        const m = /serving \S+ on (http:\/\/\S+)/.exec(seen);
        if (m?.[1] !== undefined) resolve(m[1]);
      });
      gateway.once('exit', (code) => reject(new Error(`gateway exited ${code}: ${seen}`)));
    });
  });
  after(() => {
    gateway?.kill('SIGTERM');
  });

  test('an SDK client over HTTP lists, is allowed a listing and refused a credential read', { timeout: 60_000 }, async () => {
    const client = new Client({ name: 'gateway-http-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'list_directory'));
      const listed = (await client.callTool({ name: 'list_directory', arguments: { path: join(root, 'src') } })) as CallToolResult;
      assert.notEqual(listed.isError, true, text(listed));
      assert.match(text(listed), /app\.ts/);
      const refused = (await client.callTool({ name: 'read_text_file', arguments: { path: join(root, '.ssh', 'id_ed25519') } })) as CallToolResult;
      assert.equal(refused.isError, true);
      assert.ok(parseRefusal(text(refused)) !== null, text(refused));
    } finally {
      await client.close();
    }
  });

  test('a request with a session id the gateway never issued is refused', { timeout: 30_000 }, async () => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': '00000000-0000-4000-8000-000000000000' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_directory', arguments: { path: root } } }) });
    assert.equal(response.status, 400);
    const notJson = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":' });
    assert.equal(notJson.status, 400);
  });

  test('a request naming another host is refused (DNS rebinding)', { timeout: 30_000 }, async () => {
    // A page on another origin resolving its name to 127.0.0.1 sends its own name as Host.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.once('error', reject);
      req.end(body);
    });
    assert.equal(status, 403);
  });
});
