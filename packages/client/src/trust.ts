import { writeFileSync, renameSync } from 'node:fs';
import { z } from 'zod';
import { LedgerError, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import {
  checkCheckpointSigners,
  checkpointVerifiers,
  EntrySchema,
  EnvelopeSchema,
  KeyId,
  Principal,
  ROLES,
  TrustRootSchema,
  canonicalJson,
  entryHash,
  envelopeHash,
  fromBase64,
  fromHex,
  headerOf,
  nodeEd25519,
  openNote,
  parseCheckpoint,
  parseStrictJson,
  partitionOrigin,
  statementHash,
  verifyEnvelopeSignatures,
  verifyInclusion,
  type BodyOf,
  type Checkpoint,
  type Ed25519Backend,
  type Entry,
  type Envelope,
  type NoteVerifier,
  type AuthorityRulesVersion,
  type Role,
  type TrustRoot,
} from '@agent-ledger/core';
import { getPublic } from './errors.js';
import { readSmall } from './files.js';

/** Largest trust document read (1000 keys of about 200 bytes each, plus a genesis). */
export const MAX_TRUST_BYTES = 1 << 20;

/** Roles whose keys a client pins: the services that sign what an executor checks, and the approvers. */
export const PINNED_ROLES: readonly Role[] = ['sequencer', 'gate', 'timer', 'service', 'approver', 'bridge'];

/**
 * The proof that a key registered after genesis is on the log: its
 * registering authority entry, the RFC 9162 inclusion proof and the first
 * signed checkpoint of the authority stream that covers it.
 */
const RegistrationProofSchema = z.strictObject({
  entry: EntrySchema,
  inclusionProof: z.array(z.string().regex(/^[A-Za-z0-9+/]{43}=$/)).max(64),
  checkpoint: z.string().min(1).max(65536),
});

const PinnedKeySchema = z.strictObject({
  keyId: KeyId,
  principal: Principal,
  roles: z.array(z.enum(ROLES)).min(1).max(8),
  /** Authority index of the entry that registered the key: it is valid from authority index `registeredAt + 1`. */
  registeredAt: z.number().int().min(0),
  /** Authority index of the entry that revoked it: valid up to and including that authority index. */
  revokedAt: z.number().int().min(0).nullable(),
  /** For a key registered after genesis, the proof of its registration; null for a key the genesis registers. */
  registration: RegistrationProofSchema.nullable(),
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

/** The proof of a key's registration (see {@link PinnedKey}). */
export type RegistrationProof = z.infer<typeof RegistrationProofSchema>;

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
  readonly authorityRulesVersion: AuthorityRulesVersion;
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
  checkRegistrations(trust, options.ed25519 ?? nodeEd25519);
  return trust;
}

/**
 * Every key registered after genesis comes with the proof that the log
 * holds its registration: the authority entry at `registeredAt` (intact,
 * its signatures valid) registers exactly this key, principal and roles (a
 * `key.registered`, or a `root.rotated` naming it in `registerKeys`), and
 * its inclusion proof leads to an authority checkpoint signed by a
 * sequencer key already established (a genesis one, or one proven earlier
 * in registration order). So the API cannot invent a gate or sequencer key:
 * only a registration the sequencer wrote into the log counts.
 */
function checkRegistrations(trust: Trust, ed25519: Ed25519Backend): void {
  const origin = trust.genesis.statement.body.origin;
  const sequencers: NoteVerifier[] = [];
  const addSequencer = (key: PinnedKey): void => {
    // Registrations are proven by authority (partition 0) checkpoints.
    if (key.roles.includes('sequencer')) sequencers.push(...checkpointVerifiers(origin, 0, [fromHex(key.keyId, 32)], (pk, message, sig) => ed25519.verify(pk, message, sig)));
  };
  const ordered = [...trust.keys].sort((a, b) => a.registeredAt - b.registeredAt);
  for (const key of ordered) {
    const what = `trust document: key ${key.keyId.slice(0, 16)}`;
    if (key.registeredAt === 0) {
      if (key.registration !== null) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${what} is registered by the genesis and carries a registration proof`);
      addSequencer(key);
      continue;
    }
    const proof = key.registration;
    if (proof === null) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${what} is registered at authority index ${key.registeredAt} without a proof`);
    const entry = proof.entry as unknown as Entry;
    if (entry.partition !== 0 || entry.index !== key.registeredAt) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${what}: the proof is of entry ${entry.partition}/${entry.index}, not 0/${key.registeredAt}`);
    const statement = entry.envelope.statement;
    const canonical = canonicalJson(statement);
    verifyEnvelopeSignatures(entry.envelope, canonical, ed25519);
    if (entryHash(headerOf(entry, envelopeHash(entry.envelope, canonical))) !== entry.hash) throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${what}: the registration entry's hash does not match its content`);
    const granted = statement.type === 'key.registered'
      ? [statement.body as BodyOf<'key.registered'>]
      : statement.type === 'root.rotated' ? (statement.body as BodyOf<'root.rotated'>).registerKeys : [];
    const grant = granted.find((g) => g.keyId === key.keyId);
    if (grant === undefined || grant.principal !== key.principal || [...grant.roles].sort().join() !== [...key.roles].sort().join()) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${what}: entry 0/${key.registeredAt} does not register it as listed`);
    }
    let checkpoint: Checkpoint;
    try {
      const opened = openNote(proof.checkpoint, sequencers);
      checkCheckpointSigners(opened, origin, 0, trust.genesis.statement.body.authorityRulesVersion ?? 1);
      checkpoint = parseCheckpoint(opened.text);
    } catch (err) {
      if (err instanceof LedgerError) throw new LedgerError(ReasonCode.CHECKPOINT_INVALID, `${what}: the registration's checkpoint: ${err.message}`);
      throw err;
    }
    if (checkpoint.origin !== partitionOrigin(origin, 0) || checkpoint.size <= entry.index) {
      throw new LedgerError(ReasonCode.CHECKPOINT_INVALID, `${what}: the registration's checkpoint is not an authority checkpoint covering it`);
    }
    if (!verifyInclusion(fromHex(entry.hash, 32), entry.index, checkpoint.size, proof.inclusionProof.map((p) => fromBase64(p, 32)), checkpoint.rootHash)) {
      throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${what}: the registration's inclusion proof does not lead to the checkpoint root`);
    }
    addSequencer(key);
  }
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

/**
 * The trust document of a ledger from its genesis envelope and its key
 * registry after `authoritySize` authority entries (what `GET /v1/trust`
 * serves): the trust root the genesis names, the genesis, and every key
 * holding one of {@link PINNED_ROLES}, ordered by registration, each key
 * registered after genesis with the proof of its registration (`proofOf`,
 * by authority index: see {@link parseTrust}).
 */
export function buildTrust(
  genesis: Envelope,
  registry: Iterable<{ readonly keyId: string; readonly principal: string; readonly roles: readonly Role[]; readonly registeredAt: number; readonly revokedAt: number | undefined }>,
  authoritySize: number,
  proofOf: (registeredAt: number) => RegistrationProof | null = () => null,
): Trust {
  if (genesis.statement.type !== 'genesis') throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'not a genesis envelope');
  const body = genesis.statement.body as BodyOf<'genesis'>;
  const keys: PinnedKey[] = [];
  for (const key of registry) {
    if (!key.roles.some((role) => PINNED_ROLES.includes(role))) continue;
    keys.push({ keyId: key.keyId, principal: key.principal, roles: [...key.roles], registeredAt: key.registeredAt, revokedAt: key.revokedAt ?? null, registration: key.registeredAt === 0 ? null : proofOf(key.registeredAt) });
  }
  keys.sort((a, b) => a.registeredAt - b.registeredAt || (a.keyId < b.keyId ? -1 : 1));
  return { v: 1, trustRoot: { v: 1, origin: body.origin, rootKeys: [...body.rootKeys], threshold: body.rootThreshold }, genesis: genesis as Envelope<'genesis'>, authoritySize, keys };
}

/**
 * The trust document a genesis alone gives (authority size 1: the keys the
 * genesis registers). What `ledger init` pins in `.ledger/trust.json`, so an
 * agent can check receipts before it ever reaches the API; keys registered
 * later arrive by {@link fetchTrust} with `pinned` (a refresh).
 */
export function trustFromGenesis(genesis: Envelope): Trust {
  if (genesis.statement.type !== 'genesis') throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'not a genesis envelope');
  const body = genesis.statement.body as BodyOf<'genesis'>;
  return parseTrust(JSON.parse(JSON.stringify(buildTrust(genesis, body.keys.map((k) => ({ ...k, registeredAt: 0, revokedAt: undefined })), 1))));
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
  const body = await getPublic(baseUrl, '/v1/trust', options);
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
