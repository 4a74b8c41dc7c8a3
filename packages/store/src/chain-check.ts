import { AUTHORITY_PARTITION, canonicalJson, entryHash, envelopeHash, headerOf, sha256Hex, type Entry } from '@agent-ledger/core';

/** What the projection has verified of one ledger partition. */
export interface VerifiedHead {
  readonly size: number;
  readonly head: string;
  /** sequencedAt of the head entry, or null for an empty partition. */
  readonly sequencedAt: string | null;
  /** authorityIndex of the head entry, or null for an empty partition. */
  readonly authorityIndex: number | null;
}

/** An entry that links onto the verified head, with its statement hash computed once. */
export interface LinkedEntry {
  readonly entry: Entry;
  readonly statementHash: string;
}

/** Why a batch does not link: the first entry that fails and a one-line reason. */
export interface LinkFailure {
  readonly index: number;
  readonly message: string;
}

/** Outcome of {@link checkLinks}: the new entries in index order, or the first failure. */
export type LinkCheck =
  | { readonly ok: true; readonly fresh: readonly LinkedEntry[]; readonly skipped: number; readonly head: VerifiedHead }
  | { readonly ok: false; readonly failure: LinkFailure };

/**
 * Checks a batch of entries of one partition against the verified head
 * (SPEC.md section 9, rules 5 and 6), without touching the database.
 *
 * The entries are untrusted (they come from Kafka): every entry's hash is
 * recomputed from its content. An entry below the verified size must be the
 * one already applied (`storedHashes` holds the stored hash of each such
 * index); an entry at the size must link to the head; one beyond it is a gap.
 * `sequencedAt` never decreases; `authorityIndex` equals the index on the
 * authority partition and never decreases on an events partition.
 */
export function checkLinks(
  partition: number,
  verified: VerifiedHead,
  entries: readonly Entry[],
  storedHashes: ReadonlyMap<number, string>,
): LinkCheck {
  const known = new Map(storedHashes);
  const fresh: LinkedEntry[] = [];
  let { size, head, sequencedAt, authorityIndex } = verified;
  let skipped = 0;
  const fail = (index: number, message: string): LinkCheck => ({ ok: false, failure: { index, message } });
  for (const entry of entries) {
    if (entry.partition !== partition) {
      return fail(entry.index, `entry ${entry.partition}/${entry.index} delivered to partition ${partition}`);
    }
    let hash: string;
    let statementHash: string;
    try {
      const statementCanonical = canonicalJson(entry.envelope.statement);
      statementHash = sha256Hex(statementCanonical);
      hash = entryHash(headerOf(entry, envelopeHash(entry.envelope, statementCanonical)));
    } catch {
      return fail(entry.index, `entry ${partition}/${entry.index} cannot be canonicalized`);
    }
    if (hash !== entry.hash) return fail(entry.index, `entry ${partition}/${entry.index} does not hash to the hash it carries`);
    if (entry.index < size) {
      if (known.get(entry.index) !== hash) {
        return fail(entry.index, `entry ${partition}/${entry.index} differs from the entry already applied at that index`);
      }
      skipped += 1;
      continue;
    }
    if (entry.index > size) return fail(entry.index, `gap: entry ${partition}/${entry.index} arrived when ${size} was expected`);
    if (entry.prev !== head) return fail(entry.index, `entry ${partition}/${entry.index} does not link to the previous entry's hash`);
    if (sequencedAt !== null && entry.sequencedAt < sequencedAt) {
      // Fixed-width UTC timestamps order as strings (SPEC.md section 1).
      return fail(entry.index, `entry ${partition}/${entry.index} is sequenced before the previous entry`);
    }
    if (partition === AUTHORITY_PARTITION ? entry.authorityIndex !== entry.index : authorityIndex !== null && entry.authorityIndex < authorityIndex) {
      return fail(entry.index, `entry ${partition}/${entry.index} has authority index ${entry.authorityIndex} out of order`);
    }
    fresh.push({ entry, statementHash });
    known.set(entry.index, hash);
    size += 1;
    head = hash;
    sequencedAt = entry.sequencedAt;
    authorityIndex = entry.authorityIndex;
  }
  return { ok: true, fresh, skipped, head: { size, head, sequencedAt, authorityIndex } };
}
