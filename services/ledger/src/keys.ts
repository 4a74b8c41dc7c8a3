import { chmodSync, writeFileSync } from 'node:fs';
import { loadKey } from '@agent-ledger/client';
import { generateSeed, keyIdOf, nodeEd25519, toHex, type Signer } from '@agent-ledger/core';

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

/** Reads a key file (untrusted input) and checks that its public key matches its seed: the SDK's loadKey, one parser. */
export function readKeyFile(path: string): Signer {
  return loadKey(path);
}
