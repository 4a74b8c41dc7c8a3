import type { ReasonCode } from './codes.js';
import { CodedError } from './coded-error.js';

/**
 * A refusal: `code` is a stable ReasonCode that
 * tests and callers switch on; the message is for people only. `retryable`
 * travels with the error across process boundaries (HTTP, Kafka, CLI exit).
 */
export class LedgerError<C extends ReasonCode = ReasonCode> extends CodedError<C> {
  constructor(code: C, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(code, message, options.retryable ?? false, options.cause);
    this.name = 'LedgerError';
  }
}
