import type { Statement } from '@agent-ledger/core';
import { evolve as evolveGate, initialState as initialGate, type AuthorityEvent, type GateState } from '@agent-ledger/gate';
import type { JudgeContext } from './judge.js';
import type { RulesRegistry } from './rules.js';

/**
 * The authority stream as `judge` reads it: every authority entry in order,
 * when each was sequenced, and where each key was revoked. verify-chain folds
 * it from a bundle's partition 0; the live sequencer folds it from the
 * committed authority topic. Both then judge events entries through
 * {@link AuthorityHistory.context}, so the two answer the same questions the
 * same way.
 */
export class AuthorityHistory {
  readonly #events: AuthorityEvent[] = [];
  /** `sequencedAt` of each authority entry, ms (never decreasing on a valid stream). */
  readonly #times: number[] = [];
  /** Authority index of each key's first revocation. */
  readonly #revokedAt = new Map<string, number>();

  /** Authority entries folded so far. */
  get size(): number {
    return this.#events.length;
  }

  /** Folds the next authority entry (already authorised and applied to the registry): the n-th call is entry n-1. */
  add(statement: Statement, index: number, statementHash: string, sequencedAtMs: number): void {
    this.#events.push({ statement, index, statementHash, sequencedAt: sequencedAtMs });
    this.#times.push(sequencedAtMs);
    if (statement.type === 'key.revoked') {
      this.#revoke((statement.body as { keyId: string }).keyId, index);
    } else if (statement.type === 'root.rotated') {
      for (const keyId of (statement.body as { revokeKeys: readonly string[] }).revokeKeys) this.#revoke(keyId, index);
    }
  }

  #revoke(keyId: string, index: number): void {
    if (!this.#revokedAt.has(keyId)) this.#revokedAt.set(keyId, index);
  }

  /** `sequencedAt` (ms) of authority entry `index`, or undefined when it is not folded yet. */
  timeOf(index: number): number | undefined {
    return this.#times[index];
  }

  /** Number of authority entries sequenced at or before `atMs`. */
  countAt(atMs: number): number {
    const times = this.#times;
    let lo = 0;
    let hi = times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((times[mid] as number) <= atMs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** True when key `keyId` is revoked after the first `size` authority entries. */
  revokedAt(keyId: string, size: number): boolean {
    const at = this.#revokedAt.get(keyId);
    return at !== undefined && at < size;
  }

  /**
   * A judging context over this history with a gate-state cursor of its own
   * (the gate's `evolve` mutates state, so a cursor only moves forward and is
   * rebuilt from the start when asked for an earlier index). One context per
   * stream of decisions whose cited indexes mostly grow: one per events
   * partition.
   */
  context(rules?: RulesRegistry): JudgeContext {
    let cursor: GateState = initialGate();
    let cursorSize = 0;
    const gateAt = (size: number): GateState => {
      if (size > this.#events.length) throw new Error(`authority history: gate state at ${size} asked for, ${this.#events.length} entries known`);
      if (size < cursorSize) {
        cursor = initialGate();
        cursorSize = 0;
      }
      while (cursorSize < size) {
        cursor = evolveGate(cursor, this.#events[cursorSize] as AuthorityEvent);
        cursorSize += 1;
      }
      return cursor;
    };
    return {
      ...(rules === undefined ? {} : { rules }),
      gateAt,
      authorityCountAt: (atMs) => this.countAt(atMs),
      keyRevokedAt: (keyId, size) => this.revokedAt(keyId, size),
    };
  }
}
