import { readLineBatches, type TrustRoot } from '@agent-ledger/core';
import { LedgerFold, type FoldOptions } from './fold.js';
import type { LineResult } from './line-result.js';
import { LineCheckPool } from './pool.js';
import { FoldFailure, type VerificationReport } from './report.js';

/**
 * Lines per batch sent to a worker. Each batch costs a message each way and
 * a wake-up of the folding thread, which on a machine with as many cores as
 * workers takes a core from a worker for a moment; 512 lines (about 60 ms of
 * checks) keep that under 1% and the final imbalance between workers at one
 * batch.
 */
const DEFAULT_BATCH_LINES = 512;
/**
 * Batches in flight per worker: enough that a worker still has work queued
 * when the folding thread is late (descheduled, or folding a slow stretch),
 * few enough that memory stays a few batches.
 */
const BATCHES_IN_FLIGHT_PER_WORKER = 3;

/** Options of {@link verifyBundle}. */
export interface VerifyOptions extends FoldOptions {
  /** Worker threads for signature and hash checks; 0 checks on the calling thread. */
  readonly workers?: number;
  /** Lines per batch sent to a worker. */
  readonly batchLines?: number;
  /** Called after each batch with the number of bytes read so far. */
  readonly onProgress?: (bytesRead: number, entries: number) => void;
}

/**
 * Verifies a bundle streamed from `source` against a pinned trust root.
 *
 * The pipeline: split into line batches; step 1 (`checkLine`) on worker
 * threads, every line alone; step 2 (`LedgerFold`) on this thread, in bundle
 * order. At most `3 * workers + 2` batches are in flight, so memory stays
 * constant whatever the bundle's size.
 */
export async function verifyBundle(
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  trustRoot: TrustRoot,
  options: VerifyOptions = {},
): Promise<VerificationReport> {
  const fold = new LedgerFold(trustRoot, options);
  const workers = options.workers ?? 0;
  const pool = new LineCheckPool(workers);
  const inFlight: Promise<Iterable<LineResult>>[] = [];
  const maxInFlight = BATCHES_IN_FLIGHT_PER_WORKER * workers + 2;
  let bytesRead = 0;
  const drainOne = async (): Promise<void> => {
    const results = await (inFlight.shift() as Promise<Iterable<LineResult>>);
    for (const result of results) fold.accept(result);
    options.onProgress?.(bytesRead, fold.entries);
  };
  try {
    for await (const batch of readLineBatches(source, { batchLines: options.batchLines ?? DEFAULT_BATCH_LINES })) {
      bytesRead += batch.bytes.byteLength + batch.ends.length;
      inFlight.push(pool.check(batch));
      if (inFlight.length >= maxInFlight) await drainOne();
    }
    while (inFlight.length > 0) await drainOne();
    return fold.finish();
  } catch (err) {
    if (err instanceof FoldFailure) {
      return { ok: false, entries: fold.entries, failure: err.failure, partitions: fold.partitions() };
    }
    throw err;
  } finally {
    // Settle abandoned batches before stopping the workers.
    await Promise.allSettled(inFlight);
    await pool.close();
  }
}
