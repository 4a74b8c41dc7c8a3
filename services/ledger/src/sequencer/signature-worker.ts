import { signatureVerdict, type SignatureVerdict } from './signature-pool.js';

/** Worker-thread entry: the verdicts of a chunk of raw intake records. */
export function verdicts(raws: readonly Uint8Array[]): SignatureVerdict[] {
  return raws.map(signatureVerdict);
}
