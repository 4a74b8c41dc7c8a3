import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { checkPublicKey } from './ed25519.js';
import { fromHex } from './encoding.js';
import { Role } from './roles.js';
import { REQUIRED_ROLE, type BodyOf, type Statement } from './statements.js';
import { AUTHOR_ROLES_V2, DEFAULT_RISK_THRESHOLD, isPrivileged, keyRegistrationSigners, type AuthorityRulesVersion } from './authority-rules.js';
import type { TrustRoot } from './trust-root.js';
import { statementHash } from './statement.js';
import { GrantRegistry, type GrantEffect } from './grants.js';

/** What the genesis statement fixes for the life of the ledger. */
export interface LedgerConfig {
  readonly origin: string;
  readonly eventPartitions: number;
  readonly freshnessMs: number;
  /** The authority rules the ledger follows (genesis `authorityRulesVersion`, absent = 1). */
  readonly authorityRulesVersion: AuthorityRulesVersion;
  /** Risk threshold of an agent whose registration names none (authority rules 2). */
  readonly riskThreshold: number;
}

/** One registered key and the authority indexes that bound its validity. */
export interface KeyRecord {
  readonly keyId: string;
  readonly principal: string;
  readonly roles: readonly Role[];
  /** The agent's risk threshold named by its registration (authority rules 2), if any. */
  readonly riskThreshold: number | undefined;
  /** Authority index of the entry that registered it. */
  readonly registeredAt: number;
  /** Authority index of the entry that revoked it, if any. */
  revokedAt: number | undefined;
}

/**
 * Registration-time key checks are costly (a scalar multiplication by L) and
 * a verifier re-folds the same keys often; their verdict depends only on the
 * public bytes, so it is remembered, up to a bound.
 */
const keyCheckCache = new Map<string, ReturnType<typeof checkPublicKey>>();

function checkKeyOnce(keyId: string): ReturnType<typeof checkPublicKey> {
  let verdict = keyCheckCache.get(keyId);
  if (verdict === undefined) {
    verdict = checkPublicKey(fromHex(keyId, 32));
    if (keyCheckCache.size >= 4096) keyCheckCache.clear();
    keyCheckCache.set(keyId, verdict);
  }
  return verdict;
}

function fail(code: ReasonCode, message: string): never {
  throw new LedgerError(code, message);
}

/**
 * The key registry: a fold over the authority stream (partition 0).
 *
 * "At authority index a" means the state after the first `a` authority
 * entries. A key is valid at a when it was registered by an entry with index
 * < a and not revoked by an entry with index < a.
 */
export class AuthorityState {
  readonly trustRoot: TrustRoot;
  #config: LedgerConfig | undefined;
  readonly #keys = new Map<string, KeyRecord>();
  /** Roles each principal holds through any of its keys, ever (an agent principal never becomes an admin or approver). */
  readonly #principalRoles = new Map<string, Set<Role>>();
  /** The grant table's write-time rules and paper trail. */
  readonly grants = new GrantRegistry();
  /** The root set in force: the pinned one until a `root.rotated` replaces it. */
  #roots: { readonly keys: readonly string[]; readonly threshold: number };
  /** Every key that was ever a root key (never registered as an ordinary key). */
  readonly #everRoot: Set<string>;
  #size = 0;
  /** Authority rules version, fixed by genesis; 1 until genesis is applied. */
  #rulesVersion: AuthorityRulesVersion = 1;

  constructor(trustRoot: TrustRoot) {
    this.trustRoot = trustRoot;
    this.#roots = { keys: [...trustRoot.rootKeys], threshold: trustRoot.threshold };
    this.#everRoot = new Set(trustRoot.rootKeys);
  }

  /** The root keys and threshold in force now. */
  get roots(): { readonly keys: readonly string[]; readonly threshold: number } {
    return this.#roots;
  }

  /** Ledger configuration, once genesis is applied. */
  get config(): LedgerConfig | undefined {
    return this.#config;
  }

