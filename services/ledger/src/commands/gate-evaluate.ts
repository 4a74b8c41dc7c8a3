import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { parseStrictJsonBytes } from '@agent-ledger/core';
import { CHANNELS, decide, grantFromScenario, initialState, type GateDecision } from '@agent-ledger/gate';
import { Exit } from '../cli-error.js';
import { reportFailureJson } from './json-output.js';

const Text = z.string().min(1).max(256);
/** ISO-8601 date and time with a zone (`Z` or an offset), e.g. 2026-11-22T10:00:00.000Z. */
const Instant = z.iso.datetime({ offset: true });

/** A grant given in a scenario: taken as proposed and co-signed (active). `tier` (default 3) is the highest tier it authorises. */
export const ScenarioGrantSchema = z.strictObject({
  grantId: Text,
  agentId: Text,
  actionType: Text,
  targetResource: Text,
  recipient: Text,
  scope: Text,
  notBefore: Instant,
  expiresAt: Instant,
  effect: z.enum(['allow', 'block']),
  tier: z.number().int().min(0).max(4).optional(),
});

/**
 * One scenario of `ledger gate evaluate`: a proposal, when and where it is
 * made, and the grant table it is judged against. `name`, `source` and
 * `expected` are annotations (test vectors carry them) and do not affect
 * the decision.
 */
export const ScenarioSchema = z
  .strictObject({
    name: z.string().max(256).optional(),
    source: z.string().max(1024).optional(),
    now: Instant,
    channel: z.enum(CHANNELS),
    context: z.looseObject({ environment: z.string().max(256).optional(), crisis: z.boolean().optional() }).default({}),
    proposal: z.strictObject({
      agentId: Text,
      tool: Text,
      actionType: Text,
      targetResource: Text,
      recipient: Text,
      scope: Text,
      args: z.record(z.string(), z.unknown()),
      query: z.string().max(4096),
      labels: z.array(Text).max(64).optional(),
    }),
    grants: z.array(ScenarioGrantSchema).max(1_000_000).default([]),
    expected: z.unknown().optional(),
  })
  .superRefine((scenario, ctx) => {
    const seen = new Set<string>();
    scenario.grants.forEach((grant, i) => {
      if (seen.has(grant.grantId)) ctx.addIssue({ code: 'custom', path: ['grants', i, 'grantId'], message: `duplicate grantId ${grant.grantId}` });
      seen.add(grant.grantId);
    });
  });

/** A parsed scenario. */
export type Scenario = z.infer<typeof ScenarioSchema>;

/** Scenario files may hold large grant tables. */
const SCENARIO_JSON_LIMITS = Object.freeze({ maxBytes: 64 * 1024 * 1024, maxDepth: 32 });

/** The output line of one scenario, in this member order. */
export function decisionLine(decision: GateDecision): string {
  const { outcome, tier, risk, code, refusal, grantId, reasons } = decision;
  return JSON.stringify({ outcome, tier, risk, code, refusal, grantId, reasons });
}

function errorLine(message: string, scenario: number | null, issues: readonly { path: string; message: string }[] = []): string {
  return JSON.stringify({ error: { code: ReasonCode.SCHEMA_INVALID, message, scenario, issues } });
}

/** Decides one checked scenario against its own grant table. */
export function evaluateScenario(scenario: Scenario): GateDecision {
  const state = initialState();
  scenario.grants.forEach((grant, entry) => grantFromScenario(state, grant, entry));
  return decide({ now: Date.parse(scenario.now), channel: scenario.channel, context: scenario.context, proposal: scenario.proposal }, state);
}

/**
 * Evaluates the scenarios of a file's bytes (untrusted): one output line per
 * scenario, in order; a scenario that fails its schema gives a typed error
 * line instead. Bytes that are not strict JSON, or neither an object nor an
 * array, give one error line.
 */
export function evaluateScenarioBytes(bytes: Uint8Array): { lines: string[]; invalid: boolean } {
  let value: unknown;
  try {
    value = parseStrictJsonBytes(bytes, SCENARIO_JSON_LIMITS);
  } catch (err) {
    const message = err instanceof LedgerError ? err.message : String(err);
    return { lines: [errorLine(`not strict JSON: ${message}`, null)], invalid: true };
  }
  const single = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!single && !Array.isArray(value)) return { lines: [errorLine('expected a scenario object or an array of scenarios', null)], invalid: true };
  const items: unknown[] = single ? [value] : (value as unknown[]);
  const lines: string[] = [];
  let invalid = false;
  items.forEach((item, i) => {
    const parsed = ScenarioSchema.safeParse(item);
    if (!parsed.success) {
      invalid = true;
      const issues = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
      lines.push(errorLine(`scenario ${i} does not match the scenario schema`, i, issues));
      return;
    }
    lines.push(decisionLine(evaluateScenario(parsed.data)));
  });
  return { lines, invalid };
}

/**
 * `ledger gate evaluate --scenario FILE`: decides each scenario in FILE (one
 * scenario object, or an array) with the pure gate and prints one JSON line
 * per scenario, `{"outcome","tier","risk","code","refusal","grantId","reasons"}`,
 * or `{"error":{"code":"SCHEMA_INVALID",...}}` for a scenario that is not
 * valid. Returns the exit status: 0 all decided, 1 some content invalid,
 * 2 the file could not be read. `write` receives each line (stdout by default).
 * With `json`, one object instead: `{"ok":true|false,"results":[...]}`, the
 * same lines in order (`ok` false when some content is invalid), or the
 * failure object of every `--json` command when the file cannot be read.
 */
export async function gateEvaluateCommand(file: string, write: (line: string) => void = (line) => void process.stdout.write(`${line}\n`), options: { readonly json?: boolean } = {}): Promise<number> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (err) {
    if (options.json === true) return reportFailureJson(err);
    process.stderr.write(`ledger: cannot read ${file}: ${(err as Error).message}\n`);
    return Exit.usage;
  }
  const { lines, invalid } = evaluateScenarioBytes(bytes);
  if (options.json === true) write(`{"ok":${String(!invalid)},"results":[${lines.join(',')}]}`);
  else for (const line of lines) write(line);
  return invalid ? Exit.invalid : Exit.ok;
}
