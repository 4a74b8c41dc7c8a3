import { Worker } from 'node:worker_threads';
import { nodeEd25519, type LineBatch } from '@agent-ledger/core';
import type { LineResult } from './line-result.js';
import { checkBatch } from './steps/check-batch.js';

/**
 * Spreads line checks over worker threads. With zero workers it checks on
 * the calling thread. Results of each batch come back whole; callers keep
 * batch order by awaiting the promises in submission order.
 */
export class LineCheckPool {
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, { resolve: (r: LineResult[]) => void; reject: (e: unknown) => void }>();
  #next = 0;

  constructor(workerCount: number) {
    for (let i = 0; i < workerCount; i++) {
      const worker = new Worker(new URL('./worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: Number(process.env.VYG ?? 12) } });
      worker.on('message', (message: { id: number; results: LineResult[] }) => {
        const waiter = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        waiter?.resolve(message.results);
      });
      worker.on('error', (err) => {
        for (const waiter of this.#pending.values()) waiter.reject(err);
        this.#pending.clear();
      });
      this.#workers.push(worker);
    }
  }

  /** Checks one batch; the batch's buffer is transferred to the worker. */
  check(batch: LineBatch): Promise<LineResult[]> {
    if (this.#workers.length === 0) return Promise.resolve(checkBatch(batch, nodeEd25519));
    const id = this.#next++;
    const worker = this.#workers[id % this.#workers.length] as Worker;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, batch }, [batch.bytes.buffer as ArrayBuffer]);
    });
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.terminate()));
  }
}
