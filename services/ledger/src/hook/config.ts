import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { parseStrictJson } from '@agent-ledger/core';
import { FailMode } from './tool-call.js';

/**
 * What an executor (the Claude Code hook, the MCP gateway) needs to put an
 * agent behind the ledger, and nothing secret beyond the path of its own key:
 * the API, the agent's key file, the decider keys it pins (the gate's key
 * ids, so only the gate's signature makes a decision it acts on), its fail
 * mode and its time budget. `ledger setup claude-code` writes it.
 */
export const ExecutorConfigSchema = z.strictObject({
  v: z.literal(1),
  /** Base URL of the ledger API. */
  api: z.url({ protocol: /^https?$/ }),
  /** The agent's private key file (`ledger keygen`); relative paths are relative to this file. */
  keyFile: z.string().min(1).max(4096),
  /** Key ids (64 hex) allowed to sign decisions. */
  deciderKeys: z.array(z.string().regex(/^[0-9a-f]{64}$/)).min(1).max(64),
  /** The trust root this installation pins (relative to this file): every allow's receipt is verified against it. */
  trustRoot: z.string().min(1).max(4096),
  /** Ledger unreachable: `closed` denies (default), `ask` hands the call to the user, `open` runs it. */
  failMode: z.enum([FailMode.closed, FailMode.ask, FailMode.open]).default(FailMode.closed),
  /** The longest the executor takes to answer, in ms; a call with no signed decision by then is denied. */
  budgetMs: z.number().int().min(1000).max(3_600_000).default(110_000),
});
/** A checked executor configuration, paths resolved. */
export type ExecutorConfig = z.infer<typeof ExecutorConfigSchema>;

/** Largest configuration file read. */
const MAX_CONFIG_BYTES = 64 << 10;

/**
 * Reads an executor configuration file (untrusted input: strict JSON, the
 * schema), with `keyFile` and `trustRoot` resolved against its directory.
 * @throws OperationalError BAD_CONFIGURATION, NOT_FOUND
 */
export function readExecutorConfig(path: string): ExecutorConfig {
  let text: string;
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path} is larger than ${MAX_CONFIG_BYTES} bytes`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof OperationalError) throw err;
    throw new OperationalError(OperationalCode.NOT_FOUND, `cannot read the ledger configuration ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (run: ledger setup claude-code)`, { cause: err });
  }
  let value: unknown;
  try {
    value = parseStrictJson(text);
  } catch (err) {
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path} is not JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = ExecutorConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `${path}: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  const base = dirname(resolve(path));
  const at = (file: string): string => (isAbsolute(file) ? file : resolve(base, file));
  return { ...parsed.data, keyFile: at(parsed.data.keyFile), trustRoot: at(parsed.data.trustRoot) };
}

/** Writes an executor configuration (owner-only: it names a key file). */
export function writeExecutorConfig(path: string, config: z.input<typeof ExecutorConfigSchema>): void {
  const checked = ExecutorConfigSchema.parse(config);
  writeFileSync(path, `${JSON.stringify(checked, null, 2)}\n`, { mode: 0o600 });
}
