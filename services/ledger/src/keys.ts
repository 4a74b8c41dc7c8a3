import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { Principal, fromHex, generateSeed, keyIdOf, nodeEd25519, parseStrictJson, toHex, type Signer } from '@agent-ledger/core';

/** On-disk form of a private key: written with owner-only permissions. */
const KeyFileSchema = z.strictObject({
  v: z.literal(1),
  principal: Principal,
  keyId: z.string().regex(/^[0-9a-f]{64}$/),
  seed: z.string().regex(/^[0-9a-f]{64}$/),
});

/** Creates a fresh key for a principal. */
export function newSigner(principal: string): Signer {
  const seed = generateSeed();
  return { principal, keyId: keyIdOf(seed, nodeEd25519), seed };
}

/** Writes a key file readable by its owner only (mode 0600). */
export function writeKeyFile(path: string, signer: Signer): void {
  const text = `${JSON.stringify({ v: 1, principal: signer.principal, keyId: signer.keyId, seed: toHex(signer.seed) }, null, 2)}\n`;
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** Reads a key file (untrusted input) and checks that its public key matches its seed. */
export function readKeyFile(path: string): Signer {
  const parsed = KeyFileSchema.safeParse(parseStrictJson(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${path}: not a key file`);
  const seed = fromHex(parsed.data.seed, 32);
  if (keyIdOf(seed, nodeEd25519) !== parsed.data.keyId) {
    throw new LedgerError(ReasonCode.INTEGRITY_FAILURE, `${path}: keyId does not match the seed`);
  }
  return { principal: parsed.data.principal, keyId: parsed.data.keyId, seed };
}
