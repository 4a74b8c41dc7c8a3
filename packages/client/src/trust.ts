import { writeFileSync, renameSync } from 'node:fs';
import { z } from 'zod';
import { LedgerError, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import {
  EnvelopeSchema,
  KeyId,
  Principal,
  ROLES,
  TrustRootSchema,
  canonicalJson,
  nodeEd25519,
  parseStrictJson,
  statementHash,
  verifyEnvelopeSignatures,
  type BodyOf,
  type Ed25519Backend,
  type Envelope,
  type Role,
  type TrustRoot,
} from '@agent-ledger/core';
import { apiError, readJson, transportError } from './errors.js';
import { readSmall } from './files.js';

/** Largest trust document read (1000 keys of about 200 bytes each, plus a genesis). */
export const MAX_TRUST_BYTES = 1 << 20;

/** Roles whose keys a client pins: the services that sign what an executor checks, and the approvers. */
export const PINNED_ROLES: readonly Role[] = ['sequencer', 'gate', 'timer', 'service', 'approver', 'bridge'];

const PinnedKeySchema = z.strictObject({
  keyId: KeyId,
  principal: Principal,
  roles: z.array(z.enum(ROLES)).min(1).max(8),
  /** Authority index of the entry that registered the key: it is valid from authority index `registeredAt + 1`. */
  registeredAt: z.number().int().min(0),
  /** Authority index of the entry that revoked it: valid up to and including that authority index. */
  revokedAt: z.number().int().min(0).nullable(),
});

/**
 * The trust document (`GET /v1/trust`, and the pinned trust file): the
 * installation's trust root in the trust-root file format, its genesis
 * statement, and the registry of the keys a client checks receipts with, as
 * of `authoritySize` authority entries.
 */
const TrustSchema = z.strictObject({
  v: z.literal(1),
  trustRoot: TrustRootSchema,
  genesis: EnvelopeSchema,
  authoritySize: z.number().int().min(1),
  keys: z.array(PinnedKeySchema).max(10_000),
});

/** A key of the pinned registry and the authority indexes where it is valid. */
export type PinnedKey = z.infer<typeof PinnedKeySchema>;

/** A checked trust document: see {@link fetchTrust}, {@link loadTrust}. */
export interface Trust {
  readonly v: 1;
  readonly trustRoot: TrustRoot;
  readonly genesis: Envelope<'genesis'>;
  readonly authoritySize: number;
  readonly keys: readonly PinnedKey[];
}

/** What a trust document's genesis fixes for the ledger's whole life. */
export interface LedgerSettings {
  readonly origin: string;
  readonly eventPartitions: number;
  readonly freshnessMs: number;
  readonly authorityRulesVersion: 1 | 2;
}

/** The ledger settings a trust document's genesis names. */
export function ledgerSettings(trust: Trust): LedgerSettings {
  const body = trust.genesis.statement.body;
  return { origin: body.origin, eventPartitions: body.eventPartitions, freshnessMs: body.freshnessMs, authorityRulesVersion: body.authorityRulesVersion ?? 1 };
}

/** True when the key was valid at authority index `at` (SPEC.md section 7: registered by an entry before `at`, not revoked by one before `at`). */
export function keyValidAt(key: PinnedKey, at: number): boolean {
  return key.registeredAt < at && (key.revokedAt === null || key.revokedAt >= at);
}

/**
 * Checks a trust document (untrusted: it came over the network or from a
 * file). The genesis must be signed by at least the threshold of the trust
 * root's keys and name the same origin, roots and threshold; the keys it
 * registers must be in the registry, at index 0 with the same principal and
 * roles, and nothing else may claim index 0; every later key lies inside the
 * document's authority size.
 * @throws LedgerError SCHEMA_INVALID (not a trust document), INTEGRITY_FAILURE (its parts disagree), INVALID_SIGNATURE.
 */
export function parseTrust(value: unknown, options: { readonly ed25519?: Ed25519Backend } = {}): Trust {
  const parsed = TrustSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `trust document: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  const trust = parsed.data as unknown as Trust;
  const root = trust.trustRoot;
  if (root.threshold > root.rootKeys.length || new Set(root.rootKeys).size !== root.rootKeys.length) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'trust root: threshold exceeds the distinct root keys');
  }
  const statement = trust.genesis.statement;
  if (statement.type !== 'genesis') throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'trust document: genesis is not a genesis statement');
  const body = statement.body as BodyOf<'genesis'>;
  // SPEC.md section 7: the genesis names the pinned origin, roots and threshold, and carries a threshold of root signatures.
  if (body.origin !== root.origin || body.rootThreshold !== root.threshold || [...body.rootKeys].sort().join() !== [...root.rootKeys].sort().join()) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'trust document: the genesis names another origin, root set or threshold than the trust root');
  }
  const signers = verifyEnvelopeSignatures(trust.genesis, canonicalJson(statement), options.ed25519 ?? nodeEd25519);
  const rootSigners = new Set(signers.filter((k) => root.rootKeys.includes(k)));
  if (rootSigners.size !== signers.length) throw new LedgerError(ReasonCode.KEY_UNKNOWN, 'trust document: the genesis is signed by a key outside the trust root');
  if (rootSigners.size < root.threshold) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `trust document: the genesis carries ${rootSigners.size} root signatures, fewer than ${root.threshold}`);
  const seen = new Set<string>();
  for (const key of trust.keys) {
    if (seen.has(key.keyId)) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `trust document: key ${key.keyId.slice(0, 16)} is listed twice`);
    seen.add(key.keyId);
    if (key.registeredAt >= trust.authoritySize || (key.revokedAt !== null && (key.revokedAt <= key.registeredAt || key.revokedAt >= trust.authoritySize))) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `trust document: key ${key.keyId.slice(0, 16)} has a validity range outside the authority size ${trust.authoritySize}`);
    }
  }
  const fromGenesis = new Map(body.keys.filter((k) => k.roles.some((r) => PINNED_ROLES.includes(r))).map((k) => [k.keyId, k]));
  for (const key of trust.keys) {
    if (key.registeredAt !== 0) continue;
    const registered = fromGenesis.get(key.keyId);
    if (registered === undefined || registered.principal !== key.principal || [...registered.roles].sort().join() !== [...key.roles].sort().join()) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `trust document: key ${key.keyId.slice(0, 16)} is not registered by the genesis as listed`);
    }
    fromGenesis.delete(key.keyId);
  }
  if (fromGenesis.size > 0) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, 'trust document: a key the genesis registers is missing');
  return trust;
}

/**
 * Checks that a newer trust document extends a pinned one: same trust root
 * and genesis, no smaller authority size, every pinned key still there with
 * the same principal, roles and registration, a revocation only added, never
 * removed or moved. What the API cannot do through a refresh is rewrite what
 * the client pinned.
 * @throws LedgerError INCONSISTENT_HISTORY when it does not.
 */
export function checkTrustExtends(pinned: Trust, next: Trust): void {
  const fail = (why: string): never => {
    throw new LedgerError(ReasonCode.INCONSISTENT_HISTORY, `the ledger's trust document does not extend the pinned one: ${why}`);
  };
  if (canonicalJson(pinned.trustRoot) !== canonicalJson(next.trustRoot)) fail('another trust root');
  if (statementHash(pinned.genesis.statement) !== statementHash(next.genesis.statement)) fail('another genesis');
  if (next.authoritySize < pinned.authoritySize) fail(`authority size ${next.authoritySize} < ${pinned.authoritySize}`);
  const now = new Map(next.keys.map((k) => [k.keyId, k]));
  for (const key of pinned.keys) {
    const later = now.get(key.keyId);
    if (later === undefined) fail(`key ${key.keyId.slice(0, 16)} disappeared`);
    else if (later.principal !== key.principal || later.registeredAt !== key.registeredAt || [...later.roles].sort().join() !== [...key.roles].sort().join()) fail(`key ${key.keyId.slice(0, 16)} changed`);
    else if (key.revokedAt !== null && later.revokedAt !== key.revokedAt) fail(`the revocation of key ${key.keyId.slice(0, 16)} changed`);
    else if (key.revokedAt === null && later.revokedAt !== null && later.revokedAt < pinned.authoritySize) fail(`key ${key.keyId.slice(0, 16)} is revoked inside the pinned range`);
  }
  for (const key of next.keys) {
    if (!pinned.keys.some((k) => k.keyId === key.keyId) && key.registeredAt < pinned.authoritySize) fail(`key ${key.keyId.slice(0, 16)} appears inside the pinned range`);
  }
}

