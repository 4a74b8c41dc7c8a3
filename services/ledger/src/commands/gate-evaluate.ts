import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { parseStrictJsonBytes } from '@agent-ledger/core';
import { CHANNELS, decide, grantFromScenario, initialState, type GateDecision } from '@agent-ledger/gate';
import { Exit, exitStatusOf } from '../cli-error.js';
import { reportFailureJson, successJson } from './json-output.js';

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

/** The result of one scenario: its decision, or why it was not decided. */
export type ScenarioResult =
  | Pick<GateDecision, 'outcome' | 'tier' | 'risk' | 'code' | 'refusal' | 'grantId' | 'reasons'>
  | { readonly error: { readonly code: ReasonCode; readonly message: string; readonly scenario: number | null; readonly issues: readonly { path: string; message: string }[] } };

/** The result of a decided scenario, in this member order. */
function decisionResult(decision: GateDecision): ScenarioResult {
  const { outcome, tier, risk, code, refusal, grantId, reasons } = decision;
  return { outcome, tier, risk, code, refusal, grantId, reasons };
}

/** The output line of one scenario, in this member order. */
export function decisionLine(decision: GateDecision): string {
  return JSON.stringify(decisionResult(decision));
}

function errorResult(message: string, scenario: number | null, issues: readonly { path: string; message: string }[] = []): ScenarioResult {
  return { error: { code: ReasonCode.SCHEMA_INVALID, message, scenario, issues } };
}

/** Decides one checked scenario against its own grant table. */
export function evaluateScenario(scenario: Scenario): GateDecision {
  const state = initialState();
  scenario.grants.forEach((grant, entry) => grantFromScenario(state, grant, entry));
  return decide({ now: Date.parse(scenario.now), channel: scenario.channel, context: scenario.context, proposal: scenario.proposal }, state);
}

/**
 * Evaluates the scenarios of a file's bytes (untrusted): one result per
 * scenario, in order; a scenario that fails its schema gives a typed error
 * result instead. Bytes that are not strict JSON, or neither an object nor an
 * array, give one error result. `invalid` holds the message of each error.
 */
export function evaluateScenarioBytes(bytes: Uint8Array): { results: ScenarioResult[]; invalid: string[] } {
  let value: unknown;
  try {
    value = parseStrictJsonBytes(bytes, SCENARIO_JSON_LIMITS);
  } catch (err) {
    const message = `not strict JSON: ${err instanceof LedgerError ? err.message : String(err)}`;
    return { results: [errorResult(message, null)], invalid: [message] };
  }
  const single = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!single && !Array.isArray(value)) {
    const message = 'expected a scenario object or an array of scenarios';
    return { results: [errorResult(message, null)], invalid: [message] };
  }
  const items: unknown[] = single ? [value] : (value as unknown[]);
  const results: ScenarioResult[] = [];
  const invalid: string[] = [];
  items.forEach((item, i) => {
    const parsed = ScenarioSchema.safeParse(item);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
      const message = `scenario ${i} does not match the scenario schema`;
      invalid.push(message);
      results.push(errorResult(message, i, issues));
      return;
    }
    results.push(decisionResult(evaluateScenario(parsed.data)));
  });
  return { results, invalid };
}

/**
 * `ledger gate evaluate --scenario FILE`: decides each scenario in FILE (one
 * scenario object, or an array) with the pure gate and prints one JSON line
 * per scenario, `{"outcome","tier","risk","code","refusal","grantId","reasons"}`,
 * or `{"error":{"code":"SCHEMA_INVALID",...}}` for a scenario that is not
 * valid. Returns the exit status: 0 all decided, 1 some content invalid,
 * 2 the file could not be read. `write` receives each line (stdout by default).
 * With `json`, one object instead: `{"ok":true,"results":[...]}`, the same
 * lines in order; when some content is invalid the failure object
 * `{"ok":false,"error":{"code":"SCHEMA_INVALID",...},"results":[...]}` with
 * the same results; when the file cannot be read the failure object of every
 * `--json` command.
 */
export async function gateEvaluateCommand(file: string, write: (line: string) => void = (line) => void process.stdout.write(`${line}\n`), options: { readonly json?: boolean } = {}): Promise<number> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (err) {
    if (options.json === true) return reportFailureJson(err, {}, write);
    process.stderr.write(`ledger: cannot read ${file}: ${(err as Error).message}\n`);
    return Exit.usage;
  }
  const { results, invalid } = evaluateScenarioBytes(bytes);
  const refusal = invalid.length === 0 ? undefined : new LedgerError(ReasonCode.SCHEMA_INVALID, `${invalid.length} of ${results.length} results are not decisions (the first: ${String(invalid[0])})`);
  if (options.json !== true) {
    for (const result of results) write(JSON.stringify(result));
    return refusal === undefined ? Exit.ok : exitStatusOf(refusal);
  }
  if (refusal !== undefined) return reportFailureJson(refusal, { results }, write);
  write(JSON.stringify(successJson({ results })));
  return Exit.ok;
}
