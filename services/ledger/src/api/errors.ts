import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';

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

/** HTTP status of each operational error: outages are 503, the caller's mistakes 4xx, the ledger's own 500. */
const OPERATIONAL_STATUS: Record<OperationalCode, number> = {
  UNAVAILABLE: 503,
  INTERNAL: 500,
  BAD_CONFIGURATION: 500,
  BAD_ARGUMENT: 400,
  NOT_FOUND: 404,
  CLIENT_TIMEOUT: 504,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
};

/** What the API answers with: a refusal (LedgerError) or an operational error. */
export type ApiError = LedgerError | OperationalError;

/** The wire form of an error: `{ error: { code, message, retryable } }`. */
export function errorBody(err: ApiError): { error: { code: string; message: string; retryable: boolean } } {
  return { error: err.toJSON() };
}

/** HTTP status of an error the API answers with. */
export function statusOf(err: ApiError): number {
  if (err instanceof OperationalError) return OPERATIONAL_STATUS[err.code];
  return STATUS[err.code] ?? (err.retryable ? 503 : 400);
}

/** A caller's bad path, query or header value: 400 BAD_ARGUMENT (an operational error, not a refusal of a statement). */
export function badArgument(message: string): OperationalError {
  return new OperationalError(OperationalCode.BAD_ARGUMENT, message);
}

/** Something the caller asked for is not there (yet, when `retryable`). */
export function notFound(message: string, retryable = false): OperationalError {
  return new OperationalError(OperationalCode.NOT_FOUND, message, { retryable });
}
