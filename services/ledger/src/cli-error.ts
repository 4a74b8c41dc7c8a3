import { LedgerError, OperationalError } from '@agent-ledger/refusals';

/** Exit status of every command: 0 fine, 1 the content is wrong, 2 usage or I/O. */
export const Exit = { ok: 0, invalid: 1, usage: 2 } as const;

/** A usage or I/O problem: exit 2 with one line on stderr. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Prints an error the way every command does and returns its exit status. */
export function reportError(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`ledger: ${err.message}\n`);
    return Exit.usage;
  }
  if (err instanceof LedgerError || err instanceof OperationalError) {
    process.stderr.write(`ledger: ${err.code}: ${err.message}\n`);
    return Exit.usage;
  }
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    process.stderr.write(`ledger: ${(err as Error).message}\n`);
    return Exit.usage;
  }
  throw err;
}
