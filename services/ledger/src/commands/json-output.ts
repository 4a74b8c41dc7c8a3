import { LedgerError, OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { Exit, UsageError } from '../cli-error.js';

/** Node's system error codes that mean "a dependency did not answer": retried by callers. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND', 'EPIPE']);

/** Node's system error codes that mean "no such file". */
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

/**
 * The typed error behind a command's failure: a LedgerError (refused, exit 1)
 * or an OperationalError (exit 2). A UsageError is a BAD_ARGUMENT; a Node
 * system error (`ENOENT`, `ECONNREFUSED`, ...) gets the operational code it
 * means. Anything else is a bug: INTERNAL.
 */
export function typedFailure(err: unknown): LedgerError | OperationalError {
  if (err instanceof LedgerError || err instanceof OperationalError) return err;
  if (err instanceof UsageError) return new OperationalError(OperationalCode.BAD_ARGUMENT, err.message, { cause: err });
  const system = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof system === 'string' && /^E[A-Z_]+$/.test(system)) {
    if (UNREACHABLE.has(system)) return new OperationalError(OperationalCode.UNAVAILABLE, message, { cause: err, retryable: true });
    if (MISSING.has(system)) return new OperationalError(OperationalCode.NOT_FOUND, message, { cause: err });
    return new OperationalError(OperationalCode.BAD_CONFIGURATION, message, { cause: err });
  }
  return new OperationalError(OperationalCode.INTERNAL, message, { cause: err });
}

/** The one failure object of every `--json` command: `{"ok":false,"error":{code,message,retryable}}`. */
export function failureJson(err: LedgerError | OperationalError): { ok: false; error: { code: string; message: string; retryable: boolean } } {
  return { ok: false, error: err.toJSON() };
}

/**
 * Prints a `--json` command's failure as its one JSON object on stdout and
 * returns the exit status: 1 for a refusal (LedgerError), 2 for a usage,
 * configuration or operational error. A bug (INTERNAL) keeps its stack on
 * stderr for whoever reports it.
 */
export function reportFailureJson(err: unknown): number {
  const failure = typedFailure(err);
  if (failure.code === OperationalCode.INTERNAL && err instanceof Error) process.stderr.write(`ledger: internal error: ${err.stack ?? err.message}\n`);
  process.stdout.write(`${JSON.stringify(failureJson(failure))}\n`);
  return failure instanceof LedgerError ? Exit.invalid : Exit.usage;
}

/**
 * Prints a command's success: with `--json` one object `{"ok":true,...report}`
 * on one line, else the human lines.
 */
export function reportSuccess(json: boolean | undefined, human: readonly string[], report: Record<string, unknown>): void {
  process.stdout.write(json === true ? `${JSON.stringify({ ok: true, ...report })}\n` : `${human.join('\n')}\n`);
}
