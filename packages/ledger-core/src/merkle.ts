/**
 * Merkle hash trees for the ledger's transparency logs, as specified by
 * RFC 9162 (Certificate Transparency 2.0), section 2.1, with SHA-256. This is
 * the same tree as RFC 6962 section 2.1, so roots and proofs interoperate with
 * existing CT / tlog tooling (C2SP tlog-checkpoint, transparency-dev/merkle).
 *
 * - {@link leafHash}, {@link interiorHash}: the domain-separated node hashes
 *   of RFC 9162 2.1.1 (0x00 prefix for leaves, 0x01 for interior nodes, which
 *   prevents second-preimage attacks between leaves and interior nodes).
 * - {@link MerkleAccumulator}: a compact range (one hash per set bit of the
 *   tree size), O(log n) memory, for streaming verification of a bundle.
 * - {@link MerkleTree}: an in-memory log that caches every complete subtree so
 *   roots, inclusion proofs (2.1.3.1) and consistency proofs (2.1.4.1) cost
 *   O(log^2 n) hashes at worst, not O(n).
 * - {@link verifyInclusion} (2.1.3.2) and {@link verifyConsistency} (2.1.4.2):
 *   pure verifiers that return false on any malformed input, never throw.
 *
 * Tree sizes and indices are JavaScript numbers and must be safe integers
 * (< 2^53); all index arithmetic below uses division and remainder rather than
 * 32-bit bitwise operators so sizes above 2^31 work.
 */
import { hash as nodeHash } from 'node:crypto';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';

/** Output size of SHA-256, the hash of every node in the tree. */
const HASH_SIZE = 32;

/** One-shot SHA-256 returning a plain Uint8Array that owns its own 32-byte buffer. */
function sha256(data: Uint8Array): Uint8Array {
  // crypto.hash (Node >= 20.12) was the fastest one-shot SHA-256 in our
  // measurements: ~1.3x createHash().update().digest(), ~1.9x @noble/hashes.
  const digest = nodeHash('sha256', data, 'buffer');
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
}

// Scratch buffer for interior hashes: 0x01 || left || right. Hashing is
// synchronous, so one module-level buffer is safe and saves an allocation.
const interiorScratch = new Uint8Array(1 + 2 * HASH_SIZE);
interiorScratch[0] = 0x01;

/** HASH(0x01 || left || right) without argument checks (internal hot path). */
function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  interiorScratch.set(left, 1);
  interiorScratch.set(right, 1 + HASH_SIZE);
  return sha256(interiorScratch);
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_SIZE;
}

function assertHash(value: unknown, what: string): asserts value is Uint8Array {
  if (!isHash(value)) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${what} must be a ${HASH_SIZE}-byte Uint8Array`);
  }
}

function assertSize(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${what} must be a non-negative safe integer, got ${String(value)}`);
  }
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** The largest power of two strictly smaller than n (n >= 2): the "k" of RFC 9162 2.1.1. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return exactLog2(n) !== -1;
}

/** log2(n) when n is a power of two (n >= 1), otherwise -1. */
function exactLog2(n: number): number {
  if (n < 1) return -1;
  let level = 0;
  while (n % 2 === 0) {
    n /= 2;
    level += 1;
  }
  return n === 1 ? level : -1;
}

/** RFC 9162 2.1.1: the hash of a leaf is MTH({d0}) = HASH(0x00 || d0). */
export function leafHash(leafData: Uint8Array): Uint8Array {
  if (!(leafData instanceof Uint8Array)) {
    throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'leaf data must be a Uint8Array');
  }
  const input = new Uint8Array(1 + leafData.length);
  input[0] = 0x00;
  input.set(leafData, 1);
  return sha256(input);
}

/** RFC 9162 2.1.1: an interior node is HASH(0x01 || MTH(left) || MTH(right)). */
export function interiorHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  assertHash(left, 'left hash');
  assertHash(right, 'right hash');
  return hashChildren(left, right);
}

