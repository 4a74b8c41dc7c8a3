import {
  AUTHORITY_PARTITION,
  AUTHORITY_TYPES,
  DEFAULT_GRANT_POLICY,
  type BodyOf,
  type Entry,
  type Statement,
  type StatementType,
} from '@agent-ledger/core';
import { formatRefusal, type ReasonCode } from '@agent-ledger/refusals';
import { countResponse, counts } from '@agent-ledger/rulebook';
import type { LinkedEntry } from './chain-check.js';
import type {
  ApprovalRow,
  EnforcementRow,
  EntrySeenRow,
  GrantEventRow,
  GrantPolicyRow,
  GrantRow,
  KeyRow,
  ProposalRow,
  RefusalCountRow,
  RefusalRow,
} from './rows.js';

/**
 * Rows of one table that one batch reads or writes, keyed by primary key.
 * Rows read from the database are `load`ed; rows the batch creates are
 * `insert`ed (and written with a plain INSERT, so a second creation of the
 * same key, which the sequencer should have refused, fails on the primary
 * key instead of being merged silently); changed loaded rows are `touch`ed.
 */
export class RowSet<R> {
  readonly #rows = new Map<string, R>();
  readonly #stored = new Set<string>();
  readonly #touched = new Set<string>();
  readonly inserted: R[] = [];

