import { hash } from 'node:crypto';
import type { Entry } from '@agent-ledger/core';

/** Scratch kept between lines; a larger envelope gets a buffer of its own, dropped after its line. */
const KEPT_SCRATCH_BYTES = 256 * 1024;
/** Room for an entry header's canonical text (SPEC.md section 5): seven short fields. */
const HEADER_ROOM = 512;

let scratch = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * The hashes of an entry line (SPEC.md sections 4 and 5), each one call into
 * node:crypto over bytes written once into a scratch buffer reused from line
 * to line, starting from the statement's canonical UTF-8 bytes (already
 * encoded for its signed message, see {@link SignedMessages}). The results
 * equal ledger-core's `statementHash`, `envelopeHash` and
 * `entryHash(headerOf(...))` (pinned by unit tests).
 *
 * Only for entries the `BundleEntrySchema` accepted: the canonical texts of
 * the signatures and the header are written from templates, exact because
 * the schema leaves those fields nothing RFC 8785 would escape (hex, base64,
 * timestamps) and only safe non-negative integers.
 */

/** SHA-256 (hex) of a statement's canonical bytes: how other statements name it. */
export function statementHashOf(statementBytes: Uint8Array): string {
  return hash('sha256', statementBytes, 'hex');
}

/**
 * An entry's hash: SHA-256(0x00 || JCS(header)), the RFC 9162 leaf hash of
 * its header (SPEC.md section 5), as lowercase hex; the header names the
 * SHA-256 of the envelope's canonical bytes, `{"signatures":[...],"statement":...}`
 * (members in RFC 8785 order).
 */
export function entryHashOf(entry: Omit<Entry, 'hash'>, statementBytes: Uint8Array): string {
  const signatures = entry.envelope.signatures;
  let prefix = '{"signatures":[';
  for (let i = 0; i < signatures.length; i++) {
    const { keyId, sig } = signatures[i] as { keyId: string; sig: string };
    prefix += `${i === 0 ? '' : ','}{"keyId":"${keyId}","sig":"${sig}"}`;
  }
  prefix += '],"statement":';
  const needed = prefix.length + statementBytes.length + 1 + HEADER_ROOM;
  let bytes = scratch;
  if (needed > bytes.length) {
    bytes = Buffer.allocUnsafeSlow(Math.max(needed, 2 * bytes.length));
    if (bytes.length <= KEPT_SCRATCH_BYTES) scratch = bytes;
  }
  let end = bytes.write(prefix, 0, 'latin1');
  bytes.set(statementBytes, end);
  end += statementBytes.length;
  bytes[end++] = 0x7d;
  const envelopeHash = hash('sha256', bytes.subarray(0, end), 'hex');
  const header =
    `{"authorityIndex":${entry.authorityIndex},"envelopeHash":"${envelopeHash}","index":${entry.index},` +
    `"partition":${entry.partition},"prev":"${entry.prev}","sequencedAt":"${entry.sequencedAt}","v":1}`;
  bytes[0] = 0x00;
  end = 1 + bytes.write(header, 1, 'latin1');
  return hash('sha256', bytes.subarray(0, end), 'hex');
}
