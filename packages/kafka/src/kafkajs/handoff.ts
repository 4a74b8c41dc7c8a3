import { LedgerError } from '@agent-ledger/refusals';
import { unavailable } from '../errors.js';

/** Returned by `Handoff.take` once the producer side has finished and everything was taken. */
export const END: unique symbol = Symbol('end');

/** How often a waiting producer runs its keep-alive (a consumer group heartbeat). */
const KEEP_ALIVE_MS = 3_000;

interface Offer<T> {
  readonly item: T;
  readonly taken: () => void;
}

/**
 * Hands items from a push source (a kafkajs batch handler) to a pull reader
 * (an async generator) one at a time, so the source never runs ahead of the
 * reader and memory stays bounded by one batch.
 */
export class Handoff<T> {
  readonly #offers: Offer<T>[] = [];
  #ended = false;
  #closed = false;
  #failure: { readonly error: unknown } | undefined;
  #wake: (() => void) | undefined;

  /**
   * Offers `item` and resolves once the reader took it, or the handoff closed.
   * While it waits, `keepAlive` runs every few seconds (its failures ignored).
   */
  put(item: T, keepAlive: () => Promise<void>): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        keepAlive().catch(() => undefined);
      }, KEEP_ALIVE_MS);
      this.#offers.push({
        item,
        taken: () => {
          clearInterval(timer);
          resolve();
        },
      });
      this.#notify();
    });
  }

  /** No more items will come; `take` returns END once the offers are drained. */
  finish(): void {
    this.#ended = true;
    this.#notify();
  }

  /** The source failed: the next `take` throws `error`. The first failure wins. */
  fail(error: unknown): void {
    this.#failure ??= { error };
    this.#notify();
  }

  /** The reader is gone: releases every waiting `put`. */
  close(): void {
    this.#closed = true;
    for (const offer of this.#offers.splice(0)) offer.taken();
    this.#notify();
  }

  /**
   * The next item, or END. Throws the source's failure, or a retryable
   * LedgerError when nothing happened for `stallMs` while it waited.
   */
  async take(stallMs: number): Promise<T | typeof END> {
    for (;;) {
      if (this.#failure !== undefined) throw this.#failure.error;
      const offer = this.#offers.shift();
      if (offer !== undefined) {
        offer.taken();
        return offer.item;
      }
      if (this.#ended || this.#closed) return END;
      await this.#change(stallMs);
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #change(stallMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        reject(unavailable(`no progress for ${stallMs} ms`, { retryable: true }));
      }, stallMs);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
