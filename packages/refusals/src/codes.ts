/**
 * The one registry of refusal codes. Every refusal the system emits names one
 * of these; documentation (`packages/refusals/CODES.md`) and the generated JSON
 * Schema enum are checked against this object in both directions by tests.
 */
export const ReasonCode = {
  POLICY_VIOLATION: 'POLICY_VIOLATION',
  RATE_LIMIT: 'RATE_LIMIT',
  UNVERIFIED_TOOL: 'UNVERIFIED_TOOL',
  RCE_RISK: 'RCE_RISK',
  LOOP_DETECTED: 'LOOP_DETECTED',
  INTEGRITY_FAILURE: 'INTEGRITY_FAILURE',
  CONTEXT_INJECTION: 'CONTEXT_INJECTION',
  GRANT_MISSING: 'GRANT_MISSING',
  GRANT_EXPIRED: 'GRANT_EXPIRED',
  GRANT_MISMATCH: 'GRANT_MISMATCH',
  GRANT_BLOCKED: 'GRANT_BLOCKED',
  HUMAN_DENIED: 'HUMAN_DENIED',
  TIMEOUT: 'TIMEOUT',
  NO_CHANNEL: 'NO_CHANNEL',
  INVALID_SIGNATURE: 'INVALID_SIGNATURE',
  KEY_UNKNOWN: 'KEY_UNKNOWN',
  KEY_REVOKED: 'KEY_REVOKED',
  KEY_ROLE: 'KEY_ROLE',
  WEAK_KEY: 'WEAK_KEY',
  REPLAY: 'REPLAY',
  STALE_APPROVAL: 'STALE_APPROVAL',
  SCHEMA_INVALID: 'SCHEMA_INVALID',
  CHECKPOINT_INVALID: 'CHECKPOINT_INVALID',
  UNCOVERED_TAIL: 'UNCOVERED_TAIL',
  INCONSISTENT_HISTORY: 'INCONSISTENT_HISTORY',
  SEPARATION_OF_DUTIES: 'SEPARATION_OF_DUTIES',
  DELEGATION_WIDENS: 'DELEGATION_WIDENS',
} as const;

/** A refusal code: one of the values of {@link ReasonCode}. */
export type ReasonCode = (typeof ReasonCode)[keyof typeof ReasonCode];

/** Every documented code, in registry order. */
export const KNOWN_CODES: readonly ReasonCode[] = Object.freeze(Object.values(ReasonCode));

const knownCodeSet: ReadonlySet<string> = new Set(KNOWN_CODES);

/** True when `value` names a registered refusal code. */
export function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'string' && knownCodeSet.has(value);
}

/**
 * Codes that mean nobody answered. They are never reported as a human denial:
 * silence is not consent, and it is not a human "no" either.
 */
export const SILENCE_CODES: readonly ReasonCode[] = Object.freeze([ReasonCode.TIMEOUT, ReasonCode.NO_CHANNEL]);
