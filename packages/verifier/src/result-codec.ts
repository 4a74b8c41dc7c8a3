import { deserialize, serialize } from 'node:v8';
import type { LineResult } from './line-result.js';

/**
 * A batch's line results, each serialized alone in the structured-clone
 * format `postMessage` uses (so NaN, -0 and absent fields survive exactly),
 * packed back to back in one buffer that a worker transfers instead of
 * cloning an object graph.
 *
 * Why: a cloned result array lands on the folding thread as a whole batch of
 * objects the moment it arrives, and every batch in flight then lives until
 * the fold reaches it, surviving young-generation collections into the old
 * generation. Packed results sit outside the heap until the fold decodes
 * them, one line at a time; on the checking thread each result object dies
 * as soon as it is serialized.
 */
export interface PackedResults {
  /** The serialized results, back to back. */
  readonly bytes: Uint8Array;
  /** End offset (exclusive) of each result within `bytes`; result k spans ends[k-1]..ends[k]. */
  readonly ends: Uint32Array;
}

/** Serializes results as they are produced. */
export function packResults(results: Iterable<LineResult>): PackedResults {
  const parts: Buffer[] = [];
  const ends: number[] = [];
  let total = 0;
  for (const result of results) {
    const part = serialize(result);
    parts.push(part);
    total += part.byteLength;
    ends.push(total);
  }
  // A buffer of its own, never a slice of Buffer's shared pool, so it can be transferred.
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return { bytes, ends: Uint32Array.from(ends) };
}

/** Decodes packed results one at a time, in order. */
export function* unpackResults(packed: PackedResults): Generator<LineResult> {
  let start = 0;
  for (const end of packed.ends) {
    yield deserialize(packed.bytes.subarray(start, end)) as LineResult;
    start = end;
  }
}
