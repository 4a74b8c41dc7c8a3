import { AUTHORITY_PARTITION, AUTHORITY_TYPES, MAX_PLATFORM_ASSURANCE_TIER, type BodyOf, type Statement, type StatementType } from '@agent-ledger/core';
import { formatRefusal, type ReasonCode } from '@agent-ledger/refusals';
import type { LinkedEntry } from './chain-check.js';
import type {
  ApprovalRow,
  EnforcementRow,
  EntrySeenRow,
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

  /** Adds a row read from the database. */
  load(key: string, row: R): void {
    this.#rows.set(key, row);
    this.#stored.add(key);
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
  readonly proposalHashes: Set<string>;
  readonly requestHashes: Set<string>;
}

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
  const lookups: Lookups = { keyIds: new Set(), grantIds: new Set(), proposalHashes: new Set(), requestHashes: new Set() };
  const created = { keyIds: new Set<string>(), grantIds: new Set<string>(), proposalHashes: new Set<string>(), requestHashes: new Set<string>() };
  const need = (kind: keyof Lookups, key: string): void => {
    if (!created[kind].has(key)) lookups[kind].add(key);
  };
  for (const linked of batch) {
    if (!inItsStream(linked)) continue;
    const statement = linked.entry.envelope.statement;
    switch (statement.type) {
      case 'genesis':
        for (const key of bodyOf(statement, 'genesis').keys) created.keyIds.add(key.keyId);
        break;
      case 'key.registered':
        created.keyIds.add(bodyOf(statement, 'key.registered').keyId);
        break;
      case 'key.revoked':
        need('keyIds', bodyOf(statement, 'key.revoked').keyId);
        break;
      case 'grant.proposed':
        created.grantIds.add(bodyOf(statement, 'grant.proposed').grantId);
        break;
      case 'grant.cosigned':
      case 'grant.revoked':
      case 'grant.reauthorized':
        need('grantIds', bodyOf(statement, 'grant.revoked').grantId);
        break;
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
  };
}

/**
 * Folds one linked entry into the batch state (its `entries_seen` row,
 * {@link entrySeenRow}, is written apart, as soon as the entry links). Rows
 * derive only from the entry's content and position, never from the clock or
 * the order in which partitions are consumed. The sequencer has already authorized the
 * statement (key, principal, role: SPEC.md section 7); the fold adds only
 * the rules that are the projection's own (a cosigner must be another admin
 * principal; an answer counts once per approver).
 */
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
    case 'genesis':
      for (const key of bodyOf(statement, 'genesis').keys) {
        state.keys.insert(key.keyId, { keyId: key.keyId, principal: key.principal, roles: [...key.roles], registeredAt: entry.index, revokedAt: null });
      }
      break;
    case 'key.registered': {
      const key = bodyOf(statement, 'key.registered');
      state.keys.insert(key.keyId, { keyId: key.keyId, principal: key.principal, roles: [...key.roles], registeredAt: entry.index, revokedAt: null });
      break;
    }
    case 'key.revoked': {
      const { keyId } = bodyOf(statement, 'key.revoked');
      const row = state.keys.get(keyId);
      if (row !== undefined && row.revokedAt === null) {
        row.revokedAt = entry.index;
        state.keys.touch(keyId);
      }
      break;
    }
    case 'grant.proposed': {
      const body = bodyOf(statement, 'grant.proposed');
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
        proposalHash: statementHash,
        proposedBy: author,
        proposedAt: entry.index,
        cosignedBy: null,
        cosignedAt: null,
        status: 'proposed',
        revokedAt: null,
        reauthorizedExpiresAt: null,
        reauthorizedAt: null,
      });
      break;
    }
    case 'grant.cosigned': {
      const body = bodyOf(statement, 'grant.cosigned');
      const row = state.grants.get(body.grantId);
      // Two-person rule: the cosignature names the exact proposal and comes from another admin principal.
      if (row !== undefined && row.status === 'proposed' && row.proposalHash === body.grant && row.proposedBy !== author) {
        row.status = 'active';
        row.cosignedBy = author;
        row.cosignedAt = entry.index;
        state.grants.touch(body.grantId);
      }
      break;
    }
    case 'grant.revoked': {
      const body = bodyOf(statement, 'grant.revoked');
      const row = state.grants.get(body.grantId);
      if (row !== undefined && row.status !== 'revoked') {
        row.status = 'revoked';
        row.revokedAt = entry.index;
        state.grants.touch(body.grantId);
      }
      break;
    }
    case 'grant.reauthorized': {
      const body = bodyOf(statement, 'grant.reauthorized');
      const row = state.grants.get(body.grantId);
      if (row !== undefined && row.status !== 'revoked' && row.proposalHash === body.grant) {
        row.reauthorizedExpiresAt = body.expiresAt;
        row.reauthorizedAt = entry.index;
        state.grants.touch(body.grantId);
      }
      break;
    }
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
      if (row === undefined || row.partition !== entry.partition || row.status !== 'pending' || row.proposalHash !== body.proposal) break;
      // As the gate's queue and verify-chain: a chat bridge's answer counts only up to
      // MAX_PLATFORM_ASSURANCE_TIER, and no answer sequenced after the deadline counts.
      if (body.assurance === 'platform' && row.tier > MAX_PLATFORM_ASSURANCE_TIER) break;
      if (Date.parse(entry.sequencedAt) > Date.parse(row.deadline)) break;
      if (body.answer === 'deny') {
        row.status = 'denied';
        row.answeredBy = author;
        row.answeredIndex = entry.index;
      } else if (!row.approvedBy.includes(author)) {
        row.approvedBy = [...row.approvedBy, author];
        if (row.approvedBy.length >= row.approvalsRequired) {
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
      state.decisions.push({
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
        ...position,
      });
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
