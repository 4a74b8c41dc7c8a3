import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerError } from '@agent-ledger/refusals';
import { FailMode, Interceptor, installPreToolUseHook, parsePreToolUse, preToolUseOutput, proposalFor, targetOf, toolCallOf } from '@agent-ledger/ledger';

// The pure parts of the Claude Code hook and the MCP gateway: reading Claude
// Code's PreToolUse JSON, the proposal a tool call becomes, the answer's
// shape, and merging the hook into existing settings.

const event = (fields: Record<string, unknown> = {}): string =>
  JSON.stringify({ session_id: 's-1', transcript_path: '/p/t.jsonl', cwd: '/p', permission_mode: 'default', hook_event_name: 'PreToolUse', tool_name: 'mcp__filesystem__read_file', tool_input: { path: '/p/a.txt' }, tool_use_id: 'toolu_1', ...fields });

test('a PreToolUse event becomes the tool call it describes, MCP server named', () => {
  const call = toolCallOf(parsePreToolUse(event()));
  assert.deepEqual(call, { tool: 'mcp__filesystem__read_file', input: { path: '/p/a.txt' }, interceptor: 'claude-code', cwd: '/p', session: 's-1', callId: 'toolu_1', server: 'filesystem' });
});

test('input that is not a PreToolUse event is SCHEMA_INVALID, never a call', () => {
  const bad = ['', 'null', '[]', '{"a":1,"a":2}', event({ hook_event_name: 'PostToolUse' }), event({ tool_input: 'ls' }), event({ tool_name: '' }), event({ session_id: 7 }), `{"session_id":"s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"n":12345678901234567890}}`];
  for (const text of bad) {
    assert.throws(() => parsePreToolUse(text), (err: unknown) => err instanceof LedgerError && err.code === 'SCHEMA_INVALID', text);
  }
});

test('the proposal carries the call exactly, where it was intercepted, the fail mode and the MCP annotations', () => {
  const input = { path: '/srv/app/.env', content: 'x' };
  const body = proposalFor({ tool: 'mcp__fs__write_file', input, interceptor: Interceptor.mcpGateway, server: 'fs', hints: { destructiveHint: true, readOnlyHint: false }, callId: '7' }, FailMode.open);
  assert.equal(body.tool, 'mcp__fs__write_file');
  assert.equal(body.args, input);
  assert.equal(body.targetResource, '/srv/app/.env');
  assert.equal(body.scope, 'mcp/fs');
  assert.deepEqual(body.labels, ['mcp:destructive']);
  assert.deepEqual((body.context as { mcp: unknown }).mcp, { server: 'fs', annotations: { destructiveHint: true, readOnlyHint: false } });
  assert.equal((body.context as { failMode: string }).failMode, 'open');
  assert.equal((body.context as { interceptor: string }).interceptor, 'mcp-gateway');
  const late = proposalFor({ tool: 'Bash', input: { command: 'make' }, interceptor: Interceptor.claudeCode }, FailMode.open, { at: '2026-01-01T00:00:00.000Z', reason: 'UNAVAILABLE: x' });
  assert.deepEqual(late.labels, ['ran-without-decision']);
  assert.deepEqual((late.context as { ranWithoutDecision: unknown }).ranWithoutDecision, { at: '2026-01-01T00:00:00.000Z', reason: 'UNAVAILABLE: x' });
});

test('the target is the file or URL a call names, bounded to the schema, else the host', () => {
  assert.equal(targetOf({ tool: 'Read', input: { file_path: '/a/b' }, interceptor: Interceptor.claudeCode }), '/a/b');
  assert.equal(targetOf({ tool: 'read_multiple_files', input: { paths: ['/x', '/y'] }, interceptor: Interceptor.mcpGateway }), '/x');
  assert.equal(targetOf({ tool: 'Read', input: { file_path: `/${'a'.repeat(400)}` }, interceptor: Interceptor.claudeCode }).length, 256);
  assert.match(targetOf({ tool: 'Bash', input: { command: 'ls' }, interceptor: Interceptor.claudeCode, cwd: '/p' }), /^host\/.+:\/p$/);
});

test("the answer is Claude Code's PreToolUse output", () => {
  assert.deepEqual(preToolUseOutput({ permission: 'deny', reason: 'REFUSED: RCE_RISK: x' }), { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'REFUSED: RCE_RISK: x' } });
});

test('the hook merges into settings: other settings and hooks kept, its own entry replaced, not doubled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'settings-'));
  const file = join(dir, 'settings.json');
  const theirs = { matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }] };
  const mixed = { matcher: 'Write', hooks: [{ type: 'command', command: '/old/node /old/ledger.js hook claude-code --config /old.json' }, { type: 'command', command: 'fmt.sh' }] };
  writeFileSync(file, JSON.stringify({ model: 'x', hooks: { PreToolUse: [theirs, mixed], Stop: [{ hooks: [] }] } }));
  installPreToolUseHook(file, 'node ledger.js hook claude-code --config /p/.claude/agent-ledger.json', 120);
  installPreToolUseHook(file, 'node ledger.js hook claude-code --config /p/.claude/agent-ledger.json', 120);
  const written = JSON.parse(readFileSync(file, 'utf8')) as { model: string; hooks: { PreToolUse: unknown[]; Stop: unknown[] } };
  assert.equal(written.model, 'x');
  assert.deepEqual(written.hooks.Stop, [{ hooks: [] }]);
  assert.deepEqual(written.hooks.PreToolUse, [
    { matcher: '*', hooks: [{ type: 'command', command: 'node ledger.js hook claude-code --config /p/.claude/agent-ledger.json', timeout: 120 }] },
    theirs,
    { matcher: 'Write', hooks: [{ type: 'command', command: 'fmt.sh' }] },
  ]);
  for (const broken of ['{', '[]', '{"hooks":[]}', '{"hooks":{"PreToolUse":{}}}']) {
    writeFileSync(file, broken);
    assert.throws(() => installPreToolUseHook(file, 'c', 1), (err: unknown) => (err as { code?: string }).code === 'BAD_CONFIGURATION', broken);
    assert.equal(readFileSync(file, 'utf8'), broken);
  }
});
