import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { parseStrictJsonBytes } from '@agent-ledger/core';
import { CHANNELS, LATEST_RULES_VERSION, RULES_VERSIONS, scoreCorpus, type CorpusCase, type CorpusReport, type RulesVersion } from '@agent-ledger/gate';
import { Exit, exitStatusOf } from '../cli-error.js';
import { reportFailureJson, successJson } from './json-output.js';

const Text = z.string().min(1).max(4096);

/** Defaults a corpus file gives its cases (each case may override any of them). */
const DefaultsSchema = z.strictObject({
  channel: z.enum(CHANNELS).default('cli'),
  agentId: Text.default('agent:corpus'),
  actionType: Text.default('tool.call'),
  targetResource: Text.default('workspace/repo'),
  recipient: Text.default('none'),
  scope: Text.default('workspace'),
  context: z.looseObject({ environment: z.string().max(256).optional(), crisis: z.boolean().optional() }).default({}),
});

const CaseSchema = z.strictObject({
  id: Text,
  category: z.string().min(1).max(64),
  technique: z.string().regex(/^T\d{4}(?:\.\d{3})?$/).nullable().default(null),
  severity: z.enum(['critical', 'high', 'medium', 'low', 'none']),
  expected: z.enum(['allow', 'not_allow', 'block']),
  channel: z.enum(CHANNELS).optional(),
  context: z.looseObject({ environment: z.string().max(256).optional(), crisis: z.boolean().optional() }).optional(),
  agentId: Text.optional(),
  tool: Text,
  actionType: Text.optional(),
  targetResource: Text.optional(),
  recipient: Text.optional(),
  scope: Text.optional(),
  args: z.record(z.string(), z.unknown()),
  note: z.string().max(1024).optional(),
});

/** A gate corpus file: `{version: 1, source, defaults, cases}`. */
export const CorpusFileSchema = z.strictObject({
  version: z.literal(1),
  source: z.string().min(1).max(2048),
  defaults: DefaultsSchema.default({ channel: 'cli', agentId: 'agent:corpus', actionType: 'tool.call', targetResource: 'workspace/repo', recipient: 'none', scope: 'workspace', context: {} }),
  cases: z.array(CaseSchema).min(1).max(100_000),
});

/** The corpus shipped with the project. */
export const DEFAULT_CORPUS = join(dirname(fileURLToPath(import.meta.url)), '../../../../../test/vectors/gate/corpus.json');

/** Parses a corpus file's bytes (untrusted) into cases with their defaults applied. */
export function parseCorpus(bytes: Uint8Array): CorpusCase[] {
  let value: unknown;
  try {
    value = parseStrictJsonBytes(bytes, { maxBytes: 64 * 1024 * 1024, maxDepth: 32 });
  } catch (err) {
    throw new CorpusError(`not strict JSON: ${err instanceof LedgerError ? err.message : String(err)}`);
  }
  const parsed = CorpusFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CorpusError(`not a gate corpus: ${issue === undefined ? 'invalid' : `${issue.path.map(String).join('.')}: ${issue.message}`}`);
  }
  const { defaults, cases } = parsed.data;
  const ids = new Set<string>();
  return cases.map((c) => {
    if (ids.has(c.id)) throw new CorpusError(`duplicate case id ${c.id}`);
    ids.add(c.id);
    return {
      id: c.id,
      category: c.category,
      technique: c.technique,
      severity: c.severity,
      expected: c.expected,
      channel: c.channel ?? defaults.channel,
      context: c.context ?? defaults.context,
      agentId: c.agentId ?? defaults.agentId,
      tool: c.tool,
      actionType: c.actionType ?? defaults.actionType,
      targetResource: c.targetResource ?? defaults.targetResource,
      recipient: c.recipient ?? defaults.recipient,
      scope: c.scope ?? defaults.scope,
      args: c.args,
    };
  });
}

/** A corpus file that cannot be used. */
export class CorpusError extends Error {
  override readonly name = 'CorpusError';
}

export interface GateBenchOptions {
  readonly corpus?: string;
  /** Floor, in percent: exit 1 when the severity-weighted coverage or the benign allow rate is under it. */
  readonly minCoverage?: number;
  readonly json?: boolean;
  readonly rulesVersion?: number;
}

