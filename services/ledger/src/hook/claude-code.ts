import { z } from 'zod';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { parseStrictJson } from '@agent-ledger/core';
import type { Verdict } from './executor.js';
import { Interceptor, type ToolCall } from './tool-call.js';

/**
 * Claude Code's PreToolUse hook input (stdin, one JSON object; untrusted).
 * Fields this hook relies on are checked; others Claude Code adds
 * (`transcript_path`, `permission_mode`, ...) pass. MCP tools arrive as
 * `mcp__<server>__<tool>`.
 */
export const PreToolUseInput = z.looseObject({
  session_id: z.string().min(1).max(256),
  cwd: z.string().min(1).max(4096),
  hook_event_name: z.literal('PreToolUse'),
  tool_name: z.string().min(1).max(256),
  tool_input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().min(1).max(256).optional(),
});
/** A checked PreToolUse input. */
export type PreToolUseInput = z.infer<typeof PreToolUseInput>;

/** Largest hook input read from stdin (a Write of a large file carries its content). */
export const MAX_HOOK_INPUT_BYTES = 8 << 20;

/**
 * Parses the hook's stdin (strict JSON: duplicate keys and unsafe integers
 * are refused, so what is signed is what Claude Code sent).
 * @throws LedgerError SCHEMA_INVALID
 */
export function parsePreToolUse(text: string): PreToolUseInput {
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `the hook input is not JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = PreToolUseInput.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `the hook input is not a PreToolUse event (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`);
  }
  return parsed.data;
}

/** The tool call a PreToolUse input describes. */
export function toolCallOf(input: PreToolUseInput): ToolCall {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(input.tool_name);
  return {
    tool: input.tool_name,
    input: input.tool_input,
    interceptor: Interceptor.claudeCode,
    cwd: input.cwd,
    session: input.session_id,
    ...(input.tool_use_id === undefined ? {} : { callId: input.tool_use_id }),
    ...(mcp?.[1] === undefined ? {} : { server: mcp[1] }),
  };
}

/** Claude Code's PreToolUse answer (stdout, exit 0): `hookSpecificOutput` with the permission decision and its reason. */
export interface PreToolUseOutput {
  readonly hookSpecificOutput: {
    readonly hookEventName: 'PreToolUse';
    readonly permissionDecision: 'allow' | 'deny' | 'ask';
    readonly permissionDecisionReason: string;
  };
}

/** The answer Claude Code reads for a verdict: a deny's reason is shown to the model, an ask's to the user. */
export function preToolUseOutput(verdict: Pick<Verdict, 'permission' | 'reason'>): PreToolUseOutput {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: verdict.permission, permissionDecisionReason: verdict.reason } };
}
