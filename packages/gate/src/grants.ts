import type { Statement } from '@agent-ledger/core';
import { DEFAULT_CONFIG, DEFAULT_GRANT_TIER, resolveConfig, type GateConfig, type GateOptions } from './options.js';
import type { AuthorityEvent } from './types.js';

/** A grant as the gate holds it: the five-field key, the window, the effect, and its provenance on the authority stream. */
export interface GrantRecord {
  readonly grantId: string;
  readonly agentId: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  /** Unix ms; the window is [notBefore, expiresAt). */
  readonly notBefore: number;
  /** Unix ms; moved by `grant.reauthorized`. */
  expiresAt: number;
  readonly effect: 'allow' | 'block';
  /** Highest risk tier an allow grant authorises (`grant.proposed.tier`). */
  readonly tier: number;
  readonly parentGrantId: string | null;
  /** Statement hash of the `grant.proposed` statement: what co-signatures and re-authorisations must name. */
  readonly proposalHash: string;
  /** Author principal of the proposal. */
  readonly proposedBy: string;
  /** Authority index of the proposal: the grant entry a decision cites. */
  readonly entry: number;
  /** Author principal of the counting co-signature (a different admin), or null. */
  cosignedBy: string | null;
  cosignEntry: number | null;
  revoked: boolean;
  revokedEntry: number | null;
  reauthorizedEntry: number | null;
}

/** Life of a grant: proposed (not yet co-signed: inactive), active, revoked (for good). */
export type GrantStatus = 'proposed' | 'active' | 'revoked';

/** Grants of one (agentId, actionType, targetResource): the index of near misses. */
interface TargetNode {
  /** Active allow grants under this node, whatever their window: near misses are counted against it. */
  activeAllow: number;
}

/** Grants of one exact five-field key, in insertion order, and the node of their (agentId, actionType, targetResource). */
interface ExactEntry {
  readonly grants: GrantRecord[];
  readonly node: TargetNode;
}

/**
 * The gate's state: the grant table and the admin keys that may write it.
 *
 * Grants are indexed by their exact five-field key in one flat map (one
 * lookup for a hit), and by (agentId, actionType, targetResource) in a
 * second map whose node counts the active allow grants: the index of near
 * misses (same agent, action and target; another recipient or scope). Keys
 * are length-prefixed ({@link exactKey}), so they are exact for any strings:
 * no separator can collide. Read the state through {@link decide} and
 * {@link grantStatus}; its members may change.
 */
export interface GateState {
  readonly config: GateConfig;
  readonly grants: Map<string, GrantRecord>;
  /** {@link exactKey} -> the grants of that key. */
  readonly byKey: Map<string, ExactEntry>;
  /** {@link targetKey} -> near-miss node. */
  readonly byTarget: Map<string, TargetNode>;
  /** Key id -> principal, for keys that hold the admin role now. */
  readonly adminKeys: Map<string, string>;
  /** One more than the highest authority index folded. */
  authoritySize: number;
  /** Grant statements that did not count (author not an admin key, wrong hash, same principal co-signing, unknown or duplicate grant). */
  ignored: number;
}

/** The empty state. `options` set channel thresholds and known hosts (see {@link GateOptions}). */
export function initialState(options?: GateOptions): GateState {
  return {
    config: options === undefined ? DEFAULT_CONFIG : resolveConfig(options),
    grants: new Map(),
    byKey: new Map(),
    byTarget: new Map(),
    adminKeys: new Map(),
    authoritySize: 0,
    ignored: 0,
  };
}

/**
 * The index key of (agentId, actionType, targetResource): each field but the
 * last prefixed by its length, so distinct triples never share a key.
 */
function targetKey(agentId: string, actionType: string, targetResource: string): string {
  return `${agentId.length}:${agentId}${actionType.length}:${actionType}${targetResource}`;
}

/** The index key of all five fields, length-prefixed like {@link targetKey}. */
function exactKey(agentId: string, actionType: string, targetResource: string, recipient: string, scope: string): string {
  return `${agentId.length}:${agentId}${actionType.length}:${actionType}${targetResource.length}:${targetResource}${recipient.length}:${recipient}${scope}`;
}

function targetNode(state: GateState, g: { agentId: string; actionType: string; targetResource: string }): TargetNode {
  const key = targetKey(g.agentId, g.actionType, g.targetResource);
  let node = state.byTarget.get(key);
  if (node === undefined) {
    node = { activeAllow: 0 };
    state.byTarget.set(key, node);
  }
  return node;
}

function insert(state: GateState, grant: GrantRecord): void {
  state.grants.set(grant.grantId, grant);
  const node = targetNode(state, grant);
  const key = exactKey(grant.agentId, grant.actionType, grant.targetResource, grant.recipient, grant.scope);
  const entry = state.byKey.get(key);
  if (entry === undefined) state.byKey.set(key, { grants: [grant], node });
  else entry.grants.push(grant);
  if (isActive(grant) && grant.effect === 'allow') node.activeAllow += 1;
}

