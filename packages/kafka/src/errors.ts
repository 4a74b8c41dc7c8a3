import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';

/**
 * The code of a log the ledger could not reach or write (broker down, request
 * timed out, coordinator moving): an outage, never a refusal. The ledger
 * fails closed on it. Always paired with `retryable`.
 */
export const UNREACHABLE_CODE = OperationalCode.UNAVAILABLE;

/** What a LogBus call throws: a LedgerError for what the log's shape says (fencing, missing history), an OperationalError for outages and mistakes. */
export type BusError = LedgerError | OperationalError;

/** The log could not be reached (retryable unless said otherwise). */
export function unavailable(message: string, options: { cause?: unknown; retryable?: boolean } = {}): OperationalError {
  return new OperationalError(OperationalCode.UNAVAILABLE, message, options);
}

/**
 * A newer writer with the same transactional id has initialised: this one is
 * a zombie. Nothing it wrote in the failed transaction becomes visible, and
 * every later commit throws this again. Never retryable: the process that
 * still wants the partition opens a new writer (which fences the other) and
 * rebuilds its state from the log.
 */
export class WriterFencedError extends LedgerError<typeof ReasonCode.INTEGRITY_FAILURE> {
  readonly transactionalId: string;

  constructor(transactionalId: string, cause?: unknown) {
    super(ReasonCode.INTEGRITY_FAILURE, `writer ${transactionalId} was fenced by a newer writer with the same transactional id`, {
      cause,
      retryable: false,
    });
    this.name = 'WriterFencedError';
    this.transactionalId = transactionalId;
  }
}

/** A caller's mistake in the arguments (bad offset, empty group id): BAD_ARGUMENT, never retryable. */
export function invalidArgument(message: string): OperationalError {
  return new OperationalError(OperationalCode.BAD_ARGUMENT, message);
}

/** The log is not shaped as the ledger relies on (missing partition, wrong count, truncated history). */
export function integrityFailure(message: string, cause?: unknown): LedgerError {
  return new LedgerError(ReasonCode.INTEGRITY_FAILURE, message, { cause });
}
