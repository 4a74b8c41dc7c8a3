import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { parseStrictJson } from '@agent-ledger/core';
import { LedgerClient, loadKey, loadTrust } from '@agent-ledger/client';
import { FailMode } from './tool-call.js';
import { apiFetch } from '../api-fetch.js';

/**
 * What an executor (the Claude Code hook, the MCP gateway) needs to put an
 * agent behind the ledger, and nothing secret beyond the path of its own key:
 * the API, the agent's key file, the trust document it pins (`GET /v1/trust`
 * fetched once against the installation's trust root: the genesis and the
 * gate and sequencer keys with their validity, so a decision counts only with
 * a receipt that verifies offline against it), its fail mode and its time
 * budget. `ledger setup claude-code` writes it.
 */
export const ExecutorConfigSchema = z.strictObject({
  v: z.literal(1),
  /** Base URL of the ledger API. */
  api: z.url({ protocol: /^https?$/ }),
  /** The agent's private key file (`ledger keygen`); relative paths are relative to this file. */
  keyFile: z.string().min(1).max(4096),
  /** The pinned trust document (relative to this file): every decision's receipt is verified against it; a refresh is written back. */
  trust: z.string().min(1).max(4096),
  /** Ledger unreachable: `closed` denies (default), `ask` hands the call to the user, `open` runs it. */
  failMode: z.enum([FailMode.closed, FailMode.ask, FailMode.open]).default(FailMode.closed),
  /** The longest the executor takes to answer, in ms; a call with no signed decision by then is denied. */
  budgetMs: z.number().int().min(1000).max(3_600_000).default(110_000),
  /** A PEM file of the CA the API's certificate is checked against (relative to this file); LEDGER_API_CA wins. */
  caFile: z.string().min(1).max(4096).optional(),
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
  return { ...parsed.data, keyFile: at(parsed.data.keyFile), trust: at(parsed.data.trust), ...(parsed.data.caFile === undefined ? {} : { caFile: at(parsed.data.caFile) }) };
}

/**
 * The agent's SDK client an executor configuration describes: the agent key,
 * the pinned trust document (refreshed in place when the ledger registers a
 * newer gate key).
 */
export function executorClient(config: ExecutorConfig): LedgerClient {
  return new LedgerClient({ baseUrl: config.api, signer: loadKey(config.keyFile), trust: loadTrust(config.trust), trustFile: config.trust, requestTimeoutMs: 10_000, fetch: apiFetch(process.env.LEDGER_API_CA || config.caFile) });
}

/** Writes an executor configuration (owner-only: it names a key file). */
export function writeExecutorConfig(path: string, config: z.input<typeof ExecutorConfigSchema>): void {
  const checked = ExecutorConfigSchema.parse(config);
  writeFileSync(path, `${JSON.stringify(checked, null, 2)}\n`, { mode: 0o600 });
}
