import { CodedError } from './coded-error.js';

/**
 * Operational error codes: outages, bugs, bad configuration and bad
 * arguments. They are never refusals. A refusal (ReasonCode) says the ledger
 * judged an action or a statement and said no; an operational error says the
 * ledger could not judge at all. `/metrics`, the SDK and the CLI keep the two
 * apart, so an outage never reads as tampering or as a policy decision.
 */
export const OperationalCode = {
  /** A dependency (broker, database, API, channel) could not be reached or did not answer. */
  UNAVAILABLE: 'UNAVAILABLE',
  /** A bug or an unexpected state inside the ledger. */
  INTERNAL: 'INTERNAL',
  /** The installation or a setting is missing or wrong (configuration file, URL, key file). */
  BAD_CONFIGURATION: 'BAD_CONFIGURATION',
  /** The caller's request is malformed: a parameter, an encoding, a header, a command-line argument. */
  BAD_ARGUMENT: 'BAD_ARGUMENT',
  /** What was asked for does not exist (yet). */
  NOT_FOUND: 'NOT_FOUND',
  /** The caller's own wait ran out before an answer came; nothing was decided by that. */
  CLIENT_TIMEOUT: 'CLIENT_TIMEOUT',
  /** A read of the API came without valid authentication: no signature, a stale or replayed one, an unknown or revoked key (HTTP 401). */
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** An authenticated principal asked for what its role does not let it read (HTTP 403). */
  FORBIDDEN: 'FORBIDDEN',
} as const;

/** One of {@link OperationalCode}. */
export type OperationalCode = (typeof OperationalCode)[keyof typeof OperationalCode];

/** Every operational code, in registry order. */
export const OPERATIONAL_CODES: readonly OperationalCode[] = Object.freeze(Object.values(OperationalCode));

const operationalCodeSet: ReadonlySet<string> = new Set(OPERATIONAL_CODES);

/** True when `value` names an operational (non-refusal) error code. */
export function isOperationalCode(value: unknown): value is OperationalCode {
  return typeof value === 'string' && operationalCodeSet.has(value);
}

/** Codes retried by default: the dependency may come back, the wait may be repeated. */
const RETRYABLE_BY_DEFAULT: ReadonlySet<OperationalCode> = new Set([OperationalCode.UNAVAILABLE, OperationalCode.CLIENT_TIMEOUT]);

/**
 * The sibling of LedgerError for operational failures. `code` is an
 * {@link OperationalCode}, never a ReasonCode; `retryable` travels with it
 * across process boundaries like LedgerError's.
 */
export class OperationalError<C extends OperationalCode = OperationalCode> extends CodedError<C> {
  constructor(code: C, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, options.retryable ?? RETRYABLE_BY_DEFAULT.has(code), options.cause);
    this.name = 'OperationalError';
  }
}
