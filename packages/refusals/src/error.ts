import type { ReasonCode } from './codes.js';

/**
 * Base of every typed error in the system. `code` is a stable ReasonCode that
 * tests and callers switch on; the message is for people only. `retryable`
 * travels with the error across process boundaries (HTTP, Kafka, CLI exit).
 */
export class LedgerError<C extends ReasonCode = ReasonCode> extends Error {
  readonly code: C;
  readonly retryable: boolean;
  override readonly cause: unknown;

  constructor(code: C, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message);
    this.name = 'LedgerError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.cause = options.cause;
  }

  /** The wire form used by the API and the CLI's `--json` output. */
  toJSON(): { code: C; message: string; retryable: boolean } {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }
}
