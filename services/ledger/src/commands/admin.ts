import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerError, OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { awaitStatement, submitEnvelope, type Submitted } from '@agent-ledger/client';
import {
  EnvelopeSchema,
  Principal,
  canonicalJson,
  nodeEd25519,
  parseStrictJson,
  signStatement,
  verifyEnvelopeSignatures,
  type Envelope,
  type Signer,
  type Statement,
} from '@agent-ledger/core';
import { Exit, exitStatusOf } from '../cli-error.js';
import { LedgerHome } from '../home.js';
import { readKeyFile } from '../keys.js';
import { apiFetch } from '../api-fetch.js';
import { checkApiUrl } from './http.js';
import { reportFailureJson, reportSuccess, type Report } from './json-output.js';

/** Options every admin command shares. */
export interface AdminOptions {
  readonly home?: string;
  /** Principal whose key in `.ledger/keys/` signs (default: the first `admin-*.key`). */
  readonly as?: string;
  /** A key file that signs instead of `--as`. */
  readonly signerKey?: string;
  /** Base URL of the API (default: the installation's). */
  readonly api?: string;
  readonly json?: boolean;
}

/** A bad command-line argument: typed, exit 2, one line. */
export function badArgument(message: string): OperationalError {
  return new OperationalError(OperationalCode.BAD_ARGUMENT, message);
}

/**
 * The key that signs: `--signer-key FILE`, else `--as PRINCIPAL` (its file
 * `keys/<kind>-<name>.key`), else the first `admin-*.key` of the
 * installation. The file must speak for the principal asked for.
 */
export function resolveSigner(options: AdminOptions, home: () => LedgerHome): Signer {
  if (options.signerKey !== undefined) {
    if (options.as !== undefined) throw badArgument('give --as PRINCIPAL or --signer-key FILE, not both');
    return readKeyFile(options.signerKey);
  }
  const keys = join(home().dir, 'keys');
  if (options.as !== undefined) {
    if (!Principal.safeParse(options.as).success) throw badArgument(`--as takes a principal such as admin:alice, not ${options.as}`);
    const path = join(keys, `${options.as.replace(':', '-')}.key`);
    if (!existsSync(path)) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `no key for ${options.as} in ${keys}`);
    const signer = readKeyFile(path);
    if (signer.principal !== options.as) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `the key file for ${options.as} speaks for ${signer.principal}`);
    return signer;
  }
  const first = readdirSync(keys).filter((f) => /^admin-.+\.key$/.test(f)).sort()[0];
  if (first === undefined) throw new OperationalError(OperationalCode.BAD_CONFIGURATION, `no admin key in ${keys}; pass --as PRINCIPAL or --signer-key FILE`);
  return readKeyFile(join(keys, first));
}

/** The API base URL: `--api`, else the installation's. */
export function apiBase(options: AdminOptions, home: () => LedgerHome): string {
  return checkApiUrl(options.api ?? home().apiUrl());
}

/** Opens the installation once, on first use (commands given `--api` and `--signer-key` need none). */
export function lazyHome(dir: string | undefined): () => LedgerHome {
  let home: LedgerHome | undefined;
  return () => (home ??= LedgerHome.open(dir));
}

/** Signs a statement with one key (the author's). */
export function signOne<T extends Statement['type']>(statement: Statement<T>, signer: Signer): Envelope<T> {
  return signStatement(statement, [signer], nodeEd25519);
}

/** Largest envelope file read: 32 signatures and a statement fit in far less. */
const MAX_ENVELOPE_BYTES = 1 << 20;

