import { unavailable } from '../errors.js';

/**
 * How long one step of a transaction (begin, send, offsets, commit, abort) or
 * the start of a read may take. kafkajs bounds each request (30 s) and retries
 * a few times, but some of its awaits wait on state rather than on a request
 * (a connection being re-established, a rebalance, a fetch whose broker came
 * back paused), and after a broker fault one such await has been seen never
 * to return. A step past this limit is given up: the writer is replaced (its
 * successor's InitProducerId fences the abandoned producer and settles its
 * transaction on the coordinator), a read fails retryably, and the caller
 * rebuilds its state from the log as after any failed transaction.
 */
export const STEP_LIMIT_MS = 60_000;

/** How long a clean-up step (disconnect, deleting a reader's group) is waited for before it is left to finish on its own. */
export const CLEANUP_LIMIT_MS = 15_000;

/**
 * `work`, or a retryable UNAVAILABLE once `limitMs` passed without it
 * settling. The work is not cancelled (kafkajs has no cancellation); a late
 * failure of it is swallowed, since the caller has already moved on.
 */
export function withDeadline<T>(work: Promise<T>, limitMs: number, what: string): Promise<T> {
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable(`${what} did not finish within ${limitMs} ms`, { retryable: true })), limitMs);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
