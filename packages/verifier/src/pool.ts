import { Worker } from 'node:worker_threads';
import { nodeEd25519, type LineBatch } from '@agent-ledger/core';
import type { LineResult } from './line-result.js';
import { unpackResults, type PackedResults } from './result-codec.js';
import { checkBatch } from './steps/check-batch.js';

/**
 * Young generation of each worker's heap, MiB (4 MiB semi-spaces instead of
 * V8's default 16 MiB, which every busy worker would otherwise fill and keep
 * resident). A worker's garbage is one line's parse at a time, so little of it
 * survives a collection. Only the young generation is bounded: the old
 * generation stays unlimited, so a bundle of maximal lines costs memory, never
 * a worker killed mid-batch.
 */
const WORKER_YOUNG_GENERATION_MB = 12;

interface PendingBatch {
  readonly worker: number;
  readonly resolve: (results: Iterable<LineResult>) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Spreads line checks over worker threads. With zero workers it checks on
 * the calling thread. Results of each batch come back packed and are decoded
 * one line at a time as the caller iterates them; callers keep batch order by
 * awaiting the promises in submission order.
 *
 * Each batch goes to the worker with the fewest batches outstanding, so a
 * worker slowed down (by the machine, or by heavier lines) gets less, and
 * all of them finish together.
 */
export class LineCheckPool {
  readonly #workers: Worker[] = [];
  /** Batches sent to each worker and not yet answered. */
  readonly #outstanding: number[] = [];
  readonly #pending = new Map<number, PendingBatch>();
  #next = 0;

  constructor(workerCount: number) {
    for (let i = 0; i < workerCount; i++) {
      const worker = new Worker(new URL('./worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
      worker.on('message', (message: { id: number; packed: PackedResults }) => {
        const waiter = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (waiter === undefined) return;
        this.#outstanding[waiter.worker] = (this.#outstanding[waiter.worker] as number) - 1;
        waiter.resolve(unpackResults(message.packed));
      });
      worker.on('error', (err) => {
        for (const waiter of this.#pending.values()) waiter.reject(err);
        this.#pending.clear();
      });
      this.#workers.push(worker);
      this.#outstanding.push(0);
    }
  }

  /** Checks one batch; the batch's buffer is transferred to the worker. */
  check(batch: LineBatch): Promise<Iterable<LineResult>> {
    if (this.#workers.length === 0) return Promise.resolve(checkBatch(batch, nodeEd25519));
    const id = this.#next++;
    // Fewest outstanding; among equals, take turns.
    let chosen = id % this.#workers.length;
    for (let w = 0; w < this.#workers.length; w++) {
      if ((this.#outstanding[w] as number) < (this.#outstanding[chosen] as number)) chosen = w;
    }
    const worker = this.#workers[chosen] as Worker;
    this.#outstanding[chosen] = (this.#outstanding[chosen] as number) + 1;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { worker: chosen, resolve, reject });
      worker.postMessage({ id, batch }, [batch.bytes.buffer as ArrayBuffer]);
    });
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