/** Reads a (partly) signed envelope file (untrusted): strict JSON, the envelope schema, every signature checked. */
export function readEnvelopeFile(path: string): Envelope {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw badArgument(`${path} is not a regular file`);
    size = stat.size;
  } catch (err) {
    if (err instanceof OperationalError) throw err;
    throw new OperationalError(OperationalCode.NOT_FOUND, `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  if (size > MAX_ENVELOPE_BYTES) throw badArgument(`${path} is larger than ${MAX_ENVELOPE_BYTES} bytes: not a signed statement`);
  const parsed = EnvelopeSchema.safeParse(parseStrictJson(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badArgument(`${path}: not a signed statement (${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'})`);
  }
  const envelope = parsed.data as unknown as Envelope;
  verifyEnvelopeSignatures(envelope, canonicalJson(envelope.statement), nodeEd25519);
  return envelope;
}

/** Adds one more signature over the same statement bytes; a key signs once. */
export function addSignature(envelope: Envelope, signer: Signer): Envelope {
  if (envelope.signatures.some((s) => s.keyId === signer.keyId)) throw badArgument(`key ${signer.keyId.slice(0, 16)} (${signer.principal}) already signed this statement`);
  const extra = signStatement(envelope.statement, [signer], nodeEd25519).signatures;
  return { statement: envelope.statement, signatures: [...envelope.signatures, ...extra] };
}

/** Writes a signed envelope for the next signer (owner-readable only: it is not secret, but it is not theirs to edit). */
export function writeEnvelopeFile(path: string, envelope: Envelope): void {
  writeFileSync(path, `${JSON.stringify(envelope, null, 2)}\n`, { mode: 0o600 });
}

/** Submits through the API: the statement hash and status, or the API's refusal / an operational error. */
export function submit(baseUrl: string, envelope: Envelope): Promise<Submitted> {
  return submitEnvelope(baseUrl, envelope, { fetch: apiFetch() });
}

/**
 * Waits until the sequencer has judged a submitted statement
 * (`GET /v1/statements/:id`, read as `reader`, at most 30 s: then CLIENT_TIMEOUT): its ledger
 * position when admitted; its rejection as a LedgerError with the code the
 * sequencer recorded.
 */
export async function awaitAdmitted(baseUrl: string, submitted: Submitted, reader: Signer): Promise<{ partition: number; index: number }> {
  const outcome = await awaitStatement(baseUrl, submitted.id, 30_000, { fetch: apiFetch(), signer: reader });
  if (outcome.status !== 'admitted') {
    const where = outcome.status === 'rejected' ? ` (intake.rejected at ${outcome.partition}/${outcome.index})` : '';
    throw new LedgerError(outcome.code, `${outcome.status} by the ${outcome.status === 'rejected' ? 'sequencer' : 'API'}: ${outcome.detail}${where}`);
  }
  return { partition: outcome.partition, index: outcome.index };
}

/** Who signed an envelope, for reports. */
export function signersOf(envelope: Envelope): string[] {
  return envelope.signatures.map((s) => s.keyId);
}

/**
 * Runs an admin command and reports its outcome the same way for all of
 * them. Success: exit 0, a line (or `{"ok":true,...}` with --json). The
 * API's refusal: exit 1 with its ReasonCode. A usage, configuration or
 * operational error: exit 2 with its OperationalCode. No stack traces.
 */
export async function runAdmin(json: boolean | undefined, body: () => Promise<{ human: string[]; report: Report }>): Promise<number> {
  try {
    const { human, report } = await body();
    reportSuccess(json, human, report);
    return Exit.ok;
  } catch (err) {
    if (!(err instanceof LedgerError) && !(err instanceof OperationalError)) throw err;
    if (json === true) return reportFailureJson(err);
    process.stderr.write(`ledger: ${err.code}: ${err.message}\n`);
    return exitStatusOf(err);
  }
}

/** `7d`, `12h`, `30m`, `90s` (untrusted CLI input) in ms. */
export function parseDuration(text: string, option: string): number {
  const m = /^([1-9]\d{0,5})(s|m|h|d)$/.exec(text);
  if (m === null) throw badArgument(`${option} takes a duration such as 90s, 30m, 12h or 7d, not ${text}`);
  return Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

/** An instant (untrusted CLI input) in the ledger's form `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export function parseInstant(text: string, option: string): string {
  const ms = Date.parse(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(ms)) throw badArgument(`${option} takes an ISO 8601 instant such as 2026-01-31T12:00:00Z, not ${text}`);
  return new Date(ms).toISOString();
}
