import { randomBytes } from 'node:crypto';
import { ReasonCode } from '@agent-ledger/refusals';
import type { PendingApproval } from './types.js';

/** Short request ids are 16 base64url characters (96 random bits): small enough for Telegram's 64-byte callback_data. */
export const SHORT_ID_PATTERN = /^[A-Za-z0-9_-]{16}$/;

/** What a channel remembers about one delivered approval. */
export interface OutstandingEntry<Ref> {
  readonly shortId: string;
  readonly pending: PendingApproval;
  /** Platform reference of the delivered message (message id, ...), once known. */
  ref: Ref | null;
}

/** Result of {@link OutstandingRequests.settle}. */
export type Settlement<Ref> =
  | { readonly ok: true; readonly entry: OutstandingEntry<Ref> }
  | { readonly ok: false; readonly code: typeof ReasonCode.REPLAY | typeof ReasonCode.STALE_APPROVAL; readonly detail: string };

/**
 * The approvals a channel has delivered and not yet seen answered, keyed by a
 * random short id that travels through the platform (button data). Answers
 * from outside are untrusted: an id counts once, only before its deadline,
 * and only if this process issued it. An answer settles every short id of
 * its request, so the same request delivered twice is answered once.
 */
export class OutstandingRequests<Ref> {
  readonly #byShortId = new Map<string, OutstandingEntry<Ref>>();
  readonly #answered = new Set<string>();
  readonly #maxOutstanding: number;
  readonly #now: () => number;

  constructor(options: { maxOutstanding?: number; now?: () => number } = {}) {
    this.#maxOutstanding = options.maxOutstanding ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Registers a delivery and returns its fresh short id. */
  issue(pending: PendingApproval): OutstandingEntry<Ref> {
    this.#prune();
    if (this.#byShortId.size >= this.#maxOutstanding) {
      // Bounded memory: the oldest delivery goes first (Map keeps insertion order).
      const oldest = this.#byShortId.keys().next().value;
      if (oldest !== undefined) this.#byShortId.delete(oldest);
    }
    const entry: OutstandingEntry<Ref> = { shortId: randomBytes(12).toString('base64url'), pending, ref: null };
    this.#byShortId.set(entry.shortId, entry);
    return entry;
  }

  /** Forgets a delivery that never reached the platform. */
  discard(shortId: string): void {
    this.#byShortId.delete(shortId);
  }

  /** The entry of an outstanding short id, without settling it. */
  peek(shortId: string): OutstandingEntry<Ref> | undefined {
    return this.#byShortId.get(shortId);
  }

  /**
   * Settles a short id taken from untrusted input: succeeds once per request,
   * before its deadline; afterwards every short id of that request is a replay.
   */
  settle(shortId: string): Settlement<Ref> {
    const entry = this.#byShortId.get(shortId);
    if (entry === undefined) {
      if (this.#answered.has(shortId)) return { ok: false, code: ReasonCode.REPLAY, detail: 'request already answered' };
      return { ok: false, code: ReasonCode.STALE_APPROVAL, detail: 'no such pending request' };
    }
    this.#retire(entry.pending.request);
    if (Date.parse(entry.pending.deadline) <= this.#now()) {
      return { ok: false, code: ReasonCode.STALE_APPROVAL, detail: 'the confirmation deadline has passed' };
    }
    return { ok: true, entry };
  }

  #retire(request: string): void {
    for (const [id, entry] of this.#byShortId) {
      if (entry.pending.request !== request) continue;
      this.#byShortId.delete(id);
      this.#answered.add(id);
    }
    if (this.#answered.size > this.#maxOutstanding) {
      const oldest = this.#answered.values().next().value;
      if (oldest !== undefined) this.#answered.delete(oldest);
    }
  }

  #prune(): void {
    const now = this.#now();
    for (const [id, entry] of this.#byShortId) {
      if (Date.parse(entry.pending.deadline) <= now) this.#byShortId.delete(id);
    }
  }
}
