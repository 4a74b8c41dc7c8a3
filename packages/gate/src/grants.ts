import { coveringPatterns, covers, DEFAULT_RISK_THRESHOLD, GrantRegistry, isPattern, satisfiesAll, type ArgumentConstraint, type GrantEffect, type Statement } from '@agent-ledger/core';
import { DEFAULT_CONFIG, DEFAULT_GRANT_TIER, resolveConfig, type GateConfig, type GateOptions } from './options.js';
import { agentView, recipientView, scopeClauses, type AgentView, type KnownViews, type RecipientView } from './proposal-views.js';
import { recordable } from './recordable.js';
import type { AuthorityEvent } from './types.js';

/** A grant as the gate holds it: the five-field key, the window, the effect, and its provenance on the authority stream. */
export interface GrantRecord extends FieldViews {
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
  /** Argument constraints a call must meet (signed in the grant), or null for none. */
  readonly constraints: readonly ArgumentConstraint[] | null;
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

/**
 * The classifier's views of a grant's recipient and scope (pure functions of
 * the two strings), computed when the grant is folded and kept in the grant
 * record itself (a call that finds the grant reads no other object for them).
 */
interface FieldViews {
  /** The classifier's view of `recipient` (proposal-views.ts, RecipientView). */
  readonly recipientNormal: string;
  readonly recipientMask: number;
  readonly recipientClauses: number;
  readonly recipientSelfWord: boolean;
  /** The classifier's clause bits of `scope`. */
  readonly scopeClauses: number;
  /** The reason a decision that this grant allows gives: `grant.allowed:<grantId>`. */
  readonly allowedReason: string;
}

function fieldViews(grantId: string, recipient: string, scope: string): FieldViews {
  const view = recipientView(recipient);
  return {
    recipientNormal: view.normal,
    recipientMask: view.mask,
    recipientClauses: view.clauses,
    recipientSelfWord: view.selfWord,
    scopeClauses: scopeClauses(scope),
    allowedReason: `grant.allowed:${recordable(grantId)}`,
  };
}

/**
 * A grant record with every member written in one object literal (not
 * spread in): the members a lookup reads then sit in the record itself,
 * not in a separate property store (one memory access fewer per grant).
 */
function grantRecord(fields: Omit<GrantRecord, keyof FieldViews>, views: FieldViews): GrantRecord {
  return {
    grantId: fields.grantId,
    agentId: fields.agentId,
    actionType: fields.actionType,
    targetResource: fields.targetResource,
    recipient: fields.recipient,
    scope: fields.scope,
    notBefore: fields.notBefore,
    expiresAt: fields.expiresAt,
    effect: fields.effect,
    tier: fields.tier,
    parentGrantId: fields.parentGrantId,
    constraints: fields.constraints,
    proposalHash: fields.proposalHash,
    proposedBy: fields.proposedBy,
    entry: fields.entry,
    cosignedBy: fields.cosignedBy,
    cosignEntry: fields.cosignEntry,
    revoked: fields.revoked,
    revokedEntry: fields.revokedEntry,
    reauthorizedEntry: fields.reauthorizedEntry,
    recipientNormal: views.recipientNormal,
    recipientMask: views.recipientMask,
    recipientClauses: views.recipientClauses,
    recipientSelfWord: views.recipientSelfWord,
    scopeClauses: views.scopeClauses,
    allowedReason: views.allowedReason,
  };
}

/** Life of a grant: proposed (not yet co-signed: inactive), active, revoked (for good). */
export type GrantStatus = 'proposed' | 'active' | 'revoked';

/**
 * Grants of one (agentId, actionType, targetResource), by recipient; each
 * list is scanned for the scope. Nodes of one resource are chained
 * (`next`); a resource that many agents hold grants on is indexed by agent
 * on its first node (`byAgent`, chains of `agentNext`).
 */
export interface TargetNode {
  readonly agentId: string;
  readonly actionType: string;
  readonly targetResource: string;
  /** The classifier's view of `agentId` (shared by the nodes of one agent; computed at fold). */
  readonly agent: AgentView;
  /** The next node of the same resource (another agent or action type), while the resource is not indexed by agent. */
  next: TargetNode | null;
  /** The next node of the same resource and agent (another action type), once it is. */
  agentNext: TargetNode | null;
  /** On the first node of a resource: nodes of the resource by agent (chains of `agentNext`), once its chain grew long; else null. */
  byAgent: Map<string, TargetNode> | null;
  /** On the first node of a resource: length of its chain (`next`). */
  chain: number;
  /** Active allow grants under this node, whatever their window: near misses are counted against it. */
  activeAllow: number;
  /**
   * The node's grant while it has exactly one (most nodes), else null: an
   * exact lookup then reads the grant itself instead of a map and a list.
   */
  only: GrantRecord | null;
  readonly byRecipient: Map<string, GrantRecord[]>;
  /**
   * The classifier's packed facts of `targetResource` (proposal-views.ts,
   * TargetFacts), or -1 until decide() first finds the node: a cache of a
   * pure function of the node's key, kept here so that a proposal with grants
   * costs one look-up of its target, not two (decide.ts).
   */
  targetFacts: number;
}

/**
 * The gate's state: the grant table and the admin keys that may write it.
 *
 * Grants are indexed by targetResource (one map probe: the most varied of
 * the five fields), then the few (agentId, actionType) nodes of that
 * resource are compared field by field (by agent through a map when many
 * agents hold grants on it), then by recipient, and the last list is
 * scanned for the scope: exact for any strings (no separator to collide),
 * no key built and no allocation per lookup, and the proposal's strings
 * keep the hashes computed here for the classifier's memos (decide() looks
 * the grants up first). Fewer objects are read per lookup than through a
 * map per agent and per action type (the table is memory-bound at 100k grants).
 * The node of (agentId, actionType, targetResource) is also the index of near
 * misses (same agent, action and target; another recipient or scope). Read
 * the state through {@link decide} and {@link grantStatus}; its members may
 * change.
 */
export interface GateState {
  readonly config: GateConfig;
  readonly grants: Map<string, GrantRecord>;
  /** First node of each target resource (TargetNode). */
  readonly byResource: Map<string, TargetNode>;
  /** The classifier's view of each agent that has a node (shared by its nodes). */
  readonly agentViews: Map<string, AgentView>;
  /** Key id -> principal, for keys that hold the admin role now. */
  readonly adminKeys: Map<string, string>;
  /** One more than the highest authority index folded. */
  authoritySize: number;
  /** Grant statements that did not count (author not an admin key, or refused by the grant rules of ledger-core). */
  ignored: number;
  /** The write-time grant rules (four eyes, k of n, lifetimes, delegation, revocation), shared with the sequencer and verify-chain. */
  readonly registry: GrantRegistry;
  /** Grants whose resource, recipient or scope is a subtree pattern (`a/b/*`): lookups consider covering patterns only when there are any. */
  patternGrants: number;
  /**
   * Risk threshold of each agent named by its most recent key registration
   * naming one (authority rules 2, SPEC.md section 7.3): what gate rules 2
   * compare a call's risk with, never the proposal's channel.
   */
  readonly riskThresholds: Map<string, number>;
  /** Threshold of an agent whose registrations name none: genesis `riskThreshold`, else DEFAULT_RISK_THRESHOLD. */
  defaultRiskThreshold: number;
}

/** The empty state. `options` set channel thresholds and known hosts (see {@link GateOptions}). */
export function initialState(options?: GateOptions): GateState {
  return {
    config: options === undefined ? DEFAULT_CONFIG : resolveConfig(options),
    grants: new Map(),
    byResource: new Map(),
    agentViews: new Map(),
    adminKeys: new Map(),
    authoritySize: 0,
    ignored: 0,
    registry: new GrantRegistry(),
    patternGrants: 0,
    riskThresholds: new Map(),
    defaultRiskThreshold: DEFAULT_RISK_THRESHOLD,
  };
}

/** The risk threshold of an agent: its registration's, else the genesis default (SPEC.md section 7.3). */
export function riskThresholdOf(state: GateState, agentId: string): number {
  return state.riskThresholds.get(agentId) ?? state.defaultRiskThreshold;
}

function child<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** Chain length past which a resource's nodes are indexed by agent. */
const CHAIN_LIMIT = 8;

/** The node of (agentId, actionType, targetResource), if any. */
function findNode(state: GateState, agentId: unknown, actionType: unknown, resource: unknown): TargetNode | undefined {
  const first = state.byResource.get(resource as string);
  if (first === undefined) return undefined;
  if (first.byAgent === null) {
    for (let node: TargetNode | null = first; node !== null; node = node.next) if (node.agentId === agentId && node.actionType === actionType) return node;
    return undefined;
  }
  for (let node = first.byAgent.get(agentId as string) ?? null; node !== null; node = node.agentNext) if (node.actionType === actionType) return node;
  return undefined;
}

function targetNode(state: GateState, g: { agentId: string; actionType: string; targetResource: string }): TargetNode {
  const found = findNode(state, g.agentId, g.actionType, g.targetResource);
  if (found !== undefined) return found;
  const agent = child(state.agentViews, g.agentId, () => agentView(g.agentId));
  const node: TargetNode = {
    agentId: g.agentId,
    actionType: g.actionType,
    targetResource: g.targetResource,
    agent,
    next: null,
    agentNext: null,
    byAgent: null,
    chain: 1,
    activeAllow: 0,
    only: null,
    byRecipient: new Map<string, GrantRecord[]>(),
    targetFacts: -1,
  };
  const first = state.byResource.get(g.targetResource);
  if (first === undefined) {
    state.byResource.set(g.targetResource, node);
    return node;
  }
  if (first.byAgent !== null) {
    node.agentNext = first.byAgent.get(g.agentId) ?? null;
    first.byAgent.set(g.agentId, node);
    return node;
  }
  node.next = first.next;
  first.next = node;
  first.chain += 1;
  if (first.chain > CHAIN_LIMIT) {
    const byAgent = new Map<string, TargetNode>();
    for (let n: TargetNode | null = first; n !== null; n = n.next) {
      n.agentNext = byAgent.get(n.agentId) ?? null;
      byAgent.set(n.agentId, n);
    }
    first.byAgent = byAgent;
  }
  return node;
}

function insert(state: GateState, grant: GrantRecord): void {
  state.grants.set(grant.grantId, grant);
  if (isPattern(grant.targetResource) || isPattern(grant.recipient) || isPattern(grant.scope)) state.patternGrants += 1;
  const node = targetNode(state, grant);
  node.only = node.byRecipient.size === 0 ? grant : null;
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
  const threshold = key.riskThreshold;
  if (typeof threshold === 'number' && Number.isFinite(threshold)) state.riskThresholds.set(str(key.principal), threshold);
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
 * - `genesis`, `key.registered`, `key.revoked`, `root.rotated` maintain the admin keys (the
 *   role a grant statement's author key must hold at its position) and the
 *   agents' risk thresholds; genesis sets the grant policy and the default
 *   risk threshold.
 * - Grant statements by an admin key go through the grant rules of
 *   ledger-core ({@link GrantRegistry}, SPEC.md section 7.2), the same fold the
 *   sequencer and verify-chain run: a `grant.proposed` adds an inactive grant;
 *   it becomes active once k distinct admin principals other than the
 *   proposer and the grantee co-sign its exact statement hash before the
 *   co-signing deadline (k per tier); a `grant.reauthorized` moves the end of
 *   the window once co-signed the same way; `grant.revoked` ends the grant
 *   and every grant derived from it, for good.
 * - Anything else is ignored. Statements the rules refuse change nothing and
 *   are counted in `ignored`.
 *
 * Signatures, key validity and freshness were verified before the entry
 * reached the gate (sequencer, authority follower, verifier). Never throws.
 */
export function evolve(state: GateState, event: AuthorityEvent): GateState {
  const statement = event.statement;
  const index = event.index;
  if (Number.isSafeInteger(index) && index >= state.authoritySize) state.authoritySize = index + 1;
  const body = record(statement?.body);
  switch (statement?.type) {
    case 'genesis': {
      if (Array.isArray(body.keys)) for (const key of body.keys) registerAdmin(state, record(key));
      const policy = body.grantPolicy as GrantRegistry['policy'] | undefined;
      if (policy !== undefined) state.registry.policy = policy;
      if (body.authorityRulesVersion === 2 || body.authorityRulesVersion === 3) state.registry.authorityRulesVersion = body.authorityRulesVersion;
      if (typeof body.riskThreshold === 'number' && Number.isFinite(body.riskThreshold)) state.defaultRiskThreshold = body.riskThreshold;
      return state;
    }
    case 'key.registered':
      registerAdmin(state, body);
      return state;
    case 'key.revoked':
      state.adminKeys.delete(str(body.keyId));
      return state;
    case 'root.rotated':
      if (Array.isArray(body.revokeKeys)) for (const keyId of body.revokeKeys) state.adminKeys.delete(str(keyId));
      if (Array.isArray(body.registerKeys)) for (const key of body.registerKeys) registerAdmin(state, record(key));
      return state;
    case 'grant.proposed':
    case 'grant.cosigned':
    case 'grant.reauthorized':
    case 'grant.revoked': {
      if (!byAdmin(state, statement)) break;
      let effect: GrantEffect;
      try {
        effect = state.registry.apply(statement, event.statementHash, index, event.sequencedAt);
      } catch {
        break;
      }
      follow(state, effect);
      return state;
    }
    default:
      return state;
  }
  state.ignored += 1;
  return state;
}

/** Mirrors what the grant rules decided into the gate's lookup index. */
function follow(state: GateState, effect: GrantEffect): void {
  const entry = effect.grant;
  switch (effect.kind) {
    case 'proposed': {
      const b = entry.body;
      insert(state, grantRecord({
        grantId: b.grantId,
        agentId: b.agentId,
        actionType: b.actionType,
        targetResource: b.targetResource,
        recipient: b.recipient,
        scope: b.scope,
        notBefore: entry.notBefore,
        expiresAt: entry.expiresAt,
        effect: b.effect,
        tier: b.tier,
        parentGrantId: b.parentGrantId,
        constraints: b.constraints ?? null,
        proposalHash: entry.proposal.hash,
        proposedBy: entry.proposal.by,
        entry: entry.proposal.index,
        cosignedBy: null,
        cosignEntry: null,
        revoked: false,
        revokedEntry: null,
        reauthorizedEntry: null,
      }, fieldViews(b.grantId, b.recipient, b.scope)));
      return;
    }
    case 'cosigned': {
      const grant = state.grants.get(entry.grantId);
      if (grant === undefined || !effect.effective) return;
      if (effect.write.kind === 'reauthorization') {
        grant.expiresAt = entry.expiresAt;
        grant.reauthorizedEntry = effect.write.effectiveAt;
        return;
      }
      grant.cosignedBy = effect.write.cosigners[effect.write.cosigners.length - 1] ?? null;
      grant.cosignEntry = effect.write.effectiveAt;
      if (grant.effect === 'allow') targetNode(state, grant).activeAllow += 1;
      return;
    }
    case 'revoked':
      for (const gone of effect.revoked) {
        const grant = state.grants.get(gone.grantId);
        if (grant === undefined || grant.revoked) continue;
        if (isActive(grant) && grant.effect === 'allow') targetNode(state, grant).activeAllow -= 1;
        grant.revoked = true;
        grant.revokedEntry = gone.revokedAt;
      }
      return;
    default:
      return;
  }
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
  insert(state, grantRecord({
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
    constraints: null,
    proposalHash: '',
    proposedBy: 'scenario:proposer',
    entry,
    cosignedBy: 'scenario:cosigner',
    cosignEntry: entry,
    revoked: false,
    revokedEntry: null,
    reauthorizedEntry: null,
  }, fieldViews(grant.grantId, grant.recipient, grant.scope)));
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
  /** First exact, active, in-window allow grant whose argument constraints the call does not meet. */
  argumentMismatch: GrantRecord | null;
}

/**
 * Looks an operation up in the grant table. A grant matches when its agent
 * and action equal the operation's and its resource, recipient and scope
 * each equal or cover (a subtree pattern such as `payments/vendors/*`) the
 * operation's; "first" means lowest authority index within one resource
 * node, the exact resource before covering patterns, most specific first.
 * Fills and returns `findings` (the caller's scratch) without allocating
 * when the table holds no patterns.
 */
export function findGrants(
  state: GateState,
  operation: { readonly agentId: unknown; readonly actionType: unknown; readonly targetResource: unknown; readonly recipient: unknown; readonly scope: unknown; readonly args?: unknown },
  now: number,
  findings: GrantFindings,
): GrantFindings {
  lookUpGrants(state, operation, now, findings);
  return findings;
}

/** {@link findGrants}, returning the node of the operation's exact (agentId, actionType, targetResource), if any. */
export function lookUpGrants(
  state: GateState,
  operation: { readonly agentId: unknown; readonly actionType: unknown; readonly targetResource: unknown; readonly recipient: unknown; readonly scope: unknown; readonly args?: unknown },
  now: number,
  findings: GrantFindings,
): TargetNode | undefined {
  findings.block = null;
  findings.allow = null;
  findings.expired = null;
  findings.nearMiss = false;
  findings.argumentMismatch = null;
  const known = knownViews;
  known.targetFacts = -1;
  known.recipient = null;
  known.scope = -1;
  const resource = operation.targetResource as string;
  const exact = findNode(state, operation.agentId, operation.actionType, resource);
  // The agent's view when the table holds it (else the classifier reads it from its memo: the same pure view).
  known.agent = exact === undefined ? null : exact.agent;
  let activeAllow = 0;
  let matchingAllow = 0;
  if (exact !== undefined) {
    activeAllow += exact.activeAllow;
    matchingAllow += scanNode(exact, operation, now, findings, state.patternGrants > 0);
  }
  if (state.patternGrants > 0 && typeof resource === 'string') {
    for (const pattern of coveringPatterns(resource)) {
      const node = findNode(state, operation.agentId, operation.actionType, pattern);
      if (node === undefined) continue;
      activeAllow += node.activeAllow;
      matchingAllow += scanNode(node, operation, now, findings, true);
    }
  }
  findings.nearMiss = activeAllow > matchingAllow;
  return exact;
}

/**
 * The classifier's views of the last operation looked up that the grant
 * table holds (the agent's, and the recipient's and scope's when a grant
 * names the same strings): scratch, refilled by each {@link lookUpGrants}.
 */
export const knownViews: KnownViews = { targetFacts: -1, agent: null, recipient: null, scope: -1 };

/** Scratch of {@link knownViews}' recipient. */
const knownRecipient: { -readonly [K in keyof RecipientView]: RecipientView[K] } = { normal: '', word: '', mask: 0, clauses: 0, selfWord: true };

/** The recipient of the operation being scanned (scanGrant compares it with each grant's). */
let scanRecipient: unknown = '';

/** Scans one resource node for grants whose recipient and scope match; returns how many active allow grants matched. */
function scanNode(
  node: TargetNode,
  operation: { readonly recipient: unknown; readonly scope: unknown; readonly args?: unknown },
  now: number,
  findings: GrantFindings,
  patterns: boolean,
): number {
  const recipient = operation.recipient as string;
  const scope = operation.scope as string;
  const args = operation.args;
  scanRecipient = recipient;
  let matched = 0;
  if (!patterns) {
    const only = node.only;
    // The map's key equality (SameValueZero) on the one grant's recipient.
    if (only !== null) return only.recipient === recipient || (only.recipient !== only.recipient && recipient !== recipient) ? scanGrant(only, scope, args, now, findings, false) : 0;
    const list = node.byRecipient.get(recipient);
    return list === undefined ? 0 : scanList(list, scope, args, now, findings, false);
  }
  for (const [grantRecipient, list] of node.byRecipient) {
    if (typeof recipient === 'string' && covers(grantRecipient, recipient)) matched += scanList(list, scope, args, now, findings, true);
  }
  return matched;
}

function scanList(list: readonly GrantRecord[], scope: string, args: unknown, now: number, findings: GrantFindings, patterns: boolean): number {
  let matched = 0;
  for (const grant of list) matched += scanGrant(grant, scope, args, now, findings, patterns);
  return matched;
}

/** Records a grant whose recipient matches in `findings`; 1 when it is an active allow grant whose scope matches too, else 0. */
function scanGrant(grant: GrantRecord, scope: string, args: unknown, now: number, findings: GrantFindings, patterns: boolean): number {
  // The grant names the operation's own strings: their views are the grant's.
  if (grant.recipient === (scanRecipient as unknown) && knownViews.recipient === null) {
    const view = knownRecipient;
    view.normal = grant.recipientNormal;
    view.word = grant.recipientNormal;
    view.mask = grant.recipientMask;
    view.clauses = grant.recipientClauses;
    view.selfWord = grant.recipientSelfWord;
    knownViews.recipient = view;
  }
  if (grant.scope === scope) knownViews.scope = grant.scopeClauses;
  if (!isActive(grant)) return 0;
  if (grant.scope !== scope && !(patterns && typeof scope === 'string' && covers(grant.scope, scope))) return 0;
  const inWindow = grant.notBefore <= now && now < grant.expiresAt;
  if (grant.effect === 'block') {
    // A non-finite `now` is no instant: no allow grant is in its window, and every block grant is (fail closed).
    if ((inWindow || !Number.isFinite(now)) && findings.block === null) findings.block = grant;
    return 0;
  }
  if (!inWindow) findings.expired ??= grant;
  // A grant for a $19.99 refund does not allow a $19,990 one: its argument constraints must hold too.
  else if (grant.constraints !== null && !satisfiesAll(grant.constraints, args)) findings.argumentMismatch ??= grant;
  else findings.allow ??= grant;
  return 1;
}
