import { canonicalJson } from './jcs.js';
import { fromHex, toHex } from './encoding.js';
import { type Entry, ZERO_HASH, entryHash, envelopeHash, headerOf } from './entry.js';
import { MerkleAccumulator } from './merkle.js';
import { formatCheckpoint } from './checkpoint.js';
import type { Ed25519Backend } from './ed25519.js';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { signNote, type NoteSigner, type NoteVerifier, type OpenedNote } from './note.js';
import type { Signer } from './statement.js';
import type { Envelope } from './statements.js';

/**
 * Everything a {@link PartitionChain} needs to go on appending after
 * `size` entries: the newest entry's hash and time, and the Merkle
 * frontier (hex, most significant subtree first). A sequencer writes it
 * beside each checkpoint so that a restart resumes there instead of
 * re-reading the partition from its first entry.
 */
export interface ChainHead {
  readonly size: number;
  readonly head: string;
  readonly lastSequencedAt: string;
  readonly frontier: readonly string[];
}

/**
 * The append side of one partition's log: assigns the next index, links the
 * entry to the previous entry's hash and feeds the Merkle accumulator. Only
 * the sequencer owns one of these per partition (single writer).
 */
export class PartitionChain {
  readonly partition: number;
  #size = 0;
  #head = ZERO_HASH;
  #lastSequencedAt = '';
  #tree = new MerkleAccumulator();

  constructor(partition: number) {
    this.partition = partition;
  }

