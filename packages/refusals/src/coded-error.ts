/**
 * The shape every typed error shares: a stable string `code` that callers
 * switch on, `retryable` that travels with the error across process
 * boundaries, and the cause. LedgerError (refusals) and OperationalError
 * (outages, bugs, bad configuration) are its two kinds; neither is the other.
 */
export abstract class CodedError<C extends string> extends Error {
  readonly code: C;
  readonly retryable: boolean;
  override readonly cause: unknown;

  protected constructor(code: C, message: string, retryable: boolean, cause: unknown) {
    super(message);
    this.code = code;
    this.retryable = retryable;
    this.cause = cause;
  }

  /** The wire form used by the API and the CLI's `--json` output. */
  toJSON(): { code: C; message: string; retryable: boolean } {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }
}
