import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { BodyOf, Statement } from './statements.js';
import { constraintsProblem, narrows } from './grant-constraints.js';

/**
 * The write-time rules of the grant table (SPEC.md section 7.2), one fold used
 * by the sequencer (which refuses a violating statement as `intake.rejected`),
 * the gate (whose table decides), the projector and verify-chain (which fails
 * at the first violating index). A statement that breaks a rule throws a
 * LedgerError and changes nothing.
 */

const DAY = 86_400_000;

/** The grant policy fixed by genesis (`grantPolicy`), per risk tier 0-4. */
export interface GrantPolicy {
  /** Co-signatures from distinct admin principals, other than the writer and the grantee, each tier needs. */
  readonly cosigners: readonly number[];
  /** Longest life, in ms from sequencing (or a later notBefore), of an allow grant of each tier and of each re-authorisation. */
  readonly maxLifetimeMs: readonly number[];
  /** How long after a grant proposal or re-authorisation is sequenced it may still be co-signed. */
  readonly cosignWindowMs: number;
}

/** The policy when genesis names none. */
export const DEFAULT_GRANT_POLICY: GrantPolicy = Object.freeze({
  cosigners: Object.freeze([1, 1, 1, 1, 2]),
  maxLifetimeMs: Object.freeze([365 * DAY, 180 * DAY, 90 * DAY, 30 * DAY, 7 * DAY]),
  cosignWindowMs: DAY,
});

/**
 * True when `pattern` covers `value`. Resources, scopes and recipients are
 * hierarchical: `a/b/*` (or `invoice:*`) covers every value below the prefix
 * (`a/b/c`, `a/b/c/*`), `*` covers everything, anything else covers only
 * itself.
 */
export function covers(pattern: string, value: string): boolean {
  if (pattern === value || pattern === '*') return true;
  if (!isPattern(pattern)) return false;
  const prefix = pattern.slice(0, -1);
  return value.length > prefix.length && value.startsWith(prefix);
}

/** True when `value` is a subtree pattern: `*`, or ends with `/*` or `:*`. */
export function isPattern(value: string): boolean {
  if (value === '*') return true;
  if (!value.endsWith('*') || value.length < 2) return false;
  const separator = value.charCodeAt(value.length - 2);
  return separator === 47 /* / */ || separator === 58 /* : */;
}

/** Every subtree pattern that covers a concrete `value`, most specific first (`a/b/*`, `a/*`, `*`). */
export function coveringPatterns(value: string): string[] {
  const out: string[] = [];
  for (let i = value.length - 2; i >= 0; i--) {
    const c = value.charCodeAt(i);
    if (c === 47 || c === 58) out.push(`${value.slice(0, i + 1)}*`);
  }
  if (value !== '*') out.push('*');
  return out;
}

/** A write that waits for co-signatures: a grant proposal or a re-authorisation. */
export interface PendingWrite {
  readonly kind: 'proposal' | 'reauthorization';
  readonly hash: string;
  readonly grantId: string;
  readonly by: string;
  readonly index: number;
  /** Sequencer time, Unix ms, after which a co-signature no longer counts. */
  readonly deadline: number;
  /** For a re-authorisation: the new end of the window. */
  readonly expiresAt: number;
  readonly cosigners: string[];
  readonly cosignEntries: number[];
  /** Authority index at which it took effect, or null while it waits. */
  effectiveAt: number | null;
}

/** A grant and its paper trail, as the rules fold it. */
export interface GrantEntry {
  readonly grantId: string;
  readonly body: BodyOf<'grant.proposed'>;
  readonly notBefore: number;
  /** Current end of the window (moved by a re-authorisation once co-signed). */
  expiresAt: number;
  readonly proposal: PendingWrite;
  readonly reauthorizations: PendingWrite[];
  /** Authority index of the revocation that ended it (its own or an ancestor's), or null. */
  revokedAt: number | null;
  /** The grant whose revocation ended it: itself, or the ancestor that was revoked. */
  revokedVia: string | null;
  readonly children: string[];
}

/** What a grant statement did, for the folds that index grants their own way. */
export type GrantEffect =
  | { readonly kind: 'proposed'; readonly grant: GrantEntry }
  | { readonly kind: 'cosigned'; readonly grant: GrantEntry; readonly write: PendingWrite; readonly effective: boolean }
  | { readonly kind: 'reauthorization'; readonly grant: GrantEntry; readonly write: PendingWrite }
  | { readonly kind: 'revoked'; readonly grant: GrantEntry; readonly revoked: readonly GrantEntry[] };