/** True when the grant counts: co-signed by a second admin principal and not revoked. Its window is checked apart. */
export function isActive(grant: GrantRecord): boolean {
  return grant.cosignedBy !== null && !grant.revoked;
}

/** The status of a grant, or undefined when no counting `grant.proposed` named it. */
export function grantStatus(state: GateState, grantId: string): GrantStatus | undefined {
  const grant = state.grants.get(grantId);
  if (grant === undefined) return undefined;
  return grant.revoked ? 'revoked' : grant.cosignedBy !== null ? 'active' : 'proposed';
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function registerAdmin(state: GateState, key: Record<string, unknown>): void {
  const roles = key.roles;
  const keyId = str(key.keyId);
  if (keyId !== '' && Array.isArray(roles) && roles.includes('admin') && !state.adminKeys.has(keyId)) {
    state.adminKeys.set(keyId, str(key.principal));
  }
}

/** True when the statement's author key holds the admin role now and is registered to the author principal. */
function byAdmin(state: GateState, statement: Statement): boolean {
  const author = record(statement.author);
  const principal = str(author.principal);
  return principal !== '' && state.adminKeys.get(str(author.keyId)) === principal;
}

/**
 * Folds one authority-stream entry into the state, and returns the state.
 * For speed it MUTATES the state it is given and returns that same object;
 * callers that need the state before the event must not share it.
 *
 * - `genesis`, `key.registered`, `key.revoked` maintain the admin keys (the
 *   role a grant statement's author key must hold at its position).
 * - `grant.proposed` by an admin adds an inactive grant (first proposal of an
 *   id wins). It becomes active on a `grant.cosigned` by an admin whose
 *   principal differs from the proposer's and that names the proposal's exact
 *   statement hash (four eyes). `grant.revoked` by an admin ends it for good.
 *   `grant.reauthorized` by an admin naming the exact hash sets a new
 *   `expiresAt` (the latest re-authorisation is the window's end).
 * - Anything else is ignored. Statements that fail these checks change
 *   nothing and are counted in `ignored`.
 *
 * Signatures, key validity and freshness were verified before the entry
 * reached the gate (sequencer, authority follower, verifier); this fold
 * re-checks what decides whether a grant counts. Never throws.
 */
export function evolve(state: GateState, event: AuthorityEvent): GateState {
  const statement = event.statement;
  const index = event.index;
  if (Number.isSafeInteger(index) && index >= state.authoritySize) state.authoritySize = index + 1;
  const body = record(statement?.body);
  switch (statement?.type) {
    case 'genesis':
      if (Array.isArray(body.keys)) for (const key of body.keys) registerAdmin(state, record(key));
      return state;
    case 'key.registered':
      registerAdmin(state, body);
      return state;
    case 'key.revoked':
      state.adminKeys.delete(str(body.keyId));
      return state;
    case 'grant.proposed': {
      const grantId = str(body.grantId);
      if (!byAdmin(state, statement) || grantId === '' || state.grants.has(grantId)) break;
      insert(state, {
        grantId,
        agentId: str(body.agentId),
        actionType: str(body.actionType),
        targetResource: str(body.targetResource),
        recipient: str(body.recipient),
        scope: str(body.scope),
        notBefore: Date.parse(str(body.notBefore)),
        expiresAt: Date.parse(str(body.expiresAt)),
        effect: body.effect === 'block' ? 'block' : 'allow',
        tier: typeof body.tier === 'number' ? body.tier : 0,
        parentGrantId: typeof body.parentGrantId === 'string' ? body.parentGrantId : null,
        proposalHash: event.statementHash,
        proposedBy: statement.author.principal,
        entry: index,
        cosignedBy: null,
        cosignEntry: null,
        revoked: false,
        revokedEntry: null,
        reauthorizedEntry: null,
      });
      return state;
    }
    case 'grant.cosigned': {
      const grant = state.grants.get(str(body.grantId));
      if (grant === undefined || !byAdmin(state, statement) || body.grant !== grant.proposalHash || grant.revoked || grant.cosignedBy !== null) break;
      if (statement.author.principal === grant.proposedBy) break;
      grant.cosignedBy = statement.author.principal;
      grant.cosignEntry = index;
      if (grant.effect === 'allow') targetNode(state, grant).activeAllow += 1;
      return state;
    }
    case 'grant.revoked': {
      const grant = state.grants.get(str(body.grantId));
      if (grant === undefined || !byAdmin(state, statement) || grant.revoked) break;
      if (isActive(grant) && grant.effect === 'allow') targetNode(state, grant).activeAllow -= 1;
      grant.revoked = true;
      grant.revokedEntry = index;
      return state;
    }
    case 'grant.reauthorized': {
      const grant = state.grants.get(str(body.grantId));
      if (grant === undefined || !byAdmin(state, statement) || body.grant !== grant.proposalHash || grant.revoked) break;
      grant.expiresAt = Date.parse(str(body.expiresAt));
      grant.reauthorizedEntry = index;
      return state;
    }
    default:
      return state;
  }
  state.ignored += 1;
  return state;
}

/**
 * A grant given directly, without signed statements (a scenario file, a
 * test): it is taken as proposed and co-signed, hence active.
 */
export interface ScenarioGrant {
  readonly grantId: string;
  readonly agentId: string;
  readonly actionType: string;
  readonly targetResource: string;
  readonly recipient: string;
  readonly scope: string;
  /** ISO-8601 text or Unix ms. */
  readonly notBefore: string | number;
  /** ISO-8601 text or Unix ms. */
  readonly expiresAt: string | number;
  readonly effect: 'allow' | 'block';
  /** Highest tier the grant authorises; default {@link DEFAULT_GRANT_TIER}. */
  readonly tier?: number;
}

function instant(value: string | number): number {
  return typeof value === 'number' ? value : Date.parse(value);
}

/**
 * Loads a grant without signed statements (see {@link ScenarioGrant}) as if
 * its proposal were authority entry `entry`; mutates and returns `state`
 * like {@link evolve}. A grant id already present is ignored (counted in
 * `ignored`).
 */
export function grantFromScenario(state: GateState, grant: ScenarioGrant, entry: number): GateState {
  if (state.grants.has(grant.grantId)) {
    state.ignored += 1;
    return state;
  }
  insert(state, {
    grantId: grant.grantId,
    agentId: grant.agentId,
    actionType: grant.actionType,
    targetResource: grant.targetResource,
    recipient: grant.recipient,
    scope: grant.scope,
    notBefore: instant(grant.notBefore),
    expiresAt: instant(grant.expiresAt),
    effect: grant.effect,
    tier: grant.tier ?? DEFAULT_GRANT_TIER,
    parentGrantId: null,
    proposalHash: '',
    proposedBy: 'scenario:proposer',
    entry,
    cosignedBy: 'scenario:cosigner',
    cosignEntry: entry,
    revoked: false,
    revokedEntry: null,
    reauthorizedEntry: null,
  });
  return state;
}

/** What the grant table says about one operation at one instant. */
export interface GrantFindings {
  /** First exact, active, in-window block grant. */
  block: GrantRecord | null;
  /** First exact, active, in-window allow grant. */
  allow: GrantRecord | null;
  /** First exact, active allow grant outside its window. */
  expired: GrantRecord | null;
  /** An active allow grant for the same agent, action and target, with another recipient or scope. */
  nearMiss: boolean;
}

/**
 * Looks an operation up in the grant table. Only exact matches of all five
 * fields count; "first" means lowest authority index (insertion order).
 * Fills and returns `findings` (the caller's scratch) without allocating.
 */
export function findGrants(
  state: GateState,
  operation: { readonly agentId: unknown; readonly actionType: unknown; readonly targetResource: unknown; readonly recipient: unknown; readonly scope: unknown },
  now: number,
  findings: GrantFindings,
): GrantFindings {
  findings.block = null;
  findings.allow = null;
  findings.expired = null;
  findings.nearMiss = false;
  const { agentId, actionType, targetResource, recipient, scope } = operation;
  // Untrusted input: only strings can equal a grant's fields.
  if (typeof agentId !== 'string' || typeof actionType !== 'string' || typeof targetResource !== 'string') return findings;
  const entry = typeof recipient === 'string' && typeof scope === 'string' ? state.byKey.get(exactKey(agentId, actionType, targetResource, recipient, scope)) : undefined;
  if (entry === undefined) {
    const node = state.byTarget.get(targetKey(agentId, actionType, targetResource));
    findings.nearMiss = node !== undefined && node.activeAllow > 0;
    return findings;
  }
  let exactActiveAllow = 0;
  // A non-finite `now` is no instant: no allow grant is in its window, and every block grant is (fail closed).
  const known = Number.isFinite(now);
  const grants = entry.grants;
  for (let i = 0; i < grants.length; i++) {
    const grant = grants[i] as GrantRecord;
    if (!isActive(grant)) continue;
    const inWindow = grant.notBefore <= now && now < grant.expiresAt;
    if (grant.effect === 'block') {
      if ((inWindow || !known) && findings.block === null) findings.block = grant;
      continue;
    }
    exactActiveAllow += 1;
    if (inWindow) findings.allow ??= grant;
    else findings.expired ??= grant;
  }
  findings.nearMiss = entry.node.activeAllow > exactActiveAllow;
  return findings;
}
