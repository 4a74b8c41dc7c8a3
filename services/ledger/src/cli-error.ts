import { LedgerError, OperationalError } from '@agent-ledger/refusals';

/** Exit status of every command: 0 fine, 1 the content is wrong, 2 usage or I/O. */
export const Exit = { ok: 0, invalid: 1, usage: 2 } as const;

/**
 * The exit status of a typed failure, with or without `--json`: 1 for a
 * refusal or invalid content (a LedgerError, whose code is a ReasonCode), 2
 * for a usage, configuration or operational error (an OperationalError).
 */
export function exitStatusOf(err: LedgerError | OperationalError): number {
  return err instanceof LedgerError ? Exit.invalid : Exit.usage;
}

/** A usage or I/O problem: exit 2 with one line on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * Prints an error the way every command does without `--json` (one line on
 * stderr) and returns its exit status: the same as with `--json`.
 */
export function reportError(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`ledger: ${err.message}\n`);
    return Exit.usage;
  }
  if (err instanceof LedgerError || err instanceof OperationalError) {
    process.stderr.write(`ledger: ${err.code}: ${err.message}\n`);
    return exitStatusOf(err);
  }
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    process.stderr.write(`ledger: ${(err as Error).message}\n`);
    return Exit.usage;
  }
  throw err;
}