function fail(code: ReasonCode, message: string): never {
  throw new LedgerError(code, message);
}

/** True when the grant is in force: its proposal took effect and nothing revoked it. Its window is checked apart. */
export function grantInForce(grant: GrantEntry): boolean {
  return grant.proposal.effectiveAt !== null && grant.revokedAt === null;
}

/**
 * The grant registry: a fold over the grant statements of the authority
 * stream. The author's key, role and principal were checked before
 * ({@link AuthorityState.authorize}); this fold checks what the grant rules
 * add. Call {@link apply} with each grant statement in ledger order.
 */
export class GrantRegistry {
  policy: GrantPolicy = DEFAULT_GRANT_POLICY;
  /** Authority rules version of the ledger (genesis); argument constraints exist from version 2. */
  authorityRulesVersion = 1;
  readonly #grants = new Map<string, GrantEntry>();
  /** Pending or effective writes by statement hash: what a co-signature names. */
  readonly #writes = new Map<string, { grant: GrantEntry; write: PendingWrite }>();

  /** A grant by id. */
  grant(grantId: string): GrantEntry | undefined {
    return this.#grants.get(grantId);
  }

  /** True when `hash` is the statement hash of a grant proposal or re-authorisation on the ledger. */
  knowsWrite(hash: string): boolean {
    return this.#writes.has(hash);
  }

  /** Every grant, in ledger order. */
  grants(): IterableIterator<GrantEntry> {
    return this.#grants.values();
  }

  /**
   * Checks and applies one grant statement (`grant.proposed`, `grant.cosigned`,
   * `grant.reauthorized`, `grant.revoked`) authored by `statement.author`,
   * with statement hash `hash`, at authority index `index` and sequencer time
   * `sequencedAt` (Unix ms). Throws a LedgerError, changing nothing, when a
   * rule forbids it.
   */
  apply(statement: Statement, hash: string, index: number, sequencedAt: number): GrantEffect {
    return this.#run(statement, hash, index, sequencedAt, true) as GrantEffect;
  }

  /**
   * Runs every check of {@link apply} without applying anything: the API
   * refuses a statement the sequencer would refuse before it reaches the log.
   */
  check(statement: Statement, hash: string, index: number, sequencedAt: number): void {
    this.#run(statement, hash, index, sequencedAt, false);
  }

