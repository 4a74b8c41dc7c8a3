import { canonicalJson } from './jcs.js';
import { fromHex } from './encoding.js';
import { type Entry, ZERO_HASH, entryHash, envelopeHash, headerOf } from './entry.js';
import { MerkleAccumulator } from './merkle.js';
import { formatCheckpoint } from './checkpoint.js';
import type { Ed25519Backend } from './ed25519.js';
import { signNote, type NoteSigner } from './note.js';
import type { Signer } from './statement.js';
import type { Envelope } from './statements.js';

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
  readonly #tree = new MerkleAccumulator();

  constructor(partition: number) {
    this.partition = partition;
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

  /** Resumes from entries already on the log (crash recovery); they must be in index order. */
  replay(entry: Entry): void {
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

/** A note signer for a sequencer key; its key name is the ledger origin. */
export function sequencerNoteSigner(ledgerOrigin: string, signer: Signer, ed25519: Ed25519Backend): NoteSigner {
  return {
    name: ledgerOrigin,
    publicKey: fromHex(signer.keyId, 32),
    sign: (message) => ed25519.sign(signer.seed, message),
  };
}

/** Signs a C2SP tlog-checkpoint note over a partition's current size and root. */
export function signCheckpoint(chain: PartitionChain, ledgerOrigin: string, noteSigner: NoteSigner): string {
  const body = formatCheckpoint({
    origin: partitionOrigin(ledgerOrigin, chain.partition),
    size: chain.size,
    rootHash: chain.root(),
    extensions: [],
  });
  return signNote(body, [noteSigner]);
}
