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
 * An entry's recomputed hashes, or null when it cannot be canonicalized.
 * Computed from content alone (no stored state), so {@link hashEntries} can
 * run while the database is still answering the apply's first round trip.
 */
export interface EntryHashes {
  /** The entry hash recomputed from its header and envelope (not the one it carries). */
  readonly hash: string;
  /** SHA-256 of the statement's canonical bytes, reused by the fold. */
  readonly statementHash: string;
}

/**
 * Recomputes every entry's hash and statement hash from its content (the
 * entries are untrusted: they come from Kafka). The statement is
 * canonicalized once; its text feeds both hashes.
 */
export function hashEntries(entries: readonly Entry[]): (EntryHashes | null)[] {
  const hashes: (EntryHashes | null)[] = new Array<EntryHashes | null>(entries.length);
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Entry;
    try {
      const statementCanonical = canonicalJson(entry.envelope.statement);
      hashes[i] = {
        statementHash: sha256Hex(statementCanonical),
        hash: entryHash(headerOf(entry, envelopeHash(entry.envelope, statementCanonical))),
      };
    } catch {
      hashes[i] = null;
    }
  }
  return hashes;
}

/**
 * Checks a batch of entries of one partition against the verified head
 * (SPEC.md section 9, rules 5 and 6), without touching the database.
 *
 * The entries are untrusted (they come from Kafka): every entry's hash is
 * recomputed from its content (`hashed`, from {@link hashEntries}, when the
 * caller computed them already). An entry below the verified size must be the
 * one already applied (`storedHashes` holds the stored hash of each such
 * index); an entry at the size must link to the head; one beyond it is a gap.
 * `sequencedAt` never decreases; `authorityIndex` equals the index on the
 * authority partition and never decreases on an events partition. The first
 * failing entry in batch order is the one reported.
 */
export function checkLinks(
  partition: number,
  verified: VerifiedHead,
  entries: readonly Entry[],
  storedHashes: ReadonlyMap<number, string>,
  hashed: readonly (EntryHashes | null)[] = hashEntries(entries),
): LinkCheck {
  if (hashed.length !== entries.length) throw new RangeError('checkLinks: one hash result per entry is needed');
  const known = new Map(storedHashes);
  const fresh: LinkedEntry[] = [];
  let { size, head, sequencedAt, authorityIndex } = verified;
  let skipped = 0;
  const fail = (index: number, message: string): LinkCheck => ({ ok: false, failure: { index, message } });
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as Entry;
    if (entry.partition !== partition) {
      return fail(entry.index, `entry ${entry.partition}/${entry.index} delivered to partition ${partition}`);
    }
    const hashes = hashed[i];
    if (hashes === null || hashes === undefined) return fail(entry.index, `entry ${partition}/${entry.index} cannot be canonicalized`);
    const { hash, statementHash } = hashes;
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
