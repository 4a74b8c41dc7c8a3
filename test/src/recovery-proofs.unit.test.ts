import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MerkleTree, sha256 } from '@agent-ledger/core';
import { ChunkedTree } from '@agent-ledger/ledger';

// The API's bounded Merkle index (chunk roots, the newest chunk's leaves, a
// small cache) gives exactly the inclusion and consistency proofs and roots
// of the full in-memory tree, loading older chunks' leaves only when a proof
// needs them, and refuses leaves read back that do not match its chunk root.

function leaf(n: number): Uint8Array {
  return sha256(new TextEncoder().encode(`leaf ${n}`));
}

function trees(size: number, chunkSize: number): { full: MerkleTree; chunked: ChunkedTree; leaves: Uint8Array[] } {
  const full = new MerkleTree();
  const chunked = new ChunkedTree(chunkSize);
  const leaves: Uint8Array[] = [];
  for (let n = 0; n < size; n++) {
    leaves.push(leaf(n));
    full.append(leaf(n));
    chunked.append(leaf(n), n);
  }
  return { full, chunked, leaves };
}

test('proofs and roots equal the full tree for every size and position (chunks of 2, older chunks out of the cache)', async () => {
  for (let size = 1; size <= 44; size++) {
    const { full, leaves } = trees(size, 2);
    for (let at = 1; at <= size; at++) {
      // A fresh index per check: only the newest chunks are cached, the rest must be loaded.
      const chunked = new ChunkedTree(2);
      for (let n = 0; n < size; n++) chunked.append(leaves[n] as Uint8Array, n);
      const load = async (chunk: number) => leaves.slice(chunk * 2, chunk * 2 + 2);
      assert.deepEqual(await chunked.prove(() => chunked.root(at), load), full.root(at), `root(${at}) of ${size}`);
      for (let index = 0; index < at; index++) {
        assert.deepEqual(await chunked.prove(() => chunked.inclusionProof(index, at), load), full.inclusionProof(index, at), `inclusion ${index} in ${at} of ${size}`);
      }
      for (let from = 0; from <= at; from++) {
        assert.deepEqual(await chunked.prove(() => chunked.consistencyProof(from, at), load), full.consistencyProof(from, at), `consistency ${from}..${at} of ${size}`);
      }
    }
  }
});

test('a large tree keeps one hash per chunk: a proof for an old leaf loads only its own chunk and the edge', async () => {
  const { full, chunked, leaves } = trees(100_000, 1024);
  const loaded: number[] = [];
  const proof = await chunked.prove(
    () => chunked.inclusionProof(5, 99_999),
    async (chunk) => {
      loaded.push(chunk);
      return leaves.slice(chunk * 1024, chunk * 1024 + 1024);
    },
  );
  assert.deepEqual(proof, full.inclusionProof(5, 99_999));
  assert.ok(loaded.length <= 2 && loaded.includes(0), `chunks loaded: ${loaded.join(',')}`);
});

test('leaves read back that do not hash to the chunk root are refused (INTERNAL), never used in a proof', async () => {
  // 20 chunks: the oldest have left the cache of 16.
  const { chunked, leaves } = trees(80, 4);
  const forged = leaves.slice(0, 4);
  forged[2] = leaf(999);
  const fresh = new ChunkedTree(4);
  for (let n = 0; n < 80; n++) fresh.append(leaves[n] as Uint8Array);
  await assert.rejects(
    fresh.prove(() => fresh.inclusionProof(1, 80), async () => forged),
    (err: unknown) => (err as { code?: string }).code === 'INTERNAL',
  );
  assert.equal(chunked.size, 80);
});

test('bad sizes are a BAD_ARGUMENT, not a crash', () => {
  const { chunked } = trees(10, 4);
  assert.throws(() => chunked.inclusionProof(10, 10), (err: unknown) => (err as { code?: string }).code === 'BAD_ARGUMENT');
  assert.throws(() => chunked.consistencyProof(3, 11), (err: unknown) => (err as { code?: string }).code === 'BAD_ARGUMENT');
  assert.deepEqual(chunked.consistencyProof(0, 10), []);
});
