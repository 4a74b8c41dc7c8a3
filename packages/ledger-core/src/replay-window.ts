import { LedgerError, ReasonCode } from '@agent-ledger/refusals';
import { uuidv7Millis } from './uuid.js';

/**
 * Freshness and duplicate detection for one partition (SPEC.md section 5).
 *
 * A statement is fresh when |sequencedAt − issuedAt| ≤ freshnessMs, and its
 * id's UUIDv7 time equals issuedAt. Two entries with one id are therefore
 * sequenced within 2 · freshnessMs of each other, so only the ids of that
 * window are remembered: memory is bounded by the rate, not the log's length.
 * Sequencing times must be fed in non-decreasing order (they are, within a
 * partition).
 */
export class ReplayWindow {
  readonly #freshnessMs: number;
  readonly #recent = new Map<string, number>();

  constructor(freshnessMs: number) {
    this.#freshnessMs = freshnessMs;
  }

  /**
   * Checks one statement and remembers its id. Throws SCHEMA_INVALID when the
   * id does not carry issuedAt, REPLAY when stale or already seen.
   */
  admit(id: string, issuedAtMs: number, sequencedAtMs: number): void {
    if (uuidv7Millis(id) !== issuedAtMs) {
      throw new LedgerError(ReasonCode.SCHEMA_INVALID, 'statement id does not carry its issuedAt time');
    }
    if (Math.abs(sequencedAtMs - issuedAtMs) > this.#freshnessMs) {
      throw new LedgerError(ReasonCode.REPLAY, 'statement was not fresh when sequenced');
    }
    const horizon = sequencedAtMs - 2 * this.#freshnessMs;
    for (const [seen, at] of this.#recent) {
      if (at >= horizon) break;
      this.#recent.delete(seen);
    }
    if (this.#recent.has(id)) throw new LedgerError(ReasonCode.REPLAY, `statement ${id} appears twice`);
    this.#recent.set(id, sequencedAtMs);
  }

  /** Remembers an id already admitted earlier (recovery from the log), without checks. */
  remember(id: string, sequencedAtMs: number): void {
    this.#recent.set(id, sequencedAtMs);
  }

  /** True when the id is in the window. */
  has(id: string): boolean {
    return this.#recent.has(id);
  }
}
