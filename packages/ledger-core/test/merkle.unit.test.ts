import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import {
  EMPTY_ROOT,
  MerkleAccumulator,
  MerkleTree,
  interiorHash,
  leafHash,
  rootFromLeafHashes,
  verifyConsistency,
  verifyInclusion,
} from '../src/merkle.js';

// ---------------------------------------------------------------- helpers

/** Walks up from this file to the repository's test/vectors/<name> directory (works from src and dist). */
function vectorDir(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'test', 'vectors', name);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`test/vectors/${name} not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

function readVector<T>(name: string, file: string): T {
  return JSON.parse(readFileSync(join(vectorDir(name), file), 'utf8')) as T;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fromHex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const fromB64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));

function expectCode(fn: () => unknown, code: ReasonCode): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof LedgerError, `expected LedgerError, got ${String(err)}`);
    assert.equal(err.code, code);
    return true;
  });
}

/** Deterministic distinct leaf data for leaf i (the property tests vary sizes, not contents). */
function leafData(i: number, salt = 0): Uint8Array {
  const d = new Uint8Array(8);
  new DataView(d.buffer).setUint32(0, i);
  new DataView(d.buffer).setUint32(4, salt);
  return d;
}

function leafHashes(n: number, salt = 0): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => leafHash(leafData(i, salt)));
}

function treeOf(hashes: readonly Uint8Array[]): MerkleTree {
  const t = new MerkleTree();
  for (const h of hashes) t.append(h);
  return t;
}

/** Independent reference: MTH straight from the recursive definition in RFC 9162 2.1.1. */
function referenceRoot(hashes: readonly Uint8Array[]): Uint8Array {
  if (hashes.length === 0) return EMPTY_ROOT;
  if (hashes.length === 1) return hashes[0] as Uint8Array;
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return interiorHash(referenceRoot(hashes.slice(0, k)), referenceRoot(hashes.slice(k)));
}

/**
 * Independent reference for the shape of PATH(m, D[n]) (RFC 9162 2.1.3.1):
 * for each element, leaf-to-root, whether the sibling is on the left ("L")
 * or right ("R"). A proof made for (m, n) verifies for (m', n') exactly when
 * the shapes agree, so this says when a "wrong" size may legitimately pass.
 */
function pathShape(m: number, n: number): string {
  if (n <= 1) return '';
  let k = 1;
  while (k * 2 < n) k *= 2;
  return m < k ? pathShape(m, k) + 'R' : pathShape(m - k, n - k) + 'L';
}

function flipByte(proof: readonly Uint8Array[], i: number, byte: number): Uint8Array[] {
  return proof.map((p, j) => {
    if (j !== i) return p;
    const c = p.slice();
    c[byte % c.length] = (c[byte % c.length] ?? 0) ^ 0x01;
    return c;
  });
}

// ---------------------------------------------------------------- vectors

interface CtVectors {
  leaves: string[];
  nodeHashes: { levels: string[][] };
  roots: { size: number; root: string }[];
  inclusionProofs: { index: number; size: number; path: string[] }[];
  consistencyProofs: { size1: number; size2: number; path: string[] }[];
}

interface ArgonVectors {
  treeHead: { size: number; root: string };
  inclusion: { index: number; leafInput: string; path: string[] };
  consistency: { size1: number; root1: string; path: string[] };
}

describe('merkle: vector files', () => {
  it('every vector file names its source', () => {
    const files = readdirSync(vectorDir('merkle')).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 2);
    for (const f of files) {
      const v = readVector<{ source?: unknown }>('merkle', f);
      assert.ok(v.source !== undefined && v.source !== null, `${f} has no source`);
    }
  });
});

describe('merkle: RFC 6962 / CT 8-leaf vectors (transparency-dev/merkle)', () => {
  const v = readVector<CtVectors>('merkle', 'rfc6962-ct-8-leaves.json');
  const hashes = v.leaves.map((l) => leafHash(fromHex(l)));
  const tree = treeOf(hashes);
  const rootAt = (size: number): Uint8Array => {
    const r = v.roots.find((x) => x.size === size);
    assert.ok(r, `no root for size ${size}`);
    return fromHex(r.root);
  };

  it('leaf hashes and every complete subtree hash', () => {
    assert.deepEqual(hashes.map(hex), v.nodeHashes.levels[0]);
    v.nodeHashes.levels.forEach((level, height) => {
      level.forEach((expected, i) => {
        const width = 2 ** height;
        assert.equal(hex(rootFromLeafHashes(hashes.slice(i * width, (i + 1) * width))), expected, `level ${height} node ${i}`);
      });
    });
  });

  it('EMPTY_ROOT and roots for sizes 0..8, by every route', () => {
    assert.equal(hex(EMPTY_ROOT), v.roots[0]?.root);
    const acc = new MerkleAccumulator();
    for (const { size, root } of v.roots) {
      while (acc.size < size) acc.append(hashes[acc.size] as Uint8Array);
      assert.equal(hex(acc.root()), root, `accumulator size ${size}`);
      assert.equal(hex(tree.root(size)), root, `tree.root(${size})`);
      assert.equal(hex(rootFromLeafHashes(hashes.slice(0, size))), root, `rootFromLeafHashes size ${size}`);
      assert.equal(hex(referenceRoot(hashes.slice(0, size))), root, `reference size ${size}`);
    }
    assert.equal(hex(tree.root()), v.roots[8]?.root);
  });

  it('inclusion proofs: generated equal the vectors, and verify', () => {
    for (const { index, size, path } of v.inclusionProofs) {
      assert.deepEqual(tree.inclusionProof(index, size).map(hex), path, `PATH(${index}, ${size})`);
      const proof = path.map(fromHex);
      assert.equal(verifyInclusion(hashes[index] as Uint8Array, index, size, proof, rootAt(size)), true);
      // The corruptions transparency-dev's verify_test.go applies.
      const leaf = hashes[index] as Uint8Array;
      assert.equal(verifyInclusion(leaf, index - 1, size, proof, rootAt(size)), false);
      assert.equal(verifyInclusion(leaf, index + 1, size, proof, rootAt(size)), false);
      assert.equal(verifyInclusion(leaf, index ^ 2, size, proof, rootAt(size)), false);
      assert.equal(verifyInclusion(leaf, index, size * 2, proof, rootAt(size)), false);
      assert.equal(verifyInclusion(leaf, index, Math.floor(size / 2), proof, rootAt(size)), false);
      assert.equal(verifyInclusion(leafHash(new TextEncoder().encode('WrongLeaf')), index, size, proof, rootAt(size)), false);
      assert.equal(verifyInclusion(leaf, index, size, proof, EMPTY_ROOT), false);
      assert.equal(verifyInclusion(leaf, index, size, [...proof, rootAt(size)], rootAt(size)), false);
      assert.equal(verifyInclusion(leaf, index, size, [rootAt(size), ...proof], rootAt(size)), false);
      assert.equal(verifyInclusion(leaf, index, size, [...proof, new Uint8Array(0)], rootAt(size)), false);
      for (let i = 0; i < proof.length; i++) {
        assert.equal(verifyInclusion(leaf, index, size, flipByte(proof, i, 0), rootAt(size)), false);
      }
      if (proof.length > 0) assert.equal(verifyInclusion(leaf, index, size, proof.slice(0, -1), rootAt(size)), false);
    }
  });

  it('consistency proofs: generated equal the vectors, and verify', () => {
    for (const { size1, size2, path } of v.consistencyProofs) {
      assert.deepEqual(tree.consistencyProof(size1, size2).map(hex), path, `PROOF(${size1}, ${size2})`);
      const proof = path.map(fromHex);
      const r1 = rootAt(size1);
      const r2 = rootAt(size2);
      assert.equal(verifyConsistency(size1, size2, r1, r2, proof), true);
      if (proof.length === 0) continue;
      // The corruptions transparency-dev's verify_test.go applies.
      assert.equal(verifyConsistency(size1 - 1, size2, r1, r2, proof), false);
      assert.equal(verifyConsistency(size1 + 1, size2, r1, r2, proof), false);
      assert.equal(verifyConsistency(size1 ^ 2, size2, r1, r2, proof), false);
      assert.equal(verifyConsistency(size1, size2 * 2, r1, r2, proof), false);
      assert.equal(verifyConsistency(size1, Math.floor(size2 / 2), r1, r2, proof), false);
      assert.equal(verifyConsistency(size1, size2, r2, r1, proof), false);
      assert.equal(verifyConsistency(size1, size2, r1, r2, []), false);
      assert.equal(verifyConsistency(size1, size2, r1, r2, [...proof, r1]), false);
      assert.equal(verifyConsistency(size1, size2, r1, r2, [...proof, r2]), false);
      assert.equal(verifyConsistency(size1, size2, r1, r2, [r1, ...proof]), false);
      assert.equal(verifyConsistency(size1, size2, r1, r2, [r2, ...proof]), false);
      assert.equal(verifyConsistency(size1, size2, r1, r2, [proof[0] as Uint8Array, ...proof]), false);
      assert.equal(verifyConsistency(size1, size2, r1, r2, proof.slice(0, -1)), false);
      for (let i = 0; i < proof.length; i++) {
        assert.equal(verifyConsistency(size1, size2, r1, r2, flipByte(proof, i, 0)), false);
      }
    }
  });
});

describe('merkle: real CT log proofs (Argon 2020, via golang.org/x/mod)', () => {
  const v = readVector<ArgonVectors>('merkle', 'ct-argon2020-golang-mod.json');
  const root = fromB64(v.treeHead.root);
  const leaf = leafHash(fromB64(v.inclusion.leafInput));
  const inclusion = v.inclusion.path.map(fromB64);
  const consistency = v.consistency.path.map(fromB64);
  const root1 = fromB64(v.consistency.root1);

  it('inclusion of entry 10000 in the 961984013-leaf tree', () => {
    assert.equal(verifyInclusion(leaf, v.inclusion.index, v.treeHead.size, inclusion, root), true);
    assert.equal(verifyInclusion(leaf, v.inclusion.index + 1, v.treeHead.size, inclusion, root), false);
    assert.equal(verifyInclusion(leaf, v.inclusion.index, v.treeHead.size, flipByte(inclusion, 29, 31), root), false);
  });

  it('consistency from 3654490 to 961984013', () => {
    assert.equal(verifyConsistency(v.consistency.size1, v.treeHead.size, root1, root, consistency), true);
    assert.equal(verifyConsistency(v.consistency.size1 + 1, v.treeHead.size, root1, root, consistency), false);
    assert.equal(verifyConsistency(v.consistency.size1, v.treeHead.size, root1, root, consistency.slice(1)), false);
  });
});

// ---------------------------------------------------------------- properties

describe('merkle: properties (fast-check)', () => {
  it('accumulator, tree and rootFromLeafHashes equal the RFC recursion at every size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.nat(), (n, salt) => {
        const hashes = leafHashes(n, salt);
        const acc = new MerkleAccumulator();
        const tree = new MerkleTree();
        assert.equal(hex(acc.root()), hex(EMPTY_ROOT));
        for (let i = 0; i < n; i++) {
          acc.append(hashes[i] as Uint8Array);
          tree.append(hashes[i] as Uint8Array);
          const expected = hex(referenceRoot(hashes.slice(0, i + 1)));
          assert.equal(acc.size, i + 1);
          assert.equal(hex(acc.root()), expected);
          assert.equal(hex(tree.root()), expected);
        }
        for (let s = 0; s <= n; s++) {
          assert.equal(hex(tree.root(s)), hex(rootFromLeafHashes(hashes.slice(0, s))));
        }
      }),
      { numRuns: 12 },
    );
  });

  it('every inclusion proof verifies against rootFromLeafHashes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), (n, salt, pastSeed) => {
        const hashes = leafHashes(n, salt);
        const tree = treeOf(hashes);
        const past = 1 + (pastSeed % n); // also prove against an earlier size
        for (const size of [n, past]) {
          const root = rootFromLeafHashes(hashes.slice(0, size));
          for (let i = 0; i < size; i++) {
            const proof = tree.inclusionProof(i, size);
            assert.equal(proof.length, pathShape(i, size).length);
            assert.ok(verifyInclusion(hashes[i] as Uint8Array, i, size, proof, root), `PATH(${i}, ${size})`);
          }
        }
      }),
      { numRuns: 25 },
    );
  });

  it('consistency proofs verify for all size1 <= size2 (exhaustive, 130 leaves)', () => {
    const n = 130;
    const hashes = leafHashes(n, 99);
    const tree = treeOf(hashes);
    const roots = Array.from({ length: n + 1 }, (_, s) => rootFromLeafHashes(hashes.slice(0, s)));
    for (let size2 = 0; size2 <= n; size2++) {
      for (let size1 = 0; size1 <= size2; size1++) {
        const proof = tree.consistencyProof(size1, size2);
        assert.ok(
          verifyConsistency(size1, size2, roots[size1] as Uint8Array, roots[size2] as Uint8Array, proof),
          `PROOF(${size1}, ${size2})`,
        );
      }
    }
  });

  it('consistency proofs verify for random size1 <= size2 <= 300', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }), fc.nat())),
        ([size2, size1, salt]) => {
          const hashes = leafHashes(size2, salt);
          const tree = treeOf(hashes);
          const proof = tree.consistencyProof(size1, size2);
          assert.ok(
            verifyConsistency(size1, size2, rootFromLeafHashes(hashes.slice(0, size1)), rootFromLeafHashes(hashes), proof),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('tampered inclusion proofs fail', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 }))),
        fc.nat(),
        fc.nat(),
        ([n, index], elementSeed, byteSeed) => {
          const hashes = leafHashes(n);
          const tree = treeOf(hashes);
          const root = tree.root();
          const leaf = hashes[index] as Uint8Array;
          const proof = tree.inclusionProof(index, n);
          assert.ok(verifyInclusion(leaf, index, n, proof, root));
          // Flipped byte in a proof element.
          if (proof.length > 0) {
            const flipped = flipByte(proof, elementSeed % proof.length, byteSeed % 32);
            assert.equal(verifyInclusion(leaf, index, n, flipped, root), false);
          }
          // Wrong index: never verifies.
          for (const wrong of [index - 1, index + 1, index ^ 2, index ^ 1, n, -1]) {
            if (wrong === index) continue;
            assert.equal(verifyInclusion(leaf, wrong, n, proof, root), false, `index ${wrong}`);
          }
          // Wrong size: size*2 and size/2 never verify; size+-1 verify only when
          // the RFC path shape is unchanged (then the same hashes are combined
          // the same way and the claim is indistinguishable to any verifier).
          assert.equal(verifyInclusion(leaf, index, n * 2, proof, root), false);
          assert.equal(verifyInclusion(leaf, index, Math.floor(n / 2), proof, root), false);
          for (const size of [n - 1, n + 1]) {
            const same = index < size && pathShape(index, size) === pathShape(index, n);
            assert.equal(verifyInclusion(leaf, index, size, proof, root), same, `size ${size}`);
          }
          // Truncated / extended proofs.
          if (proof.length > 0) assert.equal(verifyInclusion(leaf, index, n, proof.slice(0, -1), root), false);
          if (proof.length > 0) assert.equal(verifyInclusion(leaf, index, n, proof.slice(1), root), false);
          assert.equal(verifyInclusion(leaf, index, n, [...proof, root], root), false);
          assert.equal(verifyInclusion(leaf, index, n, [leaf, ...proof], root), false);
          // Wrong leaf, wrong root.
          assert.equal(verifyInclusion(leafHash(leafData(n + 1)), index, n, proof, root), false);
          assert.equal(verifyInclusion(leaf, index, n, proof, EMPTY_ROOT), false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('tampered consistency proofs fail', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 2, max: 300 })
          .chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n - 1 }))),
        fc.nat(),
        fc.nat(),
        ([size2, size1], elementSeed, byteSeed) => {
          const hashes = leafHashes(size2);
          const tree = treeOf(hashes);
          const r1 = tree.root(size1);
          const r2 = tree.root(size2);
          const proof = tree.consistencyProof(size1, size2);
          assert.ok(proof.length > 0);
          assert.ok(verifyConsistency(size1, size2, r1, r2, proof));
          const flipped = flipByte(proof, elementSeed % proof.length, byteSeed % 32);
          assert.equal(verifyConsistency(size1, size2, r1, r2, flipped), false);
          for (const wrong of [size1 - 1, size1 + 1, size1 ^ 2]) {
            if (wrong === size1) continue;
            assert.equal(verifyConsistency(wrong, size2, r1, r2, proof), false, `size1 ${wrong}`);
          }
          assert.equal(verifyConsistency(size1, size2 * 2, r1, r2, proof), false);
          assert.equal(verifyConsistency(size1, Math.floor(size2 / 2), r1, r2, proof), false);
          assert.equal(verifyConsistency(size1, size2, r2, r1, proof), false);
          assert.equal(verifyConsistency(size1, size2, EMPTY_ROOT, r2, proof), false);
          assert.equal(verifyConsistency(size1, size2, r1, EMPTY_ROOT, proof), false);
          assert.equal(verifyConsistency(size1, size2, r1, r2, []), false);
          assert.equal(verifyConsistency(size1, size2, r1, r2, proof.slice(0, -1)), false);
          assert.equal(verifyConsistency(size1, size2, r1, r2, [...proof, r2]), false);
          assert.equal(verifyConsistency(size1, size2, r1, r2, [r1, ...proof]), false);
          assert.equal(verifyConsistency(size1, size2, r1, r2, [proof[0] as Uint8Array, ...proof]), false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('verifiers never throw on arbitrary input', () => {
    const anything = fc.oneof(
      fc.anything(),
      fc.uint8Array({ minLength: 0, maxLength: 40 }),
      fc.array(fc.uint8Array({ minLength: 31, maxLength: 33 }), { maxLength: 70 }),
      fc.integer({ min: -5, max: 1000 }),
      fc.double(),
    );
    fc.assert(
      fc.property(anything, anything, anything, anything, anything, (a, b, c, d, e) => {
        const call = verifyInclusion as unknown as (...args: unknown[]) => unknown;
        const call2 = verifyConsistency as unknown as (...args: unknown[]) => unknown;
        assert.equal(typeof call(a, b, c, d, e), 'boolean');
        assert.equal(typeof call2(a, b, c, d, e), 'boolean');
      }),
      { numRuns: 500 },
    );
  });
});

// ---------------------------------------------------------------- edge cases and errors

describe('merkle: edge cases', () => {
  const hashes = leafHashes(10);
  const tree = treeOf(hashes);

  it('hash functions: RFC 9162 domain separation', () => {
    assert.equal(hex(leafHash(new Uint8Array(0))), '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
    assert.notEqual(hex(leafHash(new Uint8Array(64))), hex(interiorHash(new Uint8Array(32), new Uint8Array(32))));
    expectCode(() => interiorHash(new Uint8Array(31), new Uint8Array(32)), ReasonCode.SCHEMA_INVALID);
    expectCode(() => leafHash('x' as unknown as Uint8Array), ReasonCode.SCHEMA_INVALID);
  });

  it('returned hashes are copies', () => {
    const root = tree.root();
    root[0] = (root[0] ?? 0) ^ 0xff;
    assert.notEqual(hex(tree.root()), hex(root));
    const proof = tree.inclusionProof(3);
    (proof[0] as Uint8Array)[0] = 0;
    assert.ok(verifyInclusion(hashes[3] as Uint8Array, 3, 10, tree.inclusionProof(3), tree.root()));
    const e = new MerkleTree().root();
    e[0] = 0;
    const f = new MerkleAccumulator().root();
    f[0] = 0;
    assert.equal(hex(EMPTY_ROOT), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    // Even mutating the exported constant cannot change what the module computes.
    const saved = EMPTY_ROOT[0] as number;
    try {
      EMPTY_ROOT[0] = saved ^ 0xff;
      assert.equal(hex(new MerkleTree().root()), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
      assert.equal(verifyConsistency(0, 1, fromHex('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'), root, []), true);
    } finally {
      EMPTY_ROOT[0] = saved;
    }
    // Appended hashes are copied too.
    const h = leafHash(leafData(1));
    const acc = new MerkleAccumulator();
    acc.append(h);
    const before = hex(acc.root());
    h[0] = (h[0] ?? 0) ^ 1;
    assert.equal(hex(acc.root()), before);
  });

  it('proof generators reject bad arguments with SCHEMA_INVALID', () => {
    expectCode(() => tree.inclusionProof(10), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.inclusionProof(0, 11), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.inclusionProof(5, 5), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.inclusionProof(-1), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.inclusionProof(1.5), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.inclusionProof(0, 0), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.consistencyProof(5, 4), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.consistencyProof(1, 11), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.consistencyProof(11), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.consistencyProof(Number.NaN), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.root(11), ReasonCode.SCHEMA_INVALID);
    expectCode(() => tree.append(new Uint8Array(31)), ReasonCode.SCHEMA_INVALID);
    expectCode(() => new MerkleAccumulator().append(new Uint8Array(33)), ReasonCode.SCHEMA_INVALID);
    expectCode(() => rootFromLeafHashes([new Uint8Array(1)]), ReasonCode.SCHEMA_INVALID);
  });

  it('trivial consistency cases', () => {
    const r5 = tree.root(5);
    assert.deepEqual(tree.consistencyProof(0, 5), []);
    assert.deepEqual(tree.consistencyProof(5, 5), []);
    assert.equal(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, []), true);
    assert.equal(verifyConsistency(0, 5, EMPTY_ROOT, r5, []), true);
    assert.equal(verifyConsistency(5, 5, r5, r5, []), true);
    // Roots must agree for equal sizes; a size-0 root must be the empty root; no stray proof.
    assert.equal(verifyConsistency(5, 5, r5, tree.root(6), []), false);
    assert.equal(verifyConsistency(0, 5, r5, r5, []), false);
    assert.equal(verifyConsistency(5, 5, r5, r5, [r5]), false);
    assert.equal(verifyConsistency(0, 5, EMPTY_ROOT, r5, [EMPTY_ROOT]), false);
    // Time travel.
    assert.equal(verifyConsistency(6, 5, tree.root(6), r5, tree.consistencyProof(5, 6)), false);
    // Wrong hash sizes.
    assert.equal(verifyConsistency(5, 5, r5.subarray(0, 31), r5.subarray(0, 31), []), false);
    assert.equal(verifyConsistency(3, 5, tree.root(3), r5, [new Uint8Array(33), ...tree.consistencyProof(3, 5)]), false);
  });

  it('trivial inclusion cases', () => {
    const single = leafHash(new TextEncoder().encode('data'));
    assert.equal(verifyInclusion(single, 0, 1, [], single), true);
    assert.equal(verifyInclusion(single, 0, 1, [], new Uint8Array(0)), false);
    assert.equal(verifyInclusion(new Uint8Array(0), 0, 1, [], single), false);
    assert.equal(verifyInclusion(single, 0, 0, [], single), false);
    assert.equal(verifyInclusion(single, 1, 1, [], single), false);
    assert.equal(verifyInclusion(single, 0, 1, [single], single), false);
    assert.equal(verifyInclusion(hashes[2] as Uint8Array, 2, 10, [new Uint8Array(31)], tree.root()), false);
  });

  it('sizes beyond 2^32 use exact arithmetic', () => {
    // A proof's shape for a huge tree is well defined without building it:
    // verification must not wrap around 32 bits (2^32 + 1 leaves, last leaf).
    const size = 2 ** 32 + 1;
    const leaf = leafHash(leafData(7));
    const left = leafHash(leafData(8)); // stands in for MTH of the first 2^32 leaves
    const root = interiorHash(left, leaf);
    assert.equal(verifyInclusion(leaf, size - 1, size, [left], root), true);
    assert.equal(verifyInclusion(leaf, size - 2, size, [left], root), false);
    assert.equal(verifyInclusion(leaf, 0, 1, [left], root), false);
  });
});
