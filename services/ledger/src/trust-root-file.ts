import { readFileSync } from 'node:fs';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { TrustRootSchema, parseStrictJson, type TrustRoot } from '@agent-ledger/core';

/** Reads and checks a trust-root file (untrusted input). */
export function readTrustRoot(path: string): TrustRoot {
  const parsed = TrustRootSchema.safeParse(parseStrictJson(readFileSync(path, 'utf8')));
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
