import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import type { SqlQueryable } from './sql.js';

/** One signed read's replay key and how long it must be remembered. */
export interface ReadNonceClaim {
  /** The signing key (64 hex). */
  readonly keyId: string;
  /** The read's nonce (32 hex). */
  readonly nonce: string;
  /** Unix ms after which no API process accepts the read any more: the row may go then. */
  readonly expiresAtMs: number;
  /** Unix ms now (the caller's clock): a row of the same pair already expired is taken over. */
  readonly nowMs: number;
}

const KEY_ID = /^[0-9a-f]{64}$/;
const NONCE = /^[0-9a-f]{32}$/;

function checkMs(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${name} must be a whole number of unix ms`);
  return value;
}

/**
 * Records that a signed read with this (key, nonce) was accepted, in
 * `read_nonces` (migration 006): true the first time, false when any API
 * process of the installation (this one before a restart included) accepted
 * it already and the row has not expired. The primary key decides between
 * two processes claiming at once: exactly one of them gets true.
 * @throws LedgerError SCHEMA_INVALID on a malformed key id, nonce or time (checked before any query).
 */
export async function claimReadNonce(db: SqlQueryable, claim: ReadNonceClaim): Promise<boolean> {
  if (!KEY_ID.test(claim.keyId)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'a read nonce claim names a key id of 64 hex');
  if (!NONCE.test(claim.nonce)) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'a read nonce is 32 hex');
  const expiresAtMs = checkMs(claim.expiresAtMs, 'expiresAtMs');
  const nowMs = checkMs(claim.nowMs, 'nowMs');
  // A row of the same pair that has expired (not deleted yet) is taken over: the read it recorded is stale everywhere.
  const result = await db.query(
    `INSERT INTO read_nonces (key_id, nonce, expires_at_ms) VALUES ($1, $2, $3)
     ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at_ms = EXCLUDED.expires_at_ms
     WHERE read_nonces.expires_at_ms < $4`,
    [claim.keyId, claim.nonce, String(expiresAtMs), String(nowMs)],
  );
  return result.rowCount === 1;
}

/** Deletes the `read_nonces` rows expired at `nowMs` (unix ms); returns how many. */
export async function expireReadNonces(db: SqlQueryable, nowMs: number): Promise<number> {
  const result = await db.query('DELETE FROM read_nonces WHERE expires_at_ms < $1', [String(checkMs(nowMs, 'nowMs'))]);
  return result.rowCount ?? 0;
}
