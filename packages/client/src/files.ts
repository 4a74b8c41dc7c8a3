import { readFileSync, statSync } from 'node:fs';
import { OperationalCode, OperationalError } from '@agent-ledger/refusals';

/** Largest key or genesis file read (a key file is about 200 bytes; a genesis of 1000 keys under 200 KiB). */
export const MAX_FILE_BYTES = 1 << 20;

/** Reads a small regular file (untrusted input): NOT_FOUND when it cannot be read, BAD_ARGUMENT when it is not a regular file or too large. */
export function readSmall(path: string, what: string, maxBytes = MAX_FILE_BYTES): string {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${what} ${path} is not a regular file`);
    size = stat.size;
  } catch (err) {
    if (err instanceof OperationalError) throw err;
    throw new OperationalError(OperationalCode.NOT_FOUND, `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  if (size > maxBytes) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${what} ${path} is larger than ${maxBytes} bytes`);
  return readFileSync(path, 'utf8');
}
