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

/** Grants of one (agentId, actionType, targetResource), by recipient; each list is scanned for the scope. */
interface TargetNode {
  /** Active allow grants under this node, whatever their window: near misses are counted against it. */
  activeAllow: number;
  readonly byRecipient: Map<string, GrantRecord[]>;
}

/**
 * The gate's state: the grant table and the admin keys that may write it.
 *
 * Grants are indexed through nested maps, agentId -> actionType ->
 * targetResource -> recipient, and the last list is scanned for the scope:
 * exact for any strings (no separator to collide), no allocation per lookup,
 * and the proposal's strings keep the hashes the classifier already computed.
 * The node of (agentId, actionType, targetResource) is also the index of near
 * misses (same agent, action and target; another recipient or scope). Read
 * the state through {@link decide} and {@link grantStatus}; its members may
 * change.
 */
export interface GateState {
  readonly config: GateConfig;
  readonly grants: Map<string, GrantRecord>;
  readonly byTarget: Map<string, Map<string, Map<string, TargetNode>>>;
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
    byTarget: new Map(),
    adminKeys: new Map(),
    authoritySize: 0,
    ignored: 0,
  };
}

function child<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

function targetNode(state: GateState, g: { agentId: string; actionType: string; targetResource: string }): TargetNode {
  const byAction = child(state.byTarget, g.agentId, () => new Map<string, Map<string, TargetNode>>());
  const byResource = child(byAction, g.actionType, () => new Map<string, TargetNode>());
  return child(byResource, g.targetResource, () => ({ activeAllow: 0, byRecipient: new Map<string, GrantRecord[]>() }));
}

function insert(state: GateState, grant: GrantRecord): void {
  state.grants.set(grant.grantId, grant);
  const node = targetNode(state, grant);
  child(node.byRecipient, grant.recipient, () => [] as GrantRecord[]).push(grant);
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
  const { recipient, scope } = operation;
  const node = state.byTarget.get(operation.agentId as string)?.get(operation.actionType as string)?.get(operation.targetResource as string);
  if (node === undefined) return findings;
  const sameRecipient = node.byRecipient.get(recipient as string);
  let exactActiveAllow = 0;
  if (sameRecipient !== undefined) {
    // A non-finite `now` is no instant: no allow grant is in its window, and every block grant is (fail closed).
    const known = Number.isFinite(now);
    for (const grant of sameRecipient) {
      if (grant.scope !== scope || !isActive(grant)) continue;
      const inWindow = grant.notBefore <= now && now < grant.expiresAt;
      if (grant.effect === 'block') {
        if ((inWindow || !known) && findings.block === null) findings.block = grant;
        continue;
      }
      exactActiveAllow += 1;
      if (inWindow) findings.allow ??= grant;
      else findings.expired ??= grant;
    }
  }
  findings.nearMiss = node.activeAllow > exactActiveAllow;
  return findings;
}