  /** Where the chain stands now (see {@link ChainHead}). */
  snapshot(): ChainHead {
    return { size: this.#size, head: this.#head, lastSequencedAt: this.#lastSequencedAt, frontier: this.#tree.frontier().map((h) => toHex(h)) };
  }

  /**
   * A chain that goes on after `head`. Untrusted input (read back from the
   * log): throws SCHEMA_INVALID when the frontier does not fit the size; the
   * caller checks the resulting root against a signed checkpoint.
   */
  static resume(partition: number, head: ChainHead): PartitionChain {
    const chain = new PartitionChain(partition);
    chain.#tree = MerkleAccumulator.resume(head.size, head.frontier.map((h) => fromHex(h, 32)));
    chain.#size = head.size;
    chain.#head = head.head;
    chain.#lastSequencedAt = head.lastSequencedAt;
    return chain;
  }

  /** Number of entries appended. */
  get size(): number {
    return this.#size;
  }

  /** Hash of the newest entry, or the zero hash when empty. */
  get head(): string {
    return this.#head;
  }

  /** Merkle root (RFC 9162 MTH) over all entry hashes so far. */
  root(): Uint8Array {
    return this.#tree.root();
  }

  /**
   * Wraps a signed statement as the next entry. `sequencedAt` never goes
   * backwards within a partition: an earlier clock reading is raised to the
   * previous entry's time.
   */
  append(envelope: Envelope, sequencedAt: Date, authorityIndex: number, statementCanonical?: string): Entry {
    let at = sequencedAt.toISOString();
    if (at < this.#lastSequencedAt) at = this.#lastSequencedAt;
    const base = { partition: this.partition, index: this.#size, sequencedAt: at, authorityIndex, prev: this.#head, envelope };
    const hash = entryHash(headerOf(base, envelopeHash(envelope, statementCanonical ?? canonicalJson(envelope.statement))));
    this.#tree.append(fromHex(hash, 32));
    this.#size += 1;
    this.#head = hash;
    this.#lastSequencedAt = at;
    return { ...base, hash };
  }

  /**
   * Resumes from entries already on the log (crash recovery). Each must
   * continue the chain: the next index, chained to the head. A read that
   * breaks it (a record of an aborted transaction a client let through, a
   * gap) is an INTEGRITY_FAILURE, retryable, so a writer never appends to a
   * chain it could not read whole.
   */
  replay(entry: Entry): void {
    if (entry.partition !== this.partition || entry.index !== this.#size || entry.prev !== this.#head) {
      throw new LedgerError(
        ReasonCode.INTEGRITY_FAILURE,
        `partition ${this.partition}: entry ${entry.partition}/${entry.index} read back does not continue the chain of ${this.#size} entries`,
        { retryable: true },
      );
    }
    this.#tree.append(fromHex(entry.hash, 32));
    this.#size += 1;
    this.#head = entry.hash;
    this.#lastSequencedAt = entry.sequencedAt;
  }
}

/** Origin line of a partition's checkpoints: the ledger origin, a slash, the partition number. */
export function partitionOrigin(ledgerOrigin: string, partition: number): string {
  return `${ledgerOrigin}/${partition}`;
}

/** A note signer for a sequencer key, named for the ledger origin. */
export function sequencerNoteSigner(ledgerOrigin: string, signer: Signer, ed25519: Ed25519Backend): NoteSigner {
  return {
    name: ledgerOrigin,
    publicKey: fromHex(signer.keyId, 32),
    sign: (message) => ed25519.sign(signer.seed, message),
  };
}

/**
 * The key names a partition's checkpoints are signed under, in signature
 * order, by authority rules version (SPEC.md section 6): from version 3 the
 * checkpoint's origin line (`<origin>/<partition>`, the name C2SP tools look
 * a log's key up by) and then the ledger origin; before, the ledger origin.
 * Every one of them must carry a verified signature.
 */
export function checkpointKeyNames(ledgerOrigin: string, partition: number, authorityRulesVersion: number): readonly string[] {
  return authorityRulesVersion >= 3 ? [partitionOrigin(ledgerOrigin, partition), ledgerOrigin] : [ledgerOrigin];
}

/**
 * Note verifiers for a partition's checkpoints: each sequencer key under the
 * origin line and the ledger origin, so that a bad signature under either (a
 * known key's) fails the whole note. {@link checkCheckpointSigners} then says
 * whether the names the ledger's rules require all verified.
 */
export function checkpointVerifiers(
  ledgerOrigin: string,
  partition: number,
  publicKeys: Iterable<Uint8Array>,
  verify: NoteVerifier['verify'],
): NoteVerifier[] {
  const names = [partitionOrigin(ledgerOrigin, partition), ledgerOrigin];
  const out: NoteVerifier[] = [];
  for (const publicKey of publicKeys) for (const name of names) out.push({ name, publicKey, verify });
  return out;
}

/**
 * Throws CHECKPOINT_INVALID unless an opened checkpoint note was verified
 * under every key name its ledger's authority rules require
 * ({@link checkpointKeyNames}).
 */
export function checkCheckpointSigners(note: OpenedNote, ledgerOrigin: string, partition: number, authorityRulesVersion: number): void {
  for (const name of checkpointKeyNames(ledgerOrigin, partition, authorityRulesVersion)) {
    if (!note.verifiedBy.includes(name)) {
      throw new LedgerError(ReasonCode.CHECKPOINT_INVALID, `checkpoint of partition ${partition} carries no valid sequencer signature under the key name ${name} (authority rules ${authorityRulesVersion})`);
    }
  }
}

/**
 * Signs a C2SP tlog-checkpoint note over a partition's current size and
 * root, with the sequencer key under each of {@link checkpointKeyNames}.
 */
export function signCheckpoint(chain: PartitionChain, ledgerOrigin: string, noteSigner: NoteSigner, authorityRulesVersion = 1): string {
  const body = formatCheckpoint({
    origin: partitionOrigin(ledgerOrigin, chain.partition),
    size: chain.size,
    rootHash: chain.root(),
    extensions: [],
  });
  const signers = checkpointKeyNames(ledgerOrigin, chain.partition, authorityRulesVersion).map(
    (name): NoteSigner => (name === noteSigner.name ? noteSigner : { name, publicKey: noteSigner.publicKey, sign: (message) => noteSigner.sign(message) }),
  );
  return signNote(body, signers);
}
