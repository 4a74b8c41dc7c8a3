import type pg from 'pg';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  ENFORCEMENT_RECORDS,
  GRANTS,
  PENDING_APPROVALS,
  REFUSAL_METRICS,
  type ApprovalRow,
  type EnforcementRow,
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
export async function listPending(pool: pg.Pool, options: { now?: Date; limit: number }): Promise<ApprovalRow[]> {
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
export async function listGrants(pool: pg.Pool, options: { agentId?: string; activeAt?: Date } = {}): Promise<GrantRow[]> {
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
export async function refusalMetrics(pool: pg.Pool, options: { sinceMinute?: Date } = {}): Promise<RefusalCountRow[]> {
  const since = options.sinceMinute === undefined ? null : checkInstant(options.sinceMinute, 'sinceMinute');
  const result = await pool.query(
    `SELECT * FROM refusal_metrics WHERE ($1::timestamptz IS NULL OR minute >= $1::timestamptz) ORDER BY minute, code`,
    [since],
  );
  return result.rows.map((row: Record<string, unknown>) => REFUSAL_METRICS.read(row));
}

/**
 * The latest final decision about a proposal (outcome allow, block or deny;
 * a `verify_first` is not final), with its code and entry position, or null.
 */
export async function decisionFor(pool: pg.Pool, proposalHash: string): Promise<EnforcementRow | null> {
  const result = await pool.query(
    `SELECT * FROM enforcement_records WHERE proposal_hash = $1 AND outcome <> 'verify_first'
     ORDER BY sequenced_at DESC, partition DESC, index DESC LIMIT 1`,
    [proposalHash],
  );
  const row = result.rows[0] as Record<string, unknown> | undefined;
  return row === undefined ? null : ENFORCEMENT_RECORDS.read(row);
}

/** Enforcement records (one per decision), newest first; with `agentId`, that agent's only. */
export async function enforcementRecords(pool: pg.Pool, options: { agentId?: string; limit: number }): Promise<EnforcementRow[]> {
  const limit = checkLimit(options.limit);
  const result = await pool.query(
    `SELECT * FROM enforcement_records WHERE ($1::text IS NULL OR agent_id = $1::text)
     ORDER BY sequenced_at DESC, partition DESC, index DESC LIMIT $2`,
    [options.agentId ?? null, limit],
  );
  return result.rows.map((row: Record<string, unknown>) => ENFORCEMENT_RECORDS.read(row));
}
