import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/** HTTP status for each refusal an API caller can cause. Everything refused is a 4xx with its code, never a 500. */
const STATUS: Partial<Record<ReasonCode, number>> = {
  SCHEMA_INVALID: 400,
  INVALID_SIGNATURE: 401,
  KEY_UNKNOWN: 401,
  KEY_REVOKED: 403,
  KEY_ROLE: 403,
  WEAK_KEY: 400,
  POLICY_VIOLATION: 403,
  SEPARATION_OF_DUTIES: 403,
  DELEGATION_WIDENS: 403,
  STALE_APPROVAL: 409,
  GRANT_MISMATCH: 409,
  GRANT_MISSING: 404,
  INTEGRITY_FAILURE: 409,
  REPLAY: 409,
  RATE_LIMIT: 429,
};

/** The wire form of an error: `{ error: { code, message, retryable } }`. */
export function errorBody(err: LedgerError): { error: { code: string; message: string; retryable: boolean } } {
  return { error: err.toJSON() };
}

/** HTTP status of a LedgerError. */
export function statusOf(err: LedgerError): number {
  return STATUS[err.code] ?? (err.retryable ? 503 : 400);
}
