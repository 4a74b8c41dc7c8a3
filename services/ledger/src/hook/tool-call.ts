import { hostname } from 'node:os';
import type { BodyOf } from '@agent-ledger/core';

/** Where a tool call was intercepted: the Claude Code hook or the MCP gateway. */
export const Interceptor = { claudeCode: 'claude-code', mcpGateway: 'mcp-gateway' } as const;
/** One of {@link Interceptor}. */
export type Interceptor = (typeof Interceptor)[keyof typeof Interceptor];

/** What the executor does when the ledger cannot be reached: deny (the default), ask the user, or run the call. */
export const FailMode = { closed: 'closed', ask: 'ask', open: 'open' } as const;
/** One of {@link FailMode}. */
export type FailMode = (typeof FailMode)[keyof typeof FailMode];

/** MCP tool annotations (MCP 2025-03-26 `ToolAnnotations`), as the server declared them: hints, never trusted for authority. */
export interface ToolHints {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** A tool call about to run, as an interceptor saw it (untrusted content, already shape-checked). */
export interface ToolCall {
  /** The tool's name as the agent named it (`Bash`, `mcp__filesystem__read_file`, `read_file`). */
  readonly tool: string;
  /** Its arguments, exactly as they will be executed. */
  readonly input: Record<string, unknown>;
  readonly interceptor: Interceptor;
  /** The agent's working directory, when known. */
  readonly cwd?: string;
  /** The agent's session (Claude Code `session_id`, an MCP session id). */
  readonly session?: string;
  /** The call's own id (Claude Code `tool_use_id`, the JSON-RPC request id). */
  readonly callId?: string;
  /** MCP: the server the call goes to. */
  readonly server?: string;
  /** MCP: the server's annotations of the tool. */
  readonly hints?: ToolHints;
}

/** Largest text a proposal's short fields carry (the statement schema's ShortText). */
const SHORT = 256;

function short(text: string): string {
  return text.length <= SHORT ? text : `${text.slice(0, SHORT - 1)}…`;
}

/** Argument names that name the file or directory a tool acts on, in the order they are preferred. */
const TARGET_KEYS = ['file_path', 'notebook_path', 'path', 'source', 'destination', 'url'] as const;

/**
 * The resource a call acts on, for grants to match: the file or URL it names,
 * else the host and working directory it runs in. Grants bind this exactly
 * (SPEC.md section 7.2); the gate still reads every argument.
 */
export function targetOf(call: ToolCall): string {
  for (const key of TARGET_KEYS) {
    const value = call.input[key];
    if (typeof value === 'string' && value.length > 0) return short(value);
  }
  const paths = call.input.paths;
  if (Array.isArray(paths) && typeof paths[0] === 'string' && paths[0].length > 0) return short(paths[0]);
  return short(`host/${hostname()}${call.cwd === undefined ? '' : `:${call.cwd}`}`);
}

/**
 * The proposal an interceptor signs for a tool call. `tool` and `args` are
 * the call itself, so the gate reads what will run (its tool registry knows
 * Claude Code's tools and the MCP servers' by name). `context` says where the
 * call was intercepted and the executor's fail mode, so how this executor
 * treats an outage is itself on the log with every proposal. MCP annotations
 * go in `context.mcp`: recorded, never a source of authority.
 */
export function proposalFor(call: ToolCall, failMode: FailMode, ranWithoutDecision?: { readonly at: string; readonly reason: string }): Omit<BodyOf<'proposal.submitted'>, 'agentId'> {
  const description = typeof call.input.description === 'string' ? call.input.description : '';
  const context: Record<string, unknown> = {
    environment: 'development',
    crisis: false,
    interceptor: call.interceptor,
    failMode,
    host: hostname(),
  };
  // A call the fail mode let run while the ledger was unreachable, recorded once it is back.
  if (ranWithoutDecision !== undefined) context.ranWithoutDecision = { at: ranWithoutDecision.at, reason: ranWithoutDecision.reason };
  if (call.cwd !== undefined) context.cwd = call.cwd;
  if (call.session !== undefined) context.session = call.session;
  if (call.callId !== undefined) context.callId = call.callId;
  if (call.server !== undefined || call.hints !== undefined) {
    context.mcp = { ...(call.server === undefined ? {} : { server: call.server }), annotations: { ...(call.hints ?? {}) } };
  }
  return {
    tool: short(call.tool),
    actionType: 'tool.call',
    targetResource: targetOf(call),
    recipient: 'none',
    scope: call.interceptor === Interceptor.claudeCode ? 'claude-code' : short(`mcp/${call.server ?? 'server'}`),
    args: call.input,
    query: description.slice(0, 4096),
    labels: [
      ...(ranWithoutDecision === undefined ? [] : ['ran-without-decision']),
      ...(call.hints?.destructiveHint === true ? ['mcp:destructive'] : call.hints?.readOnlyHint === true ? ['mcp:read-only'] : []),
    ],
    channel: 'cli',
    context,
  };
}
