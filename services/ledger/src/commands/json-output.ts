import { LedgerError, OperationalCode, OperationalError } from '@agent-ledger/refusals';
import { UsageError, exitStatusOf } from '../cli-error.js';

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

/**
 * The fields a command reports beside `ok` (and `error`): on success its
 * report, on the failure of a command that ran to the end and judged (a
 * bundle that does not verify, a check that fails, a corpus under its floor)
 * the report it would print on success. It never holds `ok` or `error`.
 */
export type Report = Readonly<Record<string, unknown>> & { readonly ok?: never; readonly error?: never };

/** The one failure object of every `--json` command: `{"ok":false,"error":{code,message,retryable},...details}`. */
export function failureJson(err: LedgerError | OperationalError, details: Report = {}): { ok: false; error: { code: string; message: string; retryable: boolean } } {
  return { ok: false, error: err.toJSON(), ...details };
}

const stdoutLine = (line: string): void => void process.stdout.write(`${line}\n`);

/**
 * Prints a `--json` command's failure as its one JSON object on one line
 * (stdout unless `write` is given) and returns the exit status: 1 for a
 * refusal or invalid content (LedgerError), 2 for a usage, configuration or
 * operational error. A bug (an untyped error, INTERNAL) keeps its stack on
 * stderr for whoever reports it.
 */
export function reportFailureJson(err: unknown, details: Report = {}, write: (line: string) => void = stdoutLine): number {
  const failure = typedFailure(err);
  // A typed INTERNAL (a server's 500) is reported as it is; an untyped error is a bug of this CLI.
  if (failure !== err && failure.code === OperationalCode.INTERNAL && err instanceof Error) process.stderr.write(`ledger: internal error: ${err.stack ?? err.message}\n`);
  write(JSON.stringify(failureJson(failure, details)));
  return exitStatusOf(failure);
}

/** The one success object of every `--json` command: `{"ok":true,...report}`. */
export function successJson(report: Report): { ok: true } {
  return { ok: true, ...report };
}

/**
 * Prints a command's success: with `--json` one object `{"ok":true,...report}`
 * on one line, else the human lines.
 */
export function reportSuccess(json: boolean | undefined, human: readonly string[], report: Report): void {
  process.stdout.write(json === true ? `${JSON.stringify(successJson(report))}\n` : `${human.join('\n')}\n`);
}

/**
 * Prints the failure of a command that judged (the verdict and its report):
 * with `--json` the failure object carrying the report
 * (`{"ok":false,"error":{...},...report}`), else the human lines on stdout.
 * Returns the exit status of the failure path, the same in both modes.
 */
export function reportFailure(json: boolean | undefined, human: readonly string[], err: LedgerError | OperationalError, report: Report): number {
  if (json === true) return reportFailureJson(err, report);
  process.stdout.write(`${human.join('\n')}\n`);
  return exitStatusOf(err);
}