  #run(statement: Statement, hash: string, index: number, sequencedAt: number, commit: boolean): GrantEffect | null {
    if (!Number.isFinite(sequencedAt)) fail(ReasonCode.INTEGRITY_FAILURE, 'grant statement without a sequencing time');
    const by = statement.author.principal;
    switch (statement.type) {
      case 'grant.proposed':
        return this.#propose(statement.body as BodyOf<'grant.proposed'>, by, hash, index, sequencedAt, commit);
      case 'grant.cosigned':
        return this.#cosign(statement.body as BodyOf<'grant.cosigned'>, by, index, sequencedAt, commit);
      case 'grant.reauthorized':
        return this.#reauthorize(statement.body as BodyOf<'grant.reauthorized'>, by, hash, index, sequencedAt, commit);
      case 'grant.revoked':
        return this.#revoke(statement.body as BodyOf<'grant.revoked'>, index, commit);
      default:
        return fail(ReasonCode.INTEGRITY_FAILURE, `${statement.type} is not a grant statement`);
    }
  }

  #lifetime(tier: number, effect: string, from: number, until: number, what: string): void {
    const max = this.policy.maxLifetimeMs[tier] ?? 0;
    if (effect === 'allow' && until - from > max) {
      fail(ReasonCode.POLICY_VIOLATION, `${what} lives ${Math.ceil((until - from) / 1000)} s; tier ${tier} allows at most ${max / 1000} s`);
    }
  }

  #propose(body: BodyOf<'grant.proposed'>, by: string, hash: string, index: number, at: number, commit: boolean): GrantEffect | null {
    if (this.#grants.has(body.grantId)) fail(ReasonCode.POLICY_VIOLATION, `grant ${body.grantId} already exists`);
    if (by === body.agentId) fail(ReasonCode.SEPARATION_OF_DUTIES, `${by} proposes a grant for itself`);
    for (const field of ['actionType', 'targetResource', 'recipient', 'scope'] as const) {
      const value = body[field];
      if (value.includes('*') && !isPattern(value)) fail(ReasonCode.SCHEMA_INVALID, `${field}: '*' only as a whole value or after a final '/' or ':'`);
    }
    if (isPattern(body.actionType)) fail(ReasonCode.SCHEMA_INVALID, 'actionType is never a pattern');
    if (body.constraints !== undefined) {
      if (this.authorityRulesVersion < 2) fail(ReasonCode.POLICY_VIOLATION, 'authority rules 1 know no argument constraints');
      if (body.effect !== 'allow') fail(ReasonCode.POLICY_VIOLATION, 'argument constraints narrow allow grants only');
      const problem = constraintsProblem(body.constraints);
      if (problem !== null) fail(ReasonCode.SCHEMA_INVALID, problem);
    }
    const notBefore = Date.parse(body.notBefore);
    const expiresAt = Date.parse(body.expiresAt);
    if (expiresAt <= notBefore) fail(ReasonCode.POLICY_VIOLATION, 'the grant window is empty (expiresAt <= notBefore)');
    this.#lifetime(body.tier, body.effect, Math.max(notBefore, at), expiresAt, `grant ${body.grantId}`);
    let parent: GrantEntry | undefined;
    if (body.parentGrantId !== null) {
      parent = this.#grants.get(body.parentGrantId);
      if (parent === undefined) fail(ReasonCode.GRANT_MISSING, `parent grant ${body.parentGrantId} does not exist`);
      if (!grantInForce(parent)) fail(ReasonCode.GRANT_MISSING, `parent grant ${body.parentGrantId} is not in force`);
      checkAttenuation(parent, body, notBefore, expiresAt);
    }
    if (!commit) return null;
    const proposal: PendingWrite = {
      kind: 'proposal', hash, grantId: body.grantId, by, index, deadline: at + this.policy.cosignWindowMs, expiresAt, cosigners: [], cosignEntries: [], effectiveAt: null,
    };
    const grant: GrantEntry = {
      grantId: body.grantId, body, notBefore, expiresAt, proposal, reauthorizations: [], revokedAt: null, revokedVia: null, children: [],
    };
    this.#grants.set(body.grantId, grant);
    this.#writes.set(hash, { grant, write: proposal });
    parent?.children.push(body.grantId);
    return { kind: 'proposed', grant };
  }

  #cosign(body: BodyOf<'grant.cosigned'>, by: string, index: number, at: number, commit: boolean): GrantEffect | null {
    const grant = this.#grants.get(body.grantId);
    if (grant === undefined) fail(ReasonCode.GRANT_MISSING, `no grant ${body.grantId}`);
    const named = this.#writes.get(body.grant);
    if (named === undefined || named.grant !== grant) {
      fail(ReasonCode.GRANT_MISMATCH, `co-signature names other bytes than any write of grant ${body.grantId}`);
    }
    const write = named.write;
    if (grant.revokedAt !== null) fail(ReasonCode.POLICY_VIOLATION, `grant ${body.grantId} was revoked at authority index ${grant.revokedAt}`);
    if (write.effectiveAt !== null) fail(ReasonCode.POLICY_VIOLATION, `this ${write.kind} of grant ${body.grantId} took effect at authority index ${write.effectiveAt}`);
    if (by === write.by) fail(ReasonCode.SEPARATION_OF_DUTIES, `${by} co-signs its own ${write.kind}`);
    if (by === grant.body.agentId) fail(ReasonCode.SEPARATION_OF_DUTIES, `${by} co-signs a grant for itself`);
    if (write.cosigners.includes(by)) fail(ReasonCode.SEPARATION_OF_DUTIES, `${by} already co-signed this ${write.kind} (one principal counts once, whatever its keys)`);
    if (at > write.deadline) {
      fail(ReasonCode.STALE_APPROVAL, `co-signature sequenced after the ${write.kind}'s deadline ${new Date(write.deadline).toISOString()}`);
    }
    if (!commit) return null;
    write.cosigners.push(by);
    write.cosignEntries.push(index);
    const needed = this.policy.cosigners[grant.body.tier] ?? 1;
    const effective = write.cosigners.length >= needed;
    if (effective) {
      write.effectiveAt = index;
      if (write.kind === 'reauthorization') grant.expiresAt = write.expiresAt;
    }
    return { kind: 'cosigned', grant, write, effective };
  }

  #reauthorize(body: BodyOf<'grant.reauthorized'>, by: string, hash: string, index: number, at: number, commit: boolean): GrantEffect | null {
    const grant = this.#grants.get(body.grantId);
    if (grant === undefined) fail(ReasonCode.GRANT_MISSING, `no grant ${body.grantId}`);
    if (body.grant !== grant.proposal.hash) fail(ReasonCode.GRANT_MISMATCH, `re-authorisation names other bytes than grant ${body.grantId}'s proposal`);
    if (!grantInForce(grant)) fail(ReasonCode.POLICY_VIOLATION, `grant ${body.grantId} is not in force`);
    if (by === grant.body.agentId) fail(ReasonCode.SEPARATION_OF_DUTIES, `${by} re-authorises a grant for itself`);
    const expiresAt = Date.parse(body.expiresAt);
    if (expiresAt <= Math.max(grant.notBefore, at)) fail(ReasonCode.POLICY_VIOLATION, 're-authorisation ends before it starts');
    this.#lifetime(grant.body.tier, grant.body.effect, Math.max(grant.notBefore, at), expiresAt, `re-authorisation of ${body.grantId}`);
    const parent = grant.body.parentGrantId === null ? undefined : this.#grants.get(grant.body.parentGrantId);
    if (parent !== undefined && expiresAt > parent.expiresAt) {
      fail(ReasonCode.DELEGATION_WIDENS, `re-authorisation outlives parent grant ${parent.grantId}`);
    }
    if (!commit) return null;
    const write: PendingWrite = {
      kind: 'reauthorization', hash, grantId: body.grantId, by, index, deadline: at + this.policy.cosignWindowMs, expiresAt, cosigners: [], cosignEntries: [], effectiveAt: null,
    };
    grant.reauthorizations.push(write);
    this.#writes.set(hash, { grant, write });
    return { kind: 'reauthorization', grant, write };
  }

  #revoke(body: BodyOf<'grant.revoked'>, index: number, commit: boolean): GrantEffect | null {
    const grant = this.#grants.get(body.grantId);
    if (grant === undefined) fail(ReasonCode.GRANT_MISSING, `no grant ${body.grantId}`);
    if (grant.revokedAt !== null) fail(ReasonCode.POLICY_VIOLATION, `grant ${body.grantId} was already revoked at authority index ${grant.revokedAt}`);
    if (!commit) return null;
    const revoked: GrantEntry[] = [];
    const stack = [grant];
    while (stack.length > 0) {
      const next = stack.pop() as GrantEntry;
      if (next.revokedAt !== null) continue;
      next.revokedAt = index;
      next.revokedVia = grant.grantId;
      revoked.push(next);
      for (const id of next.children) stack.push(this.#grants.get(id) as GrantEntry);
    }
    return { kind: 'revoked', grant, revoked };
  }
}

/** Refuses a derived grant that is not a subset of its parent (DELEGATION_WIDENS). */
function checkAttenuation(parent: GrantEntry, child: BodyOf<'grant.proposed'>, notBefore: number, expiresAt: number): void {
  const p = parent.body;
  const widen = (what: string): never => fail(ReasonCode.DELEGATION_WIDENS, `derived grant ${child.grantId} widens ${what} of parent ${p.grantId}`);
  if (p.effect !== 'allow' || child.effect !== 'allow') fail(ReasonCode.POLICY_VIOLATION, 'only allow grants are delegated');
  if (child.agentId !== p.agentId) widen('the agent');
  if (child.actionType !== p.actionType) widen('the action type');
  if (!covers(p.targetResource, child.targetResource)) widen('the target resource');
  if (!covers(p.recipient, child.recipient)) widen('the recipient');
  if (!covers(p.scope, child.scope)) widen('the scope');
  if (child.tier > p.tier) widen('the tier');
  if (!narrows(p.constraints, child.constraints)) widen('the argument constraints');
  if (notBefore < parent.notBefore || expiresAt > parent.expiresAt) widen('the validity window');
}