/** Options of {@link fetchTrust}. */
export interface FetchTrustOptions {
  /**
   * The trust root the operator handed out of band (the trust-root file
   * `ledger init` writes, or its parsed content): the API's must be the same,
   * else INTEGRITY_FAILURE. Without it the first fetch is trust on first use.
   */
  readonly trustRoot?: TrustRoot;
  /** A trust document pinned earlier: the new one must extend it ({@link checkTrustExtends}). */
  readonly pinned?: Trust;
  readonly fetch?: typeof fetch;
  readonly requestTimeoutMs?: number;
  readonly ed25519?: Ed25519Backend;
}

/**
 * Fetches `GET /v1/trust` and checks it ({@link parseTrust}): the trust root,
 * genesis and key registry a client pins, so that no client reads another
 * role's key file. Pin the answer with {@link pinTrust}.
 * @throws LedgerError on a document that does not check; OperationalError when the API cannot be reached or fails.
 */
export async function fetchTrust(baseUrl: string, options: FetchTrustOptions = {}): Promise<Trust> {
  const what = 'GET /v1/trust';
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${baseUrl}/v1/trust`, { signal: AbortSignal.timeout(options.requestTimeoutMs ?? 30_000) });
  } catch (err) {
    throw transportError(err, what);
  }
  const body = await readJson(response, what);
  if (response.status !== 200) throw apiError(response.status, body, what);
  const trust = parseTrust(body, options);
  if (options.trustRoot !== undefined && canonicalJson(options.trustRoot) !== canonicalJson(trust.trustRoot)) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${baseUrl} serves another trust root than the one given`);
  }
  if (options.pinned !== undefined) checkTrustExtends(options.pinned, trust);
  return trust;
}

/** The text of a trust file. */
export function formatTrust(trust: Trust): string {
  return `${JSON.stringify(trust, null, 2)}\n`;
}

/** Writes a trust document to a file (atomically: a reader never sees half of it). */
export function pinTrust(file: string, trust: Trust): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, formatTrust(trust), { mode: 0o644 });
  renameSync(temporary, file);
}

/**
 * Reads a pinned trust file (untrusted input: checked as on fetch).
 * @throws LedgerError SCHEMA_INVALID and the rest of {@link parseTrust}; OperationalError NOT_FOUND, BAD_ARGUMENT.
 */
export function loadTrust(file: string, options: { readonly ed25519?: Ed25519Backend } = {}): Trust {
  let value: unknown;
  try {
    value = parseStrictJson(readSmall(file, 'trust file', MAX_TRUST_BYTES));
  } catch (err) {
    if (err instanceof OperationalError) throw err;
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${file}: not JSON`, { cause: err });
  }
  return parseTrust(value, options);
}
