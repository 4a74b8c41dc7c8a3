import { createHash } from 'node:crypto';

/** SHA-256 of the concatenation of the given parts (FIPS 180-4). */
export function sha256(...parts: readonly (Uint8Array | string)[]): Uint8Array {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
}

/** SHA-256 as lowercase hex. */
export function sha256Hex(...parts: readonly (Uint8Array | string)[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest('hex');
}