/** RFC 9162 2.1.1: the hash of an empty list is the hash of an empty string, MTH({}) = HASH(). */
export const EMPTY_ROOT: Uint8Array = sha256(new Uint8Array(0));
// Private copy: typed arrays cannot be frozen, so a caller mutating the
// exported EMPTY_ROOT must not be able to change what this module computes.
const EMPTY = EMPTY_ROOT.slice();

/**
 * MTH (RFC 9162 2.1.1) over a list of leaf hashes (outputs of {@link leafHash}).
 * O(n) hashes, O(log n) extra memory. Returns a fresh copy of
 * {@link EMPTY_ROOT} for an empty list.
 */
export function rootFromLeafHashes(leafHashes: readonly Uint8Array[]): Uint8Array {
  const acc = new MerkleAccumulator();
  for (let i = 0; i < leafHashes.length; i++) {
    acc.append(leafHashes[i] as Uint8Array);
  }
  return acc.root();
}

/**
 * Streaming root computation with O(log n) memory: the compact range [0, n)
 * of the tree, i.e. the roots of the complete subtrees that the binary
 * decomposition of n splits the leaves into, largest (leftmost) first. By the
 * recursive definition of MTH in RFC 9162 2.1.1 (k = largest power of two
 * below n, left subtree complete), the root is those subtree roots folded
 * from the right.
 */
export class MerkleAccumulator {
  /**
   * Complete-subtree roots, one per set bit of `count`, most significant
   * (leftmost, largest) first, stored contiguously: slot i is bytes
   * [32i, 32i + 32). 64 slots cover any safe-integer size. A flat buffer
   * avoids allocating (and later collecting) a copy per append.
   */
  readonly #stack = new Uint8Array(64 * HASH_SIZE);
  #height = 0;
  #count = 0;