  /** The authority rules version the ledger follows (1 until genesis). */
  get rulesVersion(): AuthorityRulesVersion {
    return this.#rulesVersion;
  }

  /** Number of authority entries applied. */
  get size(): number {
    return this.#size;
  }

  /** The record of a key, if it was ever registered. */
  key(keyId: string): KeyRecord | undefined {
    return this.#keys.get(keyId);
  }

  /** All keys ever registered. */
  keys(): IterableIterator<KeyRecord> {
    return this.#keys.values();
  }

  /**
   * Checks that the keys which signed `statement` may say it at authority
   * index `atIndex`. Throws a LedgerError with the reason code otherwise.
   * `signerKeyIds` are the keys whose signatures already verified.
   */
  authorize(statement: Statement, signerKeyIds: readonly string[], atIndex: number): void {
    const v2 = this.#rulesVersion >= 2;
    const required = REQUIRED_ROLE[statement.type];
    if (required === 'root') {
      if (statement.type === 'root.rotated') {
        this.#authorizeRotation(statement as Statement<'root.rotated'>, signerKeyIds, atIndex);
        return;
      }
      if (this.#size !== 0 || atIndex !== 0) fail(ReasonCode.INTEGRITY_FAILURE, 'genesis appears after the start of the authority stream');
      this.#authorizeGenesis(statement as Statement<'genesis'>, signerKeyIds);
      return;
    }
    if (this.#config === undefined) fail(ReasonCode.INTEGRITY_FAILURE, 'the authority stream does not start with genesis');
    // Rules 2: a key registration carries the signatures of its four eyes and proofs of possession (section 7.3).
    const cosigned = v2 && statement.type === 'key.registered';
    if (cosigned ? !signerKeyIds.includes(statement.author.keyId) : signerKeyIds.length !== 1 || signerKeyIds[0] !== statement.author.keyId) {
      fail(ReasonCode.INVALID_SIGNATURE, cosigned ? 'the author key did not sign the registration' : 'statement must carry exactly one signature, by its author key');
    }
    const record = this.#validKey(statement.author.keyId, atIndex);
    if (record.principal !== statement.author.principal) {
      fail(ReasonCode.KEY_ROLE, `key is registered to ${record.principal}, not ${statement.author.principal}`);
    }
    const roles = v2 ? (AUTHOR_ROLES_V2[statement.type] as readonly Role[]) : [required];
    if (!roles.some((role) => record.roles.includes(role))) fail(ReasonCode.KEY_ROLE, `${statement.type} needs the ${roles.join(' or ')} role`);
    if (statement.type === 'proposal.submitted') {
      const body = statement.body as BodyOf<'proposal.submitted'>;
      if (body.agentId !== statement.author.principal) fail(ReasonCode.KEY_ROLE, 'an agent proposes only for itself');
    }
    if (statement.type === 'execution.refused' && (statement.body as BodyOf<'execution.refused'>).agentId !== statement.author.principal) {
      fail(ReasonCode.KEY_ROLE, 'an agent records only its own refusals to execute');
    }
    if (v2 && statement.type === 'human.response') {
      // The assurance of an answer is the role of the key that signed it, never what its body claims.
      const assurance = record.roles.includes(Role.bridge) ? 'platform' : 'self_signed';
      if ((statement.body as BodyOf<'human.response'>).assurance !== assurance) {
        fail(ReasonCode.KEY_ROLE, `a response signed by a ${assurance === 'platform' ? 'bridge' : 'approver'} key has assurance ${assurance}`);
      }
    }
    if (v2 && statement.type === 'decision.recorded') {
      // Gate rules 1 (a decision naming no version) read the threshold from the proposal's channel, the agent's say: never on a rules-2 ledger.
      const named = (statement.body as { rulesVersion?: unknown }).rulesVersion ?? 1;
      if (typeof named !== 'number' || named < 2) fail(ReasonCode.POLICY_VIOLATION, `a decision on an authority-rules-2 ledger is made under gate rules ${String(named)}`);
    }
    if (cosigned) this.#authorizeRegistration(statement as Statement<'key.registered'>, signerKeyIds, atIndex);
  }

  /** The record of a key valid at `atIndex`, or the refusal (KEY_UNKNOWN, KEY_REVOKED). */
  #validKey(keyId: string, atIndex: number): KeyRecord {
    const record = this.#keys.get(keyId);
    if (record === undefined || record.registeredAt >= atIndex) {
      fail(ReasonCode.KEY_UNKNOWN, `key ${keyId.slice(0, 16)} is not registered at authority index ${atIndex}`);
    }
    if (record.revokedAt !== undefined && record.revokedAt < atIndex) {
      fail(ReasonCode.KEY_REVOKED, `key ${keyId.slice(0, 16)} was revoked at authority index ${record.revokedAt}`);
    }
    return record;
  }

  /** True when `principal` holds a key valid at `atIndex`. */
  #hasValidKey(principal: string, atIndex: number): boolean {
    for (const record of this.#keys.values()) {
      if (record.principal === principal && record.registeredAt < atIndex && (record.revokedAt === undefined || record.revokedAt >= atIndex)) return true;
    }
    return false;
  }

