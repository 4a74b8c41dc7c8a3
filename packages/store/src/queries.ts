import type { SqlClient, SqlPool, SqlQueryable, SqlResult } from './sql.js';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  ENFORCEMENT_RECORDS,
  GRANT_EVENTS,
  GRANTS,
  PENDING_APPROVALS,
  REFUSAL_METRICS,
  type ApprovalRow,
  type DecisionOutcome,
  type EnforcementRow,
  type GrantEventRow,
  type GrantRow,
  type RefusalCountRow,
} from './rows.js';

/** The most rows one query helper returns. */
export const MAX_QUERY_LIMIT = 10_000;

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_QUERY_LIMIT) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `limit must be an integer from 1 to ${MAX_QUERY_LIMIT}`);
  }
  return limit;
}

function checkInstant(at: Date, name: string): string {
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${name} is not a valid date`);
  return at.toISOString();
}

/**
 * Confirmation requests still waiting for an answer, earliest deadline first.
 * With `now`, only those whose deadline is later than `now`.
 */
export async function listPending(pool: SqlPool, options: { now?: Date; limit: number }): Promise<ApprovalRow[]> {
  const limit = checkLimit(options.limit);
  const now = options.now === undefined ? null : checkInstant(options.now, 'now');
  const result = await pool.query(
    `SELECT * FROM pending_approvals
     WHERE status = 'pending' AND ($1::timestamptz IS NULL OR deadline > $1::timestamptz)
     ORDER BY deadline, request_hash LIMIT $2`,
    [now, limit],
  );
  return result.rows.map((row: Record<string, unknown>) => PENDING_APPROVALS.read(row));
}

/**
 * Grants, by grant id. With `agentId`, that agent's only. With `activeAt`,
 * only grants in force at that instant: cosigned, not revoked, and
 * `notBefore <= activeAt < expiry` (the reauthorized expiry when there is one).
 */
export async function listGrants(pool: SqlPool, options: { agentId?: string; activeAt?: Date } = {}): Promise<GrantRow[]> {
  const activeAt = options.activeAt === undefined ? null : checkInstant(options.activeAt, 'activeAt');
  const result = await pool.query(
    `SELECT * FROM grants
     WHERE ($1::text IS NULL OR agent_id = $1::text)
       AND ($2::timestamptz IS NULL OR (status = 'active' AND not_before <= $2::timestamptz
            AND COALESCE(reauthorized_expires_at, expires_at) > $2::timestamptz))
     ORDER BY grant_id`,
    [options.agentId ?? null, activeAt],
  );
  return result.rows.map((row: Record<string, unknown>) => GRANTS.read(row));
}

/** Refusal counts per minute and code, oldest minute first; with `sinceMinute`, from that minute on. */
export async function refusalMetrics(pool: SqlPool, options: { sinceMinute?: Date } = {}): Promise<RefusalCountRow[]> {
  const since = options.sinceMinute === undefined ? null : checkInstant(options.sinceMinute, 'sinceMinute');
  const result = await pool.query(
    `SELECT * FROM refusal_metrics WHERE ($1::timestamptz IS NULL OR minute >= $1::timestamptz) ORDER BY minute, code`,
    [since],
  );
  return result.rows.map((row: Record<string, unknown>) => REFUSAL_METRICS.read(row));
}

/** A pool or one of its connections (inside a transaction). */
type Queryable = SqlQueryable;

async function finalDecision(db: Queryable, proposalHash: string): Promise<EnforcementRow | null> {
  const result = await db.query(
    `SELECT * FROM enforcement_records WHERE proposal_hash = $1 AND outcome <> 'verify_first'
     ORDER BY sequenced_at DESC, partition DESC, index DESC LIMIT 1`,
    [proposalHash],
  );
  const row = result.rows[0] as Record<string, unknown> | undefined;
  return row === undefined ? null : ENFORCEMENT_RECORDS.read(row);
}

/**
 * The latest final decision about a proposal (outcome allow, block or deny;
 * a `verify_first` is not final), with its code and entry position, or null.
 */
export async function decisionFor(pool: SqlPool, proposalHash: string): Promise<EnforcementRow | null> {
  return finalDecision(pool, proposalHash);
}

/** Enforcement records (one per decision), newest first; with `agentId`, that agent's only. */
export async function enforcementRecords(pool: SqlPool, options: { agentId?: string; limit: number }): Promise<EnforcementRow[]> {
  const limit = checkLimit(options.limit);
  const result = await pool.query(
    `SELECT * FROM enforcement_records WHERE ($1::text IS NULL OR agent_id = $1::text)
     ORDER BY sequenced_at DESC, partition DESC, index DESC LIMIT $2`,
    [options.agentId ?? null, limit],
  );
  return result.rows.map((row: Record<string, unknown>) => ENFORCEMENT_RECORDS.read(row));
}

/** Longest parent chain a trail follows (delegation deeper than this is cut, never looped). */
export const MAX_GRANT_CHAIN = 64;

/** A grant and its events, in ledger order. */
export interface GrantSummary {
  readonly grant: GrantRow;
  readonly events: readonly GrantEventRow[];
}

/** The decisions that cited a grant: how many, by outcome, and the records (oldest first, at most the limit asked). */
export interface GrantCitations {
  readonly total: number;
  readonly byOutcome: Partial<Record<DecisionOutcome, number>>;
  readonly records: readonly EnforcementRow[];
}

/** The paper trail of one grant ({@link grantTrail}). */
export interface GrantTrail extends GrantSummary {
  /** The grant it derives from, that grant's parent, and so on up to the root grant. */
  readonly parents: readonly GrantSummary[];
  /** Every grant derived from it, directly or through another derived grant, in ledger order. */
  readonly derived: readonly string[];
  readonly decisions: GrantCitations;
}

/** A decision and the grant chain behind it ({@link decisionTrail}). */
export interface DecisionTrail {
  readonly decision: EnforcementRow;
  /** The cited grant, then its parent, up to the root grant; empty when the decision cited none. */
  readonly chain: readonly GrantSummary[];
}

/** Grant ids are `grant.proposed`'s ShortText: 1 to 256 characters. */
function checkGrantId(grantId: string): string {
  if (typeof grantId !== 'string' || grantId.length < 1 || grantId.length > 256) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'a grant id is 1 to 256 characters');
  }
  return grantId;
}

/** Runs `read` in one read-only REPEATABLE READ snapshot, so a trail's parts agree with one another. */
async function inSnapshot<T>(pool: SqlPool, read: (client: SqlClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      return await read(client);
    } finally {
      await client.query('ROLLBACK');
    }
  } catch (err) {
    broken = !(err instanceof LedgerError);
    throw err;
  } finally {
    client.release(broken);
  }
}

/** The grant, then its parent, up to the root (at most {@link MAX_GRANT_CHAIN} + 1), each with its events. */
async function chainOf(client: SqlClient, grantId: string): Promise<GrantSummary[]> {
  const grants = await client.query(
    `WITH RECURSIVE chain AS (
       SELECT g.*, 0 AS depth FROM grants AS g WHERE g.grant_id = $1
       UNION ALL
       SELECT g.*, c.depth + 1 FROM chain AS c JOIN grants AS g ON g.grant_id = c.parent_grant_id
       WHERE c.depth < $2
     )
     SELECT * FROM chain ORDER BY depth`,
    [grantId, MAX_GRANT_CHAIN],
  );
  const chain: GrantRow[] = [];
  const seen = new Set<string>();
  for (const stored of grants.rows as Record<string, unknown>[]) {
    const row = GRANTS.read(stored);
    // A parent link that loops (never written by a valid log) ends the chain.
    if (seen.has(row.grantId)) break;
    seen.add(row.grantId);
    chain.push(row);
  }
  if (chain.length === 0) return [];
  const events = await client.query('SELECT * FROM grant_events WHERE grant_id = ANY($1::text[]) ORDER BY authority_index, grant_id', [[...seen]]);
  const byGrant = new Map<string, GrantEventRow[]>(chain.map((g) => [g.grantId, []]));
  for (const stored of events.rows as Record<string, unknown>[]) {
    const row = GRANT_EVENTS.read(stored);
    byGrant.get(row.grantId)?.push(row);
  }
  return chain.map((grant) => ({ grant, events: byGrant.get(grant.grantId) ?? [] }));
}

/**
 * The paper trail of a grant, from one snapshot: the grant row and its
 * events in ledger order (who proposed it, who co-signed, who re-authorised
 * and who revoked it, at which authority index, and whether each write took
 * effect), its parent chain up to the root grant (each with its events), the
 * ids of every grant derived from it, and the decisions that cited it
 * (counted by outcome; the records oldest first, at most `decisionLimit`,
 * default 1000). Null when no such grant was proposed.
 */
export async function grantTrail(pool: SqlPool, grantId: string, options: { decisionLimit?: number } = {}): Promise<GrantTrail | null> {
  checkGrantId(grantId);
  const limit = checkLimit(options.decisionLimit ?? 1000);
  return inSnapshot(pool, async (client) => {
    const chain = await chainOf(client, grantId);
    const [self, ...parents] = chain;
    if (self === undefined) return null;
    const derived = await client.query<{ grant_id: string }>(
      `WITH RECURSIVE subtree AS (
         SELECT g.grant_id, g.proposed_at, 1 AS depth FROM grants AS g WHERE g.parent_grant_id = $1 AND g.grant_id <> $1
         UNION ALL
         SELECT g.grant_id, g.proposed_at, s.depth + 1 FROM subtree AS s JOIN grants AS g ON g.parent_grant_id = s.grant_id
         WHERE s.depth < $2 AND g.grant_id <> $1
       )
       SELECT DISTINCT grant_id, proposed_at FROM subtree ORDER BY proposed_at, grant_id`,
      [grantId, MAX_GRANT_CHAIN],
    );
    const counts = await client.query<{ outcome: DecisionOutcome; n: string }>(
      'SELECT outcome, count(*) AS n FROM enforcement_records WHERE grant_id = $1 GROUP BY outcome ORDER BY outcome',
      [grantId],
    );
    const records = await client.query(
      'SELECT * FROM enforcement_records WHERE grant_id = $1 ORDER BY sequenced_at, partition, index LIMIT $2',
      [grantId, limit],
    );
    const byOutcome: Partial<Record<DecisionOutcome, number>> = {};
    let total = 0;
    for (const { outcome, n } of counts.rows) {
      byOutcome[outcome] = Number(n);
      total += Number(n);
    }
    return {
      ...self,
      parents,
      derived: derived.rows.map((r) => r.grant_id),
      decisions: { total, byOutcome, records: records.rows.map((row: Record<string, unknown>) => ENFORCEMENT_RECORDS.read(row)) },
    };
  });
}

/**
 * The final decision about a proposal ({@link decisionFor}) and the grant
 * chain behind it: the grant it cited with its events, then that grant's
 * parent, up to the root grant. The chain is empty when the decision cited
 * no grant. Null when the proposal has no final decision.
 */
export async function decisionTrail(pool: SqlPool, proposalHash: string): Promise<DecisionTrail | null> {
  if (typeof proposalHash !== 'string' || !/^[0-9a-f]{64}$/.test(proposalHash)) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'a proposal is named by its 64-hex statement hash');
  }
  return inSnapshot(pool, async (client) => {
    const decision = await finalDecision(client, proposalHash);
    if (decision === null) return null;
    return { decision, chain: decision.grantId === null ? [] : await chainOf(client, decision.grantId) };
  });
}
