import { appendFileSync, readFileSync, renameSync, rmSync, existsSync } from 'node:fs';
import type { LedgerClient } from '@agent-ledger/client';
import { parseStrictJson } from '@agent-ledger/core';
import { FailMode, proposalFor, type ToolCall } from './tool-call.js';

/**
 * Calls a fail-open executor let run while the ledger was unreachable. Each
 * is kept in a local file (one JSON line) and, the next time the ledger is
 * reached, signed as a proposal carrying `context.ranWithoutDecision` and the
 * label `ran-without-decision`, so the log shows what ran without a decision,
 * when and why. The gate decides it like any proposal (what it would have
 * said); nobody waits for that decision.
 */
interface SpooledCall {
  readonly at: string;
  readonly reason: string;
  readonly failMode: FailMode;
  readonly call: ToolCall;
}

/** Records a call that ran (or went to the user) without a decision. */
export function spoolFailOpen(path: string, call: ToolCall, failMode: FailMode, reason: string): void {
  const line: SpooledCall = { at: new Date().toISOString(), reason: reason.slice(0, 1024), failMode, call };
  appendFileSync(path, `${JSON.stringify(line)}\n`, { mode: 0o600 });
}

/**
 * Submits every spooled call as a proposal; the file is taken aside first,
 * so two executors never submit one call twice. A line that cannot be read
 * is dropped; a submission that fails puts the rest back.
 * @returns how many were recorded
 */
export async function flushSpool(path: string, client: LedgerClient): Promise<number> {
  if (!existsSync(path)) return 0;
  const taken = `${path}.${process.pid}`;
  try {
    renameSync(path, taken);
  } catch {
    return 0;
  }
  const lines = readFileSync(taken, 'utf8').split('\n').filter((l) => l.length > 0);
  let recorded = 0;
  for (const [n, line] of lines.entries()) {
    let spooled: SpooledCall;
    try {
      spooled = parseStrictJson(line) as unknown as SpooledCall;
    } catch {
      continue;
    }
    try {
      await client.propose(proposalFor(spooled.call, spooled.failMode, { at: spooled.at, reason: spooled.reason }));
      recorded++;
    } catch {
      for (const rest of lines.slice(n)) appendFileSync(path, `${rest}\n`, { mode: 0o600 });
      break;
    }
  }
  rmSync(taken, { force: true });
  return recorded;
}
