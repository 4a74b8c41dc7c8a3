import { z } from 'zod';
import { canonicalJson } from './jcs.js';
import { fromHex, toHex, utf8 } from './encoding.js';
import { sha256Hex } from './hash.js';
import { leafHash } from './merkle.js';
import { EnvelopeSchema, Hash, Timestamp, type Envelope } from './statements.js';

/** `prev` of the first entry of every partition: 32 zero bytes. */
export const ZERO_HASH = '0'.repeat(64);

/** The sequencer's wrapper around a signed statement, as hashed (SPEC.md section 5). */
export interface EntryHeader {
  readonly v: 1;
  readonly partition: number;
  readonly index: number;
  readonly sequencedAt: string;
  readonly authorityIndex: number;
  readonly prev: string;
  readonly envelopeHash: string;
}

/** An entry as carried on Kafka and in bundles: header fields, its own hash, and the envelope. */
export interface Entry {
  readonly partition: number;
  readonly index: number;
  readonly sequencedAt: string;
  readonly authorityIndex: number;
  readonly prev: string;
  readonly hash: string;
  readonly envelope: Envelope;
}

const Index = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Schema of an entry record (bundle line without `kind`, or Kafka value). */
export const EntrySchema = z.strictObject({
  partition: z.number().int().min(0).max(1024),
  index: Index,
  sequencedAt: Timestamp,
  authorityIndex: Index,
  prev: Hash,
  hash: Hash,
  envelope: EnvelopeSchema,
});

/** Canonical JCS text of an envelope, given its statement's canonical text (reused, not recomputed). */
export function envelopeCanonical(envelope: Envelope, statementCanonical: string): string {
  // RFC 8785 orders keys by UTF-16 code units: "signatures" < "statement".
  return `{"signatures":${canonicalJson(envelope.signatures)},"statement":${statementCanonical}}`;
}

/** SHA-256 (hex) of an envelope's canonical bytes. */
export function envelopeHash(envelope: Envelope, statementCanonical: string = canonicalJson(envelope.statement)): string {
  return sha256Hex(envelopeCanonical(envelope, statementCanonical));
}

/**
 * An entry's hash: the RFC 6962 leaf hash, SHA-256(0x00 || JCS(header)). The
 * same value is the entry's Merkle leaf and the next entry's `prev` link.
 */
export function entryHash(header: EntryHeader): string {
  return toHex(leafHash(utf8(canonicalJson(header))));
}

/** The header of an entry record. */
export function headerOf(entry: Omit<Entry, 'hash'>, envHash: string): EntryHeader {
  return {
    v: 1,
    partition: entry.partition,
    index: entry.index,
    sequencedAt: entry.sequencedAt,
    authorityIndex: entry.authorityIndex,
    prev: entry.prev,
    envelopeHash: envHash,
  };
}

/** Raw bytes of an entry hash. */
export function entryHashBytes(entry: Pick<Entry, 'hash'>): Uint8Array {
  return fromHex(entry.hash, 32);
}