  /** Adds a row read from the database (a key already loaded keeps its first row). */
  load(key: string, row: R): void {
    if (this.#stored.has(key)) return;
    this.#rows.set(key, row);
    this.#stored.add(key);
  }

  /** Every row the batch holds, stored or created. */
  values(): IterableIterator<R> {
    return this.#rows.values();
  }

  /** The row with this key, stored or created in this batch. */
  get(key: string): R | undefined {
    return this.#rows.get(key);
  }

  /** Creates a row. */
  insert(key: string, row: R): void {
    if (!this.#rows.has(key)) this.#rows.set(key, row);
    this.inserted.push(row);
  }

  /** Marks a row changed in place; stored rows are then written back. */
  touch(key: string): void {
    if (this.#stored.has(key)) this.#touched.add(key);
  }

  /** Stored rows the batch changed. */
  updated(): R[] {
    const rows: R[] = [];
    for (const key of this.#touched) {
      const row = this.#rows.get(key);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }
}

/** Everything one batch reads and writes; {@link evolve} folds entries into it. */
export class FoldState {
  readonly keys = new RowSet<KeyRow>();
  readonly grants = new RowSet<GrantRow>();
  /** Grant writes (proposals and re-authorisations), by statement hash: what a co-signature names. */
  readonly grantWrites = new RowSet<GrantEventRow>();
  /** Other grant events (co-signatures, revocations), all new. */
  readonly grantEvents: GrantEventRow[] = [];
  /** The grant policy: loaded, or set by genesis in this batch (then also in `policies`). */
  policy: GrantPolicyRow | undefined;
  readonly policies: GrantPolicyRow[] = [];
  readonly proposals = new RowSet<ProposalRow>();
  readonly approvals = new RowSet<ApprovalRow>();
  readonly decisions: EnforcementRow[] = [];
  readonly refusals: RefusalRow[] = [];
  readonly refusalCounts = new Map<string, RefusalCountRow>();
  /** Proposal hashes with a new decision, in entry order (for NOTIFY). */
  readonly decided: string[] = [];
}

/** Primary keys of stored rows a batch needs before it can be folded. */
export interface Lookups {
  readonly keyIds: Set<string>;
  readonly grantIds: Set<string>;
  /** Grants being revoked: each is loaded with every stored grant derived from it. */
  readonly grantSubtrees: Set<string>;
  /** Grant writes (by statement hash) that co-signatures name. */
  readonly grantWrites: Set<string>;
  readonly proposalHashes: Set<string>;
  readonly requestHashes: Set<string>;
  /** The batch writes a grant before any genesis in it: the stored grant policy is needed. */
  policy: boolean;
}

/** Lookups by primary key that a statement earlier in the batch may make needless. */
type KeyLookup = Exclude<keyof Lookups, 'policy' | 'grantSubtrees'>;

/**
 * Authority statements count only on the authority partition, events
 * statements only on an events partition, and an events statement changes
 * only rows of its own partition: so every row is changed by the entries of
 * one partition, in that partition's order, and the fold gives the same
 * tables however the partitions' batches interleave (rebuild equality).
 */
function inItsStream(linked: LinkedEntry): boolean {
  const isAuthority = AUTHORITY_TYPES.has(linked.entry.envelope.statement.type);
  return isAuthority === (linked.entry.partition === AUTHORITY_PARTITION);
}

function bodyOf<T extends StatementType>(statement: Statement, _type: T): BodyOf<T> {
  return statement.body as BodyOf<T>;
}

/**
 * The stored rows that folding `batch` reads: the keys its statements name,
 * less those created earlier in the same batch (the fold finds those in
 * memory). A statement that creates a row needs no lookup either: a key that
 * is already stored fails the batch's INSERT on the primary key.
 */
export function lookupsOf(batch: readonly LinkedEntry[]): Lookups {
  const lookups: Lookups = {
    keyIds: new Set(),
    grantIds: new Set(),
    grantSubtrees: new Set(),
    grantWrites: new Set(),
    proposalHashes: new Set(),
    requestHashes: new Set(),
    policy: false,
  };
  const created: Record<KeyLookup, Set<string>> = {
    keyIds: new Set(),
    grantIds: new Set(),
    grantWrites: new Set(),
    proposalHashes: new Set(),
    requestHashes: new Set(),
  };
  let genesis = false;
  const need = (kind: KeyLookup, key: string): void => {
    if (!created[kind].has(key)) lookups[kind].add(key);
  };
  for (const linked of batch) {
    if (!inItsStream(linked)) continue;
    const statement = linked.entry.envelope.statement;
    switch (statement.type) {
      case 'genesis':
        for (const key of bodyOf(statement, 'genesis').keys) created.keyIds.add(key.keyId);
        genesis = true;
        break;
      case 'key.registered':
        created.keyIds.add(bodyOf(statement, 'key.registered').keyId);
        break;
      case 'key.revoked':
        need('keyIds', bodyOf(statement, 'key.revoked').keyId);
        break;
      case 'root.rotated': {
        const body = bodyOf(statement, 'root.rotated');
        for (const keyId of body.revokeKeys) need('keyIds', keyId);
        for (const key of body.registerKeys) created.keyIds.add(key.keyId);
        break;
      }
      case 'grant.proposed':
        created.grantIds.add(bodyOf(statement, 'grant.proposed').grantId);
        created.grantWrites.add(linked.statementHash);
        lookups.policy ||= !genesis;
        break;
      case 'grant.cosigned': {
        const body = bodyOf(statement, 'grant.cosigned');
        need('grantIds', body.grantId);
        need('grantWrites', body.grant);
        break;
      }
      case 'grant.reauthorized':
        need('grantIds', bodyOf(statement, 'grant.reauthorized').grantId);
        created.grantWrites.add(linked.statementHash);
        lookups.policy ||= !genesis;
        break;
      case 'grant.revoked': {
        // The grant with every stored grant derived from it (the cascade); one created in this batch has no stored
        // descendants, the fold finds them all in memory.
        const { grantId } = bodyOf(statement, 'grant.revoked');
        if (!created.grantIds.has(grantId)) lookups.grantSubtrees.add(grantId);
        break;
      }
      case 'proposal.submitted':
        created.proposalHashes.add(linked.statementHash);
        break;
      case 'classification.recorded':
      case 'screening.verdict':
      case 'decision.recorded':
        need('proposalHashes', bodyOf(statement, 'decision.recorded').proposal);
        break;
      case 'confirmation.requested':
        created.requestHashes.add(linked.statementHash);
        break;
      case 'human.response':
      case 'timeout.recorded':
        need('requestHashes', bodyOf(statement, 'timeout.recorded').request);
        break;
      default:
        break;
    }
  }
  return lookups;
}

/** The minute bucket of a ledger timestamp: `YYYY-MM-DDTHH:MM:00.000Z`. */
export function minuteOf(timestamp: string): string {
  return `${timestamp.slice(0, 16)}:00.000Z`;
}

function countRefusal(state: FoldState, code: string, sequencedAt: string): void {
  const minute = minuteOf(sequencedAt);
  const bucket = `${minute} ${code}`;
  const row = state.refusalCounts.get(bucket);
  if (row === undefined) state.refusalCounts.set(bucket, { minute, code, count: 1 });
  else row.count += 1;
}

/** The `entries_seen` row of a linked entry: every applied entry has one, whatever its stream. */
export function entrySeenRow(linked: LinkedEntry): EntrySeenRow {
  const { entry, statementHash } = linked;
  return {
    partition: entry.partition,
    index: entry.index,
    hash: entry.hash,
    statementHash,
    type: entry.envelope.statement.type,
    sequencedAt: entry.sequencedAt,
    authorityIndex: entry.authorityIndex,
    statementId: entry.envelope.statement.id,
    author: entry.envelope.statement.author.principal,
  };
}

function revokeKey(state: FoldState, keyId: string, index: number): void {
  const row = state.keys.get(keyId);
  if (row !== undefined && row.revokedAt === null) {
    row.revokedAt = index;
    state.keys.touch(keyId);
  }
}

/*
 * The grant rules of ledger-core's GrantRegistry (SPEC.md section 7.2), over
 * rows. The sequencer refuses what breaks them, so on a valid log these
 * checks always pass; they are repeated so that odd input (a statement the
 * rules refuse) changes nothing here either, as it changes nothing in the
 * gate and verify-chain. Rules that only refuse a write outright (lifetimes,
 * attenuation of a derived grant) are not repeated: such a write never
 * reaches the log.
 */

/** The row of a grant statement's own event; the kind-specific fields are filled by the caller. */
function grantEventOf(linked: LinkedEntry, grantId: string, kind: GrantEventRow['kind']): GrantEventRow {
  const { entry, statementHash } = linked;
  const author = entry.envelope.statement.author;
  return {
    authorityIndex: entry.index,
    grantId,
    kind,
    principal: author.principal,
    keyId: author.keyId,
    statementHash,
    namesHash: null,
    namesIndex: null,
    expiresAt: null,
    cosignersNeeded: null,
    cosignDeadline: null,
    cosignedBy: [],
    tookEffect: false,
    effectiveAt: null,
    revokedVia: null,
    reason: null,
    sequencedAt: entry.sequencedAt,
  };
}

/** A write waits for `policy.cosigners[tier]` co-signatures, sequenced at most `cosignWindowMs` after it. */
function writeQuorum(state: FoldState, tier: number, sequencedAt: string): { cosignersNeeded: number; cosignDeadline: string } {
  const policy = state.policy ?? DEFAULT_GRANT_POLICY;
  const deadline = Date.parse(sequencedAt) + policy.cosignWindowMs;
  return {
    cosignersNeeded: policy.cosigners[tier] ?? 1,
    cosignDeadline: Number.isFinite(deadline) ? new Date(deadline).toISOString() : sequencedAt,
  };
}

/** `grant.proposed`: an inactive grant and its proposal, a write waiting for co-signatures. */
function proposeGrant(state: FoldState, linked: LinkedEntry): void {
  const { entry, statementHash } = linked;
  const body = bodyOf(entry.envelope.statement, 'grant.proposed');
  state.grants.insert(body.grantId, {
    grantId: body.grantId,
    agentId: body.agentId,
    actionType: body.actionType,
    targetResource: body.targetResource,
    recipient: body.recipient,
    scope: body.scope,
    notBefore: body.notBefore,
    expiresAt: body.expiresAt,
    effect: body.effect,
    tier: body.tier,
    parentGrantId: body.parentGrantId,
    constraints: body.constraints ?? null,
    proposalHash: statementHash,
    proposedBy: entry.envelope.statement.author.principal,
    proposedAt: entry.index,
    cosignedBy: null,
    cosignedAt: null,
    status: 'proposed',
    revokedAt: null,
    revokedVia: null,
    reauthorizedExpiresAt: null,
    reauthorizedAt: null,
  });
  state.grantWrites.insert(statementHash, {
    ...grantEventOf(linked, body.grantId, 'proposed'),
    expiresAt: body.expiresAt,
    ...writeQuorum(state, body.tier, entry.sequencedAt),
  });
}

/**
 * `grant.cosigned`: counts when it names a write of this grant (its proposal
 * or one of its re-authorisations) that has not yet taken effect, the grant
 * is not revoked, the co-signer is neither the write's author, nor the
 * grantee, nor a principal that already co-signed it, and it is sequenced by
 * the write's deadline. The co-signature that completes the quorum makes the
 * write take effect at its index: a proposal activates the grant, a
 * re-authorisation moves the end of its window.
 */
function cosignGrant(state: FoldState, linked: LinkedEntry): void {
  const { entry } = linked;
  const body = bodyOf(entry.envelope.statement, 'grant.cosigned');
  const author = entry.envelope.statement.author.principal;
  const grant = state.grants.get(body.grantId);
  const write = state.grantWrites.get(body.grant);
  if (grant === undefined || write === undefined || write.grantId !== grant.grantId) return;
  if (grant.status === 'revoked' || write.tookEffect) return;
  if (author === write.principal || author === grant.agentId || write.cosignedBy.includes(author)) return;
  if (write.cosignDeadline === null || Date.parse(entry.sequencedAt) > Date.parse(write.cosignDeadline)) return;
  write.cosignedBy = [...write.cosignedBy, author];
  const effective = write.cosignedBy.length >= (write.cosignersNeeded ?? 1);
  if (effective) {
    write.tookEffect = true;
    write.effectiveAt = entry.index;
    if (write.kind === 'proposed') {
      grant.status = 'active';
      grant.cosignedBy = author;
      grant.cosignedAt = entry.index;
    } else {
      grant.reauthorizedExpiresAt = write.expiresAt;
      grant.reauthorizedAt = entry.index;
    }
    state.grants.touch(grant.grantId);
  }
  state.grantWrites.touch(body.grant);
  state.grantEvents.push({
    ...grantEventOf(linked, grant.grantId, 'cosigned'),
    namesHash: body.grant,
    namesIndex: write.authorityIndex,
    tookEffect: effective,
    effectiveAt: effective ? entry.index : null,
  });
}

/**
 * `grant.reauthorized`: a write naming the proposal of a grant in force, by
 * someone other than the grantee. It changes nothing until co-signed like a
 * proposal ({@link cosignGrant}).
 */
function reauthorizeGrant(state: FoldState, linked: LinkedEntry): void {
  const { entry, statementHash } = linked;
  const body = bodyOf(entry.envelope.statement, 'grant.reauthorized');
  const grant = state.grants.get(body.grantId);
  if (grant === undefined || grant.status !== 'active' || grant.proposalHash !== body.grant) return;
  if (entry.envelope.statement.author.principal === grant.agentId) return;
  state.grantWrites.insert(statementHash, {
    ...grantEventOf(linked, grant.grantId, 'reauthorized'),
    namesHash: body.grant,
    namesIndex: grant.proposedAt,
    expiresAt: body.expiresAt,
    ...writeQuorum(state, grant.tier, entry.sequencedAt),
  });
}

/** Grants whose parent is `grantId`, among the rows the batch holds (a revoked grant's stored subtree is loaded). */
function derivedFrom(state: FoldState, grantId: string): GrantRow[] {
  const children: GrantRow[] = [];
  for (const row of state.grants.values()) if (row.parentGrantId === grantId && row.grantId !== grantId) children.push(row);
  return children;
}

/**
 * `grant.revoked`: ends the grant, whatever its status, and every grant
 * derived from it, transitively, at this index; each records the grant whose
 * revocation ended it. A grant already revoked stays as it was (and so do
 * the grants derived from it, which its own revocation ended).
 */
function revokeGrant(state: FoldState, linked: LinkedEntry): void {
  const { entry } = linked;
  const body = bodyOf(entry.envelope.statement, 'grant.revoked');
  const grant = state.grants.get(body.grantId);
  if (grant === undefined || grant.status === 'revoked') return;
  const stack = [grant];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.status === 'revoked') continue;
    next.status = 'revoked';
    next.revokedAt = entry.index;
    next.revokedVia = grant.grantId;
    state.grants.touch(next.grantId);
    state.grantEvents.push({
      ...grantEventOf(linked, next.grantId, next === grant ? 'revoked' : 'revoked_via_ancestor'),
      tookEffect: true,
      effectiveAt: entry.index,
      revokedVia: grant.grantId,
      reason: body.reason,
    });
    stack.push(...derivedFrom(state, next.grantId));
  }
}

/**
 * Folds one linked entry into the batch state (its `entries_seen` row,
 * {@link entrySeenRow}, is written apart, as soon as the entry links). Rows
 * derive only from the entry's content and position, never from the clock or
 * the order in which partitions are consumed. The sequencer has already authorized the
 * statement (key, principal, role: SPEC.md section 7) and checked the grant
 * rules; the fold repeats the grant rules that decide what a statement
 * changes (quorum, distinct co-signers, deadline, cascade) and adds its own
 * (an answer counts once per approver).
 */
/**
 * The `enforcement_records` row of a `decision.recorded` entry: the one
 * mapping the projection folds and the API answers a long-poll with before
 * the projection has it.
 */
export function enforcementRowOf(entry: Entry, statementHash: string): EnforcementRow {
  const body = entry.envelope.statement.body as BodyOf<'decision.recorded'>;
  return {
    decisionHash: statementHash,
    proposalHash: body.proposal,
    agentId: body.agentId,
    outcome: body.outcome,
    code: body.code,
    tier: body.tier,
    risk: body.risk,
    authorityIndex: body.authorityIndex,
    grantId: body.grantId,
    grantEntry: body.grantEntry,
    partition: entry.partition,
    index: entry.index,
    sequencedAt: entry.sequencedAt,
  };
}

export function evolve(state: FoldState, linked: LinkedEntry): void {
  const { entry, statementHash } = linked;
  const statement = entry.envelope.statement;
  const author = statement.author.principal;
  const position = { partition: entry.partition, index: entry.index, sequencedAt: entry.sequencedAt };
  if (!inItsStream(linked)) return;

  const proposalOfSamePartition = (hash: string): ProposalRow | undefined => {
    const row = state.proposals.get(hash);
    return row !== undefined && row.partition === entry.partition ? row : undefined;
  };

  switch (statement.type) {
    case 'genesis': {
      const body = bodyOf(statement, 'genesis');
      for (const key of body.keys) {
        state.keys.insert(key.keyId, { keyId: key.keyId, principal: key.principal, roles: [...key.roles], registeredAt: entry.index, revokedAt: null });
      }
      const policy = body.grantPolicy ?? DEFAULT_GRANT_POLICY;
      state.policy = {
        authorityIndex: entry.index,
        fromGenesis: body.grantPolicy !== undefined,
        cosigners: [...policy.cosigners],
        maxLifetimeMs: [...policy.maxLifetimeMs],
        cosignWindowMs: policy.cosignWindowMs,
      };
      state.policies.push(state.policy);
      break;
    }
    case 'key.registered': {
      const key = bodyOf(statement, 'key.registered');
      state.keys.insert(key.keyId, { keyId: key.keyId, principal: key.principal, roles: [...key.roles], registeredAt: entry.index, revokedAt: null });
      break;
    }
    case 'key.revoked':
      revokeKey(state, bodyOf(statement, 'key.revoked').keyId, entry.index);
      break;
    case 'root.rotated': {
      // A rotation revokes and registers ordinary keys in the same entry (SPEC.md 7.1); the root keys are not rows here.
      const body = bodyOf(statement, 'root.rotated');
      for (const keyId of body.revokeKeys) revokeKey(state, keyId, entry.index);
      for (const key of body.registerKeys) {
        state.keys.insert(key.keyId, { keyId: key.keyId, principal: key.principal, roles: [...key.roles], registeredAt: entry.index, revokedAt: null });
      }
      break;
    }
    case 'grant.proposed':
      proposeGrant(state, linked);
      break;
    case 'grant.cosigned':
      cosignGrant(state, linked);
      break;
    case 'grant.reauthorized':
      reauthorizeGrant(state, linked);
      break;
    case 'grant.revoked':
      revokeGrant(state, linked);
      break;
    case 'proposal.submitted': {
      const body = bodyOf(statement, 'proposal.submitted');
      state.proposals.insert(statementHash, {
        proposalHash: statementHash,
        agentId: body.agentId,
        tool: body.tool,
        actionType: body.actionType,
        targetResource: body.targetResource,
        recipient: body.recipient,
        scope: body.scope,
        ...position,
        tier: null,
        risk: null,
        screening: null,
        status: 'submitted',
      });
      break;
    }
    case 'classification.recorded': {
      const body = bodyOf(statement, 'classification.recorded');
      const row = proposalOfSamePartition(body.proposal);
      if (row !== undefined) {
        row.tier = body.tier;
        row.risk = body.risk;
        state.proposals.touch(body.proposal);
      }
      break;
    }
    case 'screening.verdict': {
      const body = bodyOf(statement, 'screening.verdict');
      const row = proposalOfSamePartition(body.proposal);
      if (row !== undefined) {
        row.screening = body.verdict;
        state.proposals.touch(body.proposal);
      }
      break;
    }
    case 'confirmation.requested': {
      const body = bodyOf(statement, 'confirmation.requested');
      state.approvals.insert(statementHash, {
        requestHash: statementHash,
        proposalHash: body.proposal,
        agentId: body.agentId,
        tier: body.tier,
        deadline: body.deadline,
        approvalsRequired: body.approvalsRequired,
        approvedBy: [],
        status: 'pending',
        answeredBy: null,
        answeredIndex: null,
        partition: entry.partition,
        index: entry.index,
      });
      break;
    }
    case 'human.response': {
      const body = bodyOf(statement, 'human.response');
      const row = state.approvals.get(body.request);
      // The rulebook's one counting rule (as the gate, the timer and verify-chain apply it).
      const effect = countResponse(
        row === undefined
          ? undefined
          : { proposal: row.proposalHash, request: row.requestHash, agentId: row.agentId, partition: row.partition, tier: row.tier, deadlineMs: Date.parse(row.deadline), approvalsRequired: row.approvalsRequired, status: row.status, approvedBy: row.approvedBy },
        { proposal: body.proposal, request: body.request, agentId: body.agentId, partition: entry.partition, answer: body.answer, assurance: body.assurance, author, sequencedAtMs: Date.parse(entry.sequencedAt) },
      );
      if (row === undefined || !counts(effect)) break;
      if (effect === 'denied') {
        row.status = 'denied';
        row.answeredBy = author;
        row.answeredIndex = entry.index;
      } else {
        row.approvedBy = [...row.approvedBy, author];
        if (effect === 'approved') {
          row.status = 'approved';
          row.answeredBy = author;
          row.answeredIndex = entry.index;
        }
      }
      state.approvals.touch(body.request);
      break;
    }
    case 'timeout.recorded': {
      const body = bodyOf(statement, 'timeout.recorded');
      const row = state.approvals.get(body.request);
      if (row !== undefined && row.partition === entry.partition && row.status === 'pending') {
        row.status = 'timed_out';
        row.answeredIndex = entry.index;
        state.approvals.touch(body.request);
      }
      break;
    }
    case 'decision.recorded': {
      const body = bodyOf(statement, 'decision.recorded');
      state.decisions.push(enforcementRowOf(entry, statementHash));
      const row = proposalOfSamePartition(body.proposal);
      if (row !== undefined) {
        row.status = body.outcome;
        state.proposals.touch(body.proposal);
      }
      state.decided.push(body.proposal);
      break;
    }
    case 'refusal.recorded': {
      const body = bodyOf(statement, 'refusal.recorded');
      state.refusals.push({
        statementHash,
        agentId: body.agentId,
        proposalHash: body.proposal,
        inputHash: null,
        code: body.code,
        refusal: body.refusal,
        ...position,
      });
      countRefusal(state, body.code, entry.sequencedAt);
      break;
    }
    case 'intake.rejected': {
      const body = bodyOf(statement, 'intake.rejected');
      // The sequencer's refusal of unreadable input: counted like any refusal, with the text the caller saw.
      const refusal = formatRefusal(body.code as ReasonCode, body.detail);
      state.refusals.push({ statementHash, agentId: body.agentId, proposalHash: null, inputHash: body.input, code: body.code, refusal, ...position });
      countRefusal(state, body.code, entry.sequencedAt);
      break;
    }
    default:
      // escalation.raised and screening details beyond the verdict live in the log only (entries_seen locates them).
      break;
  }
}
