import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { LedgerError, OperationalCode, OperationalError, ReasonCode } from '@agent-ledger/refusals';
import { TrustRootSchema, parseStrictJson, type TrustRoot } from '@agent-ledger/core';

/** Largest trust-root file read: 32 root keys and an origin fit in about 3 KiB. */
export const MAX_TRUST_ROOT_BYTES = 64 * 1024;

/**
 * Reads at most `maxBytes` of a small input file (untrusted): it must be a
 * regular file (not a device, a FIFO or a directory, which may never end)
 * no larger than `maxBytes`. Never reads more than `maxBytes + 1` bytes,
 * whatever the file claims or becomes. BAD_ARGUMENT otherwise, NOT_FOUND
 * when it cannot be opened.
 */
export function readSmallFile(path: string, maxBytes: number, what: string): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new OperationalError(OperationalCode.NOT_FOUND, `cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${what} ${path} is not a regular file`);
    if (stat.size > maxBytes) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${what} ${path} is ${stat.size} bytes, more than ${maxBytes}`);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw new OperationalError(OperationalCode.BAD_ARGUMENT, `${what} ${path} is more than ${maxBytes} bytes`);
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Reads and checks a trust-root file (untrusted input): at most {@link MAX_TRUST_ROOT_BYTES} of a regular file. */
export function readTrustRoot(path: string): TrustRoot {
  const parsed = TrustRootSchema.safeParse(parseStrictJson(readSmallFile(path, MAX_TRUST_ROOT_BYTES, 'trust root')));
  if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${path}: not a trust root`);
  if (parsed.data.threshold > parsed.data.rootKeys.length || new Set(parsed.data.rootKeys).size !== parsed.data.rootKeys.length) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${path}: threshold exceeds the distinct root keys`);
  }
  return parsed.data;
}

/** The canonical file text of a trust root. */
export function formatTrustRoot(trustRoot: TrustRoot): string {
  return `${JSON.stringify(trustRoot, null, 2)}\n`;
}