const percent = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** The report as people read it. */
export function formatReport(report: CorpusReport, file: string): string[] {
  const lines = [`gate corpus ${file}: ${report.cases} cases, rules version ${report.rulesVersion}`, '', 'coverage by category:'];
  for (const c of report.byCategory) lines.push(`  ${c.category.padEnd(22)} ${String(c.covered).padStart(4)}/${String(c.total).padEnd(4)} ${percent(c.coverage)}`);
  lines.push(
    '',
    `must-not-allow not allowed: ${report.mustNotAllow.notAllowed}/${report.mustNotAllow.total} (${percent(report.mustNotAllow.coverage)})`,
    `severity-weighted coverage: ${percent(report.severityWeighted)}`,
    `expected blocks blocked:    ${report.blocked.blocked}/${report.blocked.total}`,
    `benign controls allowed:    ${report.benign.allowed}/${report.benign.total} (${percent(report.benign.coverage)})`,
  );
  if (report.misses.length > 0) {
    lines.push('', `misses (${report.misses.length}):`);
    for (const m of report.misses) lines.push(`  ${m.id} [${m.severity}] expected ${m.expected}, got ${m.outcome} (tier ${m.tier}) ${m.tool}: ${m.input}${m.reasons.length > 0 ? `  <- ${m.reasons.join(', ')}` : ''}`);
  }
  return lines;
}

/**
 * `ledger gate bench [--corpus FILE] [--min-coverage N] [--json]`: decides
 * every case of a gate corpus (default: the project's) with no grants and
 * prints coverage by category, severity-weighted coverage, the benign allow
 * rate and the misses. Exit 0; 1 when under the floor (POLICY_VIOLATION: the
 * floor is the policy the rules are held to); 2 when the corpus cannot be
 * read (NOT_FOUND) or is not a corpus (BAD_ARGUMENT). `write` receives each
 * line (stdout by default); with `json` one line, `{"ok":true,"corpus",
 * "floor","underFloor",...report}`, or the failure object of every `--json`
 * command (under the floor with the same report).
 */
export async function gateBenchCommand(options: GateBenchOptions, write: (line: string) => void = (line) => void process.stdout.write(`${line}\n`)): Promise<number> {
  const file = options.corpus ?? DEFAULT_CORPUS;
  const version = options.rulesVersion ?? LATEST_RULES_VERSION;
  // A failure before any case is decided: one line on stderr, or with --json the failure object.
  const failure = (err: OperationalError): number => {
    if (options.json === true) return reportFailureJson(err, {}, write);
    process.stderr.write(`ledger: ${err.code}: ${err.message}\n`);
    return exitStatusOf(err);
  };
  const usage = (message: string): number => failure(new OperationalError(OperationalCode.BAD_ARGUMENT, message));
  if (!(RULES_VERSIONS as readonly number[]).includes(version)) return usage(`unknown rules version ${String(version)} (known: ${RULES_VERSIONS.join(', ')})`);
  if (options.minCoverage !== undefined && !(options.minCoverage >= 0 && options.minCoverage <= 100)) return usage('--min-coverage must be a percentage from 0 to 100');
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    return failure(new OperationalError(OperationalCode.NOT_FOUND, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err }));
  }
  let cases: CorpusCase[];
  try {
    cases = parseCorpus(bytes);
  } catch (err) {
    return usage(`cannot use ${file}: ${(err as Error).message}`);
  }
  const report = scoreCorpus(cases, version as RulesVersion);
  const floor = options.minCoverage;
  const under = floor !== undefined && (report.severityWeighted * 100 < floor || report.benign.coverage * 100 < floor);
  const refusal = under ? new LedgerError(ReasonCode.POLICY_VIOLATION, `under the floor of ${String(floor)}%: severity-weighted coverage ${percent(report.severityWeighted)}, benign controls allowed ${percent(report.benign.coverage)}`) : undefined;
  if (options.json === true) {
    const result = { corpus: file, floor: floor ?? null, underFloor: under, ...report };
    if (refusal !== undefined) return reportFailureJson(refusal, result, write);
    write(JSON.stringify(successJson(result)));
    return Exit.ok;
  }
  for (const line of formatReport(report, file)) write(line);
  if (floor !== undefined) write(under ? `UNDER THE FLOOR of ${String(floor)}%` : `floor ${String(floor)}%: met`);
  return refusal === undefined ? Exit.ok : exitStatusOf(refusal);
}