  /** Distinct admin principals, other than the subject, a privileged or additional key registration needs (rules 2). */
  get keyRegistrationSigners(): number {
    return keyRegistrationSigners(this.grants.policy.cosigners);
  }

  /**
   * Authority rules 2, `key.registered` (SPEC.md section 7.3). Every
   * signature is by the new key (proof of possession, always required), by a
   * key of the subject principal valid now (required when it has one: a new
   * key is added only by whoever holds the current one), or by a valid admin
   * key. A privileged registration (any role but agent) or a further key of
   * an existing principal needs admin signatures from at least
   * {@link keyRegistrationSigners} distinct principals other than the
   * subject: two keys of one principal count once.
   */
  #authorizeRegistration(statement: Statement<'key.registered'>, signerKeyIds: readonly string[], atIndex: number): void {
    const body = statement.body;
    const admins = new Set<string>();
    let possession = false;
    let current = false;
    for (const keyId of signerKeyIds) {
      if (keyId === body.keyId) {
        possession = true;
        continue;
      }
      const record = this.#validKey(keyId, atIndex);
      if (record.principal === body.principal) current = true;
      else if (record.roles.includes(Role.admin)) admins.add(record.principal);
      else fail(ReasonCode.KEY_ROLE, `${record.principal} signs a key registration without the admin role`);
    }
    if (!possession) fail(ReasonCode.INVALID_SIGNATURE, `the new key ${body.keyId.slice(0, 16)} does not sign its own registration (proof of possession)`);
    if (!current && this.#hasValidKey(body.principal, atIndex)) {
      fail(ReasonCode.INVALID_SIGNATURE, `a new key for ${body.principal} needs a signature by one of its current keys`);
    }
    const existing = this.#principalRoles.has(body.principal);
    if (isPrivileged(body.roles) || existing) {
      const needed = this.keyRegistrationSigners;
      if (admins.size < needed) {
        fail(
          ReasonCode.SEPARATION_OF_DUTIES,
          `${existing ? `a further key for ${body.principal}` : `the ${body.roles.join(', ')} role`} needs ${needed} distinct admins other than ${body.principal}; ${admins.size} signed`,
        );
      }
    }
  }

  /**
   * A rotation needs the current root threshold from the current root keys
   * and the new threshold from the new keys (a key in both sets counts in
   * both), no other signer, and an author among the signers.
   */
  #authorizeRotation(statement: Statement<'root.rotated'>, signerKeyIds: readonly string[], atIndex: number): void {
    if (this.#config === undefined || atIndex !== this.#size) fail(ReasonCode.INTEGRITY_FAILURE, 'root.rotated outside the authority stream after genesis');
    const body = statement.body;
    const current = new Set(this.#roots.keys);
    const next = new Set(body.rootKeys);
    if (next.size !== body.rootKeys.length) fail(ReasonCode.SCHEMA_INVALID, 'a new root key is listed twice');
    if (body.rootThreshold > next.size) fail(ReasonCode.POLICY_VIOLATION, `threshold ${body.rootThreshold} above ${next.size} new root keys`);
    for (const keyId of signerKeyIds) {
      if (!current.has(keyId) && !next.has(keyId)) fail(ReasonCode.KEY_UNKNOWN, `root.rotated signed by ${keyId.slice(0, 16)}, neither a current nor a new root key`);
    }
    if (!signerKeyIds.includes(statement.author.keyId)) fail(ReasonCode.INVALID_SIGNATURE, 'the author key did not sign the rotation');
    const old = signerKeyIds.filter((k) => current.has(k)).length;
    const fresh = signerKeyIds.filter((k) => next.has(k)).length;
    if (old < this.#roots.threshold) fail(ReasonCode.INVALID_SIGNATURE, `rotation carries ${old} current root signatures, ${this.#roots.threshold} needed`);
    if (fresh < body.rootThreshold) fail(ReasonCode.INVALID_SIGNATURE, `rotation carries ${fresh} new root signatures, ${body.rootThreshold} needed`);
  }

  #authorizeGenesis(statement: Statement<'genesis'>, signerKeyIds: readonly string[]): void {
    const root = this.trustRoot;
    const rootSet = new Set(root.rootKeys);
    for (const keyId of signerKeyIds) {
      if (!rootSet.has(keyId)) fail(ReasonCode.KEY_UNKNOWN, `genesis signed by ${keyId.slice(0, 16)}, not a trust-root key`);
    }
    if (signerKeyIds.length < root.threshold) {
      fail(ReasonCode.INVALID_SIGNATURE, `genesis carries ${signerKeyIds.length} root signatures, ${root.threshold} needed`);
    }
    const body = statement.body;
    const sameRoots =
      body.rootKeys.length === root.rootKeys.length && [...body.rootKeys].sort().join() === [...root.rootKeys].sort().join();
    if (!sameRoots || body.rootThreshold !== root.threshold || body.origin !== root.origin) {
      fail(ReasonCode.INTEGRITY_FAILURE, 'genesis does not name the pinned trust root');
    }
  }

  /**
   * Applies an authorized authority statement at authority index `index`
   * (which must be the next one), sequenced at `sequencedAt` (Unix ms).
   * Refuses, changing nothing, what the registry and grant rules forbid.
   * Returns what a grant statement did, else null.
   */
  apply(statement: Statement, index: number, sequencedAt: number): GrantEffect | null {
    if (index !== this.#size) fail(ReasonCode.INTEGRITY_FAILURE, `authority index ${index} applied out of order`);
    let effect: GrantEffect | null = null;
    switch (statement.type) {
      case 'genesis': {
        const body = statement.body as BodyOf<'genesis'>;
        const rulesVersion = body.authorityRulesVersion ?? 1;
        if (rulesVersion < 2 && body.riskThreshold !== undefined) fail(ReasonCode.POLICY_VIOLATION, 'authority rules 1 know no risk threshold');
        this.#rulesVersion = rulesVersion;
        this.grants.authorityRulesVersion = rulesVersion;
        for (const key of body.keys) this.#register(key, index);
        this.#config = {
          origin: body.origin,
          eventPartitions: body.eventPartitions,
          freshnessMs: body.freshnessMs,
          authorityRulesVersion: rulesVersion,
          riskThreshold: body.riskThreshold ?? DEFAULT_RISK_THRESHOLD,
        };
        if (body.grantPolicy !== undefined) this.grants.policy = body.grantPolicy;
        break;
      }
      case 'key.registered':
        this.#register(statement.body as BodyOf<'key.registered'>, index);
        break;
      case 'root.rotated':
        this.#rotate(statement.body as BodyOf<'root.rotated'>, index);
        break;
      case 'grant.proposed':
      case 'grant.cosigned':
      case 'grant.reauthorized':
      case 'grant.revoked':
        effect = this.grants.apply(statement, statementHash(statement), index, sequencedAt);
        break;
      case 'key.revoked': {
        const body = statement.body as BodyOf<'key.revoked'>;
        const record = this.#keys.get(body.keyId);
        if (record === undefined) fail(ReasonCode.KEY_UNKNOWN, 'revocation of a key that was never registered');
        if (record.revokedAt !== undefined) fail(ReasonCode.KEY_REVOKED, 'key is already revoked');
        record.revokedAt = index;
        break;
      }
      default:
        break;
    }
    this.#size += 1;
    return effect;
  }

  /**
   * Runs the registry and grant rules {@link apply} would run for an
   * authorized statement at the next index, at time `now`, without applying
   * it, and throws the refusals that no later authority entry can lift: the
   * API refuses those at once with the ReasonCode the sequencer would record.
   * A statement that names what this view has not seen yet (a grant, a
   * write or a key submitted a moment earlier, still being sequenced) passes:
   * the sequencer judges it in log order.
   */
  check(statement: Statement, now: number): void {
    try {
      this.#check(statement, now);
    } catch (err) {
      if (!(err instanceof LedgerError)) throw err;
      const unseen =
        err.code === ReasonCode.GRANT_MISSING ||
        err.code === ReasonCode.KEY_UNKNOWN ||
        (err.code === ReasonCode.GRANT_MISMATCH && statement.type === 'grant.cosigned' && !this.grants.knowsWrite((statement.body as BodyOf<'grant.cosigned'>).grant));
      if (!unseen) throw err;
    }
  }

  #check(statement: Statement, now: number): void {
    switch (statement.type) {
      case 'key.registered':
        this.#register(statement.body as BodyOf<'key.registered'>, this.#size, false);
        return;
      case 'root.rotated':
        this.#rotate(statement.body as BodyOf<'root.rotated'>, this.#size, false);
        return;
      case 'key.revoked': {
        const record = this.#keys.get((statement.body as BodyOf<'key.revoked'>).keyId);
        if (record === undefined) fail(ReasonCode.KEY_UNKNOWN, 'revocation of a key that was never registered');
        if (record.revokedAt !== undefined) fail(ReasonCode.KEY_REVOKED, 'key is already revoked');
        return;
      }
      case 'grant.proposed':
      case 'grant.cosigned':
      case 'grant.reauthorized':
      case 'grant.revoked':
        this.grants.check(statement, statementHash(statement), this.#size, now);
        return;
      default:
        return;
    }
  }

  /** Applies a rotation: checks everything first, then revokes, registers and replaces the root set. */
  #rotate(body: BodyOf<'root.rotated'>, index: number, commit = true): void {
    for (const keyId of body.rootKeys) {
      if (this.#keys.has(keyId)) fail(ReasonCode.POLICY_VIOLATION, `new root key ${keyId.slice(0, 16)} is a registered key`);
      const check = checkKeyOnce(keyId);
      if (!check.ok) fail(ReasonCode.WEAK_KEY, `root key ${keyId.slice(0, 16)} refused: ${check.reason}`);
    }
    const revoked = new Set<string>();
    for (const keyId of body.revokeKeys) {
      const record = this.#keys.get(keyId);
      if (record === undefined) fail(ReasonCode.KEY_UNKNOWN, 'revocation of a key that was never registered');
      if (record.revokedAt !== undefined || revoked.has(keyId)) fail(ReasonCode.KEY_REVOKED, 'key is already revoked');
      revoked.add(keyId);
    }
    const fresh = new Set<string>();
    const byPrincipal = new Map<string, Role[]>();
    for (const key of body.registerKeys) {
      if (fresh.has(key.keyId) || body.rootKeys.includes(key.keyId)) fail(ReasonCode.POLICY_VIOLATION, `key ${key.keyId.slice(0, 16)} listed twice`);
      fresh.add(key.keyId);
      this.#register(key, index, false);
      byPrincipal.set(key.principal, [...(byPrincipal.get(key.principal) ?? []), ...key.roles]);
    }
    // The keys of one principal together obey separation of duties too.
    for (const [principal, roles] of byPrincipal) this.#register({ keyId: '', principal, roles: [...new Set(roles)] }, index, false, true);
    if (!commit) return;
    for (const keyId of revoked) (this.#keys.get(keyId) as KeyRecord).revokedAt = index;
    for (const key of body.registerKeys) this.#register(key, index);
    for (const keyId of body.rootKeys) this.#everRoot.add(keyId);
    this.#roots = { keys: [...body.rootKeys], threshold: body.rootThreshold };
  }

  #register(key: BodyOf<'key.registered'>, index: number, commit = true, rolesOnly = false): void {
    if (!rolesOnly) {
      const check = checkKeyOnce(key.keyId);
      if (!check.ok) fail(ReasonCode.WEAK_KEY, `key ${key.keyId.slice(0, 16)} refused: ${check.reason}`);
      if (this.#keys.has(key.keyId) || this.#everRoot.has(key.keyId)) {
        fail(ReasonCode.POLICY_VIOLATION, `key ${key.keyId.slice(0, 16)} is already registered`);
      }
    }
    const roles = new Set(key.roles);
    if (roles.size !== key.roles.length) fail(ReasonCode.SCHEMA_INVALID, 'a role is listed twice');
    const v2 = this.#rulesVersion >= 2;
    for (const role of roles) {
      // Each rules version knows its own roles: `service` is of version 1, gate, timer and bridge of version 2.
      if (v2 ? role === Role.service : role === Role.gate || role === Role.timer || role === Role.bridge) {
        fail(ReasonCode.POLICY_VIOLATION, `authority rules ${this.#rulesVersion} have no ${role} role`);
      }
      // The auditor role is of version 3.
      if (role === Role.auditor && this.#rulesVersion < 3) fail(ReasonCode.POLICY_VIOLATION, `authority rules ${this.#rulesVersion} have no auditor role`);
    }
    // Separation of duties holds per principal, whatever its keys: an agent
    // never holds the admin or approver role, nor an admin or approver the
    // agent role; under rules 2 an agent holds the agent role only, and a
    // bridge (whose answers are platform assurance) is neither an approver nor an admin.
    const held = new Set([...(this.#principalRoles.get(key.principal) ?? []), ...roles]);
    const agentKind = key.principal.startsWith('agent:');
    if ((held.has(Role.agent) || agentKind) && (held.has(Role.admin) || held.has(Role.approver))) {
      fail(ReasonCode.SEPARATION_OF_DUTIES, `${key.principal} cannot hold the agent role and the admin or approver role`);
    }
    if (v2 && (held.has(Role.agent) || agentKind) && [...held].some((role) => role !== Role.agent)) {
      fail(ReasonCode.SEPARATION_OF_DUTIES, `${key.principal} is an agent: it holds the agent role only`);
    }
    // An auditor only reads: it holds no role that writes or answers.
    if (held.has(Role.auditor) && held.size > 1) fail(ReasonCode.SEPARATION_OF_DUTIES, `${key.principal} is an auditor: it holds the auditor role only`);
    if (v2 && held.has(Role.bridge) && (held.has(Role.approver) || held.has(Role.admin))) {
      fail(ReasonCode.SEPARATION_OF_DUTIES, `${key.principal} is a bridge: it is neither an approver nor an admin`);
    }
    if (key.riskThreshold !== undefined && (!v2 || key.roles.length !== 1 || key.roles[0] !== Role.agent)) {
      fail(ReasonCode.POLICY_VIOLATION, v2 ? 'only an agent key names a risk threshold' : 'authority rules 1 know no risk threshold');
    }
    if (!commit) return;
    this.#principalRoles.set(key.principal, held);
    this.#keys.set(key.keyId, { keyId: key.keyId, principal: key.principal, roles: [...key.roles], riskThreshold: key.riskThreshold, registeredAt: index, revokedAt: undefined });
  }
}