  /** Appends the next leaf hash (32 bytes, from {@link leafHash}). Amortised one interior hash per append. */
  append(leafHash: Uint8Array): void {
    assertHash(leafHash, 'leaf hash');
    if (this.#count >= Number.MAX_SAFE_INTEGER) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'Merkle accumulator is full');
    }
    const stack = this.#stack;
    let n = this.#count;
    if (n % 2 === 0) {
      // Even size: the new leaf is a new height-0 subtree of its own.
      stack.set(leafHash, this.#height * HASH_SIZE);
      this.#height += 1;
      this.#count += 1;
      return;
    }
    // Each trailing 1 bit of the old size is a complete subtree of the same
    // height as the node being carried: merge them, like a binary counter's
    // carry. The carried node sits in the scratch buffer's right half.
    interiorScratch.set(leafHash, 1 + HASH_SIZE);
    let top = this.#height - 1;
    for (;;) {
      const offset = top * HASH_SIZE;
      interiorScratch.set(stack.subarray(offset, offset + HASH_SIZE), 1);
      const parent = sha256(interiorScratch);
      n = (n - 1) / 2;
      if (n % 2 === 1) {
        interiorScratch.set(parent, 1 + HASH_SIZE);
        top -= 1;
      } else {
        stack.set(parent, offset);
        break;
      }
    }
    this.#height = top + 1;
    this.#count += 1;
  }

  /** Number of leaves appended so far. */
  get size(): number {
    return this.#count;
  }

  /** The complete-subtree roots (most significant first): with `size`, all an accumulator needs to go on appending. */
  frontier(): Uint8Array[] {
    return Array.from({ length: this.#height }, (_, i) => this.#stack.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE));
  }

  /**
   * An accumulator of `size` leaves from its {@link frontier}: one 32-byte
   * hash per set bit of `size`, most significant first. Throws
   * SCHEMA_INVALID when the count of hashes does not match `size`.
   */
  static resume(size: number, frontier: readonly Uint8Array[]): MerkleAccumulator {
    if (!Number.isSafeInteger(size) || size < 0) throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'accumulator size must be a non-negative safe integer');
    let bits = 0;
    for (let n = size; n > 0; n = Math.floor(n / 2)) bits += n % 2;
    if (frontier.length !== bits) throw new LedgerError(ReasonCode.SCHEMA_INVALID, `a frontier of ${size} leaves has ${bits} hashes, got ${frontier.length}`);
    const accumulator = new MerkleAccumulator();
    frontier.forEach((hash, i) => {
      assertHash(hash, 'frontier hash');
      accumulator.#stack.set(hash, i * HASH_SIZE);
    });
    accumulator.#height = bits;
    accumulator.#count = size;
    return accumulator;
  }

  /** MTH of all leaves appended so far (RFC 9162 2.1.1); O(log n) hashes. */
  root(): Uint8Array {
    if (this.#height === 0) return EMPTY.slice();
    const stack = this.#stack;
    const slot = (i: number): Uint8Array => stack.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE);
    let r: Uint8Array = slot(this.#height - 1).slice();
    for (let i = this.#height - 2; i >= 0; i--) {
      r = hashChildren(slot(i), r);
    }
    return r;
  }
}

/** One level of complete-subtree hashes, stored contiguously (32 bytes each). */
interface Level {
  buf: Uint8Array;
  count: number;
}

/**
 * An in-memory append-only log that can serve roots at any past size and
 * inclusion / consistency proofs. Every complete subtree (aligned, power-of-two
 * sized) hash is cached in flat per-level buffers: about 2n hashes in total
 * (64 MiB per million leaves), one amortised interior hash per append. Any
 * MTH(D[a:b]) used by the RFC 9162 algorithms is then O(log n) hashes, and a
 * proof O(log^2 n) at worst (typically far fewer).
 */
export class MerkleTree {
  readonly #levels: Level[] = [];
  #size = 0;

  /** Appends the next leaf hash (32 bytes, from {@link leafHash}). */
  append(leafHash: Uint8Array): void {
    assertHash(leafHash, 'leaf hash');
    if (this.#size >= Number.MAX_SAFE_INTEGER) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'Merkle tree is full');
    }
    this.#push(0, leafHash);
    // Complete every subtree the new leaf closes: at level k, node i closes its
    // parent when i is odd.
    let level = 0;
    let index = this.#size;
    while (index % 2 === 1) {
      const parent = hashChildren(this.#node(level, index - 1), this.#node(level, index));
      level += 1;
      index = (index - 1) / 2;
      this.#push(level, parent);
    }
    this.#size += 1;
  }

  /** Number of leaves in the tree. */
  get size(): number {
    return this.#size;
  }

  /** MTH(D[0:size]) (RFC 9162 2.1.1) for the current or any earlier size. */
  root(size: number = this.#size): Uint8Array {
    this.#checkTreeSize(size, 'size');
    if (size === 0) return EMPTY.slice();
    return this.#subtreeHash(0, size).slice();
  }

  /**
   * RFC 9162 2.1.3.1: the Merkle audit path PATH(m, D[n]) for leaf `index` (m)
   * in the tree of the first `size` (n) leaves, ordered from the leaf's sibling
   * up to the root's child.
   */
  inclusionProof(index: number, size: number = this.#size): Uint8Array[] {
    this.#checkTreeSize(size, 'size');
    assertSize(index, 'leaf index');
    if (index >= size) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `leaf index ${index} is not below tree size ${size}`);
    }
    // PATH(m, D[n]) = PATH(m, D[0:k]) : MTH(D[k:n])      if m < k
    //               = PATH(m - k, D[k:n]) : MTH(D[0:k])  if m >= k
    // Walk from the root down; the recursion appends on the way back up, so
    // the collected list is reversed at the end.
    const path: Uint8Array[] = [];
    let start = 0;
    let n = size;
    let m = index;
    while (n > 1) {
      const k = splitPoint(n);
      if (m < k) {
        path.push(this.#subtreeHash(start + k, n - k));
        n = k;
      } else {
        path.push(this.#subtreeHash(start, k));
        start += k;
        m -= k;
        n -= k;
      }
    }
    path.reverse();
    return path.map((h) => h.slice());
  }

  /**
   * RFC 9162 2.1.4.1: the consistency proof PROOF(m, D[n]) between the tree
   * of the first `size1` (m) leaves and the first `size2` (n) leaves. Empty
   * when size1 is 0 or equal to size2 (nothing to prove; see
   * {@link verifyConsistency}).
   */
  consistencyProof(size1: number, size2: number = this.#size): Uint8Array[] {
    this.#checkTreeSize(size2, 'size2');
    assertSize(size1, 'size1');
    if (size1 > size2) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `size1 ${size1} is larger than size2 ${size2}`);
    }
    if (size1 === 0 || size1 === size2) return [];
    // PROOF(m, D[n]) = SUBPROOF(m, D[n], true), with
    // SUBPROOF(m, D[m], true)  = {}
    // SUBPROOF(m, D[m], false) = {MTH(D[m])}
    // SUBPROOF(m, D[n], b)     = SUBPROOF(m, D[0:k], b) : MTH(D[k:n])          if m <= k
    //                          = SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k])  if m > k
    const path: Uint8Array[] = [];
    let start = 0;
    let n = size2;
    let m = size1;
    let complete = true; // the "b" flag: still on the left edge of the whole tree
    while (m !== n) {
      const k = splitPoint(n);
      if (m <= k) {
        path.push(this.#subtreeHash(start + k, n - k));
        n = k;
      } else {
        path.push(this.#subtreeHash(start, k));
        start += k;
        m -= k;
        n -= k;
        complete = false;
      }
    }
    if (!complete) path.push(this.#subtreeHash(start, m));
    path.reverse();
    return path.map((h) => h.slice());
  }

  #checkTreeSize(size: unknown, what: string): asserts size is number {
    assertSize(size, what);
    if (size > this.#size) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, `${what} ${size} exceeds tree size ${this.#size}`);
    }
  }

  #push(level: number, hash: Uint8Array): void {
    let l = this.#levels[level];
    if (l === undefined) {
      l = { buf: new Uint8Array(HASH_SIZE * 16), count: 0 };
      this.#levels[level] = l;
    }
    const offset = l.count * HASH_SIZE;
    if (offset + HASH_SIZE > l.buf.length) {
      const grown = new Uint8Array(l.buf.length * 2);
      grown.set(l.buf);
      l.buf = grown;
    }
    l.buf.set(hash, offset);
    l.count += 1;
  }

  /** View (not a copy) of the cached hash of complete subtree `index` at height `level`. */
  #node(level: number, index: number): Uint8Array {
    const l = this.#levels[level] as Level;
    const offset = index * HASH_SIZE;
    return l.buf.subarray(offset, offset + HASH_SIZE);
  }

  /**
   * MTH(D[start:start+n]) for n >= 1, from the cache when the range is a
   * complete aligned subtree, otherwise by the RFC 9162 2.1.1 recursion (whose
   * left half is always complete, so this is O(log n) hashes). May return a
   * view into the cache: callers copy before handing it out.
   */
  #subtreeHash(start: number, n: number): Uint8Array {
    const level = exactLog2(n);
    if (level !== -1 && start % n === 0) {
      return this.#node(level, start / n);
    }
    const k = splitPoint(n);
    return hashChildren(this.#subtreeHash(start, k), this.#subtreeHash(start + k, n - k));
  }
}

/**
 * RFC 9162 2.1.3.2: verifies that `leafHash` is leaf number `index` of the
 * tree of `size` leaves whose root is `root`, given the audit path `proof`.
 * Returns false on any failure or malformed input (wrong hash sizes, index out
 * of range, proof too short or too long); never throws.
 */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  try {
    if (!isHash(leafHash) || !isHash(root) || !Array.isArray(proof)) return false;
    if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0) return false;
    // 1. If leaf_index >= tree_size, fail.
    if (index >= size) return false;
    // Every proof element must be a hash; also bounds work on hostile input
    // (a valid path has at most ceil(log2(size)) <= 53 elements).
    if (proof.length > 64) return false;
    for (const p of proof) if (!isHash(p)) return false;
    // 2. fn = leaf_index, sn = tree_size - 1.
    let fn = index;
    let sn = size - 1;
    // 3. r = hash.
    let r: Uint8Array = leafHash;
    // 4. For each p in inclusion_path:
    for (const p of proof) {
      // a. If sn is 0, fail.
      if (sn === 0) return false;
      // b. If LSB(fn) is set, or fn == sn:
      if (fn % 2 === 1 || fn === sn) {
        // i. r = HASH(0x01 || p || r)
        r = hashChildren(p, r);
        // ii. If LSB(fn) is not set, right-shift fn and sn until LSB(fn) is set or fn is 0.
        if (fn % 2 === 0) {
          while (fn % 2 === 0 && fn !== 0) {
            fn /= 2;
            sn = Math.floor(sn / 2);
          }
        }
      } else {
        // Otherwise r = HASH(0x01 || r || p).
        r = hashChildren(r, p);
      }
      // c. Right-shift fn and sn once.
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    // 5. Succeed iff sn == 0 and r == root_hash.
    return sn === 0 && bytesEqual(r, root);
  } catch {
    return false;
  }
}

/**
 * RFC 9162 2.1.4.2: verifies that the tree of `size2` leaves with root `root2`
 * is an append-only extension of the tree of `size1` leaves with root `root1`.
 *
 * Cases the RFC leaves out (it defines proofs for 0 < size1 < size2) follow
 * transparency-dev/merkle, slightly stricter: size1 == size2 needs an empty
 * proof and equal roots; size1 == 0 needs an empty proof and root1 equal to
 * {@link EMPTY_ROOT}. Returns false on any failure or malformed input; never
 * throws.
 */
export function verifyConsistency(
  size1: number,
  size2: number,
  root1: Uint8Array,
  root2: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  try {
    if (!isHash(root1) || !isHash(root2) || !Array.isArray(proof)) return false;
    if (!Number.isSafeInteger(size1) || !Number.isSafeInteger(size2)) return false;
    if (size1 < 0 || size1 > size2) return false;
    if (proof.length > 128) return false;
    for (const p of proof) if (!isHash(p)) return false;
    if (size1 === size2) return proof.length === 0 && bytesEqual(root1, root2);
    if (size1 === 0) return proof.length === 0 && bytesEqual(root1, EMPTY);

    // 1. If consistency_path is empty, fail.
    if (proof.length === 0) return false;
    // 2. If first is an exact power of 2, prepend first_hash to consistency_path.
    const path: readonly Uint8Array[] = isPowerOfTwo(size1) ? [root1, ...proof] : proof;
    // 3. fn = first - 1, sn = second - 1.
    let fn = size1 - 1;
    let sn = size2 - 1;
    // 4. If LSB(fn) is set, right-shift fn and sn until LSB(fn) is not set.
    while (fn % 2 === 1) {
      fn = (fn - 1) / 2;
      sn = Math.floor(sn / 2);
    }
    // 5. fr = sr = consistency_path[0].
    let fr = path[0] as Uint8Array;
    let sr = fr;
    // 6. For each subsequent value c:
    for (let i = 1; i < path.length; i++) {
      const c = path[i] as Uint8Array;
      // a. If sn is 0, fail.
      if (sn === 0) return false;
      // b. If LSB(fn) is set, or fn == sn:
      if (fn % 2 === 1 || fn === sn) {
        // i. fr = HASH(0x01 || c || fr), sr = HASH(0x01 || c || sr)
        fr = hashChildren(c, fr);
        sr = hashChildren(c, sr);
        // ii. If LSB(fn) is not set, right-shift fn and sn until LSB(fn) is set or fn is 0.
        if (fn % 2 === 0) {
          while (fn % 2 === 0 && fn !== 0) {
            fn /= 2;
            sn = Math.floor(sn / 2);
          }
        }
      } else {
        // Otherwise sr = HASH(0x01 || sr || c).
        sr = hashChildren(sr, c);
      }
      // c. Right-shift fn and sn once.
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    // 7. Succeed iff fr == first_hash, sr == second_hash and sn == 0.
    return sn === 0 && bytesEqual(fr, root1) && bytesEqual(sr, root2);
  } catch {
    return false;
  }
}
