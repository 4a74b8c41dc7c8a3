import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { unavailable, type BusError } from '../errors.js';

/**
 * Broker answers that mean "a newer producer with this transactional id
 * exists". Kafka 4.1 answers kafkajs's old request versions with
 * INVALID_PRODUCER_EPOCH (47): brokers map PRODUCER_FENCED (90, KIP-588) down
 * for clients that predate it. The broker also uses 47 when it expired a
 * transaction that outlived its timeout and bumped the epoch; for kafkajs the
 * two cannot be told apart, and both leave this producer unable to write, so
 * both fence (fail-stop is the safe reading for a single-writer ledger).
 */
const FENCING_TYPES: ReadonlySet<string> = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED']);

/** kafkajs 2.2.4 does not know code 90 and reports it as an unknown code whose number survives only in the message. */
const UNKNOWN_PRODUCER_FENCED = /^Unknown error code 90$/;

/** Requests Kafka will refuse however often they are sent: the caller's data or setup is wrong. */
const REJECTED_REQUEST_TYPES: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_PARTITIONS',
  'INVALID_REPLICATION_FACTOR',
  'INVALID_REPLICA_ASSIGNMENT',
  'INVALID_CONFIG',
  'INVALID_REQUEST',
  'POLICY_VIOLATION',
  'INVALID_GROUP_ID',
  'INVALID_TRANSACTION_TIMEOUT',
]);

/** Missing permissions: retrying will not help, and nobody can reach the log. */
const DENIED_TYPES: ReadonlySet<string> = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
]);

/** Certificate checks Node's TLS failed: the configured CA (or client certificate) does not fit the cluster. */
const TLS_CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
]);

interface ErrorLike {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly type?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly errors?: unknown;
  readonly originalError?: unknown;
}

/**
 * Every error in a kafkajs error tree: kafkajs wraps the broker's answer in
 * `cause` (retry exhaustion, non-retriable wrappers), `originalError`
 * (connection errors) or `errors` (aggregate errors of multi-topic admin calls).
 */
function errorTree(root: unknown): ErrorLike[] {
  const found: ErrorLike[] = [];
  const pending: unknown[] = [root];
  const seen = new Set<unknown>();
  while (pending.length > 0 && found.length < 64) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null || seen.has(next)) continue;
    seen.add(next);
    const error = next as ErrorLike;
    found.push(error);
    pending.push(error.cause, error.originalError);
    if (Array.isArray(error.errors)) pending.push(...(error.errors as unknown[]));
  }
  return found;
}

/** The broker error types (kafkajs's names, e.g. `INVALID_PRODUCER_EPOCH`) found anywhere in `error`. */
export function protocolErrorTypes(error: unknown): ReadonlySet<string> {
  const types = new Set<string>();
  for (const e of errorTree(error)) if (typeof e.type === 'string') types.add(e.type);
  return types;
}

/** True when `error` says a newer producer with the same transactional id has taken over. */
export function isFencing(error: unknown): boolean {
  return errorTree(error).some(
    (e) => (typeof e.type === 'string' && FENCING_TYPES.has(e.type)) || (typeof e.message === 'string' && UNKNOWN_PRODUCER_FENCED.test(e.message)),
  );
}

/**
 * A typed error for a failed kafkajs call. A LedgerError or OperationalError
 * passes through. The broker's answer decides the rest: rejected requests are
 * BAD_ARGUMENT, a missing topic or partition INTEGRITY_FAILURE, missing
 * permissions BAD_CONFIGURATION; all three are not retryable. Anything else
 * (network, timeouts, coordinator changes, kafkajs giving up after its own
 * retries) is UNAVAILABLE and retryable: an outage, never a refusal.
 */
export function fromKafkaError(error: unknown, action: string): BusError {
  if (error instanceof LedgerError || error instanceof OperationalError) return error;
  const types = protocolErrorTypes(error);
  const detail = error instanceof Error ? error.message : String(error);
  const message = `${action}: ${detail}`;
  const tree = errorTree(error);
  // Wrong credentials or a CA that does not fit: retrying will not help; an operator must fix the configuration.
  if (tree.some((e) => e.name === 'KafkaJSSASLAuthenticationError')) {
    return new OperationalError(OperationalCode.BAD_CONFIGURATION, `${message} (SASL authentication failed)`, { cause: error });
  }
  const certificate = tree.find((e) => typeof e.code === 'string' && TLS_CERTIFICATE_CODES.has(e.code));
  if (certificate !== undefined) {
    return new OperationalError(OperationalCode.BAD_CONFIGURATION, `${message} (TLS: ${String(certificate.code)})`, { cause: error });
  }
  for (const type of types) {
    if (REJECTED_REQUEST_TYPES.has(type)) return new OperationalError(OperationalCode.BAD_ARGUMENT, `${message} (${type})`, { cause: error });
    if (DENIED_TYPES.has(type)) return new OperationalError(OperationalCode.BAD_CONFIGURATION, `${message} (${type})`, { cause: error });
  }
  if (types.has('UNKNOWN_TOPIC_OR_PARTITION')) {
    return new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${message} (UNKNOWN_TOPIC_OR_PARTITION)`, { cause: error });
  }
  return unavailable(message, { cause: error, retryable: true });
}
