import { spawn } from 'node:child_process';
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerHome, RunningLedger } from '@agent-ledger/ledger';
import { exportCommand } from '@agent-ledger/ledger';
import type { Entry } from '@agent-ledger/core';
import { formatTrust, trustFromGenesis } from '@agent-ledger/client';
import { repoRoot } from './fixtures.js';
import { eventually, freshHome, getJson } from './live.js';

/** The built `ledger` binary, run as users (and Claude Code) run it. */
export const ledgerBin = join(repoRoot, 'services/ledger/bin/ledger.js');

/** What a `ledger` child process printed and how it ended. */
export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `ledger ARGS` with `stdin` (async: the ledger under test runs in this process). */
export function runLedger(args: readonly string[], stdin = '', env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [ledgerBin, ...args], { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** Claude Code's PreToolUse event on stdin, every field it sends. */
export function preToolUse(tool_name: string, tool_input: Record<string, unknown>, cwd: string, tool_use_id: string): string {
  return JSON.stringify({
    session_id: '9f4c7b1e-2d3a-4c5b-8e6f-0a1b2c3d4e5f',
    transcript_path: join(cwd, '.claude', 'transcript.jsonl'),
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name,
    tool_input,
    tool_use_id,
  });
}

/** The hook's answer as Claude Code reads it. */
export interface HookAnswer {
  readonly hookSpecificOutput: { readonly hookEventName: string; readonly permissionDecision: 'allow' | 'deny' | 'ask'; readonly permissionDecisionReason: string };
}

/** Parses the hook's stdout (exactly one JSON object). */
export function answerOf(run: Run): HookAnswer {
  return JSON.parse(run.stdout) as HookAnswer;
}

/** A pending confirmation row of `/v1/pending`. */
export interface PendingRow {
  readonly proposalHash: string;
  readonly agentId: string;
  readonly tier: number;
}

/** Waits until a confirmation for `agentId` other than `seen` is pending. */
export function nextPending(running: RunningLedger, agentId: string, seen: ReadonlySet<string> = new Set()): Promise<PendingRow> {
  return eventually(async () => {
    const { body } = await getJson<{ pending: PendingRow[] }>(running, '/v1/pending');
    return body.pending.find((p) => p.agentId === agentId && !seen.has(p.proposalHash));
  }, 30_000, `a pending confirmation for ${agentId}`);
}

/**
 * Exports the committed log (after the checkpoints have caught up) with the
 * in-process export, verifies it with the built `ledger verify-chain`, and
 * returns its entries.
 */
export async function exportAndVerify(home: LedgerHome): Promise<{ verify: Run; entries: Entry[] }> {
  await new Promise((resolve) => setTimeout(resolve, home.config.checkpointIntervalMs * 3));
  const out = join(home.dir, `export-${Date.now()}.ndjson`);
  if ((await exportCommand({ out, home: home.dir })) !== 0) throw new Error('export failed');
  const verify = await runLedger(['verify-chain', out, '--trust-root', join(home.dir, 'trust-root.json'), '--json']);
  const entries: Entry[] = [];
  let buffer = '';
  for await (const chunk of createReadStream(out, { encoding: 'utf8' })) buffer += chunk as string;
  for (const line of buffer.split('\n')) {
    if (line.length === 0) continue;
    const value = JSON.parse(line) as { kind?: string } & Entry;
    if (value.kind === 'entry') entries.push(value);
  }
  return { verify, entries };
}

/** The proposals on the log whose context names this call id. */
export function proposalsOfCall(entries: readonly Entry[], callId: string): Entry[] {
  return entries.filter((e) => e.envelope.statement.type === 'proposal.submitted' && (e.envelope.statement.body as { context: { callId?: unknown } }).context.callId === callId);
}

/**
 * Writes the trust document of another, fresh installation (its genesis and
 * pinned keys, as its own `GET /v1/trust` would serve them) to `file`: what an
 * executor pinning it must refuse every decision of this ledger with.
 */
export function foreignTrustFile(file: string): string {
  const other = freshHome();
  writeFileSync(file, formatTrust(trustFromGenesis(other.genesis())));
  return file;
}
